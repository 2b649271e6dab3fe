"""What one decoder layer keeps for backward, and what comes and goes while it runs: bytes per token.

The tensors are those of a Llama-style HF decoder layer (transformers 4.46+/5.x, PEFT LoRA), op by op:

  input_layernorm   x.to(fp32) saved by pow/mul; the normalised tensor saved when the norm weight trains
  q/k/v projections each linear saves its input when its weight trains; under autocast each call casts the
                    input to the compute dtype first (autocast caches casts of weights only), so three copies
  RoPE              q*cos + rotate_half(q)*sin saves cos/sin (shared); with an fp32 residual cos/sin are fp32 and
                    promote q and k to fp32, which the attention kernel casts back
  attention         SDPA saves q, k, v, its output and an fp32 logsumexp; with a mask (padded batches) k/v are
                    repeated to all heads (no enable_gqa) and the bool mask becomes a per-layer float copy
                    (torch convert_boolean_attn_mask); eager saves q, k, v, fp32 softmax, its cast and the output copy
  o_proj, residual  o_proj saves the attention output when its weight trains
  MLP (SwiGLU)      gate, silu(gate) and up are saved by silu/mul; down_proj saves act*up when it trains
  LoRA (PEFT)       x cast to the adapter dtype (peft lora/layer.py _cast_input_dtype), dropout, lora_A saves its
                    input (a compute-dtype copy under autocast), lora_B saves lora_A's output (rank wide);
                    DoRA also keeps the base output and lora_B's output (out wide) for its magnitude's product;
                    LoRA-FA freezes lora_A, which then keeps no input (only lora_B's, rank wide)
  IA3, VeRA (PEFT)  IA3 keeps the input cast to its vector's dtype (feedforward modules) or the base output; VeRA
                    keeps its two products' inputs (rank and out wide), not x: its A and B are frozen buffers
  prompt learning   no module in the layers changes: prompt and p-tuning lengthen the sequence, prefix tuning
                    the keys and values

Checked against oomdoctor.simulate's traces (benchmarks/grid.py), where every tensor is counted.
"""
from __future__ import annotations

from dataclasses import dataclass

from oomdoctor.facts import ModelShape, TrainingSetup
from oomdoctor.memory.params import (
    PROMPT_LEARNING,
    _canonical_targets,
    ia3_feedforward,
    layer_linears,
    matched_linears,
    peft_expert_stacks,
)
from oomdoctor.memory.regime import Regime, _transformers_version, _version

_ATTN_IN = ("q_proj", "k_proj", "v_proj")
# Gemma's decoder layers (transformers modeling_gemma2.py Gemma2DecoderLayer, modeling_gemma3.py) run four
# RMSNorms: input, post_attention (on o_proj's output), pre_feedforward, post_feedforward (on down_proj's output)
SANDWICH_NORMS = ("gemma2", "gemma3", "gemma3_text")
# Gemma's RMSNorm: `output = self._norm(x.float()); output * (1.0 + self.weight.float())` then `type_as(x)`
# (modeling_gemma.py / modeling_gemma2.py / modeling_gemma3.py Gemma*RMSNorm.forward): a trained weight's
# gradient needs the fp32 normalised tensor, not a residual-dtype one
GEMMA_NORM = ("gemma", "gemma2", "gemma3", "gemma3_text")
# eager_attention_forward with `softcap` (modeling_gemma2.py, config default attn_logit_softcapping 50.0):
# scores / softcap, tanh, * softcap; tanh saves its output, one more heads x seq scores tensor per token
ATTN_SOFTCAP = ("gemma2",)
# eager_attention_forward with a learned sink column (modeling_gpt_oss.py:239-253): the scores stay in the compute
# dtype, `torch.cat([attn_weights, sinks])` adds a column, the row max is subtracted (max keeps its int64 indices),
# `F.softmax(..., dtype=combined_logits.dtype)` keeps the probabilities in that dtype (no fp32 copy, no cast) and
# the value matmul saves a view of them without the sink column: one heads x (seq + 1) tensor per token
ATTN_SINKS = ("gpt_oss",)
# apply_rotary_pos_emb ends in `torch.cat([rotated, q_pass], dim=-1)` (modeling_phi3.py, modeling_gpt_neox.py,
# modeling_glm.py, modeling_glm4.py): q comes out laid out (b, heads, s, d); the attention kernel's output follows
# q's layout (flash-attn flash_api.cpp mha_fwd `out = at::empty_like(q_padded)`; CPU's flash kernel the same),
# so `attn_output.transpose(1, 2).contiguous()` before o_proj copies what the kernel also keeps
ROPE_CAT = ("phi3", "gpt_neox", "glm", "glm4")
_UP_IN = ("gate_proj", "up_proj")
# model types whose modules Liger-Kernel's patch replaces (liger_kernel/transformers/monkey_patch.py
# MODEL_TYPE_TO_APPLY_LIGER_FN, linkedin/Liger-Kernel ead96b61); for any other type transformers' Trainer warns and
# the model keeps its own modules
LIGER_MODEL_TYPES = frozenset((
    "deepseek_v4", "exaone4", "falcon_h1", "gemma", "gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text", "glm4",
    "glm4v", "glm4v_moe", "gpt_oss", "granite", "hunyuan_v1_dense", "hunyuan_v1_moe", "internvl", "llama", "llama4",
    "llama4_text", "llava", "ministral", "mistral", "mixtral", "mllama", "mllama_text_model", "nemotron", "olmo2",
    "olmo3", "paligemma", "phi3", "pixtral", "qwen2", "qwen2_5_vl", "qwen2_5_vl_text", "qwen2_vl", "qwen2_vl_text",
    "qwen3", "qwen3_5", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_moe", "qwen3_next", "qwen3_vl",
    "qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_vl_text", "smollm3", "smolvlm"))


