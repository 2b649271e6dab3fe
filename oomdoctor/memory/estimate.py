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

from oomdoctor.facts import GIB, CrashReport, Estimate, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory.params import _canonical_targets, _count, trainable_params
from oomdoctor.memory.regime import Regime, regime_of

# ---------------------------------------------------------------- global constants (the only tuned numbers)
# CUDA context + kernels loaded by torch/NCCL: 0.3-2 GiB on real cards (estimator-survey §0.9); 0.5 GiB is
# typical for an A100/H100 process with cuBLAS and NCCL initialised. Not seen by torch's allocator.
CUDA_CONTEXT_GIB = 0.5
# cuBLAS workspace: torch allocates it through the caching allocator (":4096:8" = 8 x 4 MiB per handle/stream).
CUBLAS_WORKSPACE_GIB = 32 / 1024
# Caching-allocator reserve (max_memory_reserved - max_memory_allocated), as a fraction of the memory that
# comes and goes within a step (activations, logits, gradients, step temporaries): weights and optimizer states
# are allocated once and pack tightly, while freed transient blocks of many sizes stay cached and split.
# One global value, chosen on the whole published calibration set (benchmarks/accuracy.py; 0.2-0.3 move its
# p90 by about two points), never per case or per framework.
ALLOCATOR_RESERVE_FRAC = 0.25
# Backward transients inside one recomputed/backpropagated layer, in units of that layer's saved bytes:
# gradients of the saved tensors are created while the saved ones are still alive.
BACKWARD_LAYER_FACTOR = 1.0
# HF loss: bytes per logits element (batch x seq x vocab). Forward: compute-dtype logits + fp32 copy
# (loss_utils.py `logits.float()`) + fp32 log_softmax output saved by cross_entropy. Backward: the saved
# log_softmax output + its fp32 gradient + the fp32 gradient of the logits.
LOSS_FWD_FP32_BYTES = 8
LOSS_BWD_BYTES = 12
# Unpacked batches of varying length: the caching allocator gives each logits-sized fp32 tensor (the fp32
# logits and the log-softmax output, 2 x 4 bytes per batch x seq x vocab element) its own cudaMalloc'd segment,
# since no cached block is as large; a later, longer batch cannot fit its own into them (best fit needs a block
# at least as large, and segments never merge: c10/cuda/CUDACachingAllocator.cpp get_free_block/alloc_block),
# so the previous longest batch's pair stays reserved beside them until an OOM retry or empty_cache frees it.
VARLEN_CACHED_FP32_BYTES = 8

_MLP = ("gate_proj", "up_proj", "down_proj")


def _flag(setup: TrainingSetup, key: str, default=None):
    return setup.extras.get(key, default) if setup.extras else default


