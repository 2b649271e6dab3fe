"""Reserved versus allocated: the caching allocator's reserve from published pairs, and the rule it gives.

    python benchmarks/reserve.py

PyTorch's caching allocator keeps freed blocks for reuse, so max_memory_reserved exceeds
max_memory_allocated. The pairs below are runs that printed both figures (each with its source); the
calibration set's rows that measured the reserved figure are set against the estimate's allocated peak and
the token-shaped bytes (activations and logits) of its moments. The estimate's rule
(oomdoctor/memory/estimate.py): max_memory_reserved = the largest over the step's moments of the allocated
bytes plus ALLOCATOR_RESERVE_FRAC x that moment's activations and logits (autocast's weight copies excluded),
never less than allocated + RESERVE_MIN_GIB.

Also printed: the (allocated, reserved-but-unallocated, tried to allocate) triples of every real torch OOM
message in tests/data/logs/real, read with oomdoctor's own crash-log parser, and the allocator's own account
(details["allocator_block_reserve_gib"]: the largest block the step churns through at its peak moment) beside
the rule above for each calibration row. Mechanics (pytorch c10/core/AllocatorConfig.h and
c10/cuda/CUDACachingAllocator.cpp): sizes round up to 512 B; a request <= 1 MiB takes a block of a 2 MiB small
segment, 1-10 MiB one of a 20 MiB segment, larger ones their own segment rounded up to 2 MiB; a freed block is
cached and reused best-fit (split when the rest is > 1 MiB), segments never merge; on a failed cudaMalloc the
allocator frees every wholly idle segment and retries before raising, so an OOM message's reserved-but-
unallocated is the idle space inside segments that still hold live blocks.
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
    import accuracy
    import yaml

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


def crash_pairs() -> list[tuple[str, float, float, float | None, str | None]]:
    """(log, allocated GiB, reserved-but-unallocated GiB, tried GiB, phase) of each real OOM message."""
    import glob

    from oomdoctor.crashlog.parse import parse_log

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "logs", "real")
    out = []
    for path in sorted(glob.glob(os.path.join(root, "*.log"))):
        ev = parse_log(path).primary
        if ev is None or ev.allocated_gib is None or ev.reserved_unallocated_gib is None or ev.allocated_gib < 2:
            continue
        out.append((os.path.basename(path), ev.allocated_gib, ev.reserved_unallocated_gib, ev.tried_gib, ev.phase))
    return out


def block_rows() -> list[tuple[str, float, float, float, float]]:
    """(case, measured reserved, allocated estimate, half-the-churn rule's reserved, largest-block reserved)."""
    import accuracy
    import yaml

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
        est = estimate(*conv)
        d = est.details
        block = est.allocated_gib + d["allocator_block_reserve_gib"] + d["varlen_cached_logits_uncapped_gib"]
        rows.append((case["id"], accuracy.measured_gib(case), est.allocated_gib, d["reserved_gib"], block))
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
    pairs = crash_pairs()
    print(f"\n{'real OOM message (tests/data/logs/real)':44} {'alloc':>7} {'idle':>6} {'tried':>6} {'idle/alloc':>10} "
          f"{'idle/tried':>10}  phase")
    for name, alloc, idle, tried, phase in pairs:
        per_tried = f"{idle / tried:10.2f}" if tried else f"{'-':>10}"
        print(f"{name[:44]:44} {alloc:7.2f} {idle:6.2f} {tried or 0:6.2f} {idle / alloc:10.1%} {per_tried}  {phase or '-'}")
    if pairs:
        fr = sorted(idle / alloc for _, alloc, idle, _, _ in pairs)
        ft = sorted(idle / tried for _, _, idle, tried, _ in pairs if tried)
        print(f"{len(pairs)} messages: idle/allocated median {statistics.median(fr):.1%}, p90 "
              f"{fr[int(0.9 * (len(fr) - 1))]:.1%}; idle/tried median {statistics.median(ft):.2f}; idle below the "
              f"request in {sum(1 for _, _, i, t, _ in pairs if t and i < t)}/{len(ft)}")
    brows = block_rows()
    print(f"\n{'reserved row':10} {'measured':>9} {'allocated':>10} {'half-churn':>11} {'largest-block':>14}")
    for cid, meas, alloc, half, block in brows:
        print(f"{cid:10} {meas:9.2f} {alloc:10.2f} {half:11.2f} ({(half - meas) / meas:+6.1%}) {block:8.2f} "
              f"({(block - meas) / meas:+6.1%})")
    for label, idx in (("half-churn", 3), ("largest-block", 4)):
        errs = sorted(abs(r[idx] - r[1]) / r[1] for r in brows)
        if errs:
            print(f"{label}: median |error| {statistics.median(errs):.1%} over {len(errs)} reserved rows")
    print(f"rule: reserved = max over moments (allocated + {ALLOCATOR_RESERVE_FRAC} x activations and logits), "
          f"at least allocated + {RESERVE_MIN_GIB} GiB")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    raise SystemExit(main())
