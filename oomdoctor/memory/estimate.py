"""Analytic per-GPU memory of one training step: weights, gradients, optimizer, activations, logits, overhead.

The step is modelled as a few moments whose maximum is the peak (states exist from the first step on):
  loss      weights + states + saved activations + logits/loss at the end of forward
  backward  weights + states + saved activations + loss gradients + lm_head gradient
  step      weights + states + all gradients + optimizer temporaries
  embedding weights + states + all gradients + two more vocab x hidden gradients (tied embeddings, full tuning)
Activation terms are what HF Llama-style blocks save for backward, checked against a traced step on fake
tensors (tests/test_fake_grid.py); overheads are a few global constants, each with its reason.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from oomdoctor.facts import GIB, CrashReport, Estimate, Hardware, ModelShape, Msg, TrainingSetup, msg
from oomdoctor.memory import hybrid, initload, optimizers
from oomdoctor.memory.activations import (
    LayerBytes,
    bnb_quantized,
    dora_transient,
    expert_dequant_transient,
    expert_stack_copies,
    hf_code,
    layer_bytes,
)
from oomdoctor.memory.loss import (
    _HF_TRAINER,
    LossBytes,
    fused_chunk_tokens,
    loss_bytes,
    returned_logit_bytes,
    unsloth_chunk_tokens,
)
from oomdoctor.memory.params import ParamCounts, _count, lora_params, modules_to_save_params, trainable_params
from oomdoctor.memory.regime import Regime, _version, regime_of
from oomdoctor.memory.runtime import CUBLAS_WORKSPACE_GIB, CUDA_CONTEXT_GIB

# ---------------------------------------------------------------- global constants (the only tuned numbers)
# the CUDA context and the cuBLAS workspace: memory/runtime.py
# Caching-allocator reserve (max_memory_reserved - max_memory_allocated), from the allocator's mechanics
# (pytorch c10/core/AllocatorConfig.h, c10/core/CachingDeviceAllocator.h get_round_size/get_allocation_size,
# c10/cuda/CUDACachingAllocator.cpp get_free_block/alloc_block/release_cached_blocks; replayed by
# oomdoctor/memory/allocator.py): sizes round to 512 B and tensors >= 10 MiB get segments rounded to 2 MiB, so
# weights and states pack with at most 2 MiB each to spare; a freed block stays cached and is reused best fit,
# so what a step allocates in the same sizes every step reuses last step's blocks. What a moment can hold idle
# beside its live tensors is the block of the largest tensor the step churns through that the moment's own
# requests cannot reuse: the fp32 logits where the loss upcasts (replayed: 16 bytes reserved per logit for
# 12 allocated in a fixed-length HF step), the widest activation, the step's largest temporary
# (transient_blocks). Evidence: 58 real OOM messages hold a median 2.6% of allocated idle, 0.85x the request
# that failed; PEFT's MetaMathQA LoRA runs reserve within 1-2% of the traced allocated peak (docs/estimates.md).
# HF loss at evaluation: bytes per logits element besides the compute-dtype logits (fp32 copy + log-softmax)
LOSS_FWD_FP32_BYTES = 8
# Unpacked batches of varying length: the caching allocator gives each logits-sized fp32 tensor its own
# cudaMalloc'd segment, since no cached block is as large. Three are alive at once in every loss that upcasts
# (forward: the fp32 logits or their cast and the log-softmax output; backward: that output, its gradient and
# the input gradient: 3 x 4 bytes per batch x seq x vocab element). A later, longer batch cannot fit its own
# into them (best fit needs a block at least as large, and segments never merge: c10/cuda/
# CUDACachingAllocator.cpp get_free_block/alloc_block), while its compute-dtype logits split the old blocks; so
# the previous longest batch's three segments stay reserved beside the new ones until an OOM retry or
# empty_cache frees them. ms-swift's published max_memory_reserved for unpacked Qwen-1 LoRA sits 4-6 GiB above
# Qwen's own fixed-length runs of the same model and length (benchmarks/accuracy.py, ms-* and qw-* rows).
VARLEN_CACHED_FP32_BYTES = 12

MOMENTS = ("forward", "loss", "logits backward", "layers backward", "optimizer")


@dataclass(frozen=True)
class ModelStates:
    """The model's states on one GPU before sharding, bytes: what every moment of the step holds."""

    frozen: float       # frozen weights (quantized where the run quantizes)
    trainable: float    # trainable weights: full parameters, adapters, modules_to_save copies
    grads: float        # every trainable parameter's gradient
    master: float       # fp32 master copy outside DeepSpeed (DeepSpeed's is folded into `states`)
    states: float       # optimizer states
    temp: float         # the optimizer step's temporaries
    paged: float        # of `states`, paged to unified memory: the card holds them, torch's allocator does not see them
    step_grads: float = 0.0  # DeepSpeed's fp32 gradient partition: made in the optimizer step, freed after it
    quant_state: float = 0.0  # of `frozen`, bitsandbytes' 4-bit block statistics: module attributes, not parameters

    @property
    def weights(self) -> float:
        return self.frozen + self.trainable


@dataclass(frozen=True)
class Sharded:
    """Per GPU after ZeRO or FSDP sharding and CPU offload, bytes."""

    weights: float
    grads: float
    states: float
    temp: float
    gather: float = 0.0  # unsharded parameters being used or prefetched, and communication buckets
    host: float = 0.0    # moved to host RAM by offloading
    reduce: float = 0.0  # backward only: one unit's unsharded gradients and its reduce-scatter input
    step_grads: float = 0.0  # optimizer step only: DeepSpeed's fp32 gradient partition on this GPU
    paged: float = 0.0   # of `states`, paged to unified memory (ModelStates.paged), this GPU's share


@dataclass(frozen=True)
class Reserve:
    """What the caching allocator holds beyond the live tensors, GiB."""

    idle: float          # idle blocks at the worst moment, plus the varying-length segments under the fit line
    varlen: float        # varying-length logits segments counted against the card (capped by the room left)
    varlen_all: float    # the same, uncapped
    reserved_seen: float  # what torch.cuda.max_memory_reserved reports


def _megatron(setup: TrainingSetup, shape: ModelShape, hw: Hardware, counts: ParamCounts,
              crash: CrashReport | None, headroom: float) -> Estimate:
    """A Megatron-Core run: the model sharded by Megatron itself, and verl's colocated rollout beside it."""
    # Megatron-Core shards the model itself (tensor, pipeline, expert parallelism): memory/megatron.py
    from oomdoctor.memory import megatron

    est = megatron.estimate(setup, shape, hw, counts, headroom)
    if hybrid.applies(setup):
        # verl's megatron workers colocate the rollout engine as its FSDP workers do (megatron_workers.py
        # ActorRolloutRefWorker): the engine, log-prob passes and critic beside the rank's Megatron shard; a
        # no-grad forward's working set split over the tensor-parallel ranks
        mrg, tp = regime_of(setup, shape), max(1, setup.tensor_parallel)
        est = hybrid.colocated(
            est, setup, shape, hw, weights=est.components["weights"] * GIB,
            states=est.components["optimizer"] * GIB, gather=0.0, params_total=counts.total,
            lm_head=counts.lm_head, compute_bytes=mrg.compute_bytes,
            activations_of=lambda t: _eval_activations(shape, mrg, t, setup.seq_len, setup.attention) / tp,
            context=CUDA_CONTEXT_GIB * GIB, cublas=CUBLAS_WORKSPACE_GIB * GIB)
    return _with_crash(est, crash)


