"""In Chinese, every surface speaks Chinese: no English sentence is left on what the demo and the fixtures
render (plain report, JSON, advisor, guide, rule list and explanations, --help, errors, the app's screens).

An English sentence is four or more English words in a row. What a user typed or a tool printed stays as it
is (paths, model names, config keys, commands, the diff, the log's own message and the log line a phase was
read from): they are taken out of the text before the check.
"""
from __future__ import annotations

import json
import re

import pytest
from helpers import DATA, DEMO_DIR, FIXTURE_INPUTS, run_cli, screen_text, session_of, settle

from oomdoctor.facts import Report

ENGLISH = re.compile(r"[A-Za-z][a-z']+,?(?: [a-z][a-z']*,?){3,}")

# Report fields that other issues will move into words/ (their items are plain str until then).
def english_sentences(text: str, leftovers: set[str] = frozenset()) -> list[str]:
    """English sentences in `text`, line by line, after taking out verbatim lines and the pending fields'
    texts (found across line breaks too, where a view wrapped them)."""
    for item in sorted(leftovers, key=len, reverse=True):
        words = item.split()
        if words:
            text = re.sub(r"\s+".join(re.escape(w) for w in words), " ", text)
    found = []
    for line in text.splitlines():
        # a diff's context line starts with one space
        context = line.startswith(" ") and not line.startswith("  ")
        verbatim = line.startswith(("--- ", "+++ ", "@@", "+", "-", "export ", "# ", "    ")) or "$ " in line or context
        if verbatim and not re.search(r"[\u4e00-\u9fff]", line):
            continue            # the diff, shell lines and commands are verbatim
        found += ENGLISH.findall(line)
    return found


def _log_words(report: Report) -> set[str]:
    """What the log printed: its messages, and the lines the phases were read from."""
    out: set[str] = set()
    if report.crash is not None:
        out.update(e.message for e in report.crash.events if e.message)
        # the log line a phase was read from, quoted as the log printed it
        out.update(e.phase_evidence.text.rstrip("…") for e in report.crash.events if e.phase_evidence)
    if report.finding is not None:
        # the log lines a clue of the finding was read from, quoted as the log printed them
        out.update(e.text for c in report.finding.clues for e in c.evidence)
    return {t for t in out if t}


def _session(args: tuple[str, ...]):
    return session_of(args, "zh")


def _json_strings(doc) -> list[str]:
    if isinstance(doc, dict):
        return [s for k, v in doc.items()
                if k not in ("message", "file", "model", "patch") and not k.endswith(("_code", "_codes"))
                for s in _json_strings(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in _json_strings(v)]
    return [doc] if isinstance(doc, str) else []


@pytest.mark.parametrize("args", FIXTURE_INPUTS, ids=[" ".join(a) for a in FIXTURE_INPUTS])
def test_plain_json_and_guide_are_chinese(args):
    from oomdoctor.guide import default_answers, plan_with_answers, render_plain
    from oomdoctor.views import jsonout
    from oomdoctor.views.plain import render_to_string

    session = _session(args)
    report = session.report
    leftovers = _log_words(report)
    assert english_sentences(render_to_string(report, lang="zh"), leftovers) == []
    strings = _json_strings(json.loads(jsonout.render(report, "zh")))
    assert [e for text in strings for e in english_sentences(text, leftovers)] == []
    answers = default_answers(report)
    guided = plan_with_answers(session, answers)
    assert english_sentences(render_plain(guided, answers, "zh", rules=session.rules), leftovers | _log_words(guided)) == []


@pytest.mark.parametrize("args", [a for a in FIXTURE_INPUTS if not a[0].endswith(".log") or len(a) > 1][:4])
def test_advisor_is_chinese(args):
    from oomdoctor import advise

    session = _session(args)
    if session.report.setup is None:
        pytest.skip("no training config")
    matrix = advise.build(session.report, estimator=session.estimator, correction=session.correction,
                          rules=session.rules)
    leftovers = _log_words(session.report)
    assert english_sentences(advise.render_plain(matrix, "zh"), leftovers) == []
    strings = _json_strings(json.loads(advise.to_json(matrix, "zh")))
    assert [e for text in strings for e in english_sentences(text, leftovers)] == []


def test_rules_help_and_errors_are_chinese(capsys, monkeypatch):
    from oomdoctor.planner import load_rules

    for rule in load_rules():
        code, out, err = run_cli(capsys, "--explain", rule.id, "--lang", "zh")
        assert code == 0 and english_sentences(out) == [], rule.id
    code, out, _ = run_cli(capsys, "--list-rules", "--lang", "zh")
    assert english_sentences(out) == []
    with pytest.raises(SystemExit):
        run_cli(capsys, "--help", "--lang", "zh")
    out = capsys.readouterr().out
    assert out.startswith("用法：oomdoctor") and "位置参数" in out and english_sentences(out) == []
    for argv in (["--lang", "zh"], ["--gpus", "0", "--demo", "--lang", "zh"], ["--headroom", "x", "--demo", "--lang", "zh"],
                 ["--nope", "--lang", "zh"], ["--explain", "OOM999", "--lang", "zh"], ["--demo", "--gpu", "nowhere", "--lang", "zh"],
                 ["/no/such/file.yaml", "--lang", "zh"], [f"{DATA}/configs/trl_sft.yaml", "--advise", "--gpu", "0GiB", "--lang", "zh"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and err.startswith("oomdoctor："), (argv, err)
        assert english_sentences(err.replace("/no/such/file.yaml", "")) == [], (argv, err)


def test_locale_alone_makes_help_chinese(capsys, monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    with pytest.raises(SystemExit):
        run_cli(capsys, "--help")
    assert capsys.readouterr().out.startswith("用法：")


async def test_the_apps_screens_are_chinese():
    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session
    from oomdoctor.tui.app import OomDoctorApp

    session = open_session(Options(files=(str(DEMO_DIR / "train.yaml"), str(DEMO_DIR / "train.log")),
                                   cwd=str(DEMO_DIR)), "zh")
    # the diff is the user's own file: its comments stay as they are
    leftovers = _log_words(session.report) | {line[1:] for line in session.report.patch.splitlines() if line[1:].strip()}
    app = OomDoctorApp(session)
    async with app.run_test(size=(120, 40)) as pilot:
        for key in ("1", "2", "3", "4"):
            await pilot.press(key)
            await settle(pilot)
            assert english_sentences(screen_text(app), leftovers) == [], key
        for key in ("question_mark", "m", "g"):
            await pilot.press(key)
            await settle(pilot)
            text = screen_text(app)
            assert english_sentences(text, leftovers) == [], (key, text)
            await pilot.press("escape")
            await settle(pilot)


def test_the_check_finds_an_english_sentence_among_chinese():
    assert english_sentences("峰值 12.0 GiB。It would not lower the estimate.") == ["It would not lower the estimate"]
    assert english_sentences("“CUDA out of memory” 显存不足；git apply plan.diff") == []
    assert english_sentences("注意：the log was cut\nshort", {"the log was cut short"}) == []
