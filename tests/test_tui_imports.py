"""Textual stays inside oomdoctor/tui/: the plain path and the core never load it."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(code: str) -> tuple[str, set[str]]:
    probe = textwrap.dedent(code) + textwrap.dedent("""
        import sys as _sys
        print("MODULES", " ".join(sorted(m.split(".")[0] for m in _sys.modules)))
    """)
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color", "PYTHONPATH": str(ROOT)})
    lines = done.stdout.splitlines()
    mods = next((line for line in lines if line.startswith("MODULES ")), "MODULES ")
    return done.stdout + done.stderr, set(mods.split()[1:])


def test_importing_the_cli_and_the_pipeline_loads_no_textual():
    out, mods = _modules_after("import oomdoctor.cli, oomdoctor.pipeline, oomdoctor.tui")
    assert "oomdoctor" in mods, out
    assert "textual" not in mods


@pytest.mark.parametrize("flags", [["--plain"], ["--json"]])
def test_the_plain_path_on_the_demo_never_imports_textual(flags):
    out, mods = _modules_after(f"""
        import oomdoctor.cli
        rc = oomdoctor.cli.main({flags!r} + ["--demo"])
        assert rc in (0, 1, 3), rc
    """)
    assert "oomdoctor" in mods, out
    assert "textual" not in mods, out


def test_no_module_outside_tui_imports_textual():
    offenders = []
    for path in (ROOT / "oomdoctor").rglob("*.py"):
        if "tui" in path.relative_to(ROOT / "oomdoctor").parts[:1]:
            continue
        text = path.read_text(encoding="utf-8")
        if "import textual" in text or "from textual" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
