"""Per-GPU memory of a Megatron-Core run (ms-swift `megatron sft|pt|rlhf`, verl's megatron strategy).

Megatron splits the model itself, so a rank holds a shard, not the model (NVIDIA/Megatron-LM at d98e8a64):
- weights: the rank's pipeline stage (num_layers / PP; the first stage also holds the word embedding, the last
  the output layer, or a copy of the tied embedding), its linear weights and embedding split over TP
  (megatron/core/tensor_parallel/layers.py ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding),
  routed experts over EP (megatron/core/transformer/moe/experts.py), norms replicated;
- gradients: fp32 "main" gradients for every trainable weight of the shard, in the DDP wrapper's contiguous
  grad buffer (megatron/core/distributed/param_and_grad_buffer.py; bf16 runs accumulate in fp32,
  megatron/training/arguments.py:1215 `accumulate_allreduce_grads_in_fp32 = True`);
- optimizer: fp32 main weights and Adam's two moments, 12 bytes a trainable weight, split over the data-parallel
  ranks with the distributed optimizer (megatron/core/optimizer/distrib_optimizer.py; experts over the
  expert-data-parallel ranks) — 18 bytes a weight without it, 6 + 12 / DP with it
  (megatron/training/theoretical_memory_usage.py num_bytes_per_parameter);
- activations: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models" Table 2,
  as theoretical_memory_usage.py applies it: sbh(18 + 4 f/h) bytes a layer with fused attention (no a s^2 term),
  divided by TP under sequence parallelism (else sbh(10 + 24 f'/t) with the ffn ratio folded in); the first stage
  holds PP micro-batches in flight under 1F1B (times 1 + (PP-1)/(PP v) interleaved, fewer when a step has fewer);
  full recompute keeps each recompute chunk's input (2sbh, over TP with sequence parallelism) and rebuilds one
  chunk at a time (megatron/core/transformer/transformer_block.py _checkpointed_forward);
- logits: the output layer's input and 6 bytes a logit, split over TP (vocab-parallel cross entropy,
  megatron/core/tensor_parallel/cross_entropy.py), on the last stage with one micro-batch in flight: the
  cross entropy's fp32 copy, kept as the softmax for backward, beside the bf16 logits the model still holds at the
  loss, or beside the bf16 gradient made from it in backward.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from oomdoctor.facts import GIB, Estimate, Hardware, ModelShape, TrainingSetup, msg
from oomdoctor.memory.params import ParamCounts, _moe_layers, layer_linears, trainable_params
from oomdoctor.memory.runtime import CUBLAS_WORKSPACE_GIB, CUDA_CONTEXT_GIB

MAIN_GRAD_BYTES = 4         # fp32 main gradient
MAIN_STATE_BYTES = 12       # fp32 main weight + Adam exp_avg + exp_avg_sq


@dataclass(frozen=True)
class RankShard:
    """Parameters one rank holds, by how they are split (counts, not bytes)."""

    tp_split: float         # attention, dense MLP, shared experts, embedding/output layer: over TP
    replicated: float       # norms and routers: whole on every TP rank
    experts: float          # routed experts: over EP

    @property
    def total(self) -> float:
        return self.tp_split + self.replicated + self.experts


def routed_expert_params(shape: ModelShape) -> int:
    """Routed experts' weights, all MoE layers (a module with copies > 1 is one weight per expert)."""
    if not shape.num_experts:
        return 0
    _, moe = layer_linears(shape)
    return sum(m.params for m in moe if m.copies > 1) * _moe_layers(shape)


def rank_shard(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts, stage: str) -> RankShard:
    """The parameters of the first or last pipeline stage's rank (Megatron-LM theoretical_memory_usage.py:
    layers / PP, embedding on the first stage; the output layer on the last, which with tied embeddings keeps
    its own copy of the embedding when PP > 1, megatron/core/models/common/language_module.py
    setup_embeddings_and_output_layer)."""
    tp, pp, ep = max(1, setup.tensor_parallel), max(1, setup.pipeline_parallel), max(1, setup.expert_parallel)
    experts = routed_expert_params(shape)
    # outside the layers: a vision tower and what the layout does not know, with the embedding on the first stage
    outside = shape.extra_params + max(0, counts.extra.get("other", 0))
    stack = counts.total - counts.embeddings - counts.lm_head - outside
    replicated = counts.norms + counts.router
    tp_stack = max(0, stack - experts - replicated)
    head = counts.lm_head or (counts.embeddings if pp > 1 else 0)
    ends = 0.0
    if stage == "first" or pp == 1:
        ends += counts.embeddings + outside
    if stage == "last" or pp == 1:
        ends += head
    return RankShard(tp_split=(tp_stack / pp + ends) / tp, replicated=replicated / pp, experts=experts / pp / ep)