@dataclass(frozen=True)
class LayerBytes:
    """Bytes per token of one decoder layer (training), and of what sits around the layers."""

    saved: float            # kept for backward by one layer (no checkpointing)
    checkpoint_input: float  # kept per layer under gradient checkpointing (its input hidden states)
    shared: float           # kept by every layer (rotary cos/sin)
    mask: float             # the bool attention mask: while the stack runs, and through backward when checkpointed
    head_saved: float       # final norm (and lm_head input) kept for backward
    backward_extra: float   # gradients in flight at a layer's worst backward moment, beyond its saved tensors
    head_backward: float    # the final norm's backward: its gradient and fp32 temporaries
    first_unrecorded: float  # of `saved`, what the lowest recorded layer skips when its input needs no gradient
    forward_flight: float   # what a checkpointed layer's forward holds while it runs
    hook_escape: float = 0.0  # kept past saved-tensor hooks (non-reentrant checkpointing, activation offloading)


def compiled_layers(setup: TrainingSetup) -> bool:
    """torchtune's compile=True: every decoder layer goes through torch.compile (training/_compile.py)."""
    return setup.framework == "torchtune" and setup.mechanisms.compiled


def masked(setup: TrainingSetup) -> bool:
    """Whether the attention gets a materialised mask: padded (unpacked) batches under SDPA or eager.

    transformers skips the mask only when no token is padding (masking_utils._ignore_causal_mask_sdpa);
    FlashAttention-2 never takes one (padding is removed before the kernel)."""
    return setup.attention in ("sdpa", "eager", "") and not setup.packing


@dataclass(frozen=True)
class _Layer:
    """One decoder layer's widths and what decides its saved tensors (bytes per element, target names)."""

    h: int                  # hidden size
    d: int                  # head dim
    heads: int
    q_dim: int
    kv_dim: int
    inter: int              # the MLP's width (routed experts' per token, shared experts' added)
    seq: int
    a: int                  # compute dtype bytes
    r: int                  # residual stream bytes
    autocast: bool
    targets: frozenset      # LoRA-targeted projections (fused names expanded)
    adapter_bytes: int
    rank: int
    dropout: bool
    with_mask: bool
    eager: bool
    k_seen: int             # the width of k and v the attention kernel saves (repeated to every head or not)
    v_seen: int
    trains_weights: bool
    compiled: bool
    x_cast: bool = False    # bitsandbytes gets its input in another dtype than its compute dtype (one copy each)
    peft: str = ""          # PEFT type other than LoRA (IA3, VERA, PREFIX_TUNING, ...), see Mechanisms.peft_type
    ia3_ff: frozenset = frozenset()   # IA3's feedforward modules (scaled at their input)
    dora: bool = False
    prefix: int = 0         # prefix tuning's virtual tokens: keys and values this much longer than the queries
    norms: int = 2          # RMSNorms per layer (Gemma 2/3: four, each side of attention and MLP)
    norm_fp32_out: bool = False   # the norm multiplies by its weight in fp32 and casts after (Gemma)
    attn_softcap: bool = False    # eager attention soft-caps its scores (Gemma 2)
    attn_sinks: bool = False      # eager attention with a sink column, softmax in the compute dtype (gpt-oss)
    rope_cat: bool = False        # RoPE concatenates: the attention output is copied before o_proj
    qkv_fused: bool = False       # one qkv_proj (Phi-3) instead of q/k/v projections
    gate_up_fused: bool = False   # one gate_up_proj (Phi-3) instead of gate/up projections
    liger_norm: bool = False      # Liger-Kernel's RMSNorm: keeps its input and the fp32 rstd (ops/rms_norm.py)
    liger_glu: bool = False       # Liger-Kernel's SwiGLU/GeGLU product: keeps gate and up only (ops/swiglu.py)
    a_frozen: bool = False        # LoRA-FA: lora_A takes no gradient, so it keeps no input


def _layer_of(setup: TrainingSetup, shape: ModelShape, rg: Regime, seq: int, trains_weights: bool) -> _Layer:
    d = shape.head_dim_
    heads = shape.num_heads
    q_dim = heads * d
    kv_dim = shape.num_kv_heads * d
    inter = shape.intermediate_size
    if shape.num_experts:
        inter = (shape.moe_intermediate_size or inter) * max(1, shape.experts_per_token) + \
            (shape.shared_expert_intermediate_size or 0) * (1 if shape.shared_experts else 0)
    a = rg.compute_bytes
    r = rg.residual_bytes
    autocast = rg.autocast or (r != a)
    adapters = setup.method in ("lora", "qlora")
    peft = setup.mechanisms.peft_type if adapters else ""
    # prompt learning wraps no module of the layers (peft/peft_model.py PeftModelForCausalLM.forward)
    targets = set(_canonical_targets(tuple(setup.lora_targets), shape)) if adapters and peft not in PROMPT_LEARNING \
        else set()
    if "qkv_fused" in targets:
        targets |= set(_ATTN_IN)
    if "gate_up_fused" in targets:
        targets |= set(_UP_IN)
    eager = setup.attention == "eager"
    # the rules keyed to a model's modelling file and to PEFT's layers below hold where transformers' (or remote)
    # model code and PEFT run: torchtune and LitGPT build their own models and adapters
    mt = (shape.model_type or "").lower() if hf_code(setup) else ""
    dense, moe = layer_linears(shape)
    roles = {m.role for m in (dense or moe)} if mt else set()
    with_mask = masked(setup)
    liger = mt in LIGER_MODEL_TYPES
    # repeat_kv copies k and v to every head when the kernel cannot take GQA itself (eager, or SDPA with a mask:
    # transformers use_gqa_in_sdpa). One kv head expands to a stride-0 view instead: eager's matmul still copies
    # it, SDPA takes it as is unless an fp32 residual promoted k through RoPE's fp32 cos/sin and the kernel's
    # cast copies it
    repeated = (eager or with_mask) and shape.num_kv_heads < heads
    view = shape.num_kv_heads == 1 and not eager
    return _Layer(h=shape.hidden_size, d=d, heads=heads, q_dim=q_dim, kv_dim=kv_dim, inter=inter, seq=seq, a=a, r=r,
                  autocast=autocast, targets=frozenset(targets), adapter_bytes=rg.train_bytes if adapters else a,
                  rank=max(1, int(setup.lora_rank)) if adapters else 0,
                  dropout=adapters and setup.mechanisms.lora_dropout > 0, with_mask=with_mask,
                  eager=eager, k_seen=q_dim if repeated and (not view or (autocast and r != a)) else kv_dim,
                  v_seen=q_dim if repeated and not view else kv_dim, trains_weights=trains_weights,
                  compiled=compiled_layers(setup),
                  x_cast=bool(setup.quant_bits) and rg.other_dtype != rg.compute_dtype,
                  peft=peft, ia3_ff=ia3_feedforward(setup) if peft == "IA3" else frozenset(),
                  dora=adapters and setup.use_dora and not peft,
                  prefix=setup.mechanisms.virtual_tokens if peft == "PREFIX_TUNING" else 0,
                  norms=4 if mt in SANDWICH_NORMS else 2, norm_fp32_out=mt in GEMMA_NORM, attn_softcap=mt in ATTN_SOFTCAP,
                  attn_sinks=mt in ATTN_SINKS,
                  qkv_fused="qkv" in roles, gate_up_fused="gate_up" in roles, rope_cat=mt in ROPE_CAT,
                  liger_norm=liger and setup.mechanisms.liger_norm, liger_glu=liger and setup.mechanisms.liger_glu,
                  a_frozen=adapters and not peft and not setup.use_dora and lora_fa(setup))


