"""Score the real-config corpus entries of one first-sight audit (MANIFEST.yaml `audit:`), as the test does.

    python benchmarks/real_configs_audit.py 2026-12
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import test_real_configs as corpus  # noqa: E402


def main(audit: str) -> int:
    chosen = [e for e in corpus.MANIFEST if str(e.get("audit")) == audit]
    full = facts = right = 0
    for entry in chosen:
        wrong, error = corpus._compare(entry)
        facts += len(entry["facts"])
        right += len(entry["facts"]) - len(wrong)
        if not wrong and not error:
            full += 1
            continue
        print(entry["file"])
        for line in ([error] if error else []) + wrong:
            print("    " + line)
    share = full / len(chosen) if chosen else 0.0
    print(f"audit {audit}: configs fully right {full}/{len(chosen)} ({share:.0%}); facts right {right}/{facts}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "2026-12"))