def _trainable_share(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts) -> float:
    """The trainable fraction of the weights (full: 1; freeze: the trained layers'); LoRA's adapters apart."""
    if setup.method == "full":
        return 1.0
    if setup.method == "freeze":
        return trainable_params(setup, shape) / max(1, counts.total)
    return 0.0


def model_state_bytes(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts, shard: RankShard) \
        -> tuple[float, float, float]:
    """(weights, gradients, optimizer states) bytes on the rank."""
    n = max(1, setup.n_gpus)
    tp, pp, ep = max(1, setup.tensor_parallel), max(1, setup.pipeline_parallel), max(1, setup.expert_parallel)
    dp = setup.data_parallel
    expert_dp = max(1, n // (ep * pp))      # megatron/core/parallel_state.py: expert-data-parallel group
    weight_bytes = 4 if setup.precision == "fp32" else 2
    master = 0 if setup.precision == "fp32" else 4      # fp32 main weights only beside half-precision ones
    state_bytes = master + 8
    share = _trainable_share(setup, shape, counts)
    weights = shard.total * weight_bytes
    dense_trainable = (shard.tp_split + shard.replicated) * share
    expert_trainable = shard.experts * share
    if setup.method in ("lora", "qlora"):
        # LoRA adapters (ms-swift's Megatron tuners, swift/megatron/tuners/lora.py): split like the layers they wrap
        adapters = trainable_params(setup, shape) / (tp * pp)
        weights += adapters * weight_bytes
        dense_trainable += adapters
    grads = (dense_trainable + expert_trainable) * MAIN_GRAD_BYTES
    split, expert_split = (dp, expert_dp) if setup.distributed_optimizer else (1, 1)
    states = dense_trainable * state_bytes / split + expert_trainable * state_bytes / expert_split
    return weights, grads, states


def in_flight(setup: TrainingSetup) -> float:
    """Micro-batches whose activations the first stage holds at once (1F1B warm-up: PP; interleaved: times
    1 + (PP - 1) / (PP v); no more than a step has, megatron/core/pipeline_parallel/schedules.py)."""
    pp = max(1, setup.pipeline_parallel)
    if pp == 1:
        return 1.0
    if setup.virtual_pipeline and setup.virtual_pipeline > 1:
        return pp * (1 + (pp - 1) / (pp * setup.virtual_pipeline))
    return float(min(pp, max(1, setup.grad_accum)))


def _ffn_width(shape: ModelShape) -> float:
    """The MLP width a token passes through: dense layers' intermediate size, MoE layers' routed top-k experts
    and shared experts (averaged over the layers)."""
    if not shape.num_experts:
        return float(shape.intermediate_size)
    moe = _moe_layers(shape)
    routed = (shape.moe_intermediate_size or shape.intermediate_size) * max(1, shape.experts_per_token)
    shared = (shape.shared_expert_intermediate_size or 0) * max(0, shape.shared_experts or 0) \
        if shape.shared_expert_intermediate_size else 0
    dense = shape.num_layers - moe
    return (moe * (routed + shared) + dense * shape.intermediate_size) / max(1, shape.num_layers)


def layer_activation_bytes(setup: TrainingSetup, shape: ModelShape, tokens: float) -> float:
    """One layer's saved activations for `tokens` tokens of one micro-batch (Korthikanti Table 2 with fused
    attention: sbh(18 + 4 f/h), f the MLP width; over TP with sequence parallelism, else the 10 sbh of norms
    and dropouts stay whole on every TP rank)."""
    h = shape.hidden_size
    tp = max(1, setup.tensor_parallel)
    per_token = h * (18 + 4 * _ffn_width(shape) / h)
    if setup.sequence_parallel or tp == 1:
        return tokens * per_token / tp
    return tokens * (10 * h + (per_token - 10 * h) / tp)


def rank_tokens(setup: TrainingSetup) -> float:
    """The tokens of one micro-batch a rank holds: context parallelism splits each sequence over its ranks."""
    return setup.micro_batch * setup.seq_len / max(1, setup.context_parallel)


def activation_bytes(setup: TrainingSetup, shape: ModelShape) -> tuple[float, float]:
    """(the first stage's saved activations, and the last stage's) bytes."""
    tp, pp = max(1, setup.tensor_parallel), max(1, setup.pipeline_parallel)
    tokens = rank_tokens(setup)
    layers = math.ceil(shape.num_layers / pp)
    full = layer_activation_bytes(setup, shape, tokens)
    chunk_input = 2 * tokens * shape.hidden_size / (tp if setup.sequence_parallel else 1)
    recompute = setup.recompute or ("full" if setup.grad_ckpt else "")    # a plan that turns checkpointing on
    if recompute == "full":
        n = max(1, setup.recompute_layers or 1)
        if setup.recompute_method == "block":
            # the first n layers of a stage recompute, the rest keep everything
            kept = min(n, layers) * chunk_input + max(0, layers - n) * full
            rebuilt = full
        else:
            kept = math.ceil(layers / n) * chunk_input
            rebuilt = min(n, layers) * full
        per_micro, working = kept, rebuilt
    else:
        per_micro, working = layers * full, 0.0
    embedding = tokens * shape.hidden_size / tp + 8 * tokens   # embedding dropout output, token ids
    first = in_flight(setup) * (per_micro + embedding) + working
    last = per_micro + working + (embedding if pp == 1 else 0.0)
    return first, last


# Bytes a logit at the loss: the vocab-parallel cross entropy upcasts the bf16 logits to an fp32 copy it keeps as the
# softmax (megatron/core/tensor_parallel/cross_entropy.py:25 `vocab_parallel_logits.float()`, exp and div in place,
# save_for_backward) while GPTModel._postprocess still holds the bf16 `logits` it passes in (gpt_model.py:807-839;
# ms-swift's own swift/megatron/model/gpt_model.py:205-221 at ea766ff5b); the fused loss's backward casts the fp32
# gradient, made in the softmax's place, to a new bf16 one (megatron/core/fusions/fused_cross_entropy.py:82)
LOSS_BYTES_PER_LOGIT = 4 + 2


def logits_bytes(setup: TrainingSetup, shape: ModelShape) -> float:
    """The output layer's input (4 bytes a hidden value, as theoretical_memory_usage.py counts it) and the loss's
    LOSS_BYTES_PER_LOGIT, split over TP."""
    return rank_tokens(setup) * (4 * shape.hidden_size + LOSS_BYTES_PER_LOGIT * shape.vocab_size) \
        / max(1, setup.tensor_parallel)


def estimate(setup: TrainingSetup, shape: ModelShape, hw: Hardware, counts: ParamCounts, headroom: float) -> Estimate:
    """The estimate of the busier of the first and the last pipeline stage's ranks."""
    first_act, last_act = activation_bytes(setup, shape)
    logits = logits_bytes(setup, shape)
    stages = {}
    for stage, act, lg in (("first", first_act, logits if setup.pipeline_parallel <= 1 else 0.0),
                           ("last", last_act, logits)):
        w, g, o = model_state_bytes(setup, shape, counts, rank_shard(setup, shape, counts, stage))
        stages[stage] = {"weights": w, "gradients": g, "optimizer": o, "activations": act, "logits": lg}
    stage = max(stages, key=lambda s: sum(stages[s].values()))
    parts = stages[stage]
    comps = {k: v / GIB for k, v in parts.items()}
    static = (parts["weights"] + parts["gradients"] + parts["optimizer"]) / GIB
    forward = static + comps["activations"]
    loss = forward + comps["logits"]
    allocated = loss + CUBLAS_WORKSPACE_GIB
    overhead = CUDA_CONTEXT_GIB + CUBLAS_WORKSPACE_GIB
    comps["overhead"] = overhead
    moments = {"forward": forward, "loss": loss, "logits backward": loss, "layers backward": forward,
               "optimizer": static}
    moments = {k: v + CUBLAS_WORKSPACE_GIB for k, v in moments.items()}
    details = {"reserved_gib": allocated, "cuda_context_gib": CUDA_CONTEXT_GIB, "model_states_gib": static,
               "weights_gib": comps["weights"], "activations_gib": comps["activations"],
               "cublas_workspace_gib": CUBLAS_WORKSPACE_GIB, "params_total": float(counts.total),
               "params_trainable": float(trainable_params(setup, shape)), "tokens_per_gpu":
               rank_tokens(setup)}
    note = msg("memory.note.megatron", tp=max(1, setup.tensor_parallel), pp=max(1, setup.pipeline_parallel),
               ep=max(1, setup.expert_parallel), cp=max(1, setup.context_parallel), dp=setup.data_parallel,
               stage=msg(f"memory.megatron_stage.{stage}"),
               optimizer=msg("memory.megatron_optimizer." + ("distributed" if setup.distributed_optimizer
                                                            else "replicated")))
    return Estimate(components=comps, allocated_gib=allocated, peak_gib=loss + overhead, capacity_gib=hw.usable_gib,
                    headroom=headroom, phase="train", details=details, notes=(note,), moments=moments,
                    peak_moment="loss")