def layer_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime, seq: int, *, trains_weights: bool,
                reentrant: bool = False) -> LayerBytes:
    """Per-token bytes of one decoder layer; `trains_weights` for a fully trained layer (full, freeze's last),
    `reentrant` for reentrant gradient checkpointing."""
    ly = _layer_of(setup, shape, rg, seq, trains_weights)
    saved: dict[str, float] = {}      # tensor name -> bytes per token; a tensor saved twice is one entry
    _save_norms(ly, saved)
    for name in _ATTN_IN:
        _save_linear(ly, saved, name, "norm1:out", ly.r, ly.h)
    out_name = _save_attention(setup, shape, ly, saved)
    _save_linear(ly, saved, "o_proj", out_name, ly.a, ly.q_dim)
    _save_mlp(shape, ly, saved)
    _save_grouped_experts(setup, shape, ly, saved)
    _save_dense_experts(setup, shape, ly, saved)
    if shape.num_experts and (shape.model_type or "").lower() in CLAMPED_GLU and hf_code(setup):
        i = shape.moe_intermediate_size or shape.intermediate_size
        saved["moe:clamped_glu"] = ly.a * 3 * i * max(1, shape.experts_per_token)
    quantized = setup.method == "qlora" and bool(setup.quant_bits) and bnb_quantized(setup) and bnb_keeps_input(setup)
    if quantized:
        _save_bnb_inputs(shape, ly, saved, out_name)
    per_layer = sum(saved.values())
    backward_peak = _backward_peak(ly, saved, per_layer)
    if setup.grad_ckpt and reentrant:
        # reentrant checkpointing recomputes the whole layer and backpropagates from its output, which stays
        # alive through the layer's backward (torch/utils/checkpoint.py CheckpointFunction.backward)
        backward_peak += ly.r * ly.h
    # rotary cos and sin (b, s, head_dim) in the residual dtype, kept by every layer's RoPE; the bool mask lives
    # while the decoder stack runs (and through backward as a checkpointed layer's argument)
    # final norm: fp32 input; with a trained norm weight its normalised tensor, with a trained lm_head its input
    head = 4 * ly.h + 4 + (ly.r * ly.h if setup.method == "full" else 0)
    if setup.method == "full":
        head += ly.a * ly.h if ly.autocast and ly.r != ly.a else ly.r * ly.h
    kept_input: float = ly.r * ly.h
    if setup.grad_ckpt and setup.mechanisms.selective_ac_op:
        kept_input += _op_policy_saved(shape, ly, saved)
    return LayerBytes(saved=per_layer, checkpoint_input=kept_input, shared=2 * ly.r * ly.d,
                      mask=1 * seq if ly.with_mask else 0, head_saved=head,
                      backward_extra=backward_peak - per_layer, head_backward=_norm_backward(ly),
                      first_unrecorded=_first_unrecorded(ly, saved), forward_flight=_forward_flight(ly),
                      hook_escape=_hook_escape(shape, ly) if quantized else 0.0)


def _op_policy_saved(shape: ModelShape, ly: _Layer, saved: dict) -> float:
    """Per-token bytes a block keeps beyond its input under torchtitan's selective op-level checkpointing: the
    policy saves the outputs of the ops in its save list (SDPA's flash/efficient kernels among them) and, of the
    matmuls, the 1st, 3rd, 5th... in forward order, counted afresh in each block
    (torchtitan/parallelisms/parallelize_llama.py `_save_list`, `_custom_policy`: `meta[mm_count_key] += 1`, then
    `not (func == aten.mm and meta[mm_count_key] % 2 == 0)` @9dec370). Dense layers whose weights train: an
    adapter's matmuls would enter the count, and experts run grouped kernels outside it."""
    if shape.num_experts or ly.targets:
        return 0.0
    widths = [ly.q_dim + 2 * ly.kv_dim] if ly.qkv_fused else [ly.q_dim, ly.kv_dim, ly.kv_dim]
    widths.append(ly.h)                                   # o_proj
    if shape.gated_mlp:
        widths += [2 * ly.inter] if ly.gate_up_fused else [ly.inter, ly.inter]
    else:
        widths.append(ly.inter)
    widths.append(ly.h)                                   # down_proj
    kept = ly.a * sum(widths[0::2])
    if not ly.eager:
        # the fused attention kernel's output and log-sum-exp (eager attention's matmuls are batched, not in the list)
        kept += saved.get("attn:out", 0.0) + saved.get("attn:lse", 0.0)
    return kept


