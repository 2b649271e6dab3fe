"""Baseline analytic estimate (first cut; refined by the memory-model work)."""
from __future__ import annotations

from oomdoctor.facts import GIB, CrashReport, Estimate, Hardware, ModelShape, TrainingSetup

_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}


def _params(shape: ModelShape) -> int:
    if shape.params_total:
        return shape.params_total
    h, i, L, v = shape.hidden_size, shape.intermediate_size, shape.num_layers, shape.vocab_size
    kv = shape.num_kv_heads * shape.head_dim_
    attn = h * shape.num_heads * shape.head_dim_ * 2 + h * kv * 2
    mlp = 3 * h * i if shape.gated_mlp else 2 * h * i
    emb = v * h * (1 if shape.tie_word_embeddings else 2)
    return L * (attn + mlp + 2 * h) + emb + h


def estimate(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *,
             crash: CrashReport | None = None, headroom: float = 0.10) -> Estimate:
    p = _params(shape)
    half = _BYTES.get(setup.precision, 2)
    if setup.method in ("lora", "qlora"):
        trainable = int(p * 0.005 * setup.lora_rank / 8)
        frozen_bytes = p * (0.55 if setup.method == "qlora" else half)
        weights = frozen_bytes + trainable * 4
        grads = trainable * 4
        optim = trainable * 8
    else:
        train_bytes = half if setup.pure_bf16 else 4
        weights = p * train_bytes
        grads = p * train_bytes
        optim = p * 2 * train_bytes
    n = max(1, setup.n_gpus)
    if setup.zero_stage >= 1:
        optim /= n
    if setup.zero_stage >= 2:
        grads /= n
    if setup.zero_stage >= 3:
        weights /= n
    tokens = setup.micro_batch * setup.seq_len
    per_layer = tokens * shape.hidden_size * (2 if setup.grad_ckpt else 34)
    acts = per_layer * shape.num_layers
    logits = tokens * shape.vocab_size * (2 if setup.fused_ce else 10)
    overhead = 0.8 * GIB
    comps = {"weights": weights / GIB, "gradients": grads / GIB, "optimizer": optim / GIB,
             "activations": acts / GIB, "logits": logits / GIB, "overhead": overhead / GIB}
    allocated = sum(v for k, v in comps.items() if k != "overhead")
    return Estimate(components=comps, allocated_gib=allocated, peak_gib=allocated + comps["overhead"],
                    capacity_gib=hw.usable_gib, headroom=headroom)
