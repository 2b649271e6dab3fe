"""Two `oomdoctor train.log train.yaml --apply --yes` at once on one config, N rounds, counted.

    python benchmarks/concurrent_apply.py --rounds 200

Each round is a fresh copy of the demo; the check is tests/fuzzkit.concurrent_apply_outcome: no lost
update, no half plan, every .orig the original (never a hard link to the config), no second backup, no
temporary left, each run exit 1 (applied, or already applied) or 2 (refused in one line). On a loaded
machine the second run may start after the first has finished: it then plans again from the patched
config, as a run typed later would; such a round is checked against two serial runs and counted apart.
"""
from __future__ import annotations

import argparse
import collections
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import fuzzkit  # noqa: E402  (found through the path set above)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--writers", type=int, default=2)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="oomdoctor-concurrent-"))
    problems: collections.Counter = collections.Counter()
    bad_rounds = serial = 0
    started = time.monotonic()
    try:
        for n in range(args.rounds):
            found, one_after_the_other = fuzzkit.concurrent_apply_outcome(base / str(n), args.writers)
            bad_rounds += bool(found)
            serial += one_after_the_other
            problems.update(p.split(":")[0] for p in found)
            shutil.rmtree(base / str(n), ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"concurrent apply: {args.rounds} rounds of {args.writers} writers in {time.monotonic() - started:.0f} s; "
          f"rounds with a problem: {bad_rounds}; rounds where the second run started after the first had "
          f"finished (checked as two serial runs): {serial}")
    for what, count in problems.most_common():
        print(f"  {what}: {count}")
    return 1 if bad_rounds else 0


if __name__ == "__main__":
    sys.exit(main())