def _save_linear(ly: _Layer, saved: dict, name: str, x: str, x_bytes: int, width: int) -> None:
    """What a projection keeps: its (cast) input when the weight trains, LoRA's own tensors when targeted."""
    a = ly.a
    # a fused projection (Phi-3's qkv_proj, gate_up_proj) is one module: one autocast cast, one adapter
    module = _module_of(ly, name)
    if ly.trains_weights:
        if ly.autocast and x_bytes != a:
            saved[f"{module}:cast"] = a * width          # autocast's per-call cast, saved by the linear
        else:
            saved[x] = x_bytes * width                   # the input itself, shared with its siblings
    if name in ly.targets and ly.peft in ("IA3", "VERA"):
        _save_scaling_adapter(ly, saved, name, x, x_bytes, width)
        return
    if name in ly.targets:
        xa_name, xa_bytes = x, x_bytes
        if ly.adapter_bytes != x_bytes:
            xa_name, xa_bytes = f"{module}:adapter_in", ly.adapter_bytes   # PEFT casts to the adapter dtype
        if ly.dropout:
            saved[f"{module}:dropout_mask"] = 1 * width   # CUDA native_dropout keeps a bool mask
            xa_name = f"{module}:dropout_out"
        if ly.a_frozen:
            pass       # a linear saves its input for its weight's gradient only: a frozen lora_A keeps none
        elif ly.autocast and xa_bytes != a:
            saved[f"{module}:lora_a_in"] = a * width     # autocast casts lora_A's input and saves that copy
        else:
            saved[xa_name] = xa_bytes * width
        saved[f"{module}:lora_b_in"] = (a if ly.autocast else ly.adapter_bytes) * ly.rank
        if ly.dora:
            # peft/tuners/lora/dora.py DoraLinearLayer.forward: `(mag_norm_scale - 1) * base_result +
            # mag_norm_scale * lora_result * scaling` keeps base_result (the base layer's output; recomputed from
            # the adapter-dtype x as F.linear(x, weight.to(x.dtype)) under dropout) and lora_result (lora_B's
            # output) for the magnitude's gradient; the weight norm is detached. torchtune's DoRALinear.forward
            # (torchtune/modules/peft/dora.py) forms the same products of base_out and lora_out
            out = _out_width(ly, module)
            saved[f"{module}:dora_base"] = (ly.adapter_bytes if ly.dropout and not ly.autocast else a) * out
            saved[f"{module}:dora_lora"] = (a if ly.autocast else ly.adapter_bytes) * out


def _module_of(ly: _Layer, name: str) -> str:
    """The module a Llama projection name is part of: itself, or a fused projection."""
    if ly.qkv_fused and name in _ATTN_IN:
        return "qkv_fused"
    if ly.gate_up_fused and name in _UP_IN:
        return "gate_up_fused"
    return name


def _out_width(ly: _Layer, name: str) -> int:
    """A projection's (or fused projection's) output width."""
    return {"q_proj": ly.q_dim, "k_proj": ly.kv_dim, "v_proj": ly.kv_dim, "o_proj": ly.h, "down_proj": ly.h,
            "qkv_fused": ly.q_dim + 2 * ly.kv_dim, "gate_up_fused": 2 * ly.inter}.get(name, ly.inter)


def _save_scaling_adapter(ly: _Layer, saved: dict, name: str, x: str, x_bytes: int, width: int) -> None:
    """IA3 and VeRA scale by trained vectors; what the products keep is what their vectors' gradients need.

    IA3 (peft/tuners/ia3/layer.py Linear.forward): a feedforward module computes `x.to(ia3 dtype) * ia3_scaling`
    before the frozen base layer, keeping that cast input; any other `base_layer(x) * ia3_scaling`, keeping the
    base output. VeRA (peft/tuners/vera/layer.py Linear.forward): `lambda_b * F.linear(lambda_d *
    F.linear(x, sliced_A), sliced_B)` with x cast to lambda's dtype; A and B are frozen buffers, so the linears
    keep nothing and the two products keep their other factor: r wide and out wide."""
    a, b = ly.a, (ly.a if ly.autocast else ly.adapter_bytes)
    if ly.peft == "IA3":
        if name in ly.ia3_ff:
            if ly.adapter_bytes == x_bytes:
                saved.setdefault(x, x_bytes * width)
            else:
                saved[f"{name}:ia3_in"] = ly.adapter_bytes * width
        else:
            saved[f"{name}:ia3_out"] = a * _out_width(ly, name)
        return
    saved[f"{name}:vera_d_in"] = b * ly.rank
    saved[f"{name}:vera_b_in"] = b * _out_width(ly, name)


def _save_norms(ly: _Layer, saved: dict) -> None:
    """input_layernorm / post_attention_layernorm: fp32 input (the input itself when already fp32), rsqrt,
    and the normalised tensor when the norm weight trains. Compiled (torchtune compile=True compiles each
    layer), AOTAutograd's min-cut partitioner saves the norm's input in its own dtype and the rsqrt, and
    recomputes the fp32 copy and the normalised tensor in backward (torch/_functorch/partitioners.py
    min_cut_rematerialization_partition); torchtune's README table: compile takes 41 KB per token and layer
    off Llama 3.2 3B's full fine-tune, which these and silu's output below account for"""
    for norm in ("norm1", "norm2", "norm3", "norm4")[:ly.norms]:
        if ly.compiled:
            saved[f"{norm}:fp32"] = ly.r * ly.h + 4.0
            continue
        if ly.liger_norm:
            # LigerRMSNormFunction.forward `ctx.save_for_backward(X, W, RSTD)` (liger_kernel/ops/rms_norm.py): the
            # input in its own dtype and one fp32 rstd per row; no fp32 copy, no normalised tensor
            saved[f"{norm}:fp32"] = ly.r * ly.h + 4.0
            continue
        saved[f"{norm}:fp32"] = 4 * ly.h + 4.0 / 1      # + (b, s, 1) fp32 rsqrt, 4 bytes per token
        if ly.trains_weights:
            saved[f"{norm}:normed"] = (4 if ly.norm_fp32_out else ly.r) * ly.h


