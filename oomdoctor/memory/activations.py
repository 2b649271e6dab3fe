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
                    input (a compute-dtype copy under autocast), lora_B saves lora_A's output (rank wide)

Checked against oomdoctor.simulate's traces (benchmarks/grid.py), where every tensor is counted.
"""
from __future__ import annotations

from dataclasses import dataclass

from oomdoctor.facts import ModelShape, TrainingSetup
from oomdoctor.memory.loss import _truthy
from oomdoctor.memory.params import _canonical_targets, layer_linears
from oomdoctor.memory.regime import Regime

_ATTN_IN = ("q_proj", "k_proj", "v_proj")
_UP_IN = ("gate_proj", "up_proj")


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


def _flag(setup: TrainingSetup, key: str, default=None):
    return setup.extras.get(key, default) if setup.extras else default


def compiled_layers(setup: TrainingSetup) -> bool:
    """torchtune's compile=True: every decoder layer goes through torch.compile (training/_compile.py)."""
    return setup.framework == "torchtune" and _truthy(_flag(setup, "compile", False))


def masked(setup: TrainingSetup) -> bool:
    """Whether the attention gets a materialised mask: padded (unpacked) batches under SDPA or eager.

    transformers skips the mask only when no token is padding (masking_utils._ignore_causal_mask_sdpa);
    FlashAttention-2 never takes one (padding is removed before the kernel)."""
    return setup.attention in ("sdpa", "eager", "") and not setup.packing


