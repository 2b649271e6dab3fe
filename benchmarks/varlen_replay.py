"""How much the caching allocator keeps reserved over a run whose batch lengths vary step to step, against
ms-swift v1's Benchmark.md rows (section 27 of docs/estimates.md).

    python benchmarks/varlen_replay.py [--seeds 15]

Each step of a batch-1, unpacked run allocates and frees the loss's logits-sized tensors (Qwen-1 remote code
under the HF Trainer's autocast, `reserve.LOSS_EVENTS["compute"]`) at that step's length; the replay runs them
through `oomdoctor.memory.allocator` (torch's caching allocator: best fit, split, segments never merge, no
empty_cache) and reads max_memory_reserved per logit of the longest batch. The lengths are drawn i.i.d. (the
HF Trainer's RandomSampler) and samples above max_length are dropped, as ms-swift v1's default
truncation_strategy 'delete' does (swift/llm/utils/template.py:502 at 4312aeb28), from three shapes: the
benchmark's stated token statistics (3234.4 +- 2547.5, min 91; a gamma of those moments, an assumption, since the
dataset's histogram is not published), and uniform and linearly rising densities on [1, max_length] with the
same count. Each draw stands for one sample order; the published run met one order (its seed), so its figure
is one draw of this distribution, not its median.

Printed per max_length: the rows' measured bytes per logit (measured max reserved minus the estimate's allocated
bytes other than the loss's, per logit of the longest batch), the estimate's own figure (the loss's allocated
bytes, its idle fp32 block and one earlier near-record's segments) and the replay's p10 / p50 / p90.
"""
from __future__ import annotations

import os
import random
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from oomdoctor.facts import GIB  # noqa: E402
from oomdoctor.memory import estimate  # noqa: E402
from oomdoctor.memory.allocator import Allocator  # noqa: E402

# the benchmark's dataset, as Benchmark.md states it (commit 4312aeb28): 4959 samples (the dataset table of
# docs/source/LLM/支持的模型和数据集.md), tokens 3234.4 +- 2547.5, min 91 (Qwen tokenizer)
DATASET_SAMPLES = 4959
TOKENS_MEAN, TOKENS_STD, TOKENS_MIN = 3234.4, 2547.5, 91


def run_samples(max_length: int) -> int:
    """scripts/benchmark/test_memory_time/run_single.py at 4312aeb28: every sample up to max_length 2048
    (train_dataset_sample -1), the first 1000 of the dataset above it (`random_state.permutation(1000)`)."""
    return DATASET_SAMPLES if max_length <= 2048 else 1000


def replay_per_logit(lengths: list, events: list | None = None, vocab: int = 151936) -> float:
    """max_memory_reserved over the run, in bytes per logit of its longest batch."""
    if events is None:
        from reserve import LOSS_EVENTS
        events = LOSS_EVENTS["compute"]
    al = Allocator()
    for length in lengths:
        live = {}
        n = length * vocab
        for ev in events:
            if ev[0] == "A":
                live[ev[1]] = al.malloc(ev[2] * n)
            else:
                al.free(live.pop(ev[1]))
    return al.max_reserved / (max(lengths) * vocab)


def draw(shape: str, max_length: int, count: int, rnd: random.Random) -> list:
    """One sample order of the run's retained lengths."""
    if shape == "stated":
        k, theta = (TOKENS_MEAN / TOKENS_STD) ** 2, TOKENS_STD ** 2 / TOKENS_MEAN
        lengths = (max(TOKENS_MIN, int(rnd.gammavariate(k, theta))) for _ in range(count))
        return [n for n in lengths if n <= max_length]
    if shape == "uniform":
        return [rnd.randint(1, max_length) for _ in range(count)]
    return [max(1, int(max_length * rnd.random() ** 0.5)) for _ in range(count)]   # density rising to the cap


def measured_per_logit() -> dict:
    """max_length -> [(row, measured bytes per logit, estimate's bytes per logit)] for the batch-1 Qwen-1 rows."""
    import accuracy
    import yaml
    with open(os.path.join(accuracy.REF, "measured_peaks.yaml"), encoding="utf-8") as fh:
        data = yaml.load(fh, Loader=accuracy._Loader)
    cases = data["cases"] if isinstance(data, dict) else data
    ref = accuracy._reference_shapes()
    out: dict = {}
    for case in cases:
        if "Benchmark.md" not in str(case.get("source")) or case.get("micro_batch") != 1 \
                or not str(case.get("model", "")).startswith("Qwen/") or case.get("method") == "full":
            continue
        conv = accuracy.convert(case, ref)
        if isinstance(conv, str):
            continue
        est = estimate(*conv)
        d = est.details
        logits = d["tokens_per_gpu"] * conv[1].vocab_size
        loss_alloc = d.get("moment_loss_logits_gib", 0.0)
        other = est.allocated_gib - loss_alloc
        meas = (accuracy.measured_gib(case) - other) * GIB / logits
        mine = (accuracy.predicted(est, "reserved") - other) * GIB / logits
        out.setdefault(conv[0].seq_len, []).append((case["id"], meas, mine))
    return out


def main(argv: list) -> int:
    seeds = int(argv[argv.index("--seeds") + 1]) if "--seeds" in argv else 15
    rows = measured_per_logit()
    print(f"{'max_length':>10} {'samples':>7} {'kept':>5}  {'rows: measured / estimate, B per logit':44} "
          f"{'replay p10 / p50 / p90 (stated | uniform | rising)'}")
    for max_length in sorted(rows):
        count = run_samples(max_length)
        kept = statistics.median(len(draw("stated", max_length, count, random.Random(s))) for s in range(seeds))
        cells = []
        for shape in ("stated", "uniform", "rising"):
            n = count if shape == "stated" else int(kept)
            vals = sorted(replay_per_logit(draw(shape, max_length, n, random.Random(s))) for s in range(seeds))
            q = statistics.quantiles(vals, n=10)
            cells.append(f"{q[0]:4.0f}/{statistics.median(vals):3.0f}/{q[-1]:3.0f}")
        meas = ", ".join(f"{cid} {m:.0f}/{e:.0f}" for cid, m, e in rows[max_length])
        print(f"{max_length:>10} {count:>7} {int(kept):>5}  {meas[:44]:44} {' | '.join(cells)}")
    print("one sample order reserves p10..p90 of the replay; the estimate keeps one earlier near-record (26 B/logit)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
