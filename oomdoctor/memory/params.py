"""Parameter counts from a ModelShape: totals, and the linear layers LoRA can target.

Llama-style decoder: per layer q/k/v/o projections (GQA: k and v have num_kv_heads heads), a gated
(SwiGLU: gate, up, down) or plain (up, down) MLP, two norms; embeddings, final norm, lm_head unless tied.
MoE layers hold every routed expert (all resident on the GPU), a router and optional shared experts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping

from oomdoctor.facts import ModelShape, TrainingSetup

# LoRA target names used by other model families / frameworks -> the canonical HF Llama names they cover.
# A fused projection ("c_attn", "query_key_value", "W_pack", "qkv_proj") is one linear h -> (q+k+v) dims.
_FUSED_QKV = ("c_attn", "query_key_value", "w_pack", "qkv_proj", "wqkv")
_ALIASES = {
    "query": "q_proj", "key": "k_proj", "value": "v_proj", "q": "q_proj", "k": "k_proj", "v": "v_proj",
    "wq": "q_proj", "wk": "k_proj", "wv": "v_proj", "wo": "o_proj", "dense": "o_proj", "out_proj": "o_proj",
    "output_proj": "o_proj", "projection": "o_proj", "proj": "o_proj", "self_attn.o_proj": "o_proj",
    "w1": "gate_proj", "w3": "up_proj", "w2": "down_proj", "fc1": "up_proj", "fc2": "down_proj",
    "c_fc": "up_proj", "c_proj": "o_proj", "dense_h_to_4h": "up_proj", "dense_4h_to_h": "down_proj",
    "gate_up_proj": "gate_up_proj", "mlp": "mlp",
}
_ATTN = ("q_proj", "k_proj", "v_proj", "o_proj")
_MLP = ("gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts of one model (whole model, not per GPU)."""

    total: int
    embeddings: int
    lm_head: int                                 # 0 when tied to the embeddings
    per_layer: int                               # one decoder layer (dense layers; MoE layers in moe_layer)
    layers: int
    norms: int                                   # all norm weights (and biases)
    linear_shapes: Mapping[str, tuple[int, int]]  # module name -> (in_features, out_features) of one dense layer
    router: int = 0                              # all layers together
    experts: int = 0                             # all routed + shared expert weights, all layers together
    moe_layer: int = 0                           # one MoE decoder layer
    trainable: int = 0                           # for the setup given to count_params, else total
    linear_total: int = 0                        # parameters in matmul weights (what autocast casts), incl. lm_head
    largest_layer: int = 0                       # largest decoder layer (ZeRO-3 gathers one at a time)
    extra: Mapping[str, int] = field(default_factory=dict)


def _dims(shape: ModelShape) -> tuple[int, int, int, int, int]:
    h = shape.hidden_size
    d = shape.head_dim_
    return h, shape.num_heads * d, shape.num_kv_heads * d, shape.intermediate_size, shape.vocab_size


@lru_cache(maxsize=512)
def _count(shape: ModelShape) -> ParamCounts:
    h, q_dim, kv_dim, inter, vocab = _dims(shape)
    ab = 1 if shape.attention_bias else 0
    mb = 1 if shape.mlp_bias else 0
    shapes = {"q_proj": (h, q_dim), "k_proj": (h, kv_dim), "v_proj": (h, kv_dim), "o_proj": (q_dim, h)}
    attn = sum(i * o for i, o in shapes.values()) + ab * (q_dim + 2 * kv_dim) + mb * h
    if shape.gated_mlp:
        shapes.update(gate_proj=(h, inter), up_proj=(h, inter), down_proj=(inter, h))
        mlp = 3 * h * inter + mb * (2 * inter + h)
    else:
        shapes.update(up_proj=(h, inter), down_proj=(inter, h))
        mlp = 2 * h * inter + mb * (inter + h)
    norm_w = h * (2 if shape.mlp_bias else 1)     # models with linear biases use LayerNorm (weight + bias)
    dense_layer = attn + mlp + 2 * norm_w

    router = experts = moe_layer = 0
    n_moe = 0
    if shape.num_experts:
        n_moe = max(0, shape.num_layers - shape.first_dense_layers)
        e_inter = shape.moe_intermediate_size or inter
        per_expert = (3 if shape.gated_mlp else 2) * h * e_inter
        s_inter = shape.shared_expert_intermediate_size or e_inter
        shared = shape.shared_experts * (3 if shape.gated_mlp else 2) * h * s_inter
        if shape.shared_experts and shape.shared_expert_intermediate_size:
            shared += h                          # Qwen-MoE's sigmoid gate on the shared expert
        router_l = h * shape.num_experts
        moe_layer = attn + 2 * norm_w + router_l + shape.num_experts * per_expert + shared
        router = router_l * n_moe
        experts = (shape.num_experts * per_expert + shared) * n_moe
    n_dense = shape.num_layers - n_moe
    embeddings = vocab * h
    lm_head = 0 if shape.tie_word_embeddings else vocab * h
    norms = shape.num_layers * 2 * norm_w + norm_w
    total = embeddings + lm_head + n_dense * dense_layer + n_moe * moe_layer + norm_w
    linear = n_dense * sum(i * o for i, o in shapes.values()) + vocab * h
    if n_moe:
        linear += n_moe * (moe_layer - 2 * norm_w)
    computed = total
    if shape.params_total and abs(shape.params_total - total) > 0.002 * total:
        # An authoritative count (vendor/log) wins; the difference is layers this formula does not know
        # (vision towers, MLA projections, ...), kept as "other" so sums stay honest.
        total = shape.params_total
    return ParamCounts(
        total=total, embeddings=embeddings, lm_head=lm_head, per_layer=dense_layer, layers=shape.num_layers,
        norms=norms, linear_shapes=shapes, router=router, experts=experts, moe_layer=moe_layer,
        trainable=total, linear_total=linear, largest_layer=max(dense_layer, moe_layer),
        extra={"other": total - computed, "moe_layers": n_moe},
    )