def _save_attention(setup: TrainingSetup, shape: ModelShape, ly: _Layer, saved: dict) -> str:
    """The attention kernel's saved tensors; returns the name of the tensor o_proj takes."""
    a, heads, seq = ly.a, ly.heads, ly.seq
    # attention kernel inputs: q and k come out of RoPE in the residual dtype's promotion; the kernel's compute
    # dtype copies are what it saves
    saved["attn:q"] = a * ly.q_dim
    # prefix tuning hands every layer num_virtual_tokens more keys and values (peft_model.py
    # PeftModelForCausalLM.forward: past_key_values = get_prompt(batch_size), the mask widened by
    # prefix_attention_mask), which the cache concatenates in front of the layer's own
    longer = (seq + ly.prefix) / seq if seq else 1.0
    saved["attn:k"] = a * ly.k_seen * longer
    saved["attn:v"] = a * ly.v_seen * longer
    if ly.qkv_fused and ly.v_seen == ly.kv_dim and not ly.prefix:
        # Phi-3 slices q, k and v out of qkv_proj's output (modeling_phi3.py Phi3Attention.forward `qkv[...,
        # query_pos + kv:]`): q and k are copied by RoPE, v reaches the kernel as a view, and what the kernel
        # saves keeps the whole qkv output alive
        saved["attn:v"] = a * (ly.q_dim + 2 * ly.kv_dim)
    # LitGPT hands SDPA a single key/value head for multi-query models (model.py expands k/v only for GQA);
    # fused kernels need equal head counts (before torch 2.5's enable_gqa), so SDPA runs its math kernel,
    # which keeps the attention probabilities in the compute dtype
    if setup.framework == "litgpt" and shape.num_kv_heads == 1 < heads and not ly.eager:
        saved["attn:probs"] = a * heads * seq
    if ly.eager:
        if ly.attn_sinks:
            saved["attn:probs"] = a * heads * (seq + 1)  # softmax's output, of which the value matmul keeps a view
            saved["attn:max_idx"] = 8 * heads            # the row max's int64 indices
            return "attn:out_copy"
        if ly.attn_softcap:
            saved["attn:softcap"] = a * heads * seq      # tanh's output
        saved["attn:softmax"] = 4 * heads * seq
        if a != 4:
            saved["attn:probs"] = a * heads * seq
        return "attn:out_copy"                       # transpose(1, 2).contiguous() of the matmul output
    saved["attn:out"] = a * ly.q_dim                 # SDPA keeps its output (laid out (b, s, heads, d))
    saved["attn:lse"] = 4 * heads
    if ly.with_mask:
        saved["attn:mask"] = a * (seq + ly.prefix)   # the bool mask as a float copy, per layer
    return "attn:out_copy" if ly.rope_cat else "attn:out"


def _save_mlp(shape: ModelShape, ly: _Layer, saved: dict) -> None:
    """The MLP's projections and activation: SwiGLU's gate, silu(gate) and up, or GELU's input."""
    a, inter = ly.a, ly.inter
    for name in _UP_IN if shape.gated_mlp else ("up_proj",):
        _save_linear(ly, saved, name, "norm2:out", ly.r, ly.h)
    if shape.gated_mlp:
        saved["mlp:gate"] = a * inter                # silu's input
        if not ly.compiled and not ly.liger_glu:
            # (LigerSiLUMulFunction / LigerGELUMulFunction save only a and b and recompute the activation in
            # backward: liger_kernel/ops/swiglu.py `ctx.save_for_backward(a, b)`, ops/geglu.py likewise)
            saved["mlp:act"] = a * inter             # silu output, kept by the product (compiled: recomputed)
        saved["mlp:up"] = a * inter
    else:
        saved["mlp:up"] = a * inter                  # GELU's input
    _save_linear(ly, saved, "down_proj", "mlp:act_up" if shape.gated_mlp else "mlp:act", a, inter)


# transformers 5.24 model types whose MoE experts are decorated with `@use_experts_implementation`
# (integrations/moe.py): the default implementation is `grouped_mm` (modeling_utils.get_correct_experts_implementation)
EXPERTS_INTERFACE = frozenset((
    "afmoe", "beam", "cohere2_moe", "deepseek_v2", "deepseek_v3", "deepseek_v32", "dots1", "ernie4_5_moe",
    "exaone_moe", "flex_olmo", "glm4_moe", "glm4_moe_lite", "glm4v_moe", "glm_moe_dsa", "gpt_oss", "granitemoe",
    "granitemoeshared", "granitemoehybrid", "hunyuan_v1_moe", "jamba", "lfm2_moe", "mellum", "minimax", "minimax_m2",
    "mixtral", "olmoe", "phimoe", "qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_5_moe", "qwen3_omni_moe",
    "qwen3_vl_moe", "solar_open"))


# model types whose MoE block sends every token to every routed expert and weights the results by the router's
# scores (zero off the top-k): transformers models/llama4/modeling_llama4.py Llama4TextMoe.forward, lines 169-171
# (`hidden_states.repeat(num_experts, 1) * router_scores`, then Llama4TextExperts' bmm over all experts)
DENSE_DISPATCH = frozenset(("llama4_text", "llama4"))
# model types whose experts gate with their own clamped GLU (models/gpt_oss/modeling_gpt_oss.py:82-88
# GptOssExperts._apply_gate, which integrations/moe.py calls in place of act_fn(gate) * up): `gate.clamp`,
# `up.clamp`, `gate * sigmoid(gate * alpha)`, `(up + 1) * glu` keep the clamped gate, up + 1 and glu beside
# the gate_up output and the sigmoid that a SwiGLU's gate, silu and up stand for
CLAMPED_GLU = frozenset(("gpt_oss",))


