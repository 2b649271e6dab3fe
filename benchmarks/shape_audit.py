"""Score a model-shape audit (tests/data/corpus/MANIFEST.yaml `audit:` to `audit_9:`) with the code on the path:
within 1% of the trusted count (transformers' own, or the checkpoint index's: audit_5, audit_8, audit_9), refused with one line,
counted behind the guessed-shape warning, or silently wrong. Run it on an older checkout to get that checkout's
first-sight figure.

    OOMDOCTOR_NO_TRANSFORMERS=1 python benchmarks/shape_audit.py audit_2     # features only
    OOMDOCTOR_META_TIMEOUT=300 python benchmarks/shape_audit.py audit_2      # with transformers' meta-device count
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import yaml

from oomdoctor.errors import InputError
from oomdoctor.memory import count_params
from oomdoctor.models import read_config_json, shape_warnings

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus"


def main(section: str) -> int:
    entries = yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text(encoding="utf-8"))[section]
    tally: dict[str, int] = {}
    started = time.perf_counter()
    for entry in entries:
        trusted = entry["trusted_params"]
        try:
            shape = read_config_json(str(CORPUS / entry["dir"] / "config.json"), entry["dir"])
        except InputError as err:
            kind, detail = "refused", getattr(err.message, "code", str(err.message))
        else:
            got = count_params(shape).total
            error = (got - trusted) / trusted
            warned = bool(shape_warnings(shape))
            kind = "within 1%" if abs(error) <= 0.01 else ("warned" if warned else "SILENTLY WRONG")
            detail = f"{got:,} ({error:+.2%}, {shape.shape_confidence}{', warned' if warned else ''})"
        tally[kind] = tally.get(kind, 0) + 1
        print(f"{entry['dir']:28} {kind:15} {detail}")
    within = tally.get("within 1%", 0)
    others = ", ".join(f"{k} {v}" for k, v in sorted(tally.items()) if k != "within 1%") or "nothing else"
    print(f"{section}: {within}/{len(entries)} within 1% ({within / len(entries):.0%}); {others}; "
          f"transformers {'off' if os.environ.get('OOMDOCTOR_NO_TRANSFORMERS') else 'allowed'}; "
          f"{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "audit_2"))
