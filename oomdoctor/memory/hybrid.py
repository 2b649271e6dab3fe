"""verl's hybrid engine: what shares each training GPU with the actor's update (verl @b178a3cd, the version
oomdoctor/configs/verl.py reads; docs/estimates.md §25).

One PPO/GRPO step of `verl.trainer.main_ppo` on an FSDP actor runs three phases on the same cards, each with its own
memory (verl/workers/fsdp_workers.py ActorRolloutRefWorker):
  rollout   the engine (vLLM, SGLang) generates in its own process beside the trainer, which keeps the actor's
            shards and optimizer states unless they are offloaded between phases (rollout_mode, :677-757)
  log prob  no-grad forwards of the actor (old log-probs with their entropy) and of the reference (compute_log_prob,
            compute_ref_log_prob, :989-1072), log_prob_micro_batch_size_per_gpu sequences at a time
  update    the actor's training step (update_actor, :893-937): the estimate of oomdoctor/memory/estimate.py
A critic (GAE) is colocated in the same resource pool (trainer/main_ppo.py:196-197) and keeps its shards on the card
unless its own offloads are on. The peak is the largest of the three.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from oomdoctor.facts import GIB, VERL_TOKEN_BUDGET_DEFAULT, Estimate, Hardware, ModelShape, Msg, TrainingSetup, msg

# the engines that run in a process of their own (vllm_rollout/vllm_async_server.py, sglang_rollout/); the "hf"
# rollout generates with the actor's own FSDP module (rollout/hf_rollout.py)
SEPARATE_ENGINES = ("vllm", "sglang")


def applies(setup: TrainingSetup) -> bool:
    """A verl PPO-family run (main_ppo and the recipes over its config), not its SFT trainers."""
    return setup.framework == "verl" and setup.stage != "sft"


def packed_tokens(setup: TrainingSetup, padded: float, budget: int, sequences: int) -> tuple[float, bool]:
    """(tokens per GPU in one micro-batch, whether a token budget sets them). With use_dynamic_bsz the rank's
    sequences are packed into micro-batches of at most max_token_len x sp real tokens (dp_actor.py:459-461,
    551-553; utils/seqlen_balancing.py:387 rearrange_micro_batches) and split over the sp ranks; a budget above the
    rank's whole batch leaves one micro-batch of it. The budget counts attention_mask tokens
    (seqlen_balancing.py:380), so it bounds the tensors only when they are unpadded (use_remove_padding,
    dp_actor.py:164-167 unpad_input); otherwise `padded`: the micro-batch's sequences at prompt + response."""
    mech = setup.mechanisms
    if not (budget and mech.remove_padding):
        return padded, False
    sp = max(1, int(setup.seq_parallel or 1))
    whole = sequences * setup.seq_len / sp if sequences else float("inf")
    return (float(budget), True) if budget < whole else (whole, False)