def estimate(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *,
             crash: CrashReport | None = None, headroom: float = 0.10, _packed_probe: bool = False) -> Estimate:
    """Per-GPU memory of one training step (see module doc)."""
    given_setup, given_shape = setup, shape
    if setup.method in ("lora", "qlora") and setup.mechanisms.peft_type in ("PROMPT_TUNING", "P_TUNING"):
        # peft/peft_model.py PeftModelForCausalLM.forward: the virtual tokens' embeddings go in front of the
        # inputs (`torch.cat((prompts, inputs_embeds), dim=1)`, -100 labels in front of the labels), so every
        # layer and the logits see num_virtual_tokens more positions
        setup = replace(setup, seq_len=setup.seq_len + setup.mechanisms.virtual_tokens)
    shape = _as_built(setup, shape)
    setup = _attention_as_run(setup, shape)
    counts = _count(shape)
    if setup.megatron:
        return _megatron(setup, shape, hw, counts, crash, headroom)
    rg = regime_of(setup, shape)
    T = trainable_params(setup, shape)
    quant = bool(setup.quant_bits) and setup.method in ("lora", "qlora")
    ms, notes = _model_states(setup, shape, rg, counts, T, quant)
    notes = list(rg.notes) + notes
    # verl's actor offloads move its shards between phases; its update holds them all (memory/hybrid.py)
    in_update = replace(setup, offload_params=False, offload_optimizer=False) if setup.mechanisms.phase_offload \
        else setup
    sh, shard_notes = _shard(in_update, shape, hw, rg, counts, ms, T, quant)
    # the paged part of the states is sharded and offloaded as the states it is part of are
    sh = replace(sh, paged=ms.paged * sh.states / ms.states if ms.states else 0.0)
    ref, resident, extra_notes = _extra_weights(setup, rg, counts.total, quant)
    notes += shard_notes + extra_notes
    gather = sh.gather + resident
    grad_shard = _grad_shard(setup)
    tokens = _update_tokens(setup)
    always = {"weights": sh.weights + ref + gather, "optimizer": sh.states + ms.master - sh.paged}
    steps = _step_moments(setup, shape, rg, counts, T, tokens, setup.seq_len, sh.grads, sh.temp, grad_shard)
    # (not yet at "logits backward": no unit has run its backward before the output layer's)
    parts = steps.moments["layers backward"]
    parts["gradients"] = parts.get("gradients", 0.0) + sh.reduce
    moments = {name: _with_states(always, parts) for name, parts in steps.moments.items()}
    if sh.step_grads:
        moments["optimizer"]["optimizer"] = moments["optimizer"].get("optimizer", 0.0) + sh.step_grads
    if sh.gather and _fsdp_reshards(setup):
        # every FSDP unit, the root included, is resharded by its post-backward hook, so the optimizer step sees
        # sharded parameters only (torch/distributed/fsdp/_runtime_utils.py _post_backward_reshard:
        # `_should_free_in_backward` is true for FULL_SHARD and HYBRID_SHARD; FSDP2 FSDPParamGroup.post_backward
        # reshards when reshard_after_backward, its default)
        moments["optimizer"]["weights"] -= sh.gather
    if _persistent_grad_partition(setup, rg):
        for parts in moments.values():
            parts["gradients"] = max(parts.get("gradients", 0.0), sh.grads)
    loaded = _zero3_quantized_load(setup, ms, quant)
    if loaded:
        moments["load"] = {"weights": loaded}
        notes.append(msg("memory.note.zero3_quantized_load", gib=loaded / GIB))
    init = initload.device_quantized_init(setup, shape)
    if init is not None:
        # the model built and quantized on the device passes through its quantizer's transients (memory/initload.py)
        moments["load"] = {"weights": float(init.max_allocated)}
        notes.append(msg("memory.note.device_quantized_init", gib=init.max_allocated / GIB,
                         reserved=init.reserved / GIB))
    totals = {name: sum(parts.values()) for name, parts in moments.items()}
    peak_moment = max(totals, key=totals.get)  # type: ignore[arg-type]
    # an evaluation runs after an optimizer step: ZeRO-3's flat gradient partition, allocated once at init
    # (deepspeed/runtime/zero/stage3.py:547 at v0.16.4), is still there; ZeRO-2's is released after each
    # reduction (stage_1_and_2.py:802 _release_ipg_buffers) and its views freed by the step
    resident_grads = sh.grads if _persistent_grad_partition(setup, rg) and setup.zero_stage >= 3 else 0.0
    eval_alloc, ev_act, ev_logits = _eval_pass(setup, shape, rg, always, resident_grads)
    phase = "eval" if setup.do_eval and eval_alloc > totals[peak_moment] else "train"
    if phase == "eval":
        notes.append(msg("memory.note.eval_peak", batch=setup.eval_batch, seq=setup.seq_len))
        comps = {"weights": always["weights"] / GIB, "gradients": resident_grads / GIB,
                 "optimizer": always["optimizer"] / GIB,
                 "activations": ev_act / GIB, "logits": ev_logits / GIB}
        allocated = eval_alloc / GIB
    else:
        comps = {k: moments[peak_moment].get(k, 0.0) / GIB
                 for k in ("weights", "gradients", "optimizer", "activations", "logits")}
        allocated = totals[peak_moment] / GIB
    comps["optimizer"] += sh.paged / GIB
    peak_tensors = allocated + sh.paged / GIB
    blocks = transient_blocks(setup, shape, rg, steps.loss, tokens, sh.temp, counts)
    if sh.step_grads and blocks:
        # the step's fp32 gradient partition comes back in the same size every step: its freed segment stays
        # cached, idle beside the other moments' tensors, which reuse their own same-sized blocks first (best fit,
        # c10/cuda/CUDACachingAllocator.cpp get_free_block); with expandable segments freed neighbours coalesce
        # into one range that later allocations split, as for the token-shaped blocks (no idle blocks there)
        for name in MOMENTS[:-1]:
            blocks[name] = blocks.get(name, 0.0) + sh.step_grads
    blocks = _with_fsdp2_pool(blocks, moments, _fsdp2_stream_pools(setup, rg, counts, T, quant))
    res = _reserve(setup, shape, hw, steps.loss.regime, tokens, moments, blocks,
                   eval_alloc if phase == "eval" else None, allocated, peak_tensors, headroom,
                   init.reserved / GIB if init is not None else 0.0)
    overhead = CUDA_CONTEXT_GIB + CUBLAS_WORKSPACE_GIB + res.idle
    comps["overhead"] = overhead
    allocated += CUBLAS_WORKSPACE_GIB
    details = _details(setup, rg, counts.total, T, ms, sh, gather, ref, moments, totals, steps, eval_alloc, res,
                       allocated, tokens)
    notes += _closing_notes(setup, rg, sh.grads, sh.host, sh.paged)
    est = Estimate(components=comps, allocated_gib=allocated, peak_gib=peak_tensors + overhead,
                   capacity_gib=hw.usable_gib, headroom=headroom, phase=phase,
                   details=details, notes=tuple(notes), host_ram_gib=sh.host / GIB,
                   moments={**{name: total / GIB + CUBLAS_WORKSPACE_GIB for name, total in totals.items()},
                            **({"eval": eval_alloc / GIB + CUBLAS_WORKSPACE_GIB} if setup.do_eval else {})},
                   peak_moment="eval" if phase == "eval" else peak_moment)
    if hybrid.applies(setup):
        est = hybrid.colocated(
            est, setup, shape, hw, weights=sh.weights, states=sh.states + ms.master - sh.paged, gather=sh.gather,
            params_total=counts.total, lm_head=counts.lm_head, compute_bytes=rg.compute_bytes,
            activations_of=lambda t: _eval_activations(shape, rg, t, setup.seq_len, setup.attention),
            context=CUDA_CONTEXT_GIB * GIB, cublas=CUBLAS_WORKSPACE_GIB * GIB)
        if not _packed_probe and not _device_ran_out(crash):
            # over the card only at the padded bound: the mean packed length that would fit (memory/hybrid.py);
            # not after a device OOM, which measured the run's real lengths (_with_crash)
            est = hybrid.packed_fit(est, given_setup, lambda s: estimate(s, given_shape, hw, headroom=headroom,
                                                                         _packed_probe=True))
    return _with_crash(est, crash)


def _with_crash(est: Estimate, crash: CrashReport | None) -> Estimate:
    """The estimate with what the crash's own numbers say against it (reconcile) in its notes."""
    if crash is None:
        return est
    est = replace(est, notes=est.notes + reconcile(est, crash))
    if est.length_bound_gib and _device_ran_out(crash):
        # the device ran out: the run measured that it does not fit, whatever its samples' real lengths
        est = replace(est, length_bound_gib=0.0)
    return est


def _device_ran_out(crash: CrashReport | None) -> bool:
    return crash is not None and crash.primary is not None and crash.primary.kind != "host_oom"


# ---------------------------------------------------------------- weights, gradients, optimizer (whole model)
def _frozen_weight_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime, counts: ParamCounts, frozen: int,
                         quant: bool) -> float:
    """Frozen weights. bnb/GPTQ quantize the decoder linears; embeddings, lm_head and norms stay in compute dtype.
    Lightning's BitsandbytesPrecision (LitGPT) replaces every nn.Linear, the output layer included
    (lightning/fabric/plugins/precision/bitsandbytes.py _convert_layers)"""
    if not quant:
        return frozen * rg.frozen_bytes
    q_params = _quantized_params(setup, shape, counts, frozen)
    # the weights left unquantized are held in their own dtype (fp32 after PEFT's kbit upcast, regime.py)
    other_bytes = 4 if rg.other_dtype == "fp32" else rg.compute_bytes
    return q_params * rg.frozen_bytes + (frozen - q_params) * other_bytes


def _quantized_params(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts, frozen: int) -> int:
    """Frozen parameters the quantizer packs: the decoder linears (and LitGPT's output layer)."""
    head_quant = setup.framework == "litgpt" and counts.lm_head
    return max(0, min(frozen, counts.linear_total - (0 if head_quant else shape.vocab_size * shape.hidden_size)))


def _quant_state_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime, counts: ParamCounts, frozen: int,
                       quant: bool) -> float:
    """bitsandbytes' 4-bit block statistics (absmax, nested constants): the Linear4bit module keeps them as its
    `quant_state` attribute, outside the parameter that FSDP or ZeRO-3 flattens, shards and offloads, and hands
    them back to the gathered weight (bitsandbytes nn/modules.py fix_4bit_weight_quant_state_from_module: "the
    quant state got lost when the parameter got converted. This happens for example for fsdp"). torchao's
    NF4Tensor (torchtune) is itself the parameter, its scalers sharded with it."""
    if not quant or setup.quant_bits != 4 or not bnb_quantized(setup):
        return 0.0
    return _quantized_params(setup, shape, counts, frozen) * max(0.0, rg.frozen_bytes - 0.5)


def _model_states(setup: TrainingSetup, shape: ModelShape, rg: Regime, counts: ParamCounts, T: int,
                  quant: bool) -> tuple[ModelStates, list[Msg]]:
    """Weights, gradients, master copy and optimizer states of the whole model, in the dtypes the regime says."""
    adapters = setup.method in ("lora", "qlora")
    frozen = counts.total if adapters else counts.total - T
    # PEFT modules_to_save (LLaMA-Factory additional_target): whole trainable copies of the embedding or the output
    # layer, beside the frozen originals. PEFT deep-copies the module in its dtype (tuners_utils
    # ModulesToSaveWrapper; autocast_adapter_dtype casts LoRA layers only); LLaMA-Factory then casts every trainable
    # parameter to fp32 (model/adapter.py, cast_trainable_params_to_fp32)
    mts = modules_to_save_params(setup, shape) if adapters else 0
    mts_bytes = _modules_to_save_bytes(setup, rg)
    lora_T = T - mts
    train_w = lora_T * rg.train_bytes + mts * mts_bytes
    grads = lora_T * rg.grad_bytes + mts * (rg.grad_bytes if rg.deepspeed else mts_bytes)
    if rg.embed_fp32:
        extra = counts.embeddings + counts.lm_head
        train_w += extra * 2
        grads += extra * 2
    master = T * rg.master_bytes
    if setup.badam and not adapters:
        # BAdam's block switch (Ledzy/BAdam llama-alpaca/src/llmtuner/tuner/sft/block_optim.py:293-302, the
        # same in src/badam/block_optim.py) sets requires_grad_(False) on every parameter outside the active
        # block, so backward makes gradients for one block (one decoder layer) only, and clones that block
        # alone to fp32 (param_hp) for Adam's update: one layer's gradients and one layer's fp32 copy
        block = (counts.total - counts.embeddings - counts.lm_head) // max(1, shape.num_layers)
        grads = min(grads, block * rg.grad_bytes)
        master = block * 4
    states, paged, temp, notes = _optimizer_states(setup, shape, rg, lora_T, mts, mts_bytes)
    step_grads = 0.0
    if rg.deepspeed:
        states += master                          # fp32 master weights, partitioned with the states
        master = 0
        # the fp32 gradient partition exists only inside the step: built from the half gradients, used, freed
        # (deepspeed/runtime/zero/stage_1_and_2.py step: `single_grad_partition = ...to(fp32)` ... "Step 4:- get
        # rid of the fp32 gradients"; stage3.py _prepare_fp32_grad_for_sub_group / _release_sub_group)
        step_grads = T * 4.0
    return ModelStates(frozen=_frozen_weight_bytes(setup, shape, rg, counts, frozen, quant), trainable=train_w,
                       grads=grads, master=master, states=states, temp=temp, paged=paged,
                       step_grads=step_grads,
                       quant_state=_quant_state_bytes(setup, shape, rg, counts, frozen, quant)), notes


