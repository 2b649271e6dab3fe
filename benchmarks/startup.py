"""Time what a user waits for: `oomdoctor --demo --plain` and `--demo --json`, start to exit, in a fresh process.

    python benchmarks/startup.py [-n 15] [--args "--demo --plain" ...]

Each run is a new interpreter (the current one, sys.executable) running the installed `oomdoctor` console
script beside it, or `-m oomdoctor` when there is none, with stdout thrown away. Prints the median, min and
max wall time per command line, the median CPU time (user + system: steadier than wall on a busy machine),
and the same for `python -c pass` so the interpreter's own start is visible apart from oomdoctor's imports
and work. The brief's target: the plain report in well under half a second.
Two warm-up runs write the .pyc files first (PYTHONDONTWRITEBYTECODE is dropped for them), as an installed
package has them. Run it in a clean virtual environment: a site-packages full of .pth files slows every start.

    python benchmarks/startup.py --bytecode-cost [-n 8]

prints instead the CPU of one start without the package's own bytecode and with it cached (the interpreter's
and site-packages' bytecode warm in both, in a private PYTHONPYCACHEPREFIX): what caching bytecode in CI saves
each test that runs the CLI in a subprocess.
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_ARGS = ("--demo --plain", "--demo --json")


def oomdoctor_command() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "oomdoctor")
    if os.path.isfile(script):
        return [sys.executable, script]
    return [sys.executable, "-m", "oomdoctor"]


def _children_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def time_runs(cmd: list[str], n: int, write_pyc: bool = False,
              extra_env: dict[str, str] | None = None) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of `n` runs of `cmd`."""
    env = dict(os.environ, COLUMNS="", **(extra_env or {}))  # the width rule of a pipe, as in a CI log
    if write_pyc:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    walls_s, cpus_s = [], []
    for _ in range(n):
        cpu0, t0 = _children_cpu_s(), time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        walls_s.append(time.perf_counter() - t0)
        cpus_s.append(_children_cpu_s() - cpu0)
        if done.returncode not in (0, 1, 3):  # 1 and 3 are answers (a plan, no fit), not failures
            sys.exit(f"{shlex.join(cmd)} exited {done.returncode}: {done.stderr.decode(errors='replace').strip()}")
    return walls_s, cpus_s


PACKAGE = Path(__file__).resolve().parents[1] / "oomdoctor"


def bytecode_cost(cmd: list[str], n: int) -> None:
    """CPU of `n` starts without the package's bytecode, then `n` with it, everything else's bytecode warm."""
    with tempfile.TemporaryDirectory() as scratch:
        warm, cold = Path(scratch, "warm"), Path(scratch, "cold")
        time_runs(cmd, 1, write_pyc=True, extra_env={"PYTHONPYCACHEPREFIX": str(warm)})  # stdlib, site, package
        shutil.copytree(warm, cold)
        shutil.rmtree(cold / PACKAGE.relative_to(PACKAGE.anchor), ignore_errors=True)  # the package's own gone
        for label, prefix in (("without the package's bytecode", cold), ("with it cached", warm)):
            _, cpus_s = time_runs(cmd, n, extra_env={"PYTHONPYCACHEPREFIX": str(prefix),
                                                     "PYTHONDONTWRITEBYTECODE": "1"})
            print(f"  {label:<32} {n} runs, cpu mean {statistics.mean(cpus_s):.2f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15, help="runs per command line (default 15)")
    ap.add_argument("--args", action="append", metavar="ARGS",
                    help=f"oomdoctor arguments to time, repeatable (default: {' and '.join(DEFAULT_ARGS)})")
    ap.add_argument("--bytecode-cost", action="store_true",
                    help="CPU of a start without the package's bytecode and with it (see the module doc)")
    opts = ap.parse_args()
    base = oomdoctor_command()
    if opts.bytecode_cost:
        bytecode_cost(base + ["--demo", "--plain"], opts.n)
        return 0
    cases = [("python -c pass", [sys.executable, "-c", "pass"])]
    cases += [(f"oomdoctor {a}", base + shlex.split(a)) for a in (opts.args or DEFAULT_ARGS)]
    for a in opts.args or DEFAULT_ARGS:  # warm the page cache and write the .pyc files
        time_runs(base + shlex.split(a), 2, write_pyc=True)
    print(f"{sys.executable}  ({opts.n} runs each, seconds)")
    for label, cmd in cases:
        walls_s, cpus_s = time_runs(cmd, opts.n)
        print(f"  {label:<28} wall median {statistics.median(walls_s):.3f}  min {min(walls_s):.3f}  "
              f"max {max(walls_s):.3f}   cpu median {statistics.median(cpus_s):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
