"""How long `oomdoctor config.yaml --advise` takes to build the fit matrix (13 cards x 1/2/4/8 GPUs).

    python benchmarks/bench_advise.py

Worst cases are runs that fit nowhere as configured (every cell searches for a least-cost plan).
Target: well under 2 s per matrix.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import replace

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from oomdoctor import advise  # noqa: E402
from oomdoctor.pipeline import Options, build_report  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..")
DEMO = os.path.join(ROOT, "oomdoctor", "data", "demo", "train.yaml")
CASES = [
    ("7B full, demo config, 1 x A100-80GB", Options(files=(DEMO,), gpu="A100-80GB"), {}),
    ("13B full, 4 x A100-80GB", Options(files=(DEMO,), gpu="A100-80GB", gpus=4, model="meta-llama/Llama-2-13b-hf"), {}),
    ("7B full, seq 8192, micro-batch 8", Options(files=(DEMO,), gpu="H100"), {"seq_len": 8192, "micro_batch": 8}),
    ("70B full, 8 x H100", Options(files=(DEMO,), gpu="H100", gpus=8, model="meta-llama/Llama-2-70b-hf"), {}),
]


def main() -> None:
    for name, opts, changes in CASES:
        try:
            report = build_report(opts)
        except Exception as err:     # a model missing from the catalog: skip the case
            print(f"{name:45} skipped: {err}")
            continue
        if changes:
            from oomdoctor.pipeline import plan_report
            report = plan_report(replace(report, setup=replace(report.setup, **changes)), opts)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            matrix = advise.build(report)
            times.append(time.perf_counter() - t)
        ladder = sum(1 for c in matrix.cells if c.search == "ladder")
        fits = sum(1 for c in matrix.cells if c.fits)
        print(f"{name:45} median {statistics.median(times):.3f} s  max {max(times):.3f} s  "
              f"cells fitting {fits}/{len(matrix.cells)}  ladder fallbacks {ladder}")


if __name__ == "__main__":
    main()
