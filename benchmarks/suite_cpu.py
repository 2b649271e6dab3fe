"""Where the test suite's CPU goes, per file: a pytest plugin that writes each test's CPU (its own process and
the child processes it waited for), and a summary of what it wrote.

    SUITE_CPU_OUT=/tmp/cpu CI=1 PYTHONPATH=$PWD \
        python -m pytest -q -p no:cacheprovider -p benchmarks.suite_cpu -n 2 --dist loadgroup     # as `full` runs it
    python benchmarks/suite_cpu.py /tmp/cpu [--top 20]

Each process (xdist's controller and each worker) writes SUITE_CPU_OUT.<worker>.tsv: one line per test
(node id, own CPU s, children's CPU s, wall s), and a first line with the process's whole CPU (collection and
start-up included; the controller's children are its workers). CPU, not wall: the development machine is shared, and wall under load says little.
A test's fixtures count where pytest runs them: a module or session fixture in the first test that asks for it.
"""
from __future__ import annotations

import argparse
import collections
import glob
import os
import resource
import time

import pytest

_rows: list[tuple[str, float, float, float]] = []


def _cpu() -> tuple[float, float]:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Time the whole protocol of one test (setup, call, teardown) around pytest's own run of it."""
    own, kids = _cpu()
    wall = time.perf_counter()
    yield
    own2, kids2 = _cpu()
    _rows.append((item.nodeid, own2 - own, kids2 - kids, time.perf_counter() - wall))


def pytest_sessionfinish(session):
    out = os.environ.get("SUITE_CPU_OUT")
    if not out:
        return
    own, kids = _cpu()
    with open(f"{out}.{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.tsv", "w", encoding="utf-8") as fh:
        fh.write(f"#process\t{own:.3f}\t{kids:.3f}\t0\n")
        for row in _rows:
            fh.write("%s\t%.4f\t%.4f\t%.4f\n" % row)


def summary(prefix: str, top: int) -> list[str]:
    own: collections.Counter[str] = collections.Counter()
    kids: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    processes = []
    for path in sorted(glob.glob(prefix + ".*.tsv")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                nodeid, a, b, _wall = line.rstrip("\n").split("\t")
                if nodeid == "#process":
                    processes.append(f"{path.rsplit('.', 2)[-2]} {float(a) + float(b):.1f} s")
                    continue
                name = nodeid.split("::", 1)[0]
                own[name] += float(a)
                kids[name] += float(b)
                count[name] += 1
    total = sum(own.values()) + sum(kids.values())
    lines = [f"processes (own + children, CPU): {', '.join(processes)}",
             f"{sum(count.values())} tests: {total:.1f} s of CPU ({sum(kids.values()):.1f} s in child processes)",
             "| file | tests | CPU s | of it in children |", "|---|---|---|---|"]
    for name in sorted(count, key=lambda n: -(own[n] + kids[n]))[:top]:
        lines.append(f"| `{name}` | {count[name]} | {own[name] + kids[name]:.1f} | {kids[name]:.1f} |")
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", help="the SUITE_CPU_OUT the run was given")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    print("\n".join(summary(args.prefix, args.top)))
