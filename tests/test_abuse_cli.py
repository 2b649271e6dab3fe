"""The command line under abuse: shell lines safe to paste, a prices file that never ends,
rule files from the command line. Each answer is one line and exit 2, or a report; never a hang."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from deadline import within

from oomdoctor.cli import DEMO_DIR, main

# A user rule whose environment value would run a command if pasted unquoted.
ENV_RULE = """\
rules:
  - id: ENV1
    slug: sneaky-env
    order: 1
    title: Set a variable
    why: Because.
    category: runtime
    costs: [{{kind: none, text: Nothing.}}]
    applicability: safe
    actions:
      - env: {{name: OOMDOCTOR_TEST_VAR, value: "$(touch {marker}) x"}}
"""


@pytest.fixture()
def sneaky(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    marker = tmp_path / "pwned"
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "env.yaml").write_text(ENV_RULE.format(marker=marker), encoding="utf-8")
    for name in ("train.yaml", "train.log"):
        shutil.copy(DEMO_DIR / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path, marker


def _export_lines(text: str) -> list[str]:
    return [line.strip().lstrip("•").strip() for line in text.splitlines() if "export OOMDOCTOR_TEST_VAR" in line]


def _pasted(line: str, cwd: Path) -> str:
    """What a shell makes of a line the user pastes: the variable's value afterwards."""
    line = line[line.index("export "):]
    done = subprocess.run(["sh", "-c", f'{line}\nprintf %s "$OOMDOCTOR_TEST_VAR"'], capture_output=True, text=True,
                          cwd=cwd, check=True)
    return done.stdout


def test_the_plain_reports_export_line_pastes_as_the_literal_value(sneaky, capsys):
    folder, marker = sneaky
    code = main(["train.log", "train.yaml", "--plain", "--rules", "rules"])
    lines = _export_lines(capsys.readouterr().out)
    assert code == 1 and lines, "the rule's export line is shown"
    for line in lines:
        assert _pasted(line, folder) == f"$(touch {marker}) x"
    assert not marker.exists()


def test_the_guides_export_lines_paste_as_the_literal_value(sneaky, capsys):
    folder, marker = sneaky
    main(["train.log", "train.yaml", "--walkthrough", "--plain", "--rules", "rules"])
    # The lines to paste are the guide's code block (indented, never wrapped); prose may wrap.
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("    export OOMDOCTOR_TEST_VAR")]
    assert lines
    for line in lines:
        assert _pasted(line, folder) == f"$(touch {marker}) x"
    assert not marker.exists()


def test_explain_shows_the_rules_export_line_quoted(sneaky, capsys):
    folder, marker = sneaky
    main(["--rules", "rules", "--explain", "ENV1"])
    lines = _export_lines(capsys.readouterr().out)
    assert lines and _pasted(lines[0], folder) == f"$(touch {marker}) x" and not marker.exists()


def test_the_export_snippet_of_export_is_quoted(sneaky, capsys):
    folder, marker = sneaky
    main(["train.log", "train.yaml", "--plain", "--rules", "rules", "--export", "plan.diff"])
    lines = _export_lines(capsys.readouterr().err)
    assert lines and _pasted(lines[0], folder) == f"$(touch {marker}) x" and not marker.exists()


async def test_the_apps_export_lines_paste_as_the_literal_value(sneaky):
    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session
    from oomdoctor.tui.app import OomDoctorApp

    folder, marker = sneaky
    opts = Options(files=("train.log", "train.yaml"), rules_dirs=("rules",), cwd=str(folder))
    app = OomDoctorApp(open_session(opts))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        shown = str(app.query_one("#patch-env").render())
    lines = _export_lines(shown)
    assert lines and _pasted(lines[0], folder) == f"$(touch {marker}) x" and not marker.exists()


# ---------------------------------------------------------------- 13. --prices that never ends