def _optimizer_states(setup: TrainingSetup, shape: ModelShape, rg: Regime, lora_T: int, mts: int,
                      mts_bytes: int) -> tuple[float, float, float, list[Msg]]:
    """(states, paged states, step temporaries, notes) of the optimizer over the adapters or the full parameters
    and over the modules_to_save copies, each in its own dtype."""
    notes: list[Msg] = []
    states, state_note, paged, temp = _optimizer_bytes(setup, shape, rg, lora_T)
    if mts:
        m_states, _, m_paged, m_temp = _optimizer_bytes(setup, shape, rg, mts,
                                                        state_bytes=rg.state_dtype_bytes if rg.deepspeed else mts_bytes)
        states, paged, temp = states + m_states, (paged or 0.0) + (m_paged or 0.0), temp + m_temp
        notes.append(msg("memory.note.modules_to_save", params=mts / 1e6, gib=(mts * (2 * mts_bytes) + m_states) / GIB))
    if state_note:
        notes.append(state_note)
    if setup.badam:
        states /= max(1, shape.num_layers)       # BAdam: one block (layer) holds optimizer state at a time
        temp /= max(1, shape.num_layers)
    return states, paged or 0.0, temp, notes


# ---------------------------------------------------------------- sharding and offload
def _shard(setup: TrainingSetup, shape: ModelShape, hw: Hardware, rg: Regime, counts: ParamCounts, ms: ModelStates,
           T: int, quant: bool) -> tuple[Sharded, list[Msg]]:
    """The model states per GPU under ZeRO, FSDP or plain data parallelism."""
    n = max(1, setup.n_gpus)
    fsdp = (setup.fsdp or "").lower()
    if setup.zero_stage >= 1:
        return _zero_shard(setup, shape, hw, counts, ms, T)
    if fsdp and fsdp != "no_shard" and n > 1:
        return _fsdp_shard(setup, hw, rg, counts, ms, T, quant), []
    notes = [msg("memory.note.ddp_full_copy")] if n > 1 else []
    return Sharded(weights=ms.weights, grads=ms.grads, states=ms.states, temp=ms.temp,
                   step_grads=ms.step_grads), notes


def _zero3_quantized_load(setup: TrainingSetup, ms: ModelStates, quant: bool) -> float:
    """The whole quantized base model each rank holds while loading under ZeRO-3, before DeepSpeed partitions it;
    0 when the model is created partitioned. transformers skips zero.Init for a quantized model (modeling_utils.py
    from_pretrained: `needs_zero3_init = is_deepspeed_zero3_enabled() and not _is_quantized`) and bitsandbytes
    places it whole on the rank's GPU (quantizers/auto.py get_hf_quantizer -> quantizer_bnb_4bit.py
    update_device_map, `{"": torch.cuda.current_device()}`); deepspeed.initialize partitions it afterwards (runtime/zero/
    parameter_offload.py:200-211 _convert_to_zero_parameters -> `Init(module=module)`). The adapters come later."""
    if setup.zero_stage < 3 or not quant or max(1, setup.n_gpus) < 2:
        return 0.0
    return ms.frozen


def _zero_buffers(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts, T: int) -> float:
    """DeepSpeed ZeRO's gathered parameters (stage 3: live-parameter limit, prefetch bucket) and its reduce and
    all-gather buckets, in half precision."""
    stage = setup.zero_stage
    mech = setup.mechanisms
    gather = 0.0
    if stage >= 3:
        live = mech.zero_live_parameters
        prefetch = float(0.9 * shape.hidden_size ** 2 or 0) if mech.zero_prefetch_bucket is None \
            else mech.zero_prefetch_bucket
        largest = max(counts.largest_layer, shape.vocab_size * shape.hidden_size)
        gather = min(live, 2 * largest + prefetch) * 2
    bucket = float((5e8 if stage < 3 else shape.hidden_size ** 2) or 0) if mech.zero_reduce_bucket is None \
        else mech.zero_reduce_bucket
    overlap = stage >= 3 if mech.zero_overlap_comm is None else mech.zero_overlap_comm
    half_trainable = T * 2.0
    reduce = bucket * 2 * (2 if overlap else 1)
    allgather = 0.0
    if 1 <= stage < 3:
        allgather = (float(5e8 or 0) if mech.zero_allgather_bucket is None else mech.zero_allgather_bucket) * 2
    if stage >= 3 or mech.zero_contiguous_grads is False:
        return gather + min(reduce + allgather, half_trainable)   # never more than the trainable half weights
    # ZeRO-1/2 with contiguous_gradients (DeepSpeed's default) allocate the reduce buckets whole at every backward,
    # however few parameters train: one `reduce_bucket_size` buffer in the model dtype, two under overlap_comm
    # (deepspeed/runtime/zero/stage_1_and_2.py backward, `ipg_buffer`); without it a bucket flattens only the
    # gradients it holds
    return gather + reduce + min(allgather, half_trainable)


def _persistent_grad_partition(setup: TrainingSetup, rg: Regime) -> bool:
    """Whether DeepSpeed keeps this GPU's half-precision gradient partition in one buffer that lives from the
    first backward on, through every later forward: ZeRO-2 with contiguous_gradients (its default) copies each
    reduced gradient into `grads_in_partition`, allocated once (deepspeed/runtime/zero/stage_1_and_2.py
    copy_grads_in_partition, from reduce_ipg_grads); ZeRO-3 allocates `grad_partitions_flat_buffer` at init
    (stage3.py __init__, on the GPU unless the optimizer is offloaded), in the accumulation dtype, which is the
    model's half dtype under ZeRO (engine.py get_data_types)."""
    if not rg.deepspeed or setup.offload_optimizer:
        return False
    if setup.zero_stage >= 3:
        return True
    return setup.zero_stage == 2 and setup.mechanisms.zero_contiguous_grads is not False


def _zero_shard(setup: TrainingSetup, shape: ModelShape, hw: Hardware, counts: ParamCounts, ms: ModelStates,
                T: int) -> tuple[Sharded, list[Msg]]:
    """ZeRO-1 partitions the optimizer states, ZeRO-2 the gradients too, ZeRO-3 the weights too."""
    n = max(1, setup.n_gpus)
    stage = setup.zero_stage
    states, temp, step_grads = ms.states / n, ms.temp / n, ms.step_grads / n
    grads = ms.grads / n if stage >= 2 else ms.grads
    # ZeRO-3 partitions parameters only: bitsandbytes' block statistics stay whole (ModelStates.quant_state)
    resident = ms.quant_state if stage >= 3 else 0.0
    weights = (ms.weights - resident) / n if stage >= 3 else ms.weights
    host = 0.0
    if setup.offload_optimizer:
        host += (states + step_grads) * _local(hw, n)
        states = 0.0
        temp = 0.0
        step_grads = 0.0
    if setup.offload_params and stage >= 3:
        host += weights * _local(hw, n)
        weights = 0.0
    weights += resident
    notes = []
    if stage <= 2 and n > 1:
        parts = msg("memory.note.zero_parts_optimizer_gradients" if stage == 2 else "memory.note.zero_parts_optimizer")
        notes.append(msg("memory.note.zero_full_weights", stage=stage, parts=parts))
    return Sharded(weights=weights, grads=grads, states=states, temp=temp,
                   gather=_zero_buffers(setup, shape, counts, T), host=host, step_grads=step_grads), notes


def _fsdp_shard(setup: TrainingSetup, hw: Hardware, rg: Regime, counts: ParamCounts, ms: ModelStates, T: int,
                quant: bool) -> Sharded:
    """FSDP shards states and gradients (SHARD_GRAD_OP) and the weights too (FULL_SHARD, HYBRID_SHARD within a
    node), holding the unit in use and the prefetched one unsharded."""
    n = max(1, setup.n_gpus)
    fsdp = (setup.fsdp or "").lower()
    shard_n = n if "hybrid" not in fsdp else min(n, max(1, hw.n_gpus))
    weights, grads, states, temp = ms.weights, ms.grads / shard_n, ms.states / shard_n, ms.temp / shard_n
    gather = 0.0
    resident = 0.0
    if "full" in fsdp or "hybrid" in fsdp:
        # bitsandbytes' block statistics stay whole on every rank (ModelStates.quant_state)
        resident = ms.quant_state
        weights = (weights - resident) / shard_n
        unit_bytes = rg.frozen_bytes if quant else rg.compute_bytes
        gather = 2 * counts.largest_layer * unit_bytes   # unit being used + the prefetched one
        # The root unit (what the decoder-layer wrap policy leaves: embeddings, final norm, output layer)
        # is not resharded after forward, so its unsharded parameters stay from the forward's start
        # through backward (FSDP1 torch/distributed/fsdp/_runtime_utils.py _post_forward:
        # `free_unsharded_flat_param = not state._is_root and ...`; FSDP2 fully_shard's root likewise sets
        # post_forward_mesh_info = None in FSDPState._lazy_init)
        # (LitGPT's resident copy already holds every parameter, the root's included)
        if setup.framework != "litgpt":
            gather += (counts.embeddings + counts.lm_head) * rg.compute_bytes
    # A unit's post-backward copies its unsharded gradients into a reduce-scatter input of the whole unit and
    # keeps that buffer until the next unit's reduce (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
    # foreach_reduce: `reduce_scatter_comm.allocate` + `foreach_reduce_scatter_copy_in`; _fsdp_param_group.py
    # post_backward keeps `reduce_scatter_states` up to reduce_scatter_max_input_buffers=1): two unit-sized
    # gradient buffers in backward, beside the sharded gradients
    reduce = 2 * _largest_trainable_unit(setup, counts, T) * min(rg.grad_bytes, rg.compute_bytes)
    if setup.offload_params:
        host = (weights + grads + states) * _local(hw, n)
        return Sharded(weights=resident, grads=0.0, states=0.0, temp=0.0, gather=gather, host=host, reduce=reduce)
    return Sharded(weights=weights + resident, grads=grads, states=states, temp=temp, gather=gather, reduce=reduce)