def _layer_saved_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime, seq: int) -> float:
    """Bytes per token one decoder layer keeps for backward (no checkpointing)."""
    h = shape.hidden_size
    d = shape.head_dim_
    q_dim = shape.num_heads * d
    kv_dim = shape.num_kv_heads * d
    inter = shape.intermediate_size
    if shape.num_experts:
        inter = (shape.moe_intermediate_size or inter) * max(1, shape.experts_per_token) + \
            (shape.shared_expert_intermediate_size or 0) * (1 if shape.shared_experts else 0)
    a = rg.compute_bytes
    r = rg.residual_bytes
    full = setup.method in ("full", "freeze")
    adapters = setup.method in ("lora", "qlora")
    targets = set(_canonical_targets(tuple(setup.lora_targets), shape)) if adapters else set()
    if "qkv_fused" in targets:
        targets |= {"q_proj", "k_proj", "v_proj"}
    if "gate_up_fused" in targets:
        targets |= {"gate_proj", "up_proj"}
    # LoRA input copies, one per targeted linear: PEFT casts the input to the fp32 adapter dtype; under
    # autocast that copy is cast back to the compute dtype and saved; with equal dtypes the input is shared.
    if rg.adapter_cast_copy:
        lora_in = 4
    elif adapters and rg.autocast and rg.train_bytes == 4:
        lora_in = a
    else:
        lora_in = 0

    def needs_input(name: str) -> float:
        if full:
            return 1.0
        return 1.0 if name in targets else 0.0

    if adapters and float(_flag(setup, "lora_dropout", 0) or 0) > 0:
        # LoRA dropout saves a bool mask and its own output per targeted linear input
        lora_in = max(lora_in, a) + 1

    cast = a if r != a else 0                     # autocast copy of an fp32 norm output for the linear
    total = 0.0
    # two RMSNorms: HF upcasts to fp32 and saves the fp32 input; the normalised tensor is saved when the
    # norm weight trains
    total += 2 * (4 * h + (r * h if full else 0))
    qkv = max(needs_input(n) for n in ("q_proj", "k_proj", "v_proj"))
    if lora_in and adapters:
        total += lora_in * h * sum(needs_input(n) for n in ("q_proj", "k_proj", "v_proj"))
    else:
        total += qkv * (r * h + cast * h)
    # q, k, v after RoPE, kept by attention (GQA: the repeated k/v the kernel sees are q-sized)
    kv_seen = q_dim if setup.attention in ("eager", "sdpa") else kv_dim
    total += a * (q_dim + 2 * kv_seen)
    if setup.attention == "eager":
        # fp32 softmax output + its compute-dtype copy, num_heads x seq per token
        total += shape.num_heads * seq * (4 + (a if a != 4 else 0))
        total += a * q_dim                        # attention output feeding o_proj
    else:
        total += a * q_dim + 4 * shape.num_heads  # kernel output + fp32 logsumexp
    o_in = needs_input("o_proj")
    total += o_in * (lora_in if (lora_in and adapters) else a) * q_dim
    up = max(needs_input("gate_proj"), needs_input("up_proj"))
    if lora_in and adapters:
        total += lora_in * h * (needs_input("gate_proj") + needs_input("up_proj"))
    else:
        total += up * (r * h + cast * h)
    if shape.gated_mlp:
        total += 3 * a * inter                    # gate output (SiLU input), SiLU output, up output
    else:
        total += a * inter                        # up output (GELU input)
    down = needs_input("down_proj")
    total += down * (lora_in if (lora_in and adapters) else a) * inter
    if setup.method == "qlora" and setup.quant_bits:
        # bitsandbytes' MatMul4Bit/MatMul8bitLt autograd functions keep their input for backward even though
        # the quantized weight is frozen (bitsandbytes/autograd/_functions.py `ctx.tensors = (A, B)`), where
        # a frozen nn.Linear keeps nothing. With an adapter input that is the same tensor it is counted once.
        groups = ((("q_proj", "k_proj", "v_proj"), h), (("o_proj",), q_dim), (("gate_proj", "up_proj"), h),
                  (("down_proj",), inter))
        for names, width in groups:
            if lora_in or not any(needs_input(nm) for nm in names):
                total += a * width
    return total


def _freeze_layers(setup: TrainingSetup, shape: ModelShape) -> int:
    return min(abs(setup.freeze_trainable_layers), shape.num_layers) if setup.method == "freeze" else shape.num_layers


