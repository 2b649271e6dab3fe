"""Time the planner on the acceptance scenarios: rule loading, ladder plan, least-cost plan.

    python benchmarks/bench_planner.py

The least-cost search has a 150 ms budget (engine.SEARCH_BUDGET_S); this prints how much it uses.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oomdoctor.facts import Hardware, ModelShape, TrainingSetup  # noqa: E402
from oomdoctor.planner import (  # noqa: E402
    default_rules_dir,  # noqa: E402
    least_cost_plan,
    make_plan,
    plan_cost,
)
from oomdoctor.planner.validate import build_book  # noqa: E402

SCENARIOS = {
    "llama2-7b full, 1x80GB": (
        TrainingSetup(method="full", micro_batch=4, seq_len=2048),
        ModelShape("meta-llama/Llama-2-7b-hf", params_total=6738415616),
        Hardware(gpu="A100-80GB", gpu_gib=80.0)),
    "qwen2.5-7b lora 8k, 1x24GB": (
        TrainingSetup(method="lora", micro_batch=4, seq_len=8192),
        ModelShape("Qwen/Qwen2.5-7B", hidden_size=3584, intermediate_size=18944, num_layers=28, num_heads=28,
                   num_kv_heads=4, vocab_size=152064, attention_bias=True, params_total=7615616512),
        Hardware(gpu="RTX4090", gpu_gib=23.99)),
    "llama2-70b full, 1x24GB (needs offload)": (
        TrainingSetup(method="full", micro_batch=2, seq_len=4096),
        ModelShape("meta-llama/Llama-2-70b-hf", hidden_size=8192, intermediate_size=28672, num_layers=80,
                   num_heads=64, num_kv_heads=8, params_total=68976648192),
        Hardware(gpu="RTX4090", gpu_gib=23.99)),
}


def _best_ms(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def main() -> None:
    print(f"load default rules: {_best_ms(lambda: build_book([default_rules_dir()])):.1f} ms")
    for name, (setup, shape, hw) in SCENARIOS.items():
        ladder = make_plan(setup, shape, hw)
        cheap = least_cost_plan(setup, shape, hw)
        print(f"{name}: ladder {_best_ms(lambda: make_plan(setup, shape, hw)):.1f} ms "
              f"({len(ladder.steps)} steps, cost {plan_cost(ladder):.1f}, fits {ladder.fits}); "
              f"least-cost {_best_ms(lambda: least_cost_plan(setup, shape, hw)):.1f} ms "
              f"({len(cheap.steps)} steps, cost {plan_cost(cheap):.1f}, fits {cheap.fits})")


if __name__ == "__main__":
    main()
