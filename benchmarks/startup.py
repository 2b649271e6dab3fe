"""Time what a user waits for: `oomdoctor --demo --plain` and `--demo --json`, start to exit, in a fresh process.

    python benchmarks/startup.py [-n 15] [--args "--demo --plain" ...]

Each run is a new interpreter (the current one, sys.executable) running the installed `oomdoctor` console
script beside it, or `-m oomdoctor` when there is none, with stdout thrown away. Prints the median, min and
max wall time per command line, and the same for `python -c pass` so the interpreter's own start is visible
apart from oomdoctor's imports and work. The brief's target: the plain report in well under half a second.
Run it in a clean virtual environment: a site-packages full of .pth files slows every start alike.
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

DEFAULT_ARGS = ("--demo --plain", "--demo --json")


def oomdoctor_command() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "oomdoctor")
    if os.path.isfile(script):
        return [sys.executable, script]
    return [sys.executable, "-m", "oomdoctor"]


def time_runs(cmd: list[str], n: int) -> list[float]:
    env = dict(os.environ, COLUMNS="")  # the width rule of a pipe, as in a CI log
    walls_s = []
    for _ in range(n):
        t0 = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        walls_s.append(time.perf_counter() - t0)
        if done.returncode not in (0, 1, 3):  # 1 and 3 are answers (a plan, no fit), not failures
            sys.exit(f"{shlex.join(cmd)} exited {done.returncode}: {done.stderr.decode(errors='replace').strip()}")
    return walls_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15, help="runs per command line (default 15)")
    ap.add_argument("--args", action="append", metavar="ARGS",
                    help=f"oomdoctor arguments to time, repeatable (default: {' and '.join(DEFAULT_ARGS)})")
    opts = ap.parse_args()
    base = oomdoctor_command()
    cases = [("python -c pass", [sys.executable, "-c", "pass"])]
    cases += [(f"oomdoctor {a}", base + shlex.split(a)) for a in (opts.args or DEFAULT_ARGS)]
    time_runs(base + ["--demo", "--plain"], 2)  # warm the page cache and the .pyc files
    print(f"{sys.executable}  ({opts.n} runs each, wall seconds)")
    for label, cmd in cases:
        walls_s = time_runs(cmd, opts.n)
        print(f"  {label:<28} median {statistics.median(walls_s):.3f}  min {min(walls_s):.3f}  max {max(walls_s):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
