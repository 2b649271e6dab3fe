"""--simulate without torch: a one-line install message, and no torch import at oomdoctor import time."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_available_names_the_install_command_when_torch_is_missing():
    out = _run("""
        import sys
        sys.modules["torch"] = None          # makes `import torch` raise ImportError
        from oomdoctor.simulate import available
        from oomdoctor.words import say
        print(say(available()))
        print(say(available(), "zh"))
    """)
    assert out.returncode == 0, out.stderr
    line, zh = out.stdout.strip().split("\n")
    # peft (and, in some releases, transformers) cannot import without torch either
    assert line.startswith("--simulate needs torch, transformers and peft (torch")
    assert line.endswith(" missing): pip install 'oomdoctor[simulate]'")
    assert zh.startswith("--simulate 需要 torch、transformers 和 peft（缺少 torch") and ", " not in zh
    assert zh.endswith("）：pip install 'oomdoctor[simulate]'")


def test_trace_step_without_torch_raises_a_one_line_input_error():
    out = _run("""
        import sys
        sys.modules["torch"] = None
        from oomdoctor.errors import InputError
        from oomdoctor.facts import ModelShape, TrainingSetup
        from oomdoctor.simulate import trace_step
        try:
            trace_step(TrainingSetup(), ModelShape(name="x"))
        except InputError as err:
            print("ERR", err)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR ") and "oomdoctor[simulate]" in out.stdout


def test_importing_the_simulate_package_does_not_import_torch():
    out = _run("""
        import sys
        import oomdoctor.simulate
        from oomdoctor.simulate import format_result, TraceResult
        print("torch" in sys.modules, "transformers" in sys.modules)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
