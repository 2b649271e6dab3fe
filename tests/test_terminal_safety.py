"""No input drives the terminal: escape sequences in a log, a config, a rules file or a file name are
shown, never sent; JSON escapes them; an ASCII stdout and a closed stdout are handled.

Before, the default and --plain reports sent a log's OSC titles, OSC 8 links, `ESC c` and 8-bit CSI to
the terminal; rule texts in --explain, --list-rules and the plan, and file names in error lines, did the
same; json.dumps left DEL and C1 raw; PYTHONIOENCODING=ascii was exit 4; `--plain | true` was exit 0.
Each test here failed then.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "oomdoctor" / "data" / "demo"
LOG = (DEMO / "train.log").read_text(encoding="utf-8")
CONFIG = (DEMO / "train.yaml").read_text(encoding="utf-8")

# An OSC window title, an OSC 8 hyperlink, a full reset, an 8-bit CSI, DEL and a bare CR.
LOG_NAME = "run\x1b]0;PWNED\x07\x9b31m.log"
HOSTILE = "\x1b]0;PWNED\x07 \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1bc \x9b31mred \x7f\rover"


def run(*args: str, cwd: Path = ROOT, env_extra: dict | None = None, stdout=subprocess.PIPE):
    env = dict(os.environ, PYTHONPATH=str(ROOT), LC_ALL="C.UTF-8", COLUMNS="80", TERM="xterm")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "oomdoctor", *args], stdout=stdout, stderr=subprocess.PIPE,
                          env=env, cwd=str(cwd), timeout=120, check=False)


def assert_inert(data: bytes) -> None:
    """No ESC, DEL or C1 control (8-bit or UTF-8 encoded), no C0 but tab and newline."""
    text = data.decode("utf-8", "replace")
    bad = sorted({f"0x{ord(c):02X}" for c in text if (ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) <= 0x9F})
    assert bad == [], bad
    assert b"\x1b" not in data


@pytest.fixture()
def hostile(tmp_path: Path) -> Path:
    return make_hostile(tmp_path)


def make_hostile(tmp_path: Path) -> Path:
    lines = LOG.splitlines(keepends=True)
    # in the line the phase is read from, and in the OOM message itself (a width cut falls inside it)
    at = next(i for i, line in enumerate(lines) if "in _init_group" in line)
    lines[at] = lines[at].rstrip("\n") + "  " + HOSTILE + "\n"
    oom = next(i for i, line in enumerate(lines) if "OutOfMemoryError" in line)
    lines[oom] = lines[oom].rstrip("\n") + " " + "x" * 50 + HOSTILE + "\n"
    (tmp_path / "train.log").write_text("".join(lines), encoding="utf-8")
    (tmp_path / LOG_NAME).write_text("".join(lines), encoding="utf-8")     # a name that is shown in every view
    # a config value with an escape (YAML's "\e" is ESC) and a comment
    (tmp_path / "train.yaml").write_text(CONFIG.replace("output_dir:", 'run_name: "x\\e]0;PWNED\\a\\x9b31m"\noutput_dir:'),
                                         encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_escape_sequences_in_a_log_and_a_config_never_reach_the_terminal(hostile, lang):
    done = run(LOG_NAME, "train.yaml", "--plain", "--lang", lang, cwd=hostile)
    assert done.returncode == 1, done.stderr
    assert "␛".encode() in done.stdout                  # shown, not sent
    assert_inert(done.stdout)
    assert_inert(done.stderr)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_walkthrough_shows_escapes_inertly(hostile, lang):
    # The guide names the log: with escapes in that name, they are shown (the old code sent them raw).
    done = run(LOG_NAME, "train.yaml", "--walkthrough", "--plain", "--lang", lang, cwd=hostile)
    assert done.returncode in (1, 3), done.stderr
    assert "␛".encode() in done.stdout
    assert_inert(done.stdout + done.stderr)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_file_name_with_escapes_is_shown_inertly_in_the_error_line(tmp_path, lang):
    done = run(str(tmp_path / "x\x1b]0;PWNED\x07\x9b.log"), "--plain", "--lang", lang)
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1
    assert_inert(done.stderr)


RULE = """\
rules:
  - id: ESC1
    slug: escapes
    order: 1
    title: "Set \\e]0;PWNED\\a a variable \\x9b31m"
    why: "Because \\ec reset."
    category: runtime
    costs: [{kind: none, text: "Nothing \\x7f."}]
    applicability: safe
    actions:
      - env: {name: OOMDOCTOR_TEST_VAR, value: "1"}
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("how", [["--list-rules"], ["--explain", "ESC1"], ["train.log", "train.yaml", "--plain"]])
def test_rule_texts_with_escapes_are_shown_inertly(hostile, lang, how):
    (hostile / "rules").mkdir()
    (hostile / "rules" / "esc.yaml").write_text(RULE, encoding="utf-8")
    done = run(*how, "--rules", "rules", "--lang", lang, cwd=hostile)
    assert done.returncode in (0, 1, 3), done.stderr
    assert_inert(done.stdout + done.stderr)
    if how[0] != "train.log":
        assert "␛]0;PWNED".encode() in done.stdout


