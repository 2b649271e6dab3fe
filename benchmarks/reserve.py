"""Reserved versus allocated: the caching allocator's reserve from published pairs, and the rule it gives.

    python benchmarks/reserve.py

PyTorch's caching allocator keeps freed blocks for reuse, so max_memory_reserved exceeds
max_memory_allocated. The pairs below are runs that printed both figures (each with its source); the
calibration set's rows that measured the reserved figure are set against the estimate's allocated peak and
the token-shaped bytes (activations and logits) of its moments. The estimate's rule
(oomdoctor/memory/estimate.py): max_memory_reserved = the largest over the step's moments of the allocated
bytes plus ALLOCATOR_RESERVE_FRAC x that moment's activations and logits (autocast's weight copies excluded),
never less than allocated + RESERVE_MIN_GIB.
"""
from __future__ import annotations

import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

# (what ran, allocated GiB, reserved GiB, source). Figures in GB are converted where the source says GB.
PAIRS = (
    ("bert-base full fine-tune, one GPU", 12.56, 12.94, "huggingface/peft issue #1469 (torchtune get_memory_stats)"),
    ("bert-base PEFT LoRA, one GPU", 10.01, 10.44, "huggingface/peft issue #1469"),
    ("bert-base last layer only, one GPU", 1.03, 1.70, "huggingface/peft issue #1469"),
    ("ESM-sized BERT full, one GPU", 2.53, 3.01, "huggingface/peft issue #1469"),
    ("ESM-sized BERT PEFT LoRA, one GPU", 2.17, 2.41, "huggingface/peft issue #1469"),
    ("Llama-2-7B LoRA, FSDP on 4 A100-40GB, pure bf16", 15.22 / 1.0737, 19.36 / 1.0737,
     "meta-llama/llama-recipes PR #41 (peak active vs reserved, GB)"),
    ("Llama-2-7B LoRA, FSDP, limit_all_gathers", 20.20 / 1.0737, 27.36 / 1.0737, "meta-llama/llama-recipes PR #41"),
    ("Llama-2-70B QLoRA, FSDP on 2 GPUs", 8.28, 9.16, "AnswerDotAI/fsdp_qlora benchmarks notes"),
)


def pairs_table() -> list[tuple[str, float, float, float, str]]:
    return [(what, alloc, reserved, (reserved - alloc) / alloc, source) for what, alloc, reserved, source in PAIRS]


def calibration_rows() -> list[tuple[str, float, float, float]]:
    """(case, measured reserved, estimated allocated, reserve the measurement implies / token-shaped bytes)."""
    import yaml

    import accuracy
    from oomdoctor.memory import estimate

    with open(os.path.join(accuracy.REF, "measured_peaks.yaml")) as fh:
        cases = yaml.safe_load(fh)
    ref = accuracy._reference_shapes()
    rows = []
    for case in cases:
        if case.get("reliability") not in ("high", "medium") or case.get("measured_peak_gb") is None:
            continue
        if accuracy.kind_of(case) != "reserved":
            continue
        conv = accuracy.convert(case, ref)
        if isinstance(conv, str):
            continue
        setup, shape, hw = conv
        est = estimate(setup, shape, hw)
        key = est.peak_moment.replace(" ", "_")
        churn = est.details.get(f"moment_{key}_activations_gib", 0.0) + est.details.get(f"moment_{key}_logits_gib", 0.0)
        measured = accuracy.measured_gib(case)
        implied = (measured - est.allocated_gib) / churn if churn > 0.05 else float("nan")
        rows.append((case["id"], measured, est.allocated_gib, implied))
    return rows


def main() -> int:
    from oomdoctor.memory.estimate import ALLOCATOR_RESERVE_FRAC, RESERVE_MIN_GIB

    print(f"{'published pair':48} {'alloc':>7} {'reserved':>9} {'reserve':>8}  source")
    for what, alloc, reserved, frac, source in pairs_table():
        print(f"{what:48} {alloc:7.2f} {reserved:9.2f} {frac:+8.0%}  {source}")
    rows = calibration_rows()
    print(f"\n{'calibration row (reserved)':28} {'measured':>9} {'allocated':>10} {'implied reserve / token-shaped bytes':>38}")
    for cid, measured, alloc, implied in rows:
        print(f"{cid:28} {measured:9.2f} {alloc:10.2f} {implied:38.2f}")
    finite = sorted(x for *_, x in rows if x == x)
    if finite:
        print(f"\nimplied fraction over {len(finite)} rows: median {statistics.median(finite):.2f}, "
              f"quartiles {finite[len(finite) // 4]:.2f}-{finite[(3 * len(finite)) // 4]:.2f}")
    print(f"rule: reserved = max over moments (allocated + {ALLOCATOR_RESERVE_FRAC} x activations and logits), "
          f"at least allocated + {RESERVE_MIN_GIB} GiB")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    raise SystemExit(main())