def estimate(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *,
             crash: CrashReport | None = None, headroom: float = 0.10) -> Estimate:
    """Per-GPU memory of one training step (see module doc)."""
    counts = _count(shape)
    rg = regime_of(setup, shape)
    notes = list(rg.notes)
    n = max(1, setup.n_gpus)
    P = counts.total
    T = trainable_params(setup, shape)
    adapters = setup.method in ("lora", "qlora")
    frozen = P if adapters else P - T
    quant = bool(setup.quant_bits) and adapters
    stage = setup.zero_stage
    fsdp = (setup.fsdp or "").lower()

    # ---------------------------------------------------------------- model states (whole model)
    if quant:
        # bnb/GPTQ quantize the decoder linears; embeddings, lm_head and norms stay in compute dtype
        q_params = max(0, min(frozen, counts.linear_total - shape.vocab_size * shape.hidden_size))
        frozen_bytes = q_params * rg.frozen_bytes + (frozen - q_params) * rg.compute_bytes
    else:
        frozen_bytes = frozen * rg.frozen_bytes
    train_w = T * rg.train_bytes
    grads = T * rg.grad_bytes
    if rg.embed_fp32:
        extra = counts.embeddings + counts.lm_head
        train_w += extra * 2
        grads += extra * 2
    master = T * rg.master_bytes
    states, state_note, paged, temp = _optimizer_bytes(setup, shape, rg, T)
    if state_note:
        notes.append(state_note)
    if setup.badam:
        states /= max(1, shape.num_layers)       # BAdam: one block (layer) holds optimizer state at a time
        temp /= max(1, shape.num_layers)
    if rg.deepspeed:
        states += master + T * 4                  # fp32 master + fp32 gradient partition
        master = 0

    weights = frozen_bytes + train_w
    host = 0.0
    gather = 0.0
    # ---------------------------------------------------------------- sharding
    if stage >= 1:
        states /= n
        temp /= n
        if stage >= 2:
            grads /= n
        if stage >= 3:
            weights /= n
            live = float(_flag(setup, "stage3_max_live_parameters", 1e9) or 1e9)
            prefetch = float(_flag(setup, "stage3_prefetch_bucket_size", 0.9 * shape.hidden_size ** 2) or 0)
            largest = max(counts.largest_layer, shape.vocab_size * shape.hidden_size)
            gather = min(live, 2 * largest + prefetch) * 2
        bucket = float(_flag(setup, "reduce_bucket_size", 5e8 if stage < 3 else shape.hidden_size ** 2) or 0)
        buffers = bucket * 2 * (2 if _flag(setup, "overlap_comm", stage >= 3) else 1)
        if stage < 3:
            buffers += float(_flag(setup, "allgather_bucket_size", 5e8) or 0) * 2 if stage >= 1 else 0
        gather += min(buffers, (T * 2) * 1.0 + 0)  # a bucket never exceeds the trainable half weights
        if setup.offload_optimizer:
            host += states * _local(hw, n)
            states = 0.0
            temp = 0.0
        if setup.offload_params and stage >= 3:
            host += weights * _local(hw, n)
            weights = 0.0
        if stage <= 2 and n > 1:
            notes.append(f"ZeRO-{stage} keeps full weights on every GPU: more GPUs lower only the sharded "
                         "optimizer" + (" and gradient" if stage == 2 else "") + " part.")
    elif fsdp and fsdp != "no_shard" and n > 1:
        shard_n = n if "hybrid" not in fsdp else min(n, max(1, hw.n_gpus))
        states /= shard_n
        temp /= shard_n
        grads /= shard_n
        if "full" in fsdp or "hybrid" in fsdp:
            weights /= shard_n
            unit_bytes = rg.frozen_bytes if quant else rg.compute_bytes
            gather = 2 * counts.largest_layer * unit_bytes   # unit being used + the prefetched one
        if setup.offload_params:
            host += (weights + grads + states) * _local(hw, n)
            weights = grads = states = temp = 0.0
    elif n > 1:
        notes.append("DDP keeps full weights, gradients and optimizer states on every GPU: more GPUs do not "
                     "lower per-GPU memory.")

    # ---------------------------------------------------------------- activations and logits
    seq_mult = 2 if setup.stage in ("dpo", "kto", "orpo", "simpo") else 1   # chosen + rejected
    b = setup.micro_batch * seq_mult
    s = setup.seq_len
    tokens = b * s
    act, act_detail = _activations(setup, shape, rg, counts, tokens, s, T)
    logits_fwd, logits_bwd = _logits(setup, shape, rg, tokens)
    ref = 0.0
    if setup.stage in ("dpo", "kto") and not adapters and not _flag(setup, "precompute_ref_log_probs", False):
        ref = P * (rg.frozen_bytes if not rg.deepspeed else 2) / (n if stage >= 3 or "full" in fsdp else 1)
        notes.append("DPO/KTO with full or freeze tuning loads a second, frozen reference model.")

    resident_copy = 0.0
    if setup.framework == "litgpt" and fsdp and n > 1:
        # Inferred from the measurements, not found in code: every published LitGPT multi-GPU row sits at full
        # weights + shard + activations, and 7B full fine-tuning OOMs on 4x24 GB although its shard is 13.5 GB
        # (config_hub/finetune/README.md). The code paths checked do not hold such a copy: Fabric builds the
        # model on meta/CPU and shards unit by unit in setup, and load_raw under FULL_STATE_DICT unshards one
        # FSDP unit at a time (lightning/fabric/strategies/fsdp.py _load_raw_module_state; lit-gpt
        # finetune/lora.py). Kept as the data's term until the mechanism is found.
        resident_copy = P * (rg.frozen_bytes if not quant else 2.0)
        gather += resident_copy
    static = weights + ref + states + master + gather
    grad_head = (counts.lm_head or counts.embeddings) * rg.grad_bytes if setup.method == "full" else 0
    m_loss = static + act + logits_fwd
    m_bwd = static + act + logits_bwd
    m_step = static + grads + temp
    tied_extra = 0.0
    if shape.tie_word_embeddings and setup.method == "full":
        # A tied lm_head/embedding weight gets two gradients: the lm_head one waits in autograd's input
        # buffer until the embedding backward's dense vocab x hidden one arrives, and the two are summed
        # out of place (torch/csrc/autograd/input_buffer.cpp): three full-size gradients alive at once.
        tied_extra = 2.0 * counts.embeddings * rg.grad_bytes / (n if (stage >= 2 or (fsdp and n > 1)) else 1)
    m_embed = static + grads + tied_extra
    # paged (unified-memory) optimizer states are not counted by torch's allocator
    paged_b = paged or 0.0
    moments = {"loss": m_loss - paged_b, "backward": m_bwd - paged_b, "optimizer step": m_step - paged_b,
               "embedding backward": m_embed - paged_b}
    m_loss_alloc, m_bwd_alloc, m_step_alloc = moments["loss"], moments["backward"], moments["optimizer step"]
    train_alloc = max(moments.values())
    train_peak = train_alloc + paged_b
    phase = "train"
    # activations component = what is alive beyond states at the peak moment
    peak_moment = max(moments, key=moments.get)

    if resident_copy:
        notes.append("LitGPT under FSDP keeps a full, unsharded copy of the weights on every rank besides its "
                     "shard: more GPUs shrink only the sharded part.")

    eval_alloc = 0.0
    if setup.do_eval:
        eb = setup.eval_batch * seq_mult
        ev_tokens = eb * s
        ev_act = _eval_activations(shape, rg, ev_tokens, s, setup.attention)
        ev_logits = ev_tokens * shape.vocab_size * (rg.compute_bytes + LOSS_FWD_FP32_BYTES) \
            if not setup.fused_ce else ev_tokens * shape.hidden_size * 8
        eval_alloc = static - (paged or 0) + ev_act + ev_logits
        if eval_alloc > train_alloc:
            phase = "eval"
            notes.append(f"Evaluation sets the peak: eval batch {setup.eval_batch} x {s} tokens of logits.")

    grads_c = grads if peak_moment == "optimizer step" else (grad_head if setup.method == "full" else 0)
    if peak_moment == "embedding backward":
        grads_c = grads + tied_extra
    if phase == "eval":
        grads_c = 0.0
    comps = {
        "weights": (weights + ref + gather) / GIB,
        "gradients": grads_c / GIB if phase != "eval" else 0.0,
        "optimizer": (states + master + (temp if peak_moment == "optimizer step" else 0)) / GIB,
        "activations": 0.0,
        "logits": 0.0,
        "overhead": 0.0,
    }
    if phase == "eval":
        comps["activations"] = ev_act / GIB
        comps["logits"] = ev_logits / GIB
        allocated = eval_alloc / GIB
        peak_tensors = (eval_alloc + (paged or 0)) / GIB
        transient = ev_act + ev_logits
    else:
        if peak_moment in ("loss", "backward"):
            comps["activations"] = act / GIB
            comps["logits"] = (logits_fwd if peak_moment == "loss" else logits_bwd) / GIB
        allocated = train_alloc / GIB
        peak_tensors = train_peak / GIB
        transient = act + max(logits_fwd, logits_bwd)
    # Weights and optimizer states are allocated once and stay; the cache fragments on what comes and goes
    # (activations, logits, gradients, step temporaries), so the reserve scales with that churn only.
    persistent = (weights + ref + states + master + gather - (paged or 0)) / GIB
    reserve = ALLOCATOR_RESERVE_FRAC * max(0.0, allocated - persistent)
    varlen = 0.0
    loss_kind = str(_flag(setup, "loss", "") or "").lower()
    if not setup.packing and not _flag(setup, "fixed_length", False) and not setup.fused_ce \
            and loss_kind != "chunked" and not _flag(setup, "expandable_segments", False):
        varlen = VARLEN_CACHED_FP32_BYTES * tokens * shape.vocab_size / GIB
        # those idle segments are released on the allocator's OOM retry: they never push a run past the fit line
        room = hw.usable_gib * (1.0 - headroom) - (peak_tensors + CUDA_CONTEXT_GIB + CUBLAS_WORKSPACE_GIB + reserve)
        varlen = max(0.0, min(varlen, room)) if hw.usable_gib else varlen
        reserve += varlen
    overhead = CUDA_CONTEXT_GIB + CUBLAS_WORKSPACE_GIB + reserve
    comps["overhead"] = overhead
    allocated += CUBLAS_WORKSPACE_GIB
    peak = peak_tensors + overhead
    details = {
        "params_total": float(P), "params_trainable": float(T),
        "frozen_weights_gib": frozen_bytes / GIB, "trainable_weights_gib": train_w / GIB,
        "grads_full_gib": grads / GIB, "optimizer_states_gib": states / GIB,
        "optimizer_step_temporaries_gib": temp / GIB, "paged_states_gib": (paged or 0) / GIB,
        "gather_buffers_gib": gather / GIB,
        # weights, gradients and optimizer states per GPU: no step of this run can allocate less
        "model_states_gib": (weights + ref + states + master + grads - (paged or 0)) / GIB, "reference_model_gib": ref / GIB,
        "activations_gib": act / GIB, "logits_forward_gib": logits_fwd / GIB,
        "logits_backward_gib": logits_bwd / GIB, "moment_loss_gib": m_loss_alloc / GIB,
        "moment_backward_gib": m_bwd_alloc / GIB, "moment_step_gib": m_step_alloc / GIB,
        "moment_embedding_backward_gib": moments["embedding backward"] / GIB,
        "eval_gib": eval_alloc / GIB, "cuda_context_gib": CUDA_CONTEXT_GIB,
        "cublas_workspace_gib": CUBLAS_WORKSPACE_GIB, "allocator_reserve_gib": reserve, "varlen_cached_logits_gib": varlen,
        "reserved_gib": allocated + reserve + (paged or 0) / GIB * 0,
        "bytes_per_trainable_param": (rg.train_bytes + rg.grad_bytes + (states + master) / max(1, T) * (n if stage >= 1 else 1)),
        **{k: v / GIB for k, v in act_detail.items()},
    }
    notes.append("Activations follow HF Llama-style blocks; other architectures and fused/compiled kernels "
                 "are approximate.")
    if paged:
        notes.append("Paged optimizer states live in CUDA unified memory: torch.cuda.max_memory_allocated "
                     "does not count them, the card does.")
    if rg.autocast and setup.method == "full":
        notes.append("Autocast keeps a bf16 copy of every fp32 weight during forward (2 more bytes per parameter).")
    if host:
        notes.append(f"CPU offload needs about {host / GIB:.1f} GiB of host RAM per node.")
    est = Estimate(components=comps, allocated_gib=allocated, peak_gib=peak, capacity_gib=hw.usable_gib,
                   headroom=headroom, phase=phase if phase == "eval" else "train",
                   details=details, notes=tuple(notes), host_ram_gib=host / GIB)
    if crash is not None:
        extra_notes = reconcile(est, crash)
        if extra_notes:
            from dataclasses import replace
            est = replace(est, notes=est.notes + extra_notes)
    return est