def _fsdp_reshards(setup: TrainingSetup) -> bool:
    """Whether FSDP shards the parameters themselves (FULL_SHARD, HYBRID_SHARD) over more than one GPU."""
    fsdp = (setup.fsdp or "").lower()
    return max(1, setup.n_gpus) > 1 and ("full" in fsdp or "hybrid" in fsdp)


def _fsdp2_stream_pools(setup: TrainingSetup, rg: Regime, counts: ParamCounts, T: int, quant: bool) -> float:
    """Bytes FSDP2's side streams keep reserved beyond what the moments count.
    fully_shard allocates each unit's all-gather output on its all-gather copy-in stream in forward and in backward's prefetch
    (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py foreach_all_gather: `with
    device_handle.stream(all_gather_copy_in_stream)`; _fsdp_param_group.py get_all_gather_streams) and copies it
    out into unsharded parameters the compute stream allocates (foreach_all_gather_copy_out). In forward a unit's
    output is freed only after the next unit's all-gather (wait_for_unshard: `all_gather_state`, "defer free"), so
    the pool peaks at two outputs, the root's and the first layer's; in backward the prefetched unit's output
    lives until its copy-out, and that one is the second of the two gathered units the moments count (`gather`).
    The caching allocator never hands one stream's cached block to another stream's request
    (c10/cuda/CUDACachingAllocator.cpp get_free_block: the pool's blocks are ordered by stream first), so the
    rest of that peak, the larger of the root and a layer, stays reserved beside every moment until an OOM retry
    frees it. With parameters offloaded, the unit's host shard is copied to the GPU on the same stream while the
    output is built (_fsdp_param.py all_gather_inputs: `sharded_param_data.to(self.device)`), one more shard at
    the peak. FSDP1 gathers into the unsharded flat parameters themselves, which `gather` holds."""
    fsdp = (setup.fsdp or "").lower()
    if setup.mechanisms.fsdp_version != 2 or not ("full" in fsdp or "hybrid" in fsdp):
        return 0.0
    layer = counts.largest_layer * (rg.frozen_bytes if quant else rg.compute_bytes)
    root = (counts.embeddings + counts.lm_head) * rg.compute_bytes if setup.framework != "litgpt" else 0.0
    n = max(1, setup.n_gpus)
    host_copy = layer / n if setup.offload_params else 0.0
    # The reduce-scatter output is allocated on the reduce-scatter stream (_fsdp_collectives.py foreach_reduce:
    # "the GPU sharded gradient is allocated in the RS stream"); offloaded, it is copied to the host and freed, so
    # the largest unit's gradient shard stays in that stream's pool, idle (kept, it is the sharded gradient itself)
    rs_block = _largest_trainable_unit(setup, counts, T) * min(rg.grad_bytes, rg.compute_bytes) / n \
        if setup.offload_params else 0.0
    return float(max(layer, root) + host_copy + rs_block)


def _with_fsdp2_pool(blocks: dict, moments: dict, pool: float) -> dict:
    """The moments' idle blocks with FSDP2's side-stream pools beside each."""
    return {**blocks, **{name: blocks.get(name, 0.0) + pool for name in moments}} if pool else blocks


def _largest_trainable_unit(setup: TrainingSetup, counts: ParamCounts, T: int) -> float:
    """Trainable parameters of the largest FSDP unit: a decoder layer, or in a full fine-tune the root unit the
    decoder-layer wrap leaves (embeddings, final norm, output layer), reduced once at the end of backward, so the
    output layer's unsharded gradient waits there from the start of backward; adapters spread over the layers."""
    if setup.method == "full":
        return float(max(counts.largest_layer, counts.embeddings + counts.lm_head))
    return float(T) / max(1, counts.layers) if setup.method != "freeze" else float(counts.largest_layer)


def _grad_shard(setup: TrainingSetup) -> int:
    """GPUs each gradient is split over: ZeRO-2/3, or FSDP over several GPUs."""
    n = max(1, setup.n_gpus)
    fsdp = (setup.fsdp or "").lower()
    return n if (setup.zero_stage >= 2 or (fsdp and fsdp != "no_shard" and n > 1)) else 1


def _reference_forward(setup: TrainingSetup) -> bool:
    """Whether each step runs a separate reference model (DPO/KTO on full weights, reference log-probs not
    precomputed; with adapters the reference is the base model with the adapters disabled)."""
    return (setup.stage in ("dpo", "kto") and setup.method not in ("lora", "qlora")
            and not setup.mechanisms.ref_log_probs_precomputed)


def _extra_weights(setup: TrainingSetup, rg: Regime, P: int, quant: bool) -> tuple[float, float, list[Msg]]:
    """(reference model, resident full copy, notes): weights beside the trained model's."""
    n = max(1, setup.n_gpus)
    fsdp = (setup.fsdp or "").lower()
    notes = []
    ref = 0.0
    if _reference_forward(setup):
        ref = P * (rg.frozen_bytes if not rg.deepspeed else 2) / (n if setup.zero_stage >= 3 or "full" in fsdp else 1)
        notes.append(msg("memory.note.reference_model"))
    resident_copy = 0.0
    if setup.framework == "litgpt" and fsdp and n > 1:
        # Inferred from the measurements, not found in code: every published LitGPT multi-GPU row sits at full
        # weights + shard + activations, and 7B full fine-tuning OOMs on 4x24 GB although its shard is 13.5 GB
        # (config_hub/finetune/README.md). The code paths checked do not hold such a copy: Fabric builds the
        # model on meta/CPU and shards unit by unit in setup, and load_raw under FULL_STATE_DICT unshards one
        # FSDP unit at a time (lightning/fabric/strategies/fsdp.py _load_raw_module_state; lit-gpt
        # finetune/lora.py). Kept as the data's term until the mechanism is found.
        resident_copy = P * (rg.frozen_bytes if not quant else 2.0)
        notes.append(msg("memory.note.litgpt_resident_copy"))
    return ref, resident_copy, notes


# ---------------------------------------------------------------- tokens, moments, evaluation
def _tokens_per_gpu(setup: TrainingSetup, batch: int) -> float:
    """Tokens one GPU's forward holds for `batch` sequences. Preference stages run chosen + rejected; sequence
    parallelism (Ulysses, ring attention, context parallel) splits every sequence over `sp` GPUs: each keeps the
    activations and logits of its shard of tokens."""
    seq_mult = 2 if setup.stage in ("dpo", "kto", "orpo", "simpo") else 1
    sp = max(1, int(setup.seq_parallel or 1))
    return batch * seq_mult * setup.seq_len / sp


def _update_tokens(setup: TrainingSetup) -> float:
    """Tokens one GPU's training forward holds: the micro-batch's, or verl's token budget (use_dynamic_bsz with
    use_remove_padding, memory/hybrid.py)."""
    tokens = _tokens_per_gpu(setup, setup.micro_batch)
    return hybrid.update_tokens(setup, tokens)[0] if hybrid.applies(setup) else tokens


def _with_states(always: dict, parts: dict) -> dict:
    """A moment's transient parts added to the weights and states every moment holds."""
    merged = dict(always)
    for key, value in parts.items():
        merged[key] = merged.get(key, 0.0) + value
    return merged


def _eval_pass(setup: TrainingSetup, shape: ModelShape, rg: Regime, always: dict,
               resident_grads: float = 0.0) -> tuple[float, float, float]:
    """(allocated, activations, logits) of the evaluation forward (per_device_eval_batch_size), bytes;
    `resident_grads`: a gradient buffer that lives from the first backward on, through every later forward."""
    if not setup.do_eval:
        return 0.0, 0.0, 0.0
    ev_tokens = _tokens_per_gpu(setup, setup.eval_batch)
    ev_act = _eval_activations(shape, rg, ev_tokens, setup.seq_len, setup.attention)
    ev_logits = ev_tokens * shape.vocab_size * (rg.compute_bytes + LOSS_FWD_FP32_BYTES) \
        if not _fused_in_eval(setup) else ev_tokens * shape.hidden_size * 8
    return always["weights"] + always["optimizer"] + resident_grads + ev_act + ev_logits, ev_act, ev_logits


def _fused_in_eval(setup: TrainingSetup) -> bool:
    """Whether the evaluation forward keeps training's fused loss. Liger's patched forward fuses the output
    projection into the loss only in training and materialises the logits in evaluation, where the model's
    loss_function upcasts them (liger_kernel/transformers/model/qwen3.py:86 and llama.py:94 at v0.5.10,
    `if self.training and labels is not None`; v0.6 skip_logits defaults to the same). Cut Cross-Entropy
    fuses in evaluation too unless its patch is train_only (cut_cross_entropy/transformers/utils.py
    PatchOptions.use_lce), and torchtune validates with its training loss."""
    return setup.fused_ce and setup.mechanisms.loss != "liger"