def _save_dense_experts(setup: TrainingSetup, shape: ModelShape, ly: _Layer, saved: dict) -> None:
    """What the dense dispatch keeps beyond a dense MLP of the top-k width: the repeated input (kept by the product
    with the scores, for their gradient), and the gate_up output and silu(gate) of all E experts for every token,
    where _save_mlp counted top-k's; a trained expert stack also keeps the scored input and the up * act product
    (its bmm inputs, for the weight gradient)."""
    if not (shape.num_experts and (shape.model_type or "").lower() in DENSE_DISPATCH and hf_code(setup)):
        return
    e, k = shape.num_experts, max(1, shape.experts_per_token)
    i = shape.moe_intermediate_size or shape.intermediate_size
    saved["moe:repeated_in"] = ly.a * e * ly.h
    saved["moe:all_experts"] = ly.a * (e - k) * 3 * i
    if ly.trains_weights:
        saved["moe:scored_in"] = ly.a * e * ly.h
        saved["moe:all_down_in"] = ly.a * (e - k) * i


def _save_grouped_experts(setup: TrainingSetup, shape: ModelShape, ly: _Layer, saved: dict) -> None:
    """What transformers' grouped_mm experts keep beyond a dense MLP of the routed width (integrations/moe.py
    `grouped_mm_experts_forward`): the routing product `proj_out * sample_weights_g` keeps the experts' output, one
    hidden-wide row per (token, expert) pair; and where the expert stacks take a gradient (a full fine-tune, or
    PEFT's LoRA on them as parameters) the first grouped_mm keeps its gathered input, also one row per pair."""
    model_type = (shape.model_type or "").lower()
    if not (shape.num_experts and model_type in EXPERTS_INTERFACE and hf_code(setup)):
        return
    ver = _transformers_version(setup)
    if ver and ver < (5,):
        return
    k = max(1, shape.experts_per_token)
    saved["moe:routed_out"] = ly.a * ly.h * k
    if ly.trains_weights or peft_expert_stacks(setup, shape):
        saved["moe:gathered_in"] = ly.a * ly.h * k


_ROLES = {"q_proj": ("q", "k", "v", "qkv", "kv"), "o_proj": ("o",), "gate_proj": ("gate", "up", "gate_up"),
          "down_proj": ("down",)}


def _linears_in(shape: ModelShape, names: tuple) -> int:
    """How many separate linears of the model take the input these projections share (a fused qkv is one)."""
    dense, moe = layer_linears(shape)
    return sum(1 for m in (dense or moe) if m.role in _ROLES[names[0]])


def _save_bnb_inputs(shape: ModelShape, ly: _Layer, saved: dict, out_name: str) -> None:
    """bitsandbytes' MatMul4Bit/MatMul8bitLt keep their input for backward although the quantized weight is
    frozen (bitsandbytes/autograd/_functions.py `ctx.tensors = (A, B)`); an adapter on the same input keeps
    the same tensor only when it sees x itself: dropout, or PEFT's cast to another adapter dtype, hand the
    adapter a new tensor and the base layer's x is kept besides (a frozen LoRA-FA lora_A keeps none)"""
    r, a, h = ly.r, ly.a, ly.h
    for names, x, x_bytes, width in ((_ATTN_IN, "norm1:out", r, h), (("o_proj",), out_name, a, ly.q_dim),
                                     (_UP_IN, "norm2:out", r, h), (("down_proj",), "mlp:act_up", a, ly.inter)):
        if ly.x_cast:
            saved[f"{names[0]}:bnb_in"] = a * width * _linears_in(shape, names)   # each one's `x.to(...)` copy
        elif not any(n in ly.targets for n in names) or ly.dropout or ly.adapter_bytes != x_bytes or ly.a_frozen:
            saved.setdefault(x, x_bytes * width)


def _hook_escape(shape: ModelShape, ly: _Layer) -> float:
    """bitsandbytes stores its input on the autograd context as a plain attribute (`ctx.tensors = (A, B)` in
    MatMul4Bit/MatMul8bitLt.forward, bitsandbytes/autograd/_functions.py), not through save_for_backward, so
    the saved-tensor hooks of non-reentrant checkpointing (torch/utils/checkpoint.py
    _checkpoint_hook.pack_hook) and of activation offloading never see it: every quantized linear's input
    stays alive from its forward to its backward although the layer is checkpointed. A is the input after
    Linear4bit's `x.to(self.compute_dtype)`: one tensor for the linears sharing it in the compute dtype, a
    copy per linear otherwise. Reentrant checkpointing runs the forward under no_grad: no context is kept."""
    r, a, h = ly.r, ly.a, ly.h
    attn, mlp = 0.0, 0.0
    dense, moe = layer_linears(shape)
    roles = [m.role for m in (dense or moe)]
    for group, x_bytes, width in ((("q", "k", "v", "qkv", "kv"), r, h), (("o",), a, ly.q_dim),
                                  (("gate", "up", "gate_up"), r, h), (("down",), a, ly.inter)):
        n_lin = sum(1 for role in roles if role in group)
        if n_lin:
            # fp16 activations (an fp16 embedding, each Linear4bit casting its output back to its input's dtype)
            # reach a bf16 compute dtype: every linear casts its own copy, as one of another size would
            kept = a * width * (1 if x_bytes == a and not ly.x_cast else n_lin)
            if group[0] in ("q", "o"):
                attn += kept
            else:
                mlp += kept
    n_mixer = min(shape.linear_attn_layers, shape.num_layers) if shape.linear_attn_linears else 0
    if n_mixer:
        # a hybrid's token-mixer layers keep their own linears' inputs in place of attention's: those reading the
        # layer's normed input share it, every other one keeps the tensor it reads, as wide as its in_features
        # (Jamba's Mamba mixer: in_proj on the hidden state, x_proj on the convolved inner state, dt_proj on the
        # time-step rank, out_proj on the gated scan output; models/jamba/modeling_jamba.py:526-623)
        on_h = sum(1 for m in shape.linear_attn_linears if m.in_features == h)
        mixer = (a * h * (1 if r == a and not ly.x_cast else on_h) if on_h else 0.0) + \
            sum(a * m.in_features for m in shape.linear_attn_linears if m.in_features != h)
        attn = ((shape.num_layers - n_mixer) * attn + n_mixer * mixer) / shape.num_layers
    return attn + mlp