def _local(hw: Hardware, n: int) -> int:
    return max(1, min(n, hw.n_gpus or n))


def _optimizer_bytes(setup: TrainingSetup, shape: ModelShape, rg: Regime, T: int):
    """(state bytes, note, paged bytes, step temporaries) for the trainable parameters."""
    opt = (setup.optimizer or "adamw_torch").lower()
    w = rg.state_dtype_bytes
    paged = 0.0
    temp = 0.0
    note = ""
    if "8bit" in opt or "bnb" in opt:
        per = 1.0 if "lion" in opt else 2.0       # bitsandbytes: one byte per state (+ tiny blockwise scales)
        states = T * per
        if rg.deepspeed:
            states = T * per                     # master copy added by the caller
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
        momentum = float(setup.extras.get("momentum", 0) or 0) if setup.extras else 0.0
        states = T * w if momentum else 0.0
    elif opt in ("lomo", "adalomo"):
        states = 0.0
    else:
        states = T * 2.0 * w                      # Adam-family: exp_avg + exp_avg_sq in the param dtype
        if "fused" not in opt and not rg.deepspeed and opt.startswith("adam"):
            # torch foreach AdamW: _foreach_sqrt(exp_avg_sq) makes one full temporary at step()
            temp = T * w
    if "paged" in opt:
        paged = states
    if "adamw" in opt and w == 2 and not rg.deepspeed:
        note = "AdamW states are kept in the parameters' half dtype."
    return states, note, paged, temp