def _canonical_targets(targets: tuple[str, ...], shape: ModelShape) -> dict[str, tuple[int, int]]:
    """LoRA target names -> (in, out) of one dense layer's targeted linears."""
    counts = _count(shape)
    linears = counts.linear_shapes
    if not targets or any(t.lower() in ("all", "all-linear", "all_linear") for t in targets):
        return dict(linears)
    h, q_dim, kv_dim, inter, _ = _dims(shape)
    chosen: dict[str, tuple[int, int]] = {}
    for raw in targets:
        name = raw.strip().lower().rsplit(".", 1)[-1]
        if not name:
            continue
        if name in _FUSED_QKV:
            chosen["qkv_fused"] = (h, q_dim + 2 * kv_dim)
            continue
        if name == "gate_up_proj":
            chosen["gate_up_fused"] = (h, 2 * inter)
            continue
        if name in ("mlp",):
            chosen.update({k: linears[k] for k in _MLP if k in linears})
            continue
        if name in ("attn", "attention", "self_attn"):
            chosen.update({k: linears[k] for k in _ATTN})
            continue
        canon = _ALIASES.get(name, name)
        if canon == "gate_proj" and "gate_proj" not in linears:
            canon = "up_proj"
        if canon in linears:
            chosen[canon] = linears[canon]
    return chosen


def lora_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """LoRA (and DoRA) adapter parameters: rank*(in+out) per targeted linear, DoRA adds one magnitude per output.

    MoE experts are counted when the MLP names are targeted (PEFT wraps each expert's linears).
    """
    r = max(1, int(setup.lora_rank))
    per_layer = 0
    for fin, fout in _canonical_targets(tuple(setup.lora_targets), shape).values():
        per_layer += r * (fin + fout) + (fout if setup.use_dora else 0)
    counts = _count(shape)
    n_moe = counts.extra.get("moe_layers", 0)
    total = per_layer * (shape.num_layers - n_moe)
    if n_moe:
        e_inter = shape.moe_intermediate_size or shape.intermediate_size
        per_moe = 0
        for name, (fin, fout) in _canonical_targets(tuple(setup.lora_targets), shape).items():
            if name in _MLP or name == "gate_up_fused":
                # every routed expert's linear gets its own adapter: r*(h + expert width)
                width = e_inter * (2 if name == "gate_up_fused" else 1)
                per_moe += shape.num_experts * (r * (shape.hidden_size + width)
                                                + ((shape.hidden_size if name == "down_proj" else width)
                                                   if setup.use_dora else 0))
            else:
                per_moe += r * (fin + fout) + (fout if setup.use_dora else 0)
        total += n_moe * per_moe
    return total


def _freeze_trainable(setup: TrainingSetup, shape: ModelShape) -> int:
    counts = _count(shape)
    n = setup.freeze_trainable_layers
    layers = min(abs(n), shape.num_layers) if n else 0
    per = counts.total - counts.embeddings - counts.lm_head - counts.norms
    per_layer = per / max(1, shape.num_layers)
    return int(layers * per_layer + layers * (counts.norms / max(1, 2 * shape.num_layers + 1)) * 2)


def modules_to_save_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """PEFT modules_to_save / LLaMA-Factory additional_target: full trainable copies of whole modules."""
    names = (setup.extras.get("modules_to_save") or setup.extras.get("additional_target") or ()) if setup.extras else ()
    if isinstance(names, str):
        names = tuple(x.strip() for x in names.split(","))
    counts = _count(shape)
    total = 0
    for name in names:
        low = name.lower()
        if low in ("embed_tokens", "wte", "word_embeddings", "tok_embeddings"):
            total += counts.embeddings
        elif low in ("lm_head", "output", "embed_out"):
            total += counts.lm_head or counts.embeddings
    return total


def trainable_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """Parameters the optimizer updates for this setup's method."""
    counts = _count(shape)
    if setup.method in ("lora", "qlora"):
        return lora_params(setup, shape) + modules_to_save_params(setup, shape)
    if setup.method == "freeze":
        return _freeze_trainable(setup, shape)
    return counts.total


def count_params(shape: ModelShape, setup: TrainingSetup | None = None) -> ParamCounts:
    """Counts for the shape; `trainable` follows `setup` when one is given (else every parameter)."""
    counts = _count(shape)
    if setup is None:
        return counts
    from dataclasses import replace
    return replace(counts, trainable=trainable_params(setup, shape))
