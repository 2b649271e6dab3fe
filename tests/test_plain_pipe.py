"""The plain report into a pipe: wrapped to $COLUMNS (80 when unknown), hanging indents, no trailing
spaces, in English and in Chinese. Run as a user runs it: `oomdoctor ... --plain | cat`."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import DATA, ROOT

from oomdoctor.words import cell_width

CASES = {
    "demo": ("--demo",),
    "14b-lora-4090": (str(DATA / "guide" / "qwen14b_lora_4090.log"), str(DATA / "guide" / "qwen14b_lora_4090.yaml")),
    "preflight": (str(DATA / "guide" / "qwen1_5b_long_a100.yaml"), "--gpu", "A100-40GB"),
}


def piped(args, columns: str | None, lang: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    cmd = f"{sys.executable} -m oomdoctor {' '.join(args)} --plain --lang {lang} | cat"
    done = subprocess.run(cmd, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8")
    assert done.returncode == 0 and done.stdout, done.stderr
    return done.stdout


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_piped_plain_keeps_to_80_columns_with_no_trailing_space(case, lang):
    out = piped(CASES[case], "80", lang)
    for n, line in enumerate(out.splitlines(), 1):
        assert cell_width(line) <= 80, (n, line)
        assert line == line.rstrip(), (n, line)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_columns_a_pipe_gets_80(lang):
    out = piped(CASES["demo"], None, lang)
    widths = [cell_width(line) for line in out.splitlines()]
    assert max(widths) <= 80 and max(widths) >= 70        # filled to the width, not to rich's 100


def test_columns_sets_the_width():
    out = piped(CASES["demo"], "60", "en")
    assert max(cell_width(line) for line in out.splitlines()) <= 60


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_wrapped_lines_hang_under_their_text(lang):
    lines = piped(CASES["demo"], "60", lang).splitlines()
    crash = next(i for i, ln in enumerate(lines) if ln.startswith(("Crash", "崩溃")))
    assert lines[crash + 1].startswith(" " * 7) and not lines[crash + 1].startswith(" " * 8)
    notes = [i for i, ln in enumerate(lines) if ln.startswith("  · ")]
    assert notes
    for i in notes:       # a note's wrapped lines start under its text, past the bullet
        j = i + 1
        while j < len(lines) and lines[j].startswith("    ") and not lines[j].startswith("  · "):
            j += 1
        assert all(lines[k].startswith("    ") for k in range(i + 1, j))
    assert any(lines[i + 1].startswith("    ") and lines[i + 1].strip() for i in notes)   # some note did wrap
    comments = [ln for ln in lines if ln.startswith("# ")]
    assert comments and all(ln.startswith("# ") for ln in comments)      # a wrapped comment stays a comment