_ATTN_KEYS = ("attn:q", "attn:k", "attn:v", "attn:softmax", "attn:probs", "attn:out", "attn:lse", "attn:mask",
              "attn:out_copy")


def _first_unrecorded(ly: _Layer, saved: dict) -> float:
    """The first layer whose input needs no gradient (no checkpointing: HF and PEFT call
    enable_input_require_grads only for it) records nothing until its first trained or adapted module"""
    if ly.peft in ("PROMPT_TUNING", "P_TUNING"):
        return 0.0          # the virtual tokens' embeddings train: the first layer's input needs a gradient
    if ly.trains_weights or any(n in ly.targets for n in _ATTN_IN) or ly.prefix:
        skipped: tuple[str, ...] = ("norm1:fp32",)
    elif "o_proj" in ly.targets:
        skipped = ("norm1:fp32",) + _ATTN_KEYS
    elif any(n in ly.targets for n in _UP_IN):
        skipped = ("norm1:fp32", "norm2:fp32") + _ATTN_KEYS
    else:
        skipped = ("norm1:fp32", "norm2:fp32", "mlp:gate", "mlp:act", "mlp:up") + _ATTN_KEYS
    return sum(saved.get(k, 0.0) for k in skipped)


def _norm_backward(ly: _Layer) -> float:
    """HF RMSNorm's backward is fp32 arithmetic: about four fp32 hidden-sized temporaries at once, and the
    gradient in the residual dtype. Liger's kernel writes the input gradient only (its weight gradient's fp32
    partial sums are one row per SM, not per token: liger_kernel/ops/rms_norm.py rms_norm_backward)."""
    return ly.r * ly.h if ly.liger_norm else 16 * ly.h + ly.r * ly.h


def _backward_peak(ly: _Layer, saved: dict, per_layer: float) -> float:
    """Backward of one layer, in the order it runs. The MLP first: down_proj's input gradient, then the product's
    two gradients (silu(gate) and up) while everything the layer saved is still there; with an adapter on
    down_proj its input gradient is summed with the base's. Then the post-attention norm, when the MLP's tensors
    are freed. Then attention: eager's softmax backward holds the probabilities' gradient, its fp32 copy and the
    softmax gradient (heads x seq per token each); SDPA's makes the q, k and v gradients."""
    a, r, h, inter = ly.a, ly.r, ly.h, ly.inter
    mlp_part = sum(v for k, v in saved.items()
                   if k.startswith(("mlp:", "gate_proj", "up_proj", "gate_up_fused", "down_proj", "norm2:out")))
    down_in = sum(v for k, v in saved.items() if k in ("mlp:act_up", "down_proj:cast", "down_proj:adapter_in",
                                                        "down_proj:lora_a_in", "down_proj:dropout_out"))
    # the product's gradient, then silu's and up's, once down_proj's saved input is freed
    mlp_extra = 3 * a * inter - down_in + (a * h if r != a else 0)
    if ly.liger_glu:
        # Liger's product backward writes the gate's and up's gradients into its saved a and b in place
        # (liger_kernel/ops/swiglu.py swiglu_backward): only down_proj's input gradient comes on top
        mlp_extra = a * inter + (a * h if r != a else 0)
    if "down_proj" in ly.targets:
        mlp_extra += (ly.adapter_bytes if not ly.autocast else a) * inter
    if ly.eager and ly.attn_sinks:
        # the sink path's softmax backward runs in the compute dtype: the probabilities' gradient (widened by the
        # slice's backward to the sink column) and the softmax gradient
        attn_extra = 2 * a * ly.heads * ly.seq + a * (ly.q_dim + ly.k_seen + ly.v_seen)
    elif ly.eager:
        # the probabilities' gradient, its fp32 copy and the softmax gradient, less the freed probabilities
        attn_extra = (8 - (a if a != 4 else 0)) * ly.heads * ly.seq + a * (ly.q_dim + ly.k_seen + ly.v_seen)
    else:
        attn_extra = a * (2 * ly.q_dim + ly.k_seen + ly.v_seen)
    return max(per_layer + mlp_extra, per_layer - mlp_part + _norm_backward(ly), per_layer - mlp_part + attn_extra)


def _forward_flight(ly: _Layer) -> float:
    """A checkpointed layer's forward keeps nothing, but holds its working tensors while it runs: the MLP's three
    inter-wide outputs with the residual and the norm's output, or attention's q, k, v and output (eager: the
    scores, their fp32 softmax and its cast)"""
    a, r, h = ly.a, ly.r, ly.h
    mlp_flight = 3 * a * ly.inter + 2 * r * h + (a * h if r != a else 0)
    attn_flight = a * (2 * ly.q_dim + ly.k_seen + ly.v_seen) + 2 * r * h + \
        (a * ly.seq if ly.with_mask and not ly.eager else 0)
    if ly.eager:
        # scores, their fp32 softmax and its cast; with a sink column two compute-dtype tensors at a time (each
        # step of scale, mask, cat, subtract, softmax frees its input once the next exists)
        attn_flight += (2 * a if ly.attn_sinks else 4 + 2 * a) * ly.heads * ly.seq
    return max(mlp_flight, attn_flight)


# PEFT's LoRA-FA optimizer (peft/optimizers/lorafa.py create_lorafa_optimizer: `param.requires_grad_(False)` for
# every lora_A) trains lora_B only; PEFT's method comparison names it optimizer_type "lora-fa"
LORA_FA = frozenset({"lora-fa", "lora_fa", "lorafa"})


