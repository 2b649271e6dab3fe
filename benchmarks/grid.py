"""Proof 2: the analytic estimate against the product's own tracer (`oomdoctor.simulate`) on a random grid.

    python benchmarks/grid.py [--n 200] [--seed 15] [--worst 12] [--jobs 1]
    python benchmarks/grid.py --real       # the real-size cells below (REAL_CELLS), each at full depth
    python benchmarks/grid.py --fsdp       # FSDP2 per-rank peaks at 2, 4, 8 ranks (FSDP_CELLS, fake process group)
    python benchmarks/grid.py --moe        # MoE families at real width, two MoE layers (benchmarks/moe_trace.py)

Samples configurations of small transformers models (2-6 layers, so a trace takes about a second on a
CPU) across the axes the estimate distinguishes: method (full, LoRA, freeze), framework regime (HF Trainer,
LLaMA-Factory's fp32 upcast, TRL's fp32 load, pure bf16, fp32), gradient checkpointing, eager or SDPA
attention, micro-batch 1-16, sequence 128-8192, vocabulary 32k-256k, tied or untied embeddings, GQA
ratios 1-8, LoRA targets, ranks and dropout, AdamW (foreach and fused), SGD and 8-bit AdamW. Each is
traced for two real training steps on fake tensors and compared with `estimate(...).allocated_gib`
minus the cuBLAS workspace (a constant the trace cannot see).

LoRA dropout is traced with CUDA's one-byte mask (the tracer recounts CPU dropout's input-dtype mask).
A case is within bounds when |estimate - traced| <= 5% of the traced peak or 64 MiB; the summary prints
the distribution of |error| (errors under 64 MiB count as 0), the cases above 5% and 10%, and the worst
cases with the moment each side puts the peak at. tests/test_grid.py runs a fixed-seed subset in CI.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup  # noqa: E402

MIB = 1 << 20
SLACK_BYTES = 64 * MIB          # below this an error is the allocator's rounding, not the model's
BOUND_P95 = 0.05
BOUND_MAX = 0.10
CI_SEED = 1515
HW = Hardware(gpu="grid", gpu_gib=1e6)


@dataclass(frozen=True)
class Case:
    name: str
    shape: ModelShape
    setup: TrainingSetup


@dataclass(frozen=True)
class Row:
    case: Case
    traced_bytes: int
    estimated_bytes: float
    traced_phase: str            # "step 2 backward"
    estimated_moment: str        # the estimate's peak moment
    params_trainable_traced: int
    params_trainable_estimated: int

    @property
    def error(self) -> float:
        """Signed relative error of the estimate."""
        return (self.estimated_bytes - self.traced_bytes) / self.traced_bytes

    @property
    def score(self) -> float:
        """|error|, or 0 when the estimate is within SLACK_BYTES of the trace."""
        return 0.0 if abs(self.estimated_bytes - self.traced_bytes) <= SLACK_BYTES else abs(self.error)


def _log_uniform_int(rng: random.Random, low: int, high: int) -> int:
    import math

    return int(round(math.exp(rng.uniform(math.log(low), math.log(high)))))


def sample(rng: random.Random, index: int) -> Case:
    """One random configuration (the order of draws is fixed: a seed always gives the same cases)."""
    head_dim = rng.choice((32, 64, 64, 128, 128))
    heads = rng.choice((4, 8, 16, 16, 32))
    hidden = head_dim * heads
    if hidden > 4096:
        heads = 4096 // head_dim
        hidden = head_dim * heads
    ratio = rng.choice([r for r in (1, 1, 2, 4, 8) if heads % r == 0])
    kv_heads = heads // ratio
    inter = int(round(hidden * rng.uniform(2.5, 3.6) / 64)) * 64
    vocab = _log_uniform_int(rng, 32000, 256000)
    tied = rng.random() < 0.35
    model_type = rng.choice(("llama", "llama", "llama", "qwen2", "mistral"))
    layers = rng.choice((2, 3, 4, 5, 6))
    shape = ModelShape(name=f"grid-{model_type}", model_type=model_type, hidden_size=hidden,
                       intermediate_size=inter, num_layers=layers, num_heads=heads, num_kv_heads=kv_heads,
                       head_dim=head_dim, vocab_size=vocab, tie_word_embeddings=tied,
                       attention_bias=model_type == "qwen2", torch_dtype=rng.choice(("bf16", "bf16", "fp32")))

    method = rng.choice(("full", "full", "lora", "lora", "lora", "freeze"))
    regime = rng.choice(("hf-bf16", "hf-amp-fp32", "llamafactory", "llamafactory", "trl", "pure-bf16", "fp32"))
    values: dict = {}
    if regime == "hf-bf16":            # HF Trainer, model loaded in bf16, autocast bf16
        values.update(framework="hf", precision="bf16", load_dtype="bf16")
    elif regime == "hf-amp-fp32":      # HF Trainer, fp32 model under bf16 autocast
        values.update(framework="hf", precision="bf16", load_dtype="fp32")
    elif regime == "llamafactory":     # fp32 upcast of trainables, checkpoint dtype for the rest
        values.update(framework="llamafactory", framework_version="0.9.4", precision="bf16")
    elif regime == "trl":
        values.update(framework="trl", precision="bf16")
    elif regime == "pure-bf16":
        values.update(framework="llamafactory", framework_version="0.9.4", precision="bf16", pure_bf16=True,
                      load_dtype="bf16")
    else:
        values.update(framework="hf", precision="fp32", load_dtype="fp32")
    optimizer = rng.choice(("adamw_torch", "adamw_torch", "adamw_torch_fused", "sgd", "adamw_8bit"))
    micro_batch = _log_uniform_int(rng, 1, 16)
    seq_len = _log_uniform_int(rng, 128, 8192)
    attention = rng.choice(("sdpa", "sdpa", "eager"))
    grad_ckpt = rng.random() < 0.5
    if method == "lora":
        targets = rng.choice((("all",), ("all",), ("q_proj", "v_proj"), ("q_proj", "k_proj", "v_proj", "o_proj"),
                              ("gate_proj", "up_proj", "down_proj"), ("q_proj", "v_proj", "down_proj")))
        values.update(lora_rank=rng.choice((4, 8, 16, 32, 64, 128)), lora_targets=targets,
                      extras={"lora_dropout": rng.choice((0.0, 0.0, 0.05))})
    elif method == "freeze":
        values.update(freeze_trainable_layers=rng.choice((1, 2)) if layers > 2 else 1)
    setup = TrainingSetup(method=method, micro_batch=micro_batch, seq_len=seq_len, attention=attention,
                          grad_ckpt=grad_ckpt, optimizer=optimizer, **values)
    name = (f"{index:03d} {model_type} L{layers} h{hidden} kv{kv_heads}/{heads} V{vocab // 1000}k"
            f"{' tied' if tied else ''} {method}{'/r' + str(setup.lora_rank) if method == 'lora' else ''} "
            f"{regime} {optimizer} {attention}{' ckpt' if grad_ckpt else ''} {micro_batch}x{seq_len}")
    return Case(name, shape, setup)


# Real-size cells: published models (their config from the catalog, oomdoctor/data/models.yaml) in the regimes
# users run and the random grid does not reach: other HF families (Qwen2.5 tied and untied with a 152k
# vocabulary, Gemma and Gemma 2 with 256k and soft-capping, Mistral, Phi-3's fused projections, a Qwen2-MoE),
# 2048-8192 tokens, eager and SDPA, checkpointing on and off, an fp32 model under bf16 autocast, LoRA on every
# linear or attention only, DoRA, full fine-tunes with fp32 AdamW states, and PEFT's MetaMathQA runs (the
# calibration rows mmqa-01/04/05). Each traces in 10-60 s (`--real`: about 20 min on two busy cores).
_HF_BF16 = dict(framework="hf", precision="bf16", load_dtype="bf16", grad_ckpt=False)
_HF_AMP = dict(framework="hf", precision="bf16", load_dtype="fp32", grad_ckpt=False)
_ALL = dict(method="lora", lora_rank=16, lora_targets=("all",))
REAL_CELLS: tuple[tuple[str, dict], ...] = (
    ("Qwen/Qwen2.5-0.5B", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=2048, grad_ckpt=True)),
    ("Qwen/Qwen2.5-0.5B", dict(_HF_AMP, **_ALL, micro_batch=4, seq_len=2048)),
    ("Qwen/Qwen2.5-1.5B", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=2048, attention="eager")),
    ("Qwen/Qwen2.5-1.5B", dict(_HF_AMP, method="full", optimizer="adamw_torch", micro_batch=4, seq_len=2048,
                               grad_ckpt=True)),
    ("Qwen/Qwen2.5-7B", dict(_HF_BF16, method="lora", lora_rank=16, lora_targets=("q_proj", "v_proj"),
                             micro_batch=1, seq_len=4096)),
    ("google/gemma-2b", dict(_HF_BF16, **_ALL, micro_batch=1, seq_len=8192, grad_ckpt=True)),
    ("google/gemma-2b", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=2048)),
    ("google/gemma-2-2b", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=4096, attention="eager", grad_ckpt=True)),
    ("google/gemma-2-2b", dict(_HF_BF16, **_ALL, micro_batch=1, seq_len=4096, attention="eager")),
    ("google/gemma-2-2b", dict(_HF_BF16, **_ALL, micro_batch=1, seq_len=4096)),   # no SDPA path: runs eager
    ("google/gemma-2-2b", dict(_HF_AMP, method="full", optimizer="adamw_torch", micro_batch=1, seq_len=2048,
                               attention="eager")),
    ("microsoft/Phi-3-mini-4k-instruct", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=2048, grad_ckpt=True)),
    ("microsoft/Phi-3-mini-4k-instruct", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=2048)),
    ("mistralai/Mistral-7B-v0.1", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=2048)),
    ("mistralai/Mistral-7B-v0.1", dict(_HF_BF16, **_ALL, use_dora=True, micro_batch=2, seq_len=2048)),
    ("meta-llama/Llama-3.2-1B", dict(_HF_BF16, **_ALL, use_dora=True, micro_batch=4, seq_len=2048, grad_ckpt=True)),
    ("meta-llama/Llama-3.2-1B", dict(_HF_BF16, method="lora", lora_rank=16, lora_targets=("q_proj", "v_proj"),
                                     use_dora=True, micro_batch=4, seq_len=2048)),
    ("meta-llama/Llama-3.2-1B", dict(_HF_BF16, method="full", optimizer="adamw_torch", micro_batch=8, seq_len=2048)),
    ("meta-llama/Llama-3.2-1B", dict(_HF_BF16, **_ALL, use_dora=True, micro_batch=1, seq_len=2048)),
    ("mistralai/Mistral-7B-v0.1", dict(_HF_BF16, **_ALL, use_dora=True, micro_batch=2, seq_len=2048, grad_ckpt=True)),
    ("microsoft/Phi-3-mini-4k-instruct", dict(_HF_BF16, method="full", optimizer="adamw_torch", micro_batch=2,
                                              seq_len=2048)),
    ("google/gemma-3-1b-pt", dict(_HF_BF16, **_ALL, micro_batch=2, seq_len=4096)),
    ("google/gemma-3-1b-pt", dict(_HF_AMP, method="full", optimizer="adamw_torch", micro_batch=2, seq_len=2048,
                                  attention="eager", grad_ckpt=True)),
    ("Qwen/Qwen2.5-7B", dict(_HF_AMP, method="full", optimizer="adamw_torch", micro_batch=1, seq_len=4096,
                             grad_ckpt=True)),
    ("Qwen/Qwen2.5-1.5B", dict(framework="hf", precision="fp32", load_dtype="fp32", grad_ckpt=False, **_ALL,
                               micro_batch=2, seq_len=2048)),
    ("meta-llama/Llama-3.1-8B", dict(_HF_BF16, **_ALL, micro_batch=8, seq_len=8192, grad_ckpt=True)),
    ("meta-llama/Llama-3.1-8B", dict(_HF_BF16, **_ALL, micro_batch=1, seq_len=8192, attention="eager")),
    # PEFT's MetaMathQA runs (method_comparison/MetaMathQA: pure bf16, no AMP, no checkpointing, 4 x <= 768), the
    # same code as the calibration rows mmqa-01 (full), mmqa-04 (LoRA r10 on the MLP) and mmqa-05 (r32 on q, v)
    ("meta-llama/Llama-3.2-3B", dict(_HF_BF16, pure_bf16=True, method="full", micro_batch=4, seq_len=768)),
    ("meta-llama/Llama-3.2-3B", dict(_HF_BF16, pure_bf16=True, method="lora", lora_rank=10,
                                     lora_targets=("gate_proj", "up_proj", "down_proj"), micro_batch=4, seq_len=768)),
    ("meta-llama/Llama-3.2-3B", dict(_HF_BF16, pure_bf16=True, method="lora", lora_rank=32,
                                     lora_targets=("q_proj", "v_proj"), micro_batch=4, seq_len=768)),
    ("mistralai/Mixtral-8x7B-v0.1", dict(_HF_BF16, method="lora", lora_rank=16,
                                         lora_targets=("q_proj", "k_proj", "v_proj", "o_proj"), micro_batch=1,
                                         seq_len=4096, grad_ckpt=True)),
    ("Qwen/Qwen1.5-MoE-A2.7B", dict(_HF_BF16, method="lora", lora_rank=16,
                                    lora_targets=("q_proj", "k_proj", "v_proj", "o_proj"), micro_batch=1,
                                    seq_len=2048, grad_ckpt=True)),
)


def real_cases() -> list[tuple[Case, dict]]:
    """REAL_CELLS as cases, each with the model's catalog config.json (what the tracer builds)."""
    from oomdoctor.models import _catalog, _from_catalog

    out = []
    for model_id, values in REAL_CELLS:
        shape = _from_catalog(model_id)
        setup = TrainingSetup(**values)
        name = (f"{model_id.split('/')[-1]} {setup.method}{'/dora' if setup.use_dora else ''}"
                f"{'/' + '+'.join(setup.lora_targets) if setup.method == 'lora' else ''} load {setup.load_dtype}"
                f"{' pure' if setup.pure_bf16 else ''}{' fp32' if setup.precision == 'fp32' else ''} "
                f"{setup.attention}{' ckpt' if setup.grad_ckpt else ''} {setup.micro_batch}x{setup.seq_len}")
        out.append((Case(name, shape, setup), dict(_catalog()[0][model_id.lower()].data["config"])))
    return out