# ---------------------------------------------------------------- the allocator's reserve
def _reserve(setup: TrainingSetup, shape: ModelShape, hw: Hardware, loss_kind: str, tokens: float, moments: dict,
             blocks: dict, eval_alloc: float | None, allocated: float, peak_tensors: float,
             headroom: float, loaded_reserved: float = 0.0) -> Reserve:
    """Weights and optimizer states are allocated once and stay; the cache fragments on the token-shaped tensors
    (activations, logits) a moment churns through; parameter-shaped ones (gradients, the optimizer's temporaries)
    come back in the same sizes every step and reuse their blocks, or split the larger freed ones.
    max_memory_reserved is the largest of the moments' allocated bytes plus their idle blocks."""
    reserved_at = [sum(parts.values()) + blocks.get(name, 0.0) for name, parts in moments.items()]
    if eval_alloc is not None:
        reserved_at.append(eval_alloc + blocks.get("eval", blocks.get("loss", 0.0)))
    reserve = max(0.0, max(reserved_at) / GIB - allocated)
    varlen = varlen_all = 0.0
    if _varlen_segments(setup, loss_kind):
        varlen_all = _varlen_bytes(setup, shape, loss_kind) * tokens * shape.vocab_size / GIB
        # those idle segments are released on the allocator's OOM retry: they never push a run past the fit line
        room = hw.usable_gib * (1.0 - headroom) - (peak_tensors + CUDA_CONTEXT_GIB + CUBLAS_WORKSPACE_GIB + reserve)
        varlen = max(0.0, min(varlen_all, room)) if hw.usable_gib else varlen_all
    # what torch.cuda.max_memory_reserved reports: the idle segments stay cached until a cudaMalloc fails, so the
    # reserved figure grows up to the card's capacity, beyond the fit line above
    reserved_seen = allocated + CUBLAS_WORKSPACE_GIB + reserve + varlen_all
    # what loading left cached is still reserved when training starts (nothing empties the cache between them);
    # like the varying-length segments, an OOM retry releases it, so it stays off the fit line
    if loaded_reserved:
        reserved_seen = max(reserved_seen, loaded_reserved)
    if hw.usable_gib:
        reserved_seen = min(reserved_seen, max(hw.usable_gib - CUDA_CONTEXT_GIB,
                                               allocated + CUBLAS_WORKSPACE_GIB + reserve + varlen))
    return Reserve(idle=reserve + varlen, varlen=varlen, varlen_all=varlen_all, reserved_seen=reserved_seen)


def _varlen_bytes(setup: TrainingSetup, shape: ModelShape, loss_kind: str) -> float:
    """Bytes per logit of the segments a longer batch maps beside an earlier near-record's: the logits-sized
    tensors alive at its worst moment that cannot take the earlier, smaller blocks. Remote code's compute-dtype
    loss under the HF Trainer's autocast holds the log-softmax in the compute dtype, nll_loss's fp32 copy and
    accelerate's fp32 copy of the returned logits (loss.py "compute"; replayed in benchmarks/reserve.py: the
    earlier batch's logits and shifted-copy blocks are reused, those three are not)."""
    if loss_kind == "compute" and setup.framework in _HF_TRAINER:
        rg = regime_of(setup, shape)
        if rg.autocast and rg.compute_bytes != 4:
            return rg.compute_bytes + 8.0
    if loss_kind == "verl":
        # the compute-dtype logits of a longer micro-batch (use_remove_padding: total_nnz varies), their gradient
        # in place or, with the entropy, beside its two saved tensors (loss.py "verl")
        return regime_of(setup, shape).compute_bytes * (4.0 if setup.mechanisms.update_entropy else 1.0)
    if loss_kind == "unsloth":
        # the compute-dtype logits of a longer batch, their gradient written into them (loss.py "unsloth")
        return float(regime_of(setup, shape).compute_bytes)
    if loss_kind == "logps":
        # the three logits-sized tensors of the loss's backward, all in the compute dtype (loss.py "logps")
        return 3.0 * regime_of(setup, shape).compute_bytes
    return float(VARLEN_CACHED_FP32_BYTES)


# the losses that never hold the whole batch's logits: fused, Cut Cross-Entropy, torchtune's chunks, unsloth's fused
_NO_WHOLE_LOGITS = ("fused", "cce", "chunked", "unsloth_fused")

def _varlen_segments(setup: TrainingSetup, loss_kind: str) -> bool:
    """Whether earlier, longer batches' fp32 logits segments stay cached (see VARLEN_CACHED_FP32_BYTES).
    torch_empty_cache_steps (HF TrainingArguments; PEFT's method-comparison loop likewise) releases the idle
    segments every few steps, so a longer batch rarely finds an earlier near-record's still cached."""
    mech = setup.mechanisms
    return (not setup.packing and not mech.fixed_length and loss_kind not in _NO_WHOLE_LOGITS
            and not mech.expandable_segments and not mech.empty_cache_steps)


# ---------------------------------------------------------------- what the estimate reports
def _details(setup: TrainingSetup, rg: Regime, P: int, T: int, ms: ModelStates, sh: Sharded, gather: float,
             ref: float, moments: dict, totals: dict, steps: StepMoments, eval_alloc: float, res: Reserve,
             allocated: float, tokens: float) -> dict:
    """Estimate.details: every term (GiB unless named otherwise) the views, the planner and the benchmarks read;
    `allocated` includes the cuBLAS workspace."""
    n = max(1, setup.n_gpus)
    return {
        "params_total": float(P), "params_trainable": float(T),
        "frozen_weights_gib": ms.frozen / GIB, "trainable_weights_gib": ms.trainable / GIB,
        "grads_full_gib": sh.grads / GIB, "optimizer_states_gib": sh.states / GIB,
        "optimizer_step_temporaries_gib": sh.temp / GIB, "paged_states_gib": sh.paged / GIB,
        "gather_buffers_gib": gather / GIB,
        # weights, gradients and optimizer states per GPU: no step of this run can allocate less (stepping in
        # backward, each gradient is freed by its own step: only the largest one is ever whole)
        "model_states_gib": (sh.weights + ref + sh.states + ms.master - sh.paged + sh.step_grads
                             + (min(sh.grads, steps.moments["optimizer"].get("gradients", 0.0))
                                if optimizer_in_backward(setup) else sh.grads)) / GIB,
        "reference_model_gib": ref / GIB,
        "activations_gib": moments["loss"].get("activations", 0.0) / GIB,
        "logits_forward_gib": moments["loss"].get("logits", 0.0) / GIB,
        "logits_backward_gib": moments["logits backward"].get("logits", 0.0) / GIB,
        "moment_loss_gib": totals["loss"] / GIB,
        **{f"moment_{name.replace(' ', '_')}_gib": total / GIB for name, total in totals.items()},
        **{f"moment_{name.replace(' ', '_')}_{comp}_gib": value / GIB
           for name, parts in moments.items() for comp, value in parts.items()},
        **{f"moment_{name.replace(' ', '_')}_casts_gib": value / GIB for name, value in steps.casts.items()},
        "eval_gib": eval_alloc / GIB, "cuda_context_gib": CUDA_CONTEXT_GIB,
        "cublas_workspace_gib": CUBLAS_WORKSPACE_GIB, "allocator_reserve_gib": res.idle,
        "varlen_cached_logits_gib": res.varlen,
        "reserved_gib": max(res.reserved_seen, allocated + res.idle), "varlen_cached_logits_uncapped_gib": res.varlen_all,
        "bytes_per_trainable_param": (rg.train_bytes + rg.grad_bytes
                                      + (sh.states + ms.master + sh.step_grads) / max(1, T)
                                      * (n if setup.zero_stage >= 1 else 1)),
        "tokens_per_gpu": float(tokens), "loss_bytes_per_logit": float(steps.loss.forward),
        **{k: v / GIB for k, v in steps.detail.items()},
    }


def _closing_notes(setup: TrainingSetup, rg: Regime, carried_grads: float, host: float, paged: float) -> list[Msg]:
    """The notes on mechanisms the run uses, after the figures'."""
    notes = [msg("memory.note.llama_style")]
    if optimizer_in_backward(setup):
        notes.append(msg("memory.note.optimizer_in_backward"))
    if activation_offload(setup):
        notes.append(msg("memory.note.activation_offload"))
    if paged:
        notes.append(msg("memory.note.paged_states"))
    if rg.casts_trainable and setup.method == "full":
        notes.append(msg("memory.note.autocast_copies"))
    if setup.grad_accum > 1 and not rg.deepspeed and carried_grads >= 0.05 * GIB:
        notes.append(msg("memory.note.grad_accum_carry", gib=carried_grads / GIB))
    if host:
        notes.append(msg("memory.note.offload_host_ram", gib=host / GIB))
    return notes


@dataclass(frozen=True)
class StepMoments:
    moments: dict             # moment -> {component: bytes} of what comes and goes (weights and states excluded)
    loss: LossBytes
    detail: dict              # finer terms (bytes) for Estimate.details
    casts: dict               # moment -> bytes of its activations that are autocast's weight copies


@dataclass(frozen=True)
class _Grads:
    """Gradients per GPU, bytes: the output layer's first, each layer's as its backward runs, the embedding's last."""

    per_param: float    # bytes per trainable parameter's gradient on this GPU
    head: float         # the output layer's (or a modules_to_save copy's)
    embed: float        # the embedding's (untied, or a modules_to_save copy's)
    layers: float       # every decoder layer's
    layer: float        # one recorded layer's
    all: float          # every gradient


@dataclass(frozen=True)
class _Casts:
    """Autocast's weight copies in the compute dtype (fp32 weights the matmuls see under autocast), bytes."""

    layer: float        # one layer's copies, trainable and frozen
    cache_all: float    # the trainable weights' copies, cached by autocast through the whole forward
    saved_all: float    # every layer's copies saved for backward (none under checkpointing)
    forward: float      # the copies alive when the decoder stack's forward ends
    head: float         # the output layer's copy