def _activations(setup: TrainingSetup, shape: ModelShape, rg: Regime, counts, tokens: int, seq: int, T: int):
    """Activation bytes alive at the end of forward (training), and details."""
    h = shape.hidden_size
    b = tokens / max(1, seq)
    layer = _layer_saved_bytes(setup, shape, rg, seq) * tokens
    L = shape.num_layers
    trained_layers = L
    if setup.method == "freeze":
        # only the last N layers need saved activations (earlier ones run without grad)
        trained_layers = _freeze_layers(setup, shape)
    offload = bool(_flag(setup, "activation_offload", False))
    detail: dict[str, float] = {}
    if setup.grad_ckpt:
        stored = trained_layers * tokens * rg.residual_bytes * h
        recompute = layer
        act = (0 if offload else stored) + recompute
        detail["checkpoint_inputs_gib"] = stored
        detail["recomputed_layer_gib"] = recompute
    else:
        act = (trained_layers * layer if not offload else 2 * layer) + layer * BACKWARD_LAYER_FACTOR
        detail["per_layer_gib"] = layer
    # autocast keeps a compute-dtype copy of every fp32 matmul weight it casts (cache lives for forward)
    if rg.autocast:
        cast_params = 0.0
        if setup.method == "full":
            cast_params = counts.linear_total
        elif setup.method == "freeze":
            cast_params = T
        elif rg.train_bytes == 4:
            cast_params = T
        if rg.frozen_bytes == 4:
            # frozen fp32 weights are cast per use; without checkpointing linear saves the copy for backward
            per_layer_frozen = (counts.linear_total - h * shape.vocab_size) / max(1, L)
            cast_params += per_layer_frozen * (1 if setup.grad_ckpt else L) if setup.method != "full" else 0
        act += cast_params * rg.compute_bytes
        detail["autocast_weight_copies_gib"] = cast_params * rg.compute_bytes
    # embedding output + final norm (fp32 input and normalised output) before lm_head
    act += tokens * h * (rg.residual_bytes + 4 + rg.residual_bytes)
    _ = b
    return act, detail