def layer_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime, seq: int, *, trains_weights: bool,
                reentrant: bool = False) -> LayerBytes:
    """Per-token bytes of one decoder layer; `trains_weights` for a fully trained layer (full, freeze's last),
    `reentrant` for reentrant gradient checkpointing."""
    h = shape.hidden_size
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
    targets = set(_canonical_targets(tuple(setup.lora_targets), shape)) if adapters else set()
    if "qkv_fused" in targets:
        targets |= set(_ATTN_IN)
    if "gate_up_fused" in targets:
        targets |= set(_UP_IN)
    adapter_bytes = rg.train_bytes if adapters else a
    rank = max(1, int(setup.lora_rank)) if adapters else 0
    dropout = adapters and float(_flag(setup, "lora_dropout", 0) or 0) > 0
    with_mask = masked(setup)
    eager = setup.attention == "eager"
    # repeat_kv copies k and v to every head when the kernel cannot take GQA itself (eager, or SDPA with a mask:
    # transformers use_gqa_in_sdpa). One kv head expands to a stride-0 view instead: eager's matmul still copies
    # it, SDPA takes it as is unless an fp32 residual promoted k through RoPE's fp32 cos/sin and the kernel's
    # cast copies it
    repeated = (eager or with_mask) and shape.num_kv_heads < heads
    view = shape.num_kv_heads == 1 and not eager
    v_seen = q_dim if repeated and not view else kv_dim
    k_seen = q_dim if repeated and (not view or (autocast and r != a)) else kv_dim

    saved: dict[str, float] = {}      # tensor name -> bytes per token; a tensor saved twice is one entry

    def linear(name: str, x: str, x_bytes: int, width: int) -> None:
        """What a projection keeps: its (cast) input when the weight trains, LoRA's own tensors when targeted."""
        if trains_weights:
            if autocast and x_bytes != a:
                saved[f"{name}:cast"] = a * width            # autocast's per-call cast, saved by the linear
            else:
                saved[x] = x_bytes * width                   # the input itself, shared with its siblings
        if name in targets:
            xa_name, xa_bytes = x, x_bytes
            if adapter_bytes != x_bytes:
                xa_name, xa_bytes = f"{name}:adapter_in", adapter_bytes   # PEFT casts to the adapter dtype
            if dropout:
                saved[f"{name}:dropout_mask"] = 1 * width     # CUDA native_dropout keeps a bool mask
                xa_name = f"{name}:dropout_out"
            if autocast and xa_bytes != a:
                saved[f"{name}:lora_a_in"] = a * width       # autocast casts lora_A's input and saves that copy
            else:
                saved[xa_name] = xa_bytes * width
            saved[f"{name}:lora_b_in"] = (a if autocast else adapter_bytes) * rank

    # input_layernorm / post_attention_layernorm: fp32 input (the input itself when already fp32), rsqrt,
    # and the normalised tensor when the norm weight trains. Compiled (torchtune compile=True compiles each
    # layer), AOTAutograd's min-cut partitioner saves the norm's input in its own dtype and the rsqrt, and
    # recomputes the fp32 copy and the normalised tensor in backward (torch/_functorch/partitioners.py
    # min_cut_rematerialization_partition); torchtune's README table: compile takes 41 KB per token and layer
    # off Llama 3.2 3B's full fine-tune, which these and silu's output below account for
    compiled = compiled_layers(setup)
    for norm in ("norm1", "norm2"):
        if compiled:
            saved[f"{norm}:fp32"] = r * h + 4.0
            continue
        saved[f"{norm}:fp32"] = 4 * h + 4.0 / 1      # + (b, s, 1) fp32 rsqrt, 4 bytes per token
        if trains_weights:
            saved[f"{norm}:normed"] = r * h
    for name in _ATTN_IN:
        linear(name, "norm1:out", r, h)
    # attention kernel inputs: q and k come out of RoPE in the residual dtype's promotion; the kernel's compute
    # dtype copies are what it saves
    saved["attn:q"] = a * q_dim
    saved["attn:k"] = a * k_seen
    saved["attn:v"] = a * v_seen
    # LitGPT hands SDPA a single key/value head for multi-query models (model.py expands k/v only for GQA);
    # fused kernels need equal head counts (before torch 2.5's enable_gqa), so SDPA runs its math kernel,
    # which keeps the attention probabilities in the compute dtype
    math_kernel = (setup.framework == "litgpt" and shape.num_kv_heads == 1 < heads and not eager)
    if math_kernel:
        saved["attn:probs"] = a * heads * seq
    if eager:
        saved["attn:softmax"] = 4 * heads * seq
        if a != 4:
            saved["attn:probs"] = a * heads * seq
        out_name = "attn:out_copy"                   # transpose(1, 2).contiguous() of the matmul output
    else:
        saved["attn:out"] = a * q_dim                # SDPA keeps its output (laid out (b, s, heads, d))
        saved["attn:lse"] = 4 * heads
        if with_mask:
            saved["attn:mask"] = a * seq             # the bool mask as a float copy, per layer
        out_name = "attn:out"
    linear("o_proj", out_name, a, q_dim)
    for name in _UP_IN if shape.gated_mlp else ("up_proj",):
        linear(name, "norm2:out", r, h)
    if shape.gated_mlp:
        saved["mlp:gate"] = a * inter                # silu's input
        if not compiled:
            saved["mlp:act"] = a * inter             # silu output, kept by the product (compiled: recomputed)
        saved["mlp:up"] = a * inter
    else:
        saved["mlp:up"] = a * inter                  # GELU's input
    linear("down_proj", "mlp:act_up" if shape.gated_mlp else "mlp:act", a, inter)

    if setup.method == "qlora" and setup.quant_bits and bnb_quantized(setup):
        # bitsandbytes' MatMul4Bit/MatMul8bitLt keep their input for backward although the quantized weight is
        # frozen (bitsandbytes/autograd/_functions.py `ctx.tensors = (A, B)`); an adapter on the same input keeps
        # the same tensor only when it sees x itself: dropout, or PEFT's cast to another adapter dtype, hand the
        # adapter a new tensor and the base layer's x is kept besides
        for names, x, x_bytes, width in ((_ATTN_IN, "norm1:out", r, h), (("o_proj",), out_name, a, q_dim),
                                         (_UP_IN, "norm2:out", r, h), (("down_proj",), "mlp:act_up", a, inter)):
            if not any(n in targets for n in names) or dropout or adapter_bytes != x_bytes:
                saved.setdefault(x, x_bytes * width)

    # bitsandbytes stores its input on the autograd context as a plain attribute (`ctx.tensors = (A, B)` in
    # MatMul4Bit/MatMul8bitLt.forward, bitsandbytes/autograd/_functions.py), not through save_for_backward, so
    # the saved-tensor hooks of non-reentrant checkpointing (torch/utils/checkpoint.py
    # _checkpoint_hook.pack_hook) and of activation offloading never see it: every quantized linear's input
    # stays alive from its forward to its backward although the layer is checkpointed. A is the input after
    # Linear4bit's `x.to(self.compute_dtype)`: one tensor for the linears sharing it in the compute dtype, a
    # copy per linear otherwise. Reentrant checkpointing runs the forward under no_grad: no context is kept.
    escape = 0.0
    if setup.method == "qlora" and setup.quant_bits and bnb_quantized(setup):
        dense, moe = layer_linears(shape)
        roles = [m.role for m in (dense or moe)]
        for group, x_bytes, width in ((("q", "k", "v", "qkv", "kv"), r, h), (("o",), a, q_dim),
                                      (("gate", "up", "gate_up"), r, h), (("down",), a, inter)):
            n_lin = sum(1 for role in roles if role in group)
            if n_lin:
                escape += a * width * (1 if x_bytes == a else n_lin)

    per_layer = sum(saved.values())
    # The first layer whose input needs no gradient (no checkpointing: HF and PEFT call enable_input_require_grads
    # only for it) records nothing until its first trained or adapted module
    attn_keys = ("attn:q", "attn:k", "attn:v", "attn:softmax", "attn:probs", "attn:out", "attn:lse", "attn:mask",
                 "attn:out_copy")
    if trains_weights or any(n in targets for n in _ATTN_IN):
        skipped = ("norm1:fp32",)
    elif "o_proj" in targets:
        skipped = ("norm1:fp32",) + attn_keys
    elif any(n in targets for n in _UP_IN):
        skipped = ("norm1:fp32", "norm2:fp32") + attn_keys
    else:
        skipped = ("norm1:fp32", "norm2:fp32", "mlp:gate", "mlp:act", "mlp:up") + attn_keys
    unrecorded = sum(saved.get(k, 0.0) for k in skipped)
    mlp_part = sum(v for k, v in saved.items()
                   if k.startswith(("mlp:", "gate_proj", "up_proj", "down_proj", "norm2:out")))

    # Backward of one layer, in the order it runs. The MLP first: down_proj's input gradient, then the product's
    # two gradients (silu(gate) and up) while everything the layer saved is still there; with an adapter on
    # down_proj its input gradient is summed with the base's. Then the post-attention norm: HF RMSNorm's backward
    # is fp32 arithmetic, about four fp32 hidden-sized temporaries at once, when the MLP's tensors are freed.
    # Then attention: eager's softmax backward holds the probabilities' gradient, its fp32 copy and the softmax
    # gradient (heads x seq per token each); SDPA's makes the q, k and v gradients.
    down_in = sum(v for k, v in saved.items() if k in ("mlp:act_up", "down_proj:cast", "down_proj:adapter_in",
                                                        "down_proj:lora_a_in", "down_proj:dropout_out"))
    # the product's gradient, then silu's and up's, once down_proj's saved input is freed
    mlp_extra = 3 * a * inter - down_in + (a * h if r != a else 0)
    if "down_proj" in targets:
        mlp_extra += (adapter_bytes if not autocast else a) * inter
    norm_extra = 16 * h + r * h
    if eager:
        # the probabilities' gradient, its fp32 copy and the softmax gradient, less the freed probabilities
        attn_extra = (8 - (a if a != 4 else 0)) * heads * seq + a * (q_dim + k_seen + v_seen)
    else:
        attn_extra = a * (2 * q_dim + k_seen + v_seen)
    backward_peak = max(per_layer + mlp_extra, per_layer - mlp_part + norm_extra,
                        per_layer - mlp_part + attn_extra)
    if setup.grad_ckpt and reentrant:
        # reentrant checkpointing recomputes the whole layer and backpropagates from its output, which stays
        # alive through the layer's backward (torch/utils/checkpoint.py CheckpointFunction.backward)
        backward_peak += r * h
    # rotary cos and sin (b, s, head_dim) in the residual dtype, kept by every layer's RoPE; the bool mask lives
    # while the decoder stack runs (and through backward as a checkpointed layer's argument)
    shared = 2 * r * d
    mask = 1 * seq if with_mask else 0
    # A checkpointed layer's forward keeps nothing, but holds its working tensors while it runs: the MLP's three
    # inter-wide outputs with the residual and the norm's output, or attention's q, k, v and output (eager: the
    # scores, their fp32 softmax and its cast)
    mlp_flight = 3 * a * inter + 2 * r * h + (a * h if r != a else 0)
    attn_flight = a * (2 * q_dim + k_seen + v_seen) + 2 * r * h + (a * seq if with_mask and not eager else 0)
    if eager:
        attn_flight += (4 + 2 * a) * heads * seq
    flight = max(mlp_flight, attn_flight)
    # final norm: fp32 input; with a trained norm weight its normalised tensor, with a trained lm_head its input
    head = 4 * h + 4 + (r * h if setup.method == "full" else 0)
    if setup.method == "full":
        head += a * h if autocast and r != a else r * h
    return LayerBytes(saved=per_layer, checkpoint_input=r * h, shared=shared, mask=mask, head_saved=head,
                      backward_extra=backward_peak - per_layer, head_backward=norm_extra,
                      first_unrecorded=unrecorded, forward_flight=flight, hook_escape=escape)


def bnb_quantized(setup: TrainingSetup) -> bool:
    """Whether the quantized base layers are bitsandbytes' (the default); GPTQ/AWQ kernels are others, and
    torchtune's QLoRA uses torchao's NF4 tensor, whose LinearNF4 keeps only the weight (torchao/dtypes/
    nf4tensor.py: `ctx.nf4_weight = weight`; backward needs no input for a frozen weight)."""
    if setup.framework == "torchtune":
        return False
    return str(_flag(setup, "quant_method", "bnb") or "bnb").lower() in ("bnb", "bitsandbytes", "nf4", "fp4")