def test_json_escapes_del_and_c1_and_keeps_the_text(hostile):
    done = run(LOG_NAME, "train.yaml", "--json", cwd=hostile)
    assert done.returncode == 1, done.stderr
    assert_inert(done.stdout)
    assert json.loads(done.stdout)["crash"]["file"] == LOG_NAME            # the text is all there, escaped


def test_the_sanitiser_makes_every_control_visible_and_keeps_tab_and_newline():
    from oomdoctor.words import clean, fit_cells

    text = "".join(chr(c) for c in range(0xA0)) + "中文"
    shown = clean(text)
    assert "\t" in shown and "\n" in shown and shown.endswith("中文")
    assert all(not (ord(c) < 0x20 and c not in "\t\n") and not 0x7F <= ord(c) <= 0x9F for c in shown)
    # a width cut of clean text never leaves part of a sequence to act
    cut = fit_cells(clean("abc\x1b]8;;http://x\x1b\\link"), 6)
    assert "\x1b" not in cut


# ------------------------------------------------------------------ the stream itself

@pytest.mark.parametrize("flag", ["--plain", "--json"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_ascii_stdout_is_never_an_internal_error(flag, lang):
    done = run(str(DEMO / "train.log"), str(DEMO / "train.yaml"), flag, "--lang", lang,
               env_extra={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert done.returncode == 1, done.stderr
    done.stdout.decode("ascii")
    if flag == "--json":
        assert json.loads(done.stdout)["lang"] == lang


def _closed_pipe() -> tuple[int, int]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


@pytest.mark.parametrize("flag", ["--plain", "--json"])
def test_a_closed_stdout_is_not_success(flag):
    fd = _closed_pipe()
    try:
        done = run(str(DEMO / "train.log"), str(DEMO / "train.yaml"), flag, stdout=fd)
    finally:
        os.close(fd)
    assert done.returncode not in (0, 1, 3, 4), done.stderr
    assert b"Traceback" not in done.stderr and len(done.stderr.splitlines()) <= 1


def test_apply_into_a_closed_stdout_applies_or_says_it_did_not(tmp_path):
    (tmp_path / "train.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "train.log").write_text(LOG, encoding="utf-8")
    fd = _closed_pipe()
    try:
        done = run("train.log", "train.yaml", "--apply", "--yes", cwd=tmp_path, stdout=fd)
    finally:
        os.close(fd)
    err = done.stderr.decode()
    changed = (tmp_path / "train.yaml").read_text(encoding="utf-8") != CONFIG
    assert done.returncode == 2 and "Traceback" not in err
    assert ("updated train.yaml" in err) == changed
    assert changed or "no file was changed" in err
