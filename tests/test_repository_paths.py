"""Everything the tests, benchmarks and code read lives in the repository: no file names a path outside it."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# An absolute path into a machine's own folders, or a relative one that climbs out of the checkout.
OUTSIDE = re.compile(r"(?<![\w.])(/work/|/home/\w+/|/Users/\w+/|\.\./shared/)")
# Crash-log fixtures quote real tracebacks (their frames name the reporter's folders): data, not paths we read.
DATA_QUOTES = ("tests/data/logs/", "tests/data/real-configs/", "tests/data/reference/", "tests/data/corpus/")


def _tracked() -> list:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.endswith((".py", ".toml", ".md", ".yaml", ".yml", ".cfg"))]


def test_no_file_names_a_path_outside_the_repository():
    offenders = []
    for rel in _tracked():
        if rel.startswith(DATA_QUOTES) or rel == "tests/test_repository_paths.py":
            continue
        text = (ROOT / rel).read_text(encoding="utf-8", errors="replace")
        offenders += [f"{rel}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert not offenders, offenders


def test_the_reference_data_the_tests_read_is_vendored():
    ref = ROOT / "tests" / "data" / "reference"
    assert (ref / "measured_peaks.yaml").is_file() and (ref / "model-shapes.yaml").is_file()
    assert len(list((ref / "example-configs").glob("*.y*ml"))) >= 20