@dataclass(frozen=True)
class _Acts:
    """Activations per GPU, bytes (this GPU's tokens)."""

    stack: float        # what the recorded layers keep (or, checkpointed, their inputs)
    shared: float       # rotary cos/sin, and the mask under checkpointing
    head_saved: float   # the final norm's and the output layer's saved inputs
    in_flight: float    # the decoder stack's last moment: the mask, or a checkpointed layer's working tensors
    hidden_grad: float  # the gradient of the residual stream


def _recorded_layers(setup: TrainingSetup, shape: ModelShape) -> int:
    """Layers whose forward autograd records: all of them, or only the trained last ones under freeze."""
    L = shape.num_layers
    return min(abs(setup.freeze_trainable_layers), L) if setup.method == "freeze" else L


def _step_moments(setup: TrainingSetup, shape: ModelShape, rg: Regime, counts: ParamCounts, T: int,
                  tokens: float, seq: int, grads: float, temp: float, grad_shard: int) -> StepMoments:
    """Gradients, activations and logits alive at each moment of one training step (per GPU).

    forward          the decoder stack has run: what its layers keep (or, checkpointed, their inputs) and the
                     autocast cache of weight copies
    loss             + the final norm's saved tensors and the logits with what the cross-entropy keeps
    logits backward  the log-softmax gradient, before the output layer's backward
    layers backward  the worse end of the layers' backward: the last layer (everything still saved, its
                     recompute under checkpointing) or the first (every layer's gradient already made)
    optimizer        all gradients and the optimizer's step temporaries
    """
    trains_layers = setup.method in ("full", "freeze")
    lb = layer_bytes(setup, shape, rg, seq, trains_weights=trains_layers, reentrant=_reentrant(setup, shape))
    lossb = loss_bytes(setup, shape, rg)
    recorded = _recorded_layers(setup, shape)
    adapters = setup.method in ("lora", "qlora")
    mts = _modules_to_save(setup, shape, counts) if adapters else (0, 0)
    g = _gradient_parts(setup, rg, counts, mts, grads, grad_shard, recorded)
    casts = _autocast_copies(setup, shape, rg, counts, mts[0], recorded)
    acts = _activation_parts(setup, shape, rg, lb, mts[0], recorded, tokens)
    logits_fwd, logits_bwd, kept_logits = _logits_parts(setup, shape, rg, lossb, tokens)
    moments = {
        "forward": {"activations": acts.stack + acts.shared + acts.in_flight + casts.forward},
        "loss": {"activations": acts.stack + acts.shared + acts.head_saved + casts.forward + casts.head,
                 "logits": logits_fwd},
        "logits backward": {"activations": acts.stack + acts.shared + acts.head_saved + casts.saved_all + casts.head,
                            "logits": logits_bwd},
    }
    # casts[moment]: of its activations, the autocast weight copies (parameter-shaped, not token-shaped)
    cast_of = {"forward": casts.forward, "loss": casts.forward + casts.head,
               "logits backward": casts.saved_all + casts.head, "optimizer": 0.0}
    moments["layers backward"], cast_of["layers backward"] = _layers_backward(
        setup, shape, counts, lb, acts, casts, g, tokens, mts, kept_logits)
    moments["optimizer"] = _optimizer_moment(setup, shape, counts, g, temp, kept_logits)
    # one layer's transients: DoRA's weight norm, quantized experts dequantized (activations.py)
    transient = dora_transient(setup, shape, rg) + expert_dequant_transient(setup, shape, rg)
    if transient:
        # the last layer's forward, and under checkpointing every layer's recompute in backward
        moments["forward"]["activations"] += transient
        if setup.grad_ckpt:
            moments["layers backward"]["activations"] = moments["layers backward"].get("activations", 0.0) + transient
    kept, worst, largest = expert_stack_copies(setup, shape, rg)
    if kept:
        # PEFT's merged expert stacks (activations.expert_stack_copies): every MoE layer's kept until its backward,
        # one layer's under checkpointing (made again by the recompute; the no-grad forward frees each after use)
        n_moe = counts.extra.get("moe_layers", shape.num_layers) if recorded == shape.num_layers else recorded
        held = 0.0 if setup.grad_ckpt else (n_moe - 1) * kept
        moments["forward"]["activations"] += held + (largest if setup.grad_ckpt else kept)
        for name in ("loss", "logits backward"):
            moments[name]["activations"] += held + (0.0 if setup.grad_ckpt else kept)
        moments["layers backward"]["activations"] = moments["layers backward"].get("activations", 0.0) + held + worst
    if setup.grad_accum > 1 and not rg.deepspeed and not optimizer_in_backward(setup):
        # Gradient accumulation: the gradients of the earlier micro-batches stay in .grad (zero_grad runs after
        # the optimizer step) through every later micro-batch's forward and backward; new ones are added in
        # place. DeepSpeed accumulates into its fp32 partition, already counted with the optimizer states.
        for name in ("forward", "loss", "logits backward", "layers backward"):
            parts = moments[name]
            parts["gradients"] = max(parts.get("gradients", 0.0), g.all)
    ckpt_inputs = recorded * lb.checkpoint_input * tokens if setup.grad_ckpt else 0.0
    detail = {"layer_saved_gib": lb.saved * tokens, "checkpoint_inputs_gib": ckpt_inputs,
              "autocast_weight_copies_gib": casts.cache_all + casts.head}
    return StepMoments(moments, lossb, detail, cast_of)


def _gradient_parts(setup: TrainingSetup, rg: Regime, counts: ParamCounts, mts: tuple[int, int], grads: float,
                    grad_shard: int, recorded: int) -> _Grads:
    """Gradients per GPU, split by when backward makes them."""
    full = setup.method == "full"
    gb = rg.grad_bytes / grad_shard
    if full:
        g_head = (counts.lm_head or counts.embeddings) * gb
        g_embed = counts.embeddings * gb if counts.lm_head else 0.0
    else:
        # trainable copies of the output layer / embedding (modules_to_save), in their own dtype
        mb = (rg.grad_bytes if rg.deepspeed else _modules_to_save_bytes(setup, rg)) / grad_shard
        g_head, g_embed = mts[0] * mb, mts[1] * mb
    trains = setup.method in ("full", "freeze", "lora", "qlora")
    g_layers = max(0.0, grads - g_head - g_embed) if trains else 0.0
    return _Grads(per_param=gb, head=g_head, embed=g_embed, layers=g_layers, layer=g_layers / max(1, recorded),
                  all=grads)


def _autocast_copies(setup: TrainingSetup, shape: ModelShape, rg: Regime, counts: ParamCounts, mts_head: int,
                     recorded: int) -> _Casts:
    """Autocast's weight copies: a trainable weight's is cached all forward; a frozen one's is made at each use
    and kept when a gradient flows through it."""
    L = shape.num_layers
    full = setup.method == "full"
    adapters = setup.method in ("lora", "qlora")
    a = rg.compute_bytes
    V, h = shape.vocab_size, shape.hidden_size
    casts_trained = casts_frozen = head_cast = 0.0
    per_layer_linear = (counts.linear_total - V * h) / max(1, L)
    if rg.casts_trainable:
        if full:
            casts_trained = per_layer_linear * a
            head_cast = V * h * a
        elif setup.method == "freeze":
            casts_trained = per_layer_linear * a
        elif adapters:
            casts_trained = lora_params(setup, shape) / max(1, L) * a
    if rg.casts_frozen and not full:
        # frozen weights in another dtype are cast at each use; the copy is kept when a gradient flows through
        casts_frozen = per_layer_linear * a if adapters else 0.0
        head_cast = V * h * a
    if mts_head and rg.autocast and a != 4 and setup.framework == "llamafactory" and not rg.deepspeed:
        head_cast = V * h * a                   # the fp32 trainable output-layer copy, cast and cached by autocast
    if setup.quant_bits and adapters and rg.autocast and rg.other_dtype != rg.compute_dtype and not mts_head:
        # the unquantized output layer in another dtype (fp16 under bf16 autocast): F.linear casts the frozen
        # weight at each call and the matmul keeps that copy for the input's gradient until the head's backward
        head_cast = V * h * a
    ckpt = setup.grad_ckpt
    cast_layer = casts_trained + casts_frozen
    cache_all = casts_trained * recorded        # autocast's cache holds a trainable weight's cast all forward
    return _Casts(layer=cast_layer, cache_all=cache_all, saved_all=cast_layer * recorded if not ckpt else 0.0,
                  forward=cache_all + (casts_frozen * recorded if not ckpt else 0.0), head=head_cast)


def _activation_parts(setup: TrainingSetup, shape: ModelShape, rg: Regime, lb: LayerBytes, mts_head: int,
                      recorded: int, tokens: float) -> _Acts:
    """The activations of the decoder stack and around it, for this GPU's tokens."""
    ckpt = setup.grad_ckpt
    h = shape.hidden_size
    shared = (lb.shared + (lb.mask if ckpt else 0.0)) * tokens
    # a trainable output layer (modules_to_save) keeps its input for its weight gradient
    head_saved = (lb.head_saved + (rg.compute_bytes * h if mts_head else 0.0)) * tokens
    # the decoder stack's last moment: the mask is alive, and a checkpointed layer holds its tensors while it runs
    in_flight = (lb.forward_flight * tokens if ckpt else 0.0) + (0.0 if ckpt else lb.mask * tokens)
    return _Acts(stack=_stack_bytes(setup, shape, lb, recorded, tokens), shared=shared, head_saved=head_saved,
                 in_flight=in_flight, hidden_grad=rg.residual_bytes * h * tokens)