@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_prices_from_dev_zero_are_refused_as_a_device_in_one_line(capsys):
    with within(10):
        code = main([str(DEMO_DIR / "train.yaml"), "--gpu", "H100", "--advise", "--prices", "/dev/zero"])
    err = capsys.readouterr().err
    assert code == 2 and err == "oomdoctor: /dev/zero: is a device, not a file: give the path of a log or config file\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_prices_from_a_fifo_with_no_writer_do_not_wait(tmp_path: Path, capsys):
    fifo = tmp_path / "prices.yaml"
    os.mkfifo(fifo)
    with within(10):
        code = main([str(DEMO_DIR / "train.yaml"), "--gpu", "H100", "--advise", "--prices", str(fifo)])
    assert code == 2 and "empty" in capsys.readouterr().err


def test_a_prices_alias_bomb_is_refused_with_its_line(tmp_path: Path, capsys):
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb = tmp_path / "prices.yaml"
    bomb.write_text("\n".join(lines) + "\nH100: 2.5\n")
    with within(10):
        code = main([str(DEMO_DIR / "train.yaml"), "--gpu", "H100", "--advise", "--prices", str(bomb)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"oomdoctor: {bomb}:1: YAML aliases expand to more than")


@pytest.mark.parametrize("price", [".inf", ".nan", "1e400", "9" * 500])
def test_a_price_that_is_not_a_real_number_is_refused_with_its_line(tmp_path: Path, capsys, price):
    path = tmp_path / "prices.yaml"
    path.write_text(f"currency: USD\nH100: {price}\n")
    code = main([str(DEMO_DIR / "train.yaml"), "--gpu", "H100", "--advise", "--prices", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"oomdoctor: {path}:2: price")


# ---------------------------------------------------------------- rule files from the command line

def test_rules_pointing_at_dev_zero_are_refused_as_a_device(capsys):
    with within(10):
        code = main(["--rules", "/dev/zero", "--list-rules"])
    assert code == 2 and "is a device" in capsys.readouterr().err


def test_a_fifo_named_like_a_rule_file_in_a_rules_folder_is_never_opened(tmp_path: Path, capsys):
    os.mkfifo(tmp_path / "wait.yaml")
    with within(10):
        code = main(["--rules", str(tmp_path), "--list-rules"])
    assert code == 0 and "OOM001" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--rules", "{d}", "--list-rules"], ["{log}", "{cfg}", "--rules", "{d}", "--plain"]])
def test_a_rule_that_sets_micro_batch_zero_is_exit_2_with_the_users_file_and_line(tmp_path: Path, capsys, argv):
    rule = ENV_RULE.replace("env: {{name: OOMDOCTOR_TEST_VAR, value: \"$(touch {marker}) x\"}}",
                            "set: {{field: micro_batch, value: 0}}").format()
    (tmp_path / "zero.yaml").write_text(rule, encoding="utf-8")
    args = [a.format(d=tmp_path, log=DEMO_DIR / "train.log", cfg=DEMO_DIR / "train.yaml") for a in argv]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and err == f"oomdoctor: {tmp_path / 'zero.yaml'}:11: value for micro_batch must be at least 1, got 0\n"


def test_no_patch_ever_holds_an_impossible_micro_batch(tmp_path: Path, capsys):
    # A rule that would scale the micro-batch to 0 is clamped: the diff holds 1 at the least.
    rule = ENV_RULE.replace("env: {{name: OOMDOCTOR_TEST_VAR, value: \"$(touch {marker}) x\"}}",
                            "scale: {{field: micro_batch, factor: 0.01}}").replace(
        "category: runtime", "category: activations").replace("kind: none", "kind: throughput").format()
    (tmp_path / "tiny.yaml").write_text(rule.replace("    actions:", "    check_saving: false\n    actions:"),
                                        encoding="utf-8")
    code = main([str(DEMO_DIR / "train.log"), str(DEMO_DIR / "train.yaml"), "--rules", str(tmp_path), "--export", "-"])
    out = capsys.readouterr().out
    assert code in (1, 3)
    assert "+per_device_train_batch_size: 1" in out and "per_device_train_batch_size: 0" not in out


def test_python_m_oomdoctor_with_a_hostile_rule_file_never_prints_a_traceback(tmp_path: Path):
    (tmp_path / "bad.yaml").write_text("rules: &r [*r]\n")
    done = subprocess.run([sys.executable, "-m", "oomdoctor", "--rules", str(tmp_path), "--list-rules"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