def lora_fa(setup: TrainingSetup) -> bool:
    """Whether the run trains LoRA with PEFT's LoRA-FA optimizer (lora_A frozen)."""
    return (setup.optimizer or "").strip().lower() in LORA_FA and setup.method in ("lora", "qlora")


def hf_code(setup: TrainingSetup) -> bool:
    """Whether the run's model is transformers' (or remote) modelling code with PEFT adapters, not torchtune's or
    LitGPT's own modules."""
    return setup.framework not in ("torchtune", "litgpt")


def dora_transient(setup: TrainingSetup, shape: ModelShape, rg: Regime) -> float:
    """Bytes (not per token) that one DoRA projection's forward holds while it recomputes its weight norm, the
    largest over the targeted projections. PEFT DoraLinearLayer (peft tuners/lora/dora.py) in training mode caches
    nothing: `get_lora_weight` runs `lora_B(lora_A(torch.eye(in)))` (in x in identity in the adapter dtype,
    which lora_A saves: as autocast's cast of it under autocast), then `get_weight_norm` holds that lora weight in
    x's dtype (the adapter dtype: PEFT casts x to lora_A's), the base weight cast to it, `scaling * lora_weight`
    and their sum (in x out each) until torch.linalg.norm reduces them. A checkpointed layer runs it again in
    its backward's recompute."""
    if not (setup.use_dora and setup.method in ("lora", "qlora") and hf_code(setup)):
        return 0.0
    a, t = rg.compute_bytes, rg.train_bytes
    cast = rg.autocast and a != t
    w_copies = 1 if (bool(setup.quant_bits) or rg.frozen_bytes != t) else 0
    dense, moe = layer_linears(shape)
    peak = 0.0
    for m in matched_linears(tuple(setup.lora_targets), tuple(dense or moe)):
        n_in, io = m.in_features, m.in_features * m.out_features
        eye_kept = n_in * n_in * (a if cast else t)
        making = n_in * n_in * t + (eye_kept if cast else 0) + io * (a if rg.autocast else t)
        norming = eye_kept + io * t * (3 + w_copies) + (io * a if setup.quant_bits else 0)
        peak = max(peak, making, norming)
    return float(peak)


def expert_dequant_transient(setup: TrainingSetup, shape: ModelShape, rg: Regime) -> float:
    """Bytes (not per token) one MoE layer holds while its quantized routed experts run. axolotl's
    `quantize_moe_experts` keeps the fused 3-D expert tensors quantized behind a torch parametrization that
    dequantizes on access (axolotl monkeypatch/moe_quant.py: `Bnb8bitParametrization.forward` returns
    int8_vectorwise_dequant's fp32 tensor, cached for the module's forward by its pre/post hooks; 4-bit through
    bitsandbytes' replace_parameter_4bit, dequantize_4bit returning the quant state's original dtype): the
    whole layer's experts exist dequantized while it runs, in the forward and again in a checkpointed layer's
    recompute, where the matmuls keep them for the input's gradient."""
    if not (setup.mechanisms.experts_quantized_on_load and setup.quant_bits and shape.num_experts
            and setup.method in ("lora", "qlora")):
        return 0.0
    _, moe = layer_linears(shape)
    routed = sum(m.params for m in moe if m.copies > 1)
    return float(routed * (4 if setup.quant_bits == 8 else rg.compute_bytes))


def expert_stack_copies(setup: TrainingSetup, shape: ModelShape, rg: Regime) -> tuple[float, float, float]:
    """(bytes one MoE layer keeps from its forward to its backward, bytes at the worst moment of its backward, the
    largest stack's bytes) of
    the merged expert weights PEFT's parameter LoRA makes. ParamWrapper registers a parametrization whose forward
    returns `torch.baddbmm(W, lhs, rhs)` (peft/tuners/lora/layer.py `_LoraFactorsProxy`): each forward materializes
    W + BA, a whole expert stack in W's dtype, and the grouped_mm that uses it keeps it for its weight gradient; the
    backward of each stack (the last first) then makes that stack's full-size gradient while the earlier stacks'
    copies are still held."""
    stacks = peft_expert_stacks(setup, shape)
    if not stacks:
        return 0.0, 0.0, 0.0
    w = rg.load_bytes
    sizes = [st.elements * w for st in stacks]
    worst = max(sum(sizes[:j + 1]) + sizes[j] for j in range(len(sizes)))
    return float(sum(sizes)), float(worst), float(max(sizes))


# bitsandbytes 0.43.2 (9e753741, 2024-07-16, "fix QLoRA mem bug: delete useless buffered activation") made
# MatMul4Bit.forward keep `ctx.tensors = (None, B)` where it kept `(A, B)` (bitsandbytes/autograd/_functions.py:516
# before, :469 at 0.45.4); MatMul8bitLt still keeps A (`ctx.tensors = (CAt, subA, A)`, :389 at 0.45.4)
BNB4_DROPS_INPUT = (0, 43, 2)


def bnb_keeps_input(setup: TrainingSetup) -> bool:
    """Whether bitsandbytes' matmul keeps its input on the autograd context: always for 8-bit; for 4-bit up to
    0.43.1, and when the inputs name no bitsandbytes release (a config names none; the conservative reading,
    since the framework's release a config is read at is itself a default)."""
    if setup.quant_bits != 4:
        return True
    ver = _version(setup.mechanisms.bitsandbytes_version)
    return not (ver and ver >= BNB4_DROPS_INPUT)


def bnb_quantized(setup: TrainingSetup) -> bool:
    """Whether the quantized base layers are bitsandbytes' (the default); GPTQ/AWQ kernels are others, and
    torchtune's QLoRA uses torchao's NF4 tensor, whose LinearNF4 keeps only the weight (torchao/dtypes/
    nf4tensor.py: `ctx.nf4_weight = weight`; backward needs no input for a frozen weight)."""
    if setup.framework == "torchtune":
        return False
    return setup.mechanisms.quant_method.lower() in ("bnb", "bitsandbytes", "nf4", "fp4")