def _stack_bytes(setup: TrainingSetup, shape: ModelShape, lb: LayerBytes, recorded: int, T_: float) -> float:
    """What the recorded layers keep for backward: everything they save, their inputs under checkpointing, or
    about two layers' worth under activation offloading."""
    ckpt = setup.grad_ckpt
    if ckpt and setup.mechanisms.unsloth_offload:
        # unsloth's offloaded checkpointing (unsloth/models/_utils.py Unsloth_Offloaded_Gradient_Checkpointer
        # @0927c343; unsloth_zoo gradient_checkpointing.py today; LLaMA-Factory's use_unsloth_gc copy,
        # model_utils/checkpointing.py UnslothGradientCheckpointing): each layer's input is copied to the host
        # (`hidden_states.to("cpu", non_blocking = True)`) and the layer runs under no_grad; backward brings one
        # back and recomputes it, so about two layers' inputs are on the GPU at once and nothing escapes
        return 2 * lb.checkpoint_input * T_
    if activation_offload(setup):
        # activation offloading (torchtune training/_activation_offloading.py OffloadActivations, ported to TRL)
        # moves every tensor autograd saves to pinned host memory through saved_tensors_hooks, checkpointed
        # layers' inputs included (non-reentrant checkpointing saves them through the same hooks); the copy
        # stream keeps about two layers' worth on the GPU, and backward prefetches the next layer's
        stack = 2 * (lb.checkpoint_input if ckpt else lb.saved) * T_
        if not (ckpt and _reentrant(setup, shape)):
            stack += recorded * lb.hook_escape * T_      # what the offloading hooks never see stays
    elif ckpt:
        stack = recorded * lb.checkpoint_input * T_
        if not _reentrant(setup, shape):
            stack += recorded * lb.hook_escape * T_      # what the checkpoint's hooks never see stays
    else:
        # the lowest recorded layer's input needs no gradient (no checkpointing, so no enable_input_require_grads;
        # freeze's first trained layer): its modules before the first trained one keep nothing
        stack = (recorded * lb.saved - (lb.first_unrecorded if setup.method != "full" else 0.0)) * T_
    return stack


def _logits_parts(setup: TrainingSetup, shape: ModelShape, rg: Regime, lossb: LossBytes,
                  T_: float) -> tuple[float, float, float]:
    """(at the loss, in the logits' backward, kept through backward by the training loop), bytes."""
    V = shape.vocab_size
    if lossb.regime in ("fused", "unsloth_fused"):
        chunk = fused_chunk_tokens(T_, shape) if lossb.regime == "fused" else unsloth_chunk_tokens(shape, T_)
        logits_fwd = chunk * V * 8.0 + lossb.tokens_term * T_
        logits_bwd = logits_fwd
    else:
        logits_fwd = lossb.forward * T_ * V + lossb.tokens_term * T_
        logits_bwd = lossb.backward * T_ * V + lossb.tokens_term * T_
    # A training loop that keeps the model's output referenced through backward and the optimizer step keeps
    # the returned logits alive there too (fsdp_qlora train.py: `output = model(...)`, `loss.backward()`,
    # `optimizer.step()`, then `output = None  # Delete the output so more memory frees up before the next
    # forward pass`); the HF Trainer returns only the loss from compute_loss, so its logits die with the graph
    # (ColossalChat's coati trainers likewise: sft.py `outputs = self.model(...)`, dpo.py `actor_all_logits` and
    # `ref_all_logits`, kto.py the policy's and the reference's logits, all alive until the next iteration; a
    # reference model's forward over the same tokens keeps its own logits beside the policy's)
    kept_logits = 0.0
    keeps = setup.framework == "fsdp_qlora" or setup.mechanisms.keeps_outputs
    if keeps and lossb.regime not in _NO_WHOLE_LOGITS:
        kept_logits = (4.0 if lossb.regime == "legacy" else returned_logit_bytes(setup, shape, rg)) * T_ * V
        if _reference_forward(setup):
            kept_logits *= 2
    return logits_fwd, logits_bwd + kept_logits, kept_logits


def _layers_backward(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts, lb: LayerBytes, acts: _Acts,
                     casts: _Casts, g: _Grads, T_: float, mts: tuple[int, int],
                     kept_logits: float) -> tuple[dict, float]:
    """The worse end of the layers' backward, and its autocast copies."""
    ckpt = setup.grad_ckpt
    full = setup.method == "full"
    in_bwd = optimizer_in_backward(setup)
    layer_casts = casts.saved_all if not ckpt else casts.layer
    candidates = [
        # the last layer's backward: everything still saved (its recompute under checkpointing)
        ({"activations": acts.stack + (lb.saved * T_ if ckpt else 0.0) + acts.shared + acts.hidden_grad
          + lb.backward_extra * T_ + layer_casts, "gradients": g.head + g.layer}, layer_casts),
        # the final norm's backward, first after the logits': every layer's tensors, the norm's fp32 temporaries
        ({"activations": acts.stack + acts.shared + acts.head_saved + lb.head_backward * T_
          + (casts.saved_all if not ckpt else 0.0), "gradients": g.head}, casts.saved_all if not ckpt else 0.0),
        # the first layer's backward: every layer's gradient already made
        ({"activations": lb.saved * T_ + (lb.checkpoint_input * T_ if ckpt else 0.0) + acts.shared + acts.hidden_grad
          + lb.backward_extra * T_ + casts.layer, "gradients": g.head + g.layers}, casts.layer),
    ]
    tied = shape.tie_word_embeddings and (full or (mts[0] and mts[1]))
    if in_bwd:
        # optimizer in backward (torchtune training/memory.py register_optim_in_bwd_hooks): a parameter's step
        # runs in its post-accumulate-grad hook and the gradient is freed there, so a layer's backward holds only
        # its own gradients; a tied output/embedding weight's gradient waits for its second use, the embedding
        candidates[0][0]["gradients"] = g.layer + (g.head if tied else 0.0)
        candidates[1][0]["gradients"] = g.head
        candidates[2][0]["gradients"] = g.layer + (g.head if tied else 0.0)
    if full or mts[1]:
        # the embedding's backward: every gradient made, the dense vocab x hidden one last. A tied lm_head/
        # embedding weight gets two: the lm_head one waits in autograd's input buffer until the embedding
        # backward's arrives and the two are summed out of place (torch/csrc/autograd/input_buffer.cpp),
        # three full-size gradients at once
        g_emb = counts.embeddings * (g.per_param if full else (g.embed / max(1, mts[1])))
        tied_extra = 2.0 * g_emb if tied else 0.0
        made = (g_emb if in_bwd else g.all)
        candidates.append(({"activations": acts.hidden_grad, "gradients": made + tied_extra}, 0.0))
    if kept_logits:
        for parts, _ in candidates:
            parts["logits"] = parts.get("logits", 0.0) + kept_logits
    return max(candidates, key=lambda c: sum(c[0].values()))


def _optimizer_moment(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts, g: _Grads, temp: float,
                      kept_logits: float) -> dict:
    """The optimizer step: every gradient and the step's temporaries; in backward, the largest parameter's."""
    if optimizer_in_backward(setup):
        # the step of the largest parameter, inside backward: its gradient and its step temporaries
        largest = max(counts.embeddings, counts.lm_head, max((i * o for i, o in counts.linear_shapes.values()), default=0))
        share = largest / max(1.0, float(trainable_params(setup, shape)))
        if optimizers.special_kind(setup):
            share = 1.0          # these optimizers' temporaries are already one parameter's (memory/optimizers.py)
        moment = {"gradients": min(g.all, largest * g.per_param), "optimizer": temp * min(1.0, share)}
    else:
        moment = {"gradients": g.all, "optimizer": temp}
    if kept_logits:
        moment["logits"] = kept_logits
    return moment


_untied_cache: list = [None, None]
# causal-LM classes that declare `_supports_sdpa = False` (transformers modeling_gemma2.py Gemma2PreTrainedModel:
# "sdpa does not support softcapping"; modeling_vaultgemma.py): without a stated kernel transformers picks eager
# for them, and an explicit "sdpa" is refused (modeling_utils._sdpa_can_dispatch), so the run is eager;
# GptOssPreTrainedModel too (modeling_gpt_oss.py:380, attention sinks)
NO_SDPA = ("gemma2", "vaultgemma", "gpt_oss")


def _attention_as_run(setup: TrainingSetup, shape: ModelShape) -> TrainingSetup:
    """The attention kernel the model class runs: SDPA's default falls back to eager where the class has none."""
    if setup.attention in ("sdpa", "") and (shape.model_type or "").lower() in NO_SDPA and hf_code(setup):
        return replace(setup, attention="eager")
    return setup


def _as_built(setup: TrainingSetup, shape: ModelShape) -> ModelShape:
    """The model as the framework builds it. LitGPT's GPT has its own lm_head beside transformer.wte and
    convert_hf_checkpoint copies the embedding into it when the checkpoint ties them (litgpt/scripts/
    convert_hf_checkpoint.py): a tied model trains untied, one vocab x hidden matrix larger."""
    if setup.framework != "litgpt" or not shape.tie_word_embeddings:
        return shape
    if _untied_cache[0] is shape:
        return _untied_cache[1]
    from dataclasses import replace
    extra = shape.vocab_size * shape.hidden_size
    built = replace(shape, tie_word_embeddings=False,
                    params_total=shape.params_total + extra if shape.params_total else None)
    _untied_cache[0], _untied_cache[1] = shape, built
    return built


def transient_blocks(setup: TrainingSetup, shape: ModelShape, rg: Regime, lossb: LossBytes, tokens: float,
                     temp: float, counts: ParamCounts) -> dict:
    """Per moment, the largest block that comes and goes within the step: what the caching allocator may hold
    idle beside the moment's live tensors."""
    a = rg.compute_bytes
    V = shape.vocab_size
    if lossb.regime in ("fused", "cce"):
        logit_block = fused_chunk_tokens(tokens, shape) * V * 4.0
    elif lossb.regime == "chunked":
        logit_block = tokens / 8 * V * 4.0
    elif lossb.regime == "unsloth_fused":
        logit_block = unsloth_chunk_tokens(shape, tokens) * V * 4.0
    elif lossb.regime in ("plain", "logps", "verl", "unsloth") or (lossb.regime == "compute" and not rg.autocast):
        logit_block = tokens * V * a
    else:
        logit_block = tokens * V * 4.0
    inter = shape.intermediate_size
    if shape.num_experts:
        inter = (shape.moe_intermediate_size or inter) * max(1, shape.experts_per_token)
    act_block = tokens * max(inter, shape.hidden_size) * a
    if setup.attention == "eager":
        act_block = max(act_block, tokens * shape.num_heads * setup.seq_len * 4.0)   # softmax in fp32
    largest_param = max(counts.embeddings, counts.lm_head, max((i * o for i, o in counts.linear_shapes.values()), default=0))
    step_block = min(temp, largest_param * rg.state_dtype_bytes)
    if setup.mechanisms.expandable_segments:
        return {}
    return {"forward": act_block, "loss": max(act_block, logit_block), "logits backward": logit_block,
            "layers backward": act_block, "optimizer": step_block}