def _eval_activations(shape: ModelShape, rg: Regime, tokens: int, seq: int, attention: str) -> float:
    """No-grad forward: only one layer's transients at a time."""
    h = shape.hidden_size
    a = rg.compute_bytes
    per_tok = 4 * h + 2 * a * h + 3 * a * shape.intermediate_size
    if attention == "eager":
        per_tok += shape.num_heads * seq * (4 + a)
    return tokens * per_tok


def _logits(setup: TrainingSetup, shape: ModelShape, rg: Regime, tokens: int) -> tuple[float, float]:
    """Bytes alive around the loss in forward and at the start of backward."""
    V = shape.vocab_size
    a = rg.compute_bytes
    loss = str(_flag(setup, "loss", "") or "").lower()
    if setup.fused_ce:
        # fused linear cross-entropy: logits only for one chunk of tokens at a time, fp32
        chunk = min(tokens, max(1, 2 ** max(0, (tokens * shape.hidden_size // max(1, V)).bit_length())))
        return chunk * V * 8.0 + tokens * shape.hidden_size * 4, chunk * V * 8.0 + tokens * shape.hidden_size * 4
    if loss == "chunked":
        # compute-dtype logits materialised; fp32 upcast only per chunk (LitGPT/torchtune chunked CE)
        return tokens * V * a * 1.0, tokens * V * a * 1.0
    fwd = tokens * V * (a + (LOSS_FWD_FP32_BYTES if a != 4 else 4))
    bwd = tokens * V * LOSS_BWD_BYTES
    from oomdoctor.memory.regime import _version
    ver = _version(setup.framework_version)
    if setup.framework in ("hf", "trl") and ver and ver < (4, 46):
        # transformers < 4.46 shifted the fp32 logits with .contiguous(): one more fp32 copy and its gradient
        fwd += tokens * V * 4
        bwd += tokens * V * 4
    return fwd, bwd


def reconcile(estimate: Estimate, crash: CrashReport) -> tuple[str, ...]:
    """Plain sentences comparing the estimate with the numbers the crash printed (also appended to notes)."""
    ev = crash.primary
    if ev is None:
        return ()
    out: list[str] = []
    if ev.allocated_gib is not None and ev.tried_gib is not None:
        demanded = ev.allocated_gib + ev.tried_gib
        gap = estimate.allocated_gib - demanded
        rel = gap / demanded if demanded else 0.0
        out.append(f"At the crash PyTorch held {ev.allocated_gib:.2f} GiB and asked for {ev.tried_gib:.2f} GiB more "
                   f"({demanded:.2f} GiB); the estimate's allocated peak is {estimate.allocated_gib:.2f} GiB "
                   f"({rel:+.0%}).")
        if rel > 0.05 and estimate.capacity_gib and demanded >= 0.85 * estimate.capacity_gib:
            # A run dies at the first allocation that does not fit, part-way up to its peak: the log's
            # figure is then a floor of what the step needs, not a measurement of its peak.
            where = {"optimizer": " while the optimizer was creating its states",
                     "backward": " part-way through the backward pass",
                     "forward": " part-way through the forward pass"}.get(ev.phase or "", "")
            out.append(f"The run died{where}, before reaching its peak: the log's figure is a lower bound, "
                       "so an estimate above it is expected.")
    elif ev.allocated_gib is not None:
        out.append(f"At the crash PyTorch held {ev.allocated_gib:.2f} GiB; the estimate's allocated peak is "
                   f"{estimate.allocated_gib:.2f} GiB.")
    ru = ev.reserved_unallocated_gib
    if ru is None and ev.reserved_gib is not None and ev.allocated_gib is not None:
        ru = ev.reserved_gib - ev.allocated_gib
    if ru is not None and ru > 0:
        cap = ev.capacity_gib or estimate.capacity_gib or 1.0
        if ru >= max(0.5, 0.05 * cap) or (ev.tried_gib and ru >= ev.tried_gib):
            out.append(f"{ru:.2f} GiB was reserved by PyTorch but unallocated: the cache is fragmented; "
                       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets it reuse that memory.")
    if ev.other_processes_gib:
        out.append(f"Other processes held {ev.other_processes_gib:.2f} GiB on the card; usable capacity is "
                   f"{estimate.capacity_gib:.2f} GiB.")
    if ev.capacity_gib and estimate.capacity_gib and abs(ev.capacity_gib - estimate.capacity_gib) > 0.5 \
            and not ev.other_processes_gib:
        out.append(f"The log reports a capacity of {ev.capacity_gib:.2f} GiB; the estimate used "
                   f"{estimate.capacity_gib:.2f} GiB.")
    return tuple(out)
