"""Totals of the held-back crash-log samples (audit 11b-24b together), never their individual rows.

The held-back thirds measure whether a change reaches excerpts nobody fixed for; reading their misses one by one would
turn them into one more fixed-for sample, so this prints only the sums: verdict, phase where a cue exists, and the
request to the byte. Run from a checkout: `PYTHONPATH=$PWD python benchmarks/heldback_totals.py [--sets a,b]`; with
`--code DIR` the reader is imported from another checkout (copy it to /tmp first: importing writes bytecode).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
HELD = ("audit11b", "audit12b", "audit13b", "audit14b", "audit15b", "audit16b", "audit17b", "audit18b", "audit19b",
        "audit20b", "audit21b", "audit22b", "audit23b", "audit24b", "audit25b")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=",".join(HELD))
    ap.add_argument("--code", default=None, help="checkout whose oomdoctor reads the logs (default: this one)")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE / "tests"))
    if args.code:
        sys.path.insert(0, args.code)
    import test_crashlog_fresh as t  # the scorer the tests use; its DATA is this tree's tests/data

    totals = {"verdict": [0, 0], "phase": [0, 0], "tried": [0, 0]}
    for name in args.sets.split(","):
        if not (t.DATA / name / "expected.yaml").is_file():
            continue
        for case in t.load(name):
            row = t.score(name, case)
            for key, tot in totals.items():
                if row[key] is not None:
                    tot[0] += bool(row[key])
                    tot[1] += 1
    print("; ".join(f"{k} {a}/{n} = {a / n:.1%}" if n else f"{k} -" for k, (a, n) in totals.items()))


if __name__ == "__main__":
    main()
