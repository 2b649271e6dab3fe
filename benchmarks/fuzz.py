"""The long fuzz run: N hostile cases over every input class, through the real CLI, counted.

    python benchmarks/fuzz.py --runs 10000           # the README's figure
    python benchmarks/fuzz.py --runs 10000 --max-seconds 3600     # as many as an hour allows, counted
    python benchmarks/fuzz.py --runs 200 --classes rules,writes --save /tmp/fuzz-failures

Each case is drawn by the strategies of tests/fuzzkit.py (the CI test draws from the same ones with a
fixed seed) and run in a forked child with a 10 s and 1.5 GiB bound. Printed: exit codes, exit 4, hangs,
invalid JSON, unexpected writes, leftovers, multi-line errors, time and memory, and every distinct
problem with one example. Problems already known in other engineers' areas (KNOWN in fuzzkit) are
counted on their own line.

Every child runs with OOMDOCTOR_NO_TRANSFORMERS=1: an unknown model_type would otherwise spawn a
transformers import (oomdoctor/metacount.py, seconds a report), and the run would time that import rather
than oomdoctor. The transformers path has its own class, drawn only when named:

    python benchmarks/fuzz.py --runs 50 --classes transformers
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import fuzzkit  # noqa: E402
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings  # noqa: E402


class _OutOfTime(Exception):
    """A class has spent its share of --max-seconds: ends its drawing at once (drawing the cases left
    without running them cost minutes for the rule files)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="cases in all, shared over the classes")
    parser.add_argument("--seed", type=int, default=20, help="hypothesis seed (the same seed draws the same cases)")
    # Classes with few distinct cases first: when hypothesis runs out of new ones, the rest get their share.
    order = ["writes", "prices", "flags"] + [c for c in fuzzkit.CLASSES if c not in ("writes", "prices", "flags")]
    parser.add_argument("--classes", default=",".join(order), help="comma-separated input classes")
    parser.add_argument("--save", metavar="DIR", help="write each problem case (files and argv) into DIR")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="stop drawing when this much time is spent (shared evenly over the classes) and "
                             "report the runs made; 0: no limit")
    args = parser.parse_args()
    classes = [c for c in args.classes.split(",") if c]
    known = {**fuzzkit.CLASSES, **fuzzkit.OPT_IN_CLASSES}
    unknown = [c for c in classes if c not in known]
    if unknown:
        parser.error(f"unknown class {', '.join(unknown)}; known: {', '.join(known)}")
    fuzzkit.preload()

    outcomes: list[fuzzkit.Outcome] = []
    started = time.monotonic()
    for n, name in enumerate(classes):
        strategy = known[name]()
        per_class = max(1, -(-(args.runs - len(outcomes)) // (len(classes) - n)))
        # A class may spend its share of the time left; cases drawn past it are not run (and not counted).
        stop_at = (time.monotonic() + (args.max_seconds - (time.monotonic() - started)) / (len(classes) - n)
                   if args.max_seconds else float("inf"))

        @seed(args.seed)
        @settings(max_examples=per_class, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
        @given(case=strategy)
        def draw(case):
            if time.monotonic() >= stop_at:
                raise _OutOfTime
            outcomes.append(fuzzkit.run_case(case))
            if len(outcomes) % 250 == 0:
                print(f"    {len(outcomes)} runs, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

        before = len(outcomes)
        try:
            draw()
        except _OutOfTime:
            pass
        print(f"  {name:8s} {len(outcomes) - before:5d} runs  {time.monotonic() - started:7.0f} s", file=sys.stderr,
              flush=True)

    if len(outcomes) < args.runs:
        print(f"stopped by --max-seconds {args.max_seconds:g}: {len(outcomes)} of the {args.runs} runs asked for made")
    report(outcomes, time.monotonic() - started, args.save)
    return 0


def _new_kind(o: fuzzkit.Outcome) -> bool:
    """A case of the kinds added for terminal safety, encodings, holes, numbers, targets and pipes."""
    c = o.case
    data = b"".join(c.files.values()) + (c.stdin or b"")
    return bool(c.holes or c.links or c.modes or c.stdout_closed or b"\x1b" in data or b"\x00\x00" in data[:64]
                or data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"9" * 331 in data)


def report(outcomes: list[fuzzkit.Outcome], wall_s: float, save: str | None) -> None:
    codes = collections.Counter("hang" if o.hung else o.code for o in outcomes)
    known = [o for o in outcomes if o.problems and fuzzkit.known_elsewhere(o)]
    mine = [o for o in outcomes if o.problems and not fuzzkit.known_elsewhere(o)]

    def count(pred) -> int:
        return sum(1 for o in outcomes if pred(o))

    seconds = sorted(o.seconds for o in outcomes)
    print(f"fuzz: {len(outcomes)} runs in {wall_s:.0f} s "
          f"({', '.join(f'{k}: {n}' for k, n in sorted(collections.Counter(o.case.label for o in outcomes).items()))})")
    print(f"exit codes: {', '.join(f'{k}: {n}' for k, n in sorted(codes.items(), key=lambda kv: str(kv[0])))}")
    print(f"exit 4 (internal error):        {count(lambda o: o.code == 4 and not o.hung)}")
    print(f"other exits (killed, crashed):  "
          f"{count(lambda o: not o.hung and o.code != 4 and o.code not in fuzzkit.EXIT_CODES)}")
    print(f"hangs over {fuzzkit.TIME_LIMIT_S:g} s:              {count(lambda o: o.hung)}")
    print(f"invalid JSON with --json:       {count(lambda o: 'stdout is not valid JSON' in o.problems)}")
    print(f"unexpected writes:              {count(lambda o: bool(o.unexpected_writes))}")
    print(f"temporaries left behind:        {count(lambda o: bool(o.leftovers))}")
    print(f"exit 2 not on one line:         {count(lambda o: any('lines on stderr' in p for p in o.problems))}")
    print(f"tracebacks:                     {count(lambda o: 'traceback on stderr' in o.problems)}")
    print(f"raw controls on the terminal:   {count(lambda o: any(p.startswith('raw control') for p in o.problems))}")
    print(f"closed stdout taken as success: {count(lambda o: any('stdout closed' in p for p in o.problems))}")
    print(f"cases with escapes/encodings/huge numbers in bytes, sparse files, planted links or read-only targets, "
          f"closed stdout: {count(_new_kind)}")
    if seconds:
        print(f"time per run: median {statistics.median(seconds):.2f} s, p99 {seconds[int(len(seconds) * 0.99) - 1]:.2f} s, "
              f"max {seconds[-1]:.2f} s; peak RSS max {max(o.max_rss_mib for o in outcomes):.0f} MiB")
    print(f"problems: {len(mine)} in this project's open areas, {len(known)} known in other areas (fuzzkit.KNOWN)")
    for title, group in (("problems", mine), ("known elsewhere", known)):
        kinds = collections.defaultdict(list)
        for o in group:
            last = o.err.decode("utf-8", "replace").strip().splitlines()
            # One line per kind of problem: numbers, positions and paths vary from case to case.
            said = re.sub(r"\d+", "N", (last[-1] if last else "").split(": ", 2)[-1])[:110]
            kinds[(o.case.label, o.problems[0].split(":")[0], said)].append(o)
        for (label, problem, err), items in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            print(f"  [{title}] {len(items)} x {label}: {problem}: {err}")
            at = fuzzkit.where(items[0]) if problem.startswith(("exit", "hang")) else ""
            print(f"      e.g. {items[0].case.argv!r}{'  at ' + at if at else ''}")
            if title == "known elsewhere":
                print(f"      known: {fuzzkit.known_elsewhere(items[0])}")
    if save:
        folder = Path(save)
        for n, o in enumerate(mine + known):
            case_dir = folder / f"{n:04d}-{o.case.label}"
            case_dir.mkdir(parents=True, exist_ok=True)
            for name, data in o.case.files.items():
                (case_dir / "files" / name).parent.mkdir(parents=True, exist_ok=True)
                (case_dir / "files" / name).write_bytes(data)
            (case_dir / "case.json").write_text(json.dumps({"argv": o.case.argv, "problems": o.problems,
                                                            "exit": o.code, "stderr": o.err.decode("utf-8", "replace")},
                                                           indent=1))
            if o.case.stdin is not None:
                (case_dir / "stdin").write_bytes(o.case.stdin)
        print(f"saved {len(mine) + len(known)} problem cases into {folder}")


if __name__ == "__main__":
    sys.exit(main())
