"""Every figure the memory model gives, written out exactly, to compare two checkouts byte for byte.

    python benchmarks/estimate_golden.py OUT.txt          # this checkout
    diff OUT_before.txt OUT_after.txt                     # a refactor of oomdoctor/memory/ must print nothing

It estimates every calibration row of tests/data/reference/measured_peaks.yaml (through benchmarks/accuracy.py's
converter), and reads and plans every training config under tests/data/ (configs, real-configs, the reference
example configs, the panel's cases with their crash logs) on an 80 GB card; for each it writes the estimate's
components, details, moments and notes with floats in repr (exact), and the same for every planned step's
estimate; then the demo's `--plain` and `--json` output. Floats are written exactly, so any change in any term
shows.
"""
from __future__ import annotations

import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

from oomdoctor.facts import Estimate  # noqa: E402
from oomdoctor.memory import estimate  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data")
CONFIG_DIRS = ("configs", "real-configs", os.path.join("reference", "example-configs"))
CONFIG_EXT = (".yaml", ".yml", ".json", ".sh")


def _estimate_lines(tag: str, est: Estimate | None) -> list[str]:
    if est is None:
        return [f"{tag} none"]
    out = [f"{tag} allocated={est.allocated_gib!r} peak={est.peak_gib!r} phase={est.phase} "
           f"moment={est.peak_moment} host={est.host_ram_gib!r}"]
    out += [f"{tag} component {k}={v!r}" for k, v in sorted(est.components.items())]
    out += [f"{tag} moment {k}={v!r}" for k, v in sorted((est.moments or {}).items())]
    out += [f"{tag} detail {k}={v!r}" for k, v in sorted(est.details.items())]
    out += [f"{tag} note {n!r}" for n in est.notes]
    return out


def calibration_rows() -> list[str]:
    import yaml
    with open(os.path.join(accuracy.REF, "measured_peaks.yaml")) as fh:
        cases = yaml.safe_load(fh)
    ref = accuracy._reference_shapes()
    lines: list[str] = []
    for case in cases:
        conv = accuracy.convert(case, ref)
        if isinstance(conv, str):
            lines.append(f"row {case['id']} skipped")
            continue
        setup, shape, hw = conv
        lines += _estimate_lines(f"row {case['id']}", estimate(setup, shape, hw))
    return lines


def _config_files() -> list[tuple[str, tuple[str, ...]]]:
    runs = []
    for sub in CONFIG_DIRS:
        folder = os.path.join(DATA, sub)
        for base, _, names in sorted(os.walk(folder)):
            for name in sorted(names):
                if name.endswith(CONFIG_EXT):
                    path = os.path.join(base, name)
                    runs.append((os.path.relpath(path, DATA), (path,)))
    plans = os.path.join(DATA, "plans")
    for name in sorted(os.listdir(plans)):
        case = os.path.join(plans, name)
        if os.path.isdir(case):
            files = tuple(os.path.join(case, f) for f in sorted(os.listdir(case)) if f != "case.yaml")
            runs.append((os.path.relpath(case, DATA), files))
    return runs


def planned_configs() -> list[str]:
    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session
    lines: list[str] = []
    for tag, files in _config_files():
        try:
            session = open_session(Options(files=files, gpu="80"))
        except Exception as exc:  # noqa: BLE001 - a reader's refusal is part of the figures
            text = str(exc).replace(os.path.abspath(DATA) + os.sep, "").replace(DATA + os.sep, "")
            lines.append(f"cfg {tag} error {type(exc).__name__}: {text}".splitlines()[0])
            continue
        report = session.report
        lines += _estimate_lines(f"cfg {tag}", report.estimate)
        for name, plan in (("plan", report.plan), ("least_cost", report.least_cost)):
            for i, step in enumerate(plan.steps if plan else ()):
                lines += _estimate_lines(f"cfg {tag} {name} step{i} {step.rule}", step.estimate)
    return lines


def demo() -> list[str]:
    """The demo's plain report and JSON, as `python -m oomdoctor --demo` prints them."""
    import subprocess
    lines: list[str] = []
    for view in ("--plain", "--json"):
        done = subprocess.run([sys.executable, "-m", "oomdoctor", "--demo", view], cwd=ROOT, capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": ROOT})
        lines += [f"demo {view} exit {done.returncode}"] + [f"demo {view} | {line}" for line in done.stdout.splitlines()]
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    lines = calibration_rows()
    try:
        lines += planned_configs()
        lines += demo()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return 1
    with open(argv[0], "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"{len(lines)} lines written to {argv[0]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
