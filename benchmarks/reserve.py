"""Reserved versus allocated: the caching allocator's reserve, its mechanics and the pairs it is checked on.

    python benchmarks/reserve.py

Mechanics (pytorch c10/core/AllocatorConfig.h, c10/core/CachingDeviceAllocator.h get_round_size /
get_allocation_size, c10/cuda/CUDACachingAllocator.cpp; modelled in oomdoctor/memory/allocator.py): sizes
round up to 512 B; a request <= 1 MiB takes a block of a 2 MiB small segment, 1-10 MiB one of a 20 MiB
segment, larger ones their own segment rounded up to 2 MiB; a freed block is cached and reused best fit
(split when the rest is > 1 MiB); segments never merge; on a failed cudaMalloc every wholly idle segment is
released and the call retried, so an OOM message's reserved-but-unallocated is idle space inside segments that
still hold live blocks.

Printed: published (allocated, reserved) pairs; the (allocated, idle, tried) triples of every real torch OOM
message in tests/data/logs/real, read with oomdoctor's crash-log parser; the loss's logits-sized tensors
replayed through the allocator model (a fixed-length step, and a batch after a slightly shorter one); and each
calibration row that measured max_memory_reserved against the estimate's reserved figure and the former
rule (half of the peak moment's activations and logits).
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


def half_churn_reserved(est) -> float:
    """The former rule, for comparison: max over moments of allocated + half its activations (autocast's weight
    copies excluded) and logits, at least allocated + 0.25 GiB, plus the varying-length segments."""
    d = est.details
    at = []
    for name in est.moments:
        key = name.replace(" ", "_")
        act = d.get(f"moment_{key}_activations_gib", 0.0) - d.get(f"moment_{key}_casts_gib", 0.0)
        at.append(d.get(f"moment_{key}_gib", 0.0) + 0.5 * (act + d.get(f"moment_{key}_logits_gib", 0.0)))
    base = est.allocated_gib - d["cublas_workspace_gib"]
    return est.allocated_gib + max(0.25, max(at, default=base) - base) + d["varlen_cached_logits_uncapped_gib"]


def block_rows() -> list[tuple[str, float, float, float, float]]:
    """(case, measured reserved, allocated estimate, the estimate's reserved figure, the former rule's)."""
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
        rows.append((case["id"], accuracy.measured_gib(case), est.allocated_gib, accuracy.predicted(est, "reserved"),
                     half_churn_reserved(est)))
    return rows


# The logits-sized tensors of a loss, in the order they are made and freed, in bytes per logit (bf16 compute):
# HF >= 4.49 ForCausalLMLoss (logits.float(), log-softmax saved; backward: nll and log-softmax gradients, the
# cast back); remote code that shifts compute-dtype logits under autocast (Qwen-1 modeling_qwen.py: shift copy,
# cross_entropy's log-softmax in bf16, nll_loss's saved fp32 copy, then the HF Trainer's fp32 copy of the returned
# logits, accelerate convert_outputs_to_fp32; backward: nll's fp32 gradient, its bf16 cast, log-softmax's
# gradient, the slice's zero-filled gradient); transformers <= 4.45
# (forward upcasts, shifts an fp32 copy; backward's slice gradient is fp32).
LOSS_EVENTS = {
    "hf": [("A", "lg", 2), ("A", "up", 4), ("A", "lsm", 4), ("F", "up"), ("F", "lg"), ("A", "g", 4), ("A", "gi", 4),
           ("F", "g"), ("F", "lsm"), ("A", "gb", 2), ("F", "gi"), ("F", "gb")],
    "compute": [("A", "lg", 2), ("A", "sh", 2), ("A", "lsm", 2), ("A", "cast", 4), ("F", "sh"), ("A", "out", 4),
                ("F", "lg"), ("F", "out"), ("A", "g", 4), ("F", "cast"), ("A", "gb", 2), ("F", "g"), ("A", "gi", 2),
                ("F", "lsm"), ("F", "gb"), ("A", "gf", 2), ("F", "gi"), ("F", "gf")],
    "legacy": [("A", "lg", 2), ("A", "up", 4), ("F", "lg"), ("A", "sh", 4), ("A", "lsm", 4), ("F", "sh"), ("A", "g", 4),
               ("A", "gi", 4), ("F", "g"), ("F", "lsm"), ("A", "gf", 4), ("F", "gi"), ("A", "gb", 2), ("F", "gf"),
               ("F", "up"), ("F", "gb")],
}


def loss_replay(regime: str, fractions: tuple[float, ...], logits: int = 2048 * 128256) -> tuple[float, float]:
    """(max reserved, max allocated) in bytes per logit of the longest batch, for batches of these lengths."""
    from oomdoctor.memory.allocator import Allocator

    al = Allocator()
    for frac in fractions:
        live = {}
        n = int(logits * frac)
        for ev in LOSS_EVENTS[regime]:
            if ev[0] == "A":
                live[ev[1]] = al.malloc(ev[2] * n)
            else:
                al.free(live.pop(ev[1]))
    return al.max_reserved / logits, al.max_allocated / logits


def main() -> int:
    print(f"{'published pair':48} {'alloc':>7} {'reserved':>9} {'reserve':>8}  source")
    for what, alloc, reserved, frac, source in pairs_table():
        print(f"{what:48} {alloc:7.2f} {reserved:9.2f} {frac:+8.0%}  {source}")
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
    print(f"\n{'loss replayed (bytes per logit)':34} {'allocated':>9} {'fixed length':>13} {'after a 0.99x batch':>20}")
    for regime in LOSS_EVENTS:
        fixed, alloc = loss_replay(regime, (1.0, 1.0))
        after, _ = loss_replay(regime, (0.99, 1.0))
        print(f"{regime:34} {alloc:9.1f} {fixed:13.1f} {after:20.1f}")
    brows = block_rows()
    print(f"\n{'reserved row':10} {'measured':>9} {'allocated':>10} {'estimate':>17} {'former rule':>18}")
    for cid, meas, alloc, est_r, half in brows:
        print(f"{cid:10} {meas:9.2f} {alloc:10.2f} {est_r:8.2f} ({(est_r - meas) / meas:+6.1%}) {half:9.2f} "
              f"({(half - meas) / meas:+6.1%})")
    for label, idx in (("estimate", 3), ("former rule", 4)):
        errs = sorted(abs(r[idx] - r[1]) / r[1] for r in brows)
        if errs:
            print(f"{label}: median |error| {statistics.median(errs):.1%} over {len(errs)} reserved rows")
    print("rule: reserved = max over the step's moments of its allocated bytes + the largest block it churns "
          "(memory.estimate.transient_blocks), + the varying-length segments")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    raise SystemExit(main())