def _modules_to_save_bytes(setup: TrainingSetup, rg: Regime) -> int:
    """Bytes per parameter of a modules_to_save copy: PEFT copies the module in its loaded dtype; LLaMA-Factory
    and DeepSpeed's half module hold it like every other trainable parameter."""
    return rg.train_bytes if (rg.deepspeed or setup.framework == "llamafactory") else rg.load_bytes


def activation_offload(setup: TrainingSetup) -> bool:
    """Saved activations offloaded to host RAM (torchtune enable_activation_offloading, TRL/axolotl
    activation_offloading; readers keep it as `activation_offloading`)."""
    return setup.mechanisms.activation_offload


def optimizer_in_backward(setup: TrainingSetup) -> bool:
    """torchtune's optimizer_in_bwd: one optimizer per parameter, stepped from a post-accumulate-grad hook; the
    same in GaLore's and APOLLO's layer-wise variants and LOMO's fused update (memory/optimizers.py)."""
    return setup.mechanisms.optimizer_in_backward or optimizers.steps_in_backward(setup)


def _modules_to_save(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts) -> tuple[int, int]:
    """(output-layer, embedding) parameters trained as full copies under modules_to_save."""
    low = {str(n).lower() for n in setup.mechanisms.modules_to_save}
    head = counts.lm_head or counts.embeddings
    h = head if low & {"lm_head", "output", "embed_out", "output_layer"} else 0
    e = counts.embeddings if low & {"embed_tokens", "wte", "word_embeddings", "tok_embeddings", "embed_in"} else 0
    return h, e


def _reentrant(setup: TrainingSetup, shape: ModelShape | None = None) -> bool:
    """Whether gradient checkpointing runs torch's reentrant variant (the framework's default, or the config's)."""
    mech = setup.mechanisms
    if mech.use_reentrant is not None:
        return mech.use_reentrant
    if setup.use_unsloth:
        # unsloth's decoder loop checkpoints with use_reentrant=True (unsloth/models/llama.py LlamaModel_fast_forward,
        # `torch.utils.checkpoint.checkpoint(..., use_reentrant = True)` @0927c343 line 753), and its offloaded
        # checkpointer runs the layer under no_grad, as the reentrant variant does
        return True
    if setup.framework == "llamafactory":
        return mech.reentrant_default                         # LLaMA-Factory model_args.py use_reentrant_gc
    if setup.framework == "axolotl":
        return True                                           # axolotl fills {"use_reentrant": True}
    if setup.framework in ("swift", "ms-swift"):
        # ms-swift patches torch.utils.checkpoint.checkpoint's default: v1 and v2 to use_reentrant=False on
        # torch >= 2.1 (swift/llm/utils/model.py fix_gradient_checkpointing_warning; v2.6 keeps reentrant for
        # MoE), 3.x back to transformers' True (swift/trainers/arguments.py _fix_gradient_checkpointing), and
        # from 3.6 False under plain DDP (swift/trainers/mixin.py, "is_dist() and not deepspeed and not fsdp")
        ver = _version(setup.framework_version or mech.swift_version)
        if ver and ver < (3,):
            return bool(shape is not None and shape.num_experts) and ver >= (2, 6)
        ddp = setup.n_gpus > 1 and not setup.zero_stage and not setup.fsdp
        return not (ddp and (not ver or ver >= (3, 6)))
    if setup.framework in ("hf", "trl"):
        named = setup.framework_version or mech.transformers_version
        ver = _version(named) if named else ()
        # transformers >= 5 defaults to use_reentrant=False (modeling_utils gradient_checkpointing_enable)
        return bool(ver) and ver < (5,)
    return False


def _local(hw: Hardware, n: int) -> int:
    return max(1, min(n, hw.n_gpus or n))


def _optimizer_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime, T: int,
                     state_bytes: int | None = None) -> tuple[float, Msg | None, float, float]:
    """(state bytes, note, paged bytes, step temporaries) for the trainable parameters (states in the
    parameters' dtype, or `state_bytes`)."""
    opt = (setup.optimizer or "adamw_torch").lower()
    w = state_bytes or rg.state_dtype_bytes
    paged = 0.0
    temp = 0.0
    note = None
    special = optimizers.special_optimizer_bytes(setup, shape, _count(shape), T, w)
    if special is not None:
        # GaLore, APOLLO, Adam-mini, Muon: the states and the step's transients their code keeps (memory/optimizers.py)
        states, temp = special
        if "paged" in opt:
            paged = states
        name = optimizers.NAMES[optimizers.special_kind(setup)]
        return states, msg("memory.note.low_memory_optimizer", name=name, gib=states / GIB), paged, temp
    if "8bit" in opt or "bnb" in opt:
        n_states = 1.0 if "lion" in opt else 2.0
        # bitsandbytes' block-wise 8-bit states: one uint8 code per element and an fp32 absmax per 256-element
        # block for each state (bitsandbytes/optim/optimizer.py Optimizer8bit.init_state: `blocks = n // 256`,
        # absmax1/absmax2 float32); paging moves the code buffers to managed memory, the absmax stays a torch
        # tensor (get_state_buffer pages only the state buffers)
        states = T * n_states * (1.0 + 4.0 / 256)   # master copy added by the caller under DeepSpeed
        if "paged" in opt:
            paged = T * n_states
    elif "4bit" in opt:
        states = T * 1.0
    elif "lion" in opt:
        states = T * w
    elif "adafactor" in opt:
        # factored second moment: one row and one column vector per matrix (fp32); no first moment
        counts = _count(shape)
        rows_cols = sum(i + o for i, o in counts.linear_shapes.values()) * shape.num_layers
        states = (rows_cols + shape.vocab_size + shape.hidden_size) * 4.0
        if setup.method in ("lora", "qlora"):
            states = T * 0.1
    elif opt.startswith("sgd"):
        momentum = setup.mechanisms.momentum
        states = T * w if momentum else 0.0
    elif opt in ("lomo", "adalomo"):
        states = 0.0
    else:
        states = T * 2.0 * w                      # Adam-family: exp_avg + exp_avg_sq in the param dtype
        if "fused" not in opt and not rg.deepspeed and opt.startswith("adam"):
            # torch foreach AdamW: _foreach_sqrt(exp_avg_sq) makes one full temporary at step()
            temp = T * w
    if "paged" in opt and not paged:
        paged = states
    if "adamw" in opt and w == 2 and not rg.deepspeed:
        note = msg("memory.regime.adamw_half_states")
    return states, note, paged, temp


def _eval_activations(shape: ModelShape, rg: Regime, tokens: float, seq: int, attention: str) -> float:
    """No-grad forward: only one layer's transients at a time."""
    h = shape.hidden_size
    a = rg.compute_bytes
    per_tok = 4 * h + 2 * a * h + 3 * a * shape.intermediate_size
    if attention == "eager":
        per_tok += shape.num_heads * seq * (4 + a)
    return tokens * per_tok


def reconcile(estimate: Estimate, crash: CrashReport) -> tuple[Msg, ...]:
    """What the crash's own numbers say against the estimate (also appended to the estimate's notes)."""
    ev = crash.primary
    if ev is None:
        return ()
    out: list[Msg] = []
    if ev.allocated_gib is not None and ev.tried_gib is not None:
        demanded = ev.allocated_gib + ev.tried_gib
        gap = estimate.allocated_gib - demanded
        rel = gap / demanded if demanded else 0.0
        out.append(msg("memory.crash.held_and_asked", held=ev.allocated_gib, tried=ev.tried_gib, demanded=demanded,
                       estimate=estimate.allocated_gib, rel=rel))
        if rel > 0.05 and estimate.capacity_gib and demanded >= 0.85 * estimate.capacity_gib:
            # A run dies at the first allocation that does not fit, part-way up to its peak: the log's
            # figure is then a floor of what the step needs, not a measurement of its peak.
            where = {"optimizer": "memory.crash.where_optimizer", "backward": "memory.crash.where_backward",
                     "forward": "memory.crash.where_forward"}.get(ev.phase or "")
            out.append(msg("memory.crash.floor_at", where=msg(where)) if where else msg("memory.crash.floor"))
    elif ev.allocated_gib is not None:
        out.append(msg("memory.crash.held", held=ev.allocated_gib, estimate=estimate.allocated_gib))
    ru = ev.reserved_unallocated_gib
    if ru is None and ev.reserved_gib is not None and ev.allocated_gib is not None:
        ru = ev.reserved_gib - ev.allocated_gib
    if ru is not None and ru > 0:
        cap = ev.capacity_gib or estimate.capacity_gib or 1.0
        if ru >= max(0.5, 0.05 * cap) or (ev.tried_gib and ru >= ev.tried_gib):
            out.append(msg("memory.crash.fragmented", gib=ru))
    if ev.other_processes_gib:
        out.append(msg("memory.crash.other_processes", gib=ev.other_processes_gib, usable=estimate.capacity_gib))
    if ev.capacity_gib and estimate.capacity_gib and abs(ev.capacity_gib - estimate.capacity_gib) > 0.5 \
            and not ev.other_processes_gib:
        out.append(msg("memory.crash.capacity_differs", logged=ev.capacity_gib, used=estimate.capacity_gib))
    return tuple(out)