def cases(n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    return [sample(rng, i) for i in range(n)]


def measure(case: Case, hf_config: dict | None = None) -> Row:
    from oomdoctor.memory import estimate, trainable_params
    from oomdoctor.memory.estimate import CUBLAS_WORKSPACE_GIB
    from oomdoctor.simulate import trace_step

    traced = trace_step(case.setup, case.shape, hf_config=hf_config)
    est = estimate(case.setup, case.shape, HW)
    return Row(case, traced.peak_bytes, (est.allocated_gib - CUBLAS_WORKSPACE_GIB) * GIB, traced.peak_phase,
               est.peak_moment, traced.params_trainable, trainable_params(case.setup, case.shape))


def summary(rows: list[Row]) -> dict:
    scores = sorted(r.score for r in rows)

    def pct(q: float) -> float:
        return scores[min(len(scores) - 1, int(round(q * (len(scores) - 1))))] if scores else 0.0

    raw = sorted(abs(r.error) for r in rows)
    raw_p95 = raw[min(len(raw) - 1, int(round(0.95 * (len(raw) - 1))))] if raw else 0.0
    return {"n": len(rows), "raw_median": statistics.median(raw) if raw else 0.0, "raw_p95": raw_p95,
            "raw_max": raw[-1] if raw else 0.0,
            "median": statistics.median(scores) if scores else 0.0, "p90": pct(0.90),
            "p95": pct(0.95), "max": scores[-1] if scores else 0.0,
            "over_5": sum(s > BOUND_P95 for s in scores), "over_10": sum(s > BOUND_MAX for s in scores),
            "lora_count_mismatches": [r.case.name for r in rows if r.case.setup.method == "lora"
                                      and r.params_trainable_traced != r.params_trainable_estimated]}


# FSDP2 cells: (ranks, layers, micro-batch, sequence) of the small Llama in benchmarks/fsdp_trace.py; the
# collectives run on torch's fake process group, so each cell is one CPU process (about a minute on a busy CPU)
FSDP_CELLS: tuple[tuple[int, int, int, int], ...] = ((2, 4, 1, 32), (4, 4, 1, 32), (8, 4, 1, 32), (4, 4, 2, 256))


def _fsdp_cells() -> int:
    import fsdp_trace

    rows = []
    for world, layers, mb, seq in FSDP_CELLS:
        shape = fsdp_trace.shape_of(layers)
        traced = fsdp_trace.trace(world, shape, mb, seq)
        est = fsdp_trace.estimated(world, shape, mb, seq)
        rows.append((est - traced) / traced)
        print(f"{rows[-1]:+7.1%}  traced {traced / MIB:8.1f}  est {est / MIB:8.1f} MiB  FSDP2 {world} ranks, "
              f"{layers} layers, {mb}x{seq}", flush=True)
    ok = max(abs(e) for e in rows) <= BOUND_MAX
    print(f"bound (none above 10%): {'holds' if ok else 'DOES NOT HOLD'}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--worst", type=int, default=12)
    ap.add_argument("--all", action="store_true", help="print every case, not only the worst")
    ap.add_argument("--real", action="store_true", help="trace the real-size cells (REAL_CELLS) instead")
    ap.add_argument("--fsdp", action="store_true",
                    help="trace FSDP2 on torch's fake process group at 2, 4 and 8 ranks (benchmarks/fsdp_trace.py)")
    ap.add_argument("--moe", action="store_true",
                    help="trace the mixture-of-experts cells (benchmarks/moe_trace.py: every MoE family at real width)")
    args = ap.parse_args(argv)
    if args.fsdp:
        return _fsdp_cells()
    if args.moe:
        import moe_trace

        return moe_trace.main([])
    from oomdoctor import simulate

    problem = simulate.available()
    if problem:
        from oomdoctor.words import say

        print(say(problem), file=sys.stderr)
        return 2
    started = time.perf_counter()
    rows = []
    todo = real_cases() if args.real else [(c, None) for c in cases(args.n, args.seed)]
    for case, hf_config in todo:
        rows.append(measure(case, hf_config))
        if args.all:
            r = rows[-1]
            print(f"{r.error:+7.1%}  traced {r.traced_bytes / GIB:8.3f}  est {r.estimated_bytes / GIB:8.3f} GiB  "
                  f"{r.traced_phase:16} {r.estimated_moment:18} {case.name}", flush=True)
    s = summary(rows)
    print(f"\nworst {args.worst} (signed error, traced and estimated GiB, where each puts the peak):")
    for r in sorted(rows, key=lambda r: -r.score)[:args.worst]:
        print(f"{r.error:+7.1%}  traced {r.traced_bytes / GIB:8.3f}  est {r.estimated_bytes / GIB:8.3f}  "
              f"{r.traced_phase:16} {r.estimated_moment:18} {r.case.name}")
    errors = [r.error for r in rows]
    print(f"\n{s['n']} configurations (seed {args.seed}) in {time.perf_counter() - started:.0f} s: |error| median "
          f"{s['median']:.1%}, p90 {s['p90']:.1%}, p95 {s['p95']:.1%}, max {s['max']:.1%}; "
          f"{s['over_5']} above 5%, {s['over_10']} above 10% (errors under 64 MiB count as 0); "
          f"signed error median {statistics.median(errors):+.1%}; without the 64 MiB allowance |error| median "
          f"{s['raw_median']:.2%}, p95 {s['raw_p95']:.1%}, max {s['raw_max']:.1%}")
    if s["lora_count_mismatches"]:
        print(f"LoRA parameter counts differ from PEFT's in {len(s['lora_count_mismatches'])} cases: "
              + "; ".join(s["lora_count_mismatches"][:5]))
    else:
        print("LoRA parameter counts equal PEFT's in every LoRA case")
    ok = s["p95"] <= BOUND_P95 and s["over_10"] == 0
    print(f"bounds (p95 <= 5%, none above 10%): {'hold' if ok else 'DO NOT HOLD'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