def update_budget(setup: TrainingSetup) -> int:
    """actor.ppo_max_token_len_per_gpu when use_dynamic_bsz is on (actor.yaml default 16384), else 0. A plan's
    micro-batch cut is written as the same share of the budget (configs/verl.py override), one sample at least."""
    mech = setup.mechanisms
    if not mech.dynamic_bsz:
        return 0
    budget = mech.token_budget or VERL_TOKEN_BUDGET_DEFAULT
    if mech.budget_micro_batch and setup.micro_batch != mech.budget_micro_batch:
        budget = max(setup.seq_len, budget * setup.micro_batch // mech.budget_micro_batch)
    return budget


def update_tokens(setup: TrainingSetup, padded: float) -> tuple[float, bool]:
    """The actor update's tokens per GPU in one micro-batch and whether the budget sets them (packed_tokens)."""
    return packed_tokens(setup, padded, update_budget(setup), setup.mechanisms.mini_batch_per_rank)


def packed_fit(est: Estimate, setup: TrainingSetup, estimate_at: Callable[[TrainingSetup], Estimate]) -> Estimate:
    """A packed run over the card only at its padded bound (est.length_bound_gib): the longest mean sample length
    at which the estimate fits, every token term at that length (the micro-batch packs micro x mean tokens,
    dp_actor.py:164-167), found by bisection over the estimate itself; a note says it or that none fits."""
    if not est.length_bound_gib or est.fits:
        return est
    lo, hi = 0, setup.seq_len               # lo fits (0: none found), hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if estimate_at(setup.with_changes(seq_len=mid)).fits:
            lo = mid
        else:
            hi = mid
    details = dict(est.details)
    if lo:
        details["verl_packed_fit_tokens"] = float(lo)
        note = msg("memory.note.verl_packed_fit", gib=est.length_bound_gib, seq=setup.seq_len, tokens=lo)
    else:
        note = msg("memory.note.verl_packed_bound", gib=est.length_bound_gib, seq=setup.seq_len)
    # no length fits: what does not scale with the samples is over the card, so the verdict is not in doubt
    return replace(est, details=details, notes=est.notes + (note,), length_bound_gib=est.length_bound_gib if lo else 0.0)


def engine_bytes(setup: TrainingSetup, hw: Hardware, trainer_bytes: float, context: float) -> float:
    """The rollout engine's device memory while it generates. vLLM (>= 0.7, verl pins 0.8.5-0.12, setup.py:52)
    takes gpu_memory_utilization of the card's *total* memory for its weights, activations and KV cache; SGLang takes
    that fraction of the memory still free when it starts (docs/perf/perf_tuning.rst:35-36), what the trainer
    already holds being the rest."""
    mech = setup.mechanisms
    card = hw.gpu_gib * GIB
    if mech.rollout_engine not in SEPARATE_ENGINES or card <= 0:
        return 0.0
    frac = min(1.0, max(0.0, mech.rollout_gpu_fraction))
    if mech.rollout_engine == "sglang":
        return frac * max(0.0, card - trainer_bytes - context)
    return frac * card


def critic_params(shape: ModelShape, total: int, lm_head: int) -> int:
    """The critic: the model with a one-output value head in place of the output layer (AutoModelForTokenClassification,
    num_labels=1: workers/fsdp_workers.py CriticWorker._build_critic_model_optimizer), counted on the actor's
    architecture (critic.model.path is not read)."""
    return max(0, total - lm_head) + shape.hidden_size


def colocated(est: Estimate, setup: TrainingSetup, shape: ModelShape, hw: Hardware, *, weights: float, states: float,
              gather: float, params_total: int, lm_head: int, compute_bytes: int,
              activations_of: Callable[[float], float], context: float, cublas: float) -> Estimate:
    """The estimate with the rollout engine, the log-prob passes, the reference model and the critic added:
    `weights`, `states` and `gather` are the actor's bytes per GPU in its update (shards as the update holds them);
    `activations_of(tokens)` the no-grad forward's activations."""
    mech = setup.mechanisms
    n = max(1, setup.n_gpus)
    local = max(1, min(n, hw.n_gpus or n))
    sp = max(1, int(setup.seq_parallel or 1))
    # critic: fp32 shards (dp_critic.yaml fsdp_config.model_dtype fp32) and AdamW's two fp32 states; its gradients
    # are freed at the end of its update (workers/critic/dp_critic.py update_critic: zero_grad after the loop)
    c_params = critic_params(shape, params_total, lm_head) if mech.critic else 0
    critic_w = c_params * 4.0 / n
    critic_s = c_params * 8.0 / n
    critic_w_on = 0.0 if mech.critic_offload_params else critic_w
    critic_s_on = 0.0 if mech.critic_offload_optimizer else critic_s
    # the actor between phases: its offloads move the shards to the host (rollout_mode :719-721, update_actor
    # :928-935); the gradients are freed at the end of every update (workers/actor/dp_actor.py:668 zero_grad)
    off_w = mech.phase_offload and setup.offload_params
    off_s = mech.phase_offload and setup.offload_optimizer
    idle_w = 0.0 if off_w else weights
    idle_s = 0.0 if off_s else states
    host = ((weights if off_w else 0.0) + (states if off_s else 0.0)) * local
    host += ((critic_w - critic_w_on) + (critic_s - critic_s_on)) * local
    if mech.ref_model_offloaded:
        # the reference model in bf16 (fsdp_workers.py:324-327, non-actor roles), sharded and kept in host RAM
        # by FSDP's CPUOffload (fsdp_workers.py:517-519): only the unit being computed comes to the card
        host += params_total * 2.0 / n * local

    # rollout: the trainer's resident tensors beside the engine's share of the card
    r_alloc = idle_w + idle_s + critic_w_on + critic_s_on
    engine = engine_bytes(setup, hw, r_alloc, context)
    engine_ctx = context if engine else 0.0
    # free_cache_engine sleeps the engine after generating (vllm_async_server.py sleep: level 2 in the hybrid mode,
    # weights and KV cache released): its process keeps its CUDA context; with it off the whole share stays
    engine_idle = engine_ctx + (0.0 if mech.rollout_sleeps else engine)
    rollout_dev = r_alloc + cublas + context + engine_ctx + engine

    # log-prob passes: no-grad forwards with the parameters loaded (compute_log_prob :993-994) and the optimizer
    # states where the update left them; old log-probs compute the entropy too (:1009, calculate_entropy), over
    # the logits in their dtype (utils/torch_functional.py:224 entropy_from_logits: softmax and its product with
    # the logits, torch.compile'd by default, dp_actor.py:86-90); log-probs by flash-attn's cross entropy
    lp_base = weights + idle_s + critic_w_on + critic_s_on + gather
    V = shape.vocab_size

    def log_prob_pass(micro: int, budget: int, entropy: bool) -> tuple[float, float, float, bool]:
        if micro <= 0 and not budget:
            return 0.0, 0.0, 0.0, False
        # without a budget the pass splits its batch by log_prob_micro_batch_size_per_gpu sequences
        # (dp_actor.py:462 data.split); with one its micro-batch size is not used
        tokens, budgeted = packed_tokens(setup, micro * setup.seq_len / sp, budget, mech.batch_per_rank)
        if tokens <= 0:
            return 0.0, 0.0, 0.0, False
        act = activations_of(tokens)
        if mech.log_prob_fused:
            # fused kernels: log-probs and entropy from the hidden states in chunks (use_fused_kernels)
            logits = tokens * shape.hidden_size * 8.0
        else:
            # eager entropy: the softmax and its product beside the logits; compiled, fused into reductions
            logits = tokens * V * compute_bytes * (3.0 if entropy and mech.entropy_eager else 1.0)
        return lp_base + act + logits + cublas, act, logits, budgeted

    ref_entropy = False
    passes = [log_prob_pass(mech.log_prob_micro_batch, mech.log_prob_token_budget, True),
              log_prob_pass(mech.ref_log_prob_micro_batch or mech.log_prob_micro_batch,
                            mech.ref_log_prob_token_budget, ref_entropy)
              if (mech.ref_model_offloaded or setup.method in ("lora", "qlora")) else (0.0, 0.0, 0.0, False)]
    lp_alloc, lp_act, lp_logits, lp_budgeted = max(passes, key=lambda p: p[0])
    lp_dev = lp_alloc + context + engine_idle if lp_alloc else 0.0

    # update: the actor's step as estimated, the critic's resident shards and the sleeping engine beside it
    critic_on = critic_w_on + critic_s_on
    train_dev = est.peak_gib * GIB + critic_on + engine_idle
    moments = {k: v + critic_on / GIB for k, v in est.moments.items()}
    if lp_alloc:
        moments["log prob"] = lp_alloc / GIB
    if engine or mech.rollout_engine:
        moments["rollout"] = (r_alloc + cublas) / GIB
    candidates = {"update": train_dev, "log prob": lp_dev, "rollout": rollout_dev}
    winner = max(candidates, key=candidates.get)  # type: ignore[arg-type]
    comps = dict(est.components)
    if winner == "update":
        comps["weights"] = comps.get("weights", 0.0) + critic_w_on / GIB
        comps["optimizer"] = comps.get("optimizer", 0.0) + critic_s_on / GIB
        comps["overhead"] = comps.get("overhead", 0.0) + engine_idle / GIB
        peak_moment = est.peak_moment
    elif winner == "log prob":
        comps = {"weights": (weights + gather + critic_w_on) / GIB, "gradients": 0.0,
                 "optimizer": (idle_s + critic_s_on) / GIB, "activations": lp_act / GIB, "logits": lp_logits / GIB,
                 "overhead": (context + cublas + engine_idle) / GIB}
        peak_moment = "log prob"
    else:
        comps = {"weights": (idle_w + critic_w_on) / GIB, "gradients": 0.0, "optimizer": (idle_s + critic_s_on) / GIB,
                 "activations": 0.0, "logits": 0.0, "overhead": (context + cublas + engine_ctx + engine) / GIB}
        peak_moment = "rollout"
    details = dict(est.details)
    details.update({
        "verl_engine_gib": engine / GIB, "verl_engine_idle_gib": engine_idle / GIB,
        "verl_rollout_peak_gib": rollout_dev / GIB, "verl_log_prob_peak_gib": lp_dev / GIB,
        "verl_update_peak_gib": train_dev / GIB, "verl_critic_gib": (critic_w + critic_s) / GIB,
        "verl_critic_on_card_gib": critic_on / GIB, "verl_log_prob_logits_gib": lp_logits / GIB,
    })
    notes: list[Msg] = list(est.notes)
    if engine:
        notes.append(msg("memory.note.verl_engine", engine=mech.rollout_engine, frac=mech.rollout_gpu_fraction,
                         gib=engine / GIB, idle=engine_idle / GIB))
    if c_params:
        notes.append(msg("memory.note.verl_critic", gib=(critic_w + critic_s) / GIB, on=critic_on / GIB))
    if mech.ref_model_offloaded:
        notes.append(msg("memory.note.verl_reference", gib=params_total * 2.0 / n / GIB))
    if winner != "update":
        notes.append(msg("memory.note.verl_peak", moment=msg("memory.moment." + winner.replace(" ", "_"))))
    # use_remove_padding without a token budget: each micro-batch holds its sequences' real tokens, which the config
    # cannot know; the token terms above count them at prompt + response, an upper bound (docs/estimates.md §31)
    up_budgeted = update_tokens(setup, setup.micro_batch * setup.seq_len / sp)[1]
    by_length = {"update": (est.components.get("activations", 0.0) + est.components.get("logits", 0.0)) * GIB
                 if mech.remove_padding and not up_budgeted and est.phase == "train" else 0.0,
                 "log prob": lp_act + lp_logits if mech.remove_padding and not lp_budgeted and lp_alloc else 0.0,
                 "rollout": 0.0}
    length = by_length[winner]
    if length > 0:
        details["verl_length_bound_gib"] = length / GIB
    allocated = max([est.allocated_gib + critic_on / GIB] + [moments[k] for k in ("log prob", "rollout") if k in moments])
    return replace(est, components=comps, allocated_gib=allocated,
                   peak_gib=candidates[winner] / GIB, moments=moments, peak_moment=peak_moment, details=details,
                   notes=tuple(notes), host_ram_gib=est.host_ram_gib + host / GIB, length_bound_gib=length / GIB)
