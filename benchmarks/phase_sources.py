"""How much of the labelled phases each source of phase cues reads on its own, per audit folder.

    python benchmarks/phase_sources.py            # the reader as it is
    python benchmarks/phase_sources.py --only-taxonomy

--only-taxonomy switches off the cues written from pastes (phase.py's frame word lists, callsites.py's frame rows
and the lexical fallback), leaving the module taxonomy (taxonomy.py, written from the frameworks' source) with the
progress, banner and message cues every reading keeps. Run it on a checkout without taxonomy.py to see what those
other cues read alone. Scored as tests/test_crashlog_fresh.py scores the phase: the labelled phase, with evidence,
of the excerpts whose log carries a cue.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def _only_taxonomy() -> None:
    from oomdoctor.crashlog import parse, phase
    from oomdoctor.lazyre import lazy_re

    never = lazy_re(r"(?!x)x", needs=("\x00",))
    for name in phase._FRAME_CUES:
        phase._FRAME_CUES[name] = never
    phase._TAXONOMY.clear()
    parse.lexical_phase = lambda lines: None  # type: ignore[assignment]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only-taxonomy", action="store_true")
    args = ap.parse_args()
    if args.only_taxonomy:
        _only_taxonomy()
    import test_crashlog_fresh as fresh

    right = total = 0
    for folder in fresh.SETS:
        rows = [fresh.score(folder, case) for case in fresh.load(folder)]
        marks = [r["phase"] for r in rows if r["phase"] is not None]
        right, total = right + sum(marks), total + len(marks)
        print(f"{folder:10s} {sum(marks):3d} of {len(marks):3d}")
    print(f"{'all':10s} {right:3d} of {total:3d} ({right / total:.1%})")


if __name__ == "__main__":
    main()
