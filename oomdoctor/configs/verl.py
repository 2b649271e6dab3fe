"""verl (volcengine/verl) trainer configs: Hydra YAMLs and the `key=value` overrides its entry points take.

Two trainers, each read from its own config (volcengine/verl@b178a3cd, 2026-01, verl/trainer/config/):
- PPO-family RL, `python -m verl.trainer.main_ppo` (GRPO, DAPO, ... by `algorithm.adv_estimator`; recipes run their
  own main_*.py over the same config), _generated_ppo_trainer.yaml: the trained policy is
  `actor_rollout_ref.actor` on `actor_rollout_ref.model.path`; a sample is data.max_prompt_length (512) +
  data.max_response_length (512) tokens; actor.ppo_micro_batch_size_per_gpu per forward (the older global
  ppo_micro_batch_size is divided by the data-parallel size); one optimizer step takes ppo_mini_batch_size ×
  rollout.n sequences over the data-parallel ranks (workers/fsdp_workers.py:241-252), so the accumulation is that
  over the micro-batch; model.enable_gradient_checkpointing true, lora_rank 0 (full) / lora_alpha 16 /
  target_modules all-linear; actor.fsdp_config.param_offload / optimizer_offload false; trainer.n_gpus_per_node 8 ×
  trainer.nnodes 1; actor.ulysses_sequence_parallel_size 1; strategy fsdp (fsdp2, megatron);
- SFT, `torchrun -m verl.trainer.fsdp_sft_trainer` (sft_trainer.yaml; the engine trainer verl.trainer.sft_trainer,
  sft_trainer_engine.yaml, reads model.path): model.partial_pretrain, data.micro_batch_size_per_gpu 4,
  data.train_batch_size 256 global (divided by the data-parallel size, then by the micro-batch:
  fsdp_sft_trainer.py:145-155), data.max_length 1024, model.lora_rank 0, model.enable_gradient_checkpointing true,
  model.fsdp_config.cpu_offload / offload_params false, trainer.n_gpus_per_node 8, strategy fsdp2.
Both load the model in fp32 (fsdp_config.model_dtype) and compute in bf16 (FSDP MixedPrecision param_dtype bf16,
fsdp_workers.py:493-503, fsdp_sft_trainer.py:293) with flash_attention_2 (fsdp_workers.py:331,
fsdp_sft_trainer.py:244). The hybrid engine's other roles are kept as facts in `extras` (the colocated rollout
engine's name, gpu_memory_utilization, free_cache_engine, tensor parallel size, n; the log-prob micro-batches; the
reference model and the critic): `Mechanisms` types them and oomdoctor/memory/hybrid.py adds their memory.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, table, version_chooser
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "verl"
FRAMEWORK: Framework = "verl"
LABEL = "verl"
PACKAGE = "verl"
DEFAULT_VERSION = "0.7.0"
MODEL_KEY = "actor_rollout_ref.model.path"

_A = "actor_rollout_ref.actor"
_M = "actor_rollout_ref.model"
KEYS = table(
    Key("micro_batch", f"{_A}.ppo_micro_batch_size_per_gpu", minimum=1),
    Key("lora_rank", f"{_M}.lora_rank", minimum=0),
    Key("lora_alpha", f"{_M}.lora_alpha", minimum=1),
    Key("grad_ckpt", f"{_M}.enable_gradient_checkpointing"),
    Key("offload_params", f"{_A}.fsdp_config.param_offload"),
    Key("offload_optimizer", f"{_A}.fsdp_config.optimizer_offload"),
    Key("n_gpus", "trainer.n_gpus_per_node", minimum=1),
)
SFT_KEYS = table(
    Key("micro_batch", "data.micro_batch_size_per_gpu", minimum=1),
    Key("seq_len", "data.max_length", minimum=1),
    Key("lora_rank", "model.lora_rank", minimum=0),
    Key("lora_alpha", "model.lora_alpha", minimum=1),
    Key("grad_ckpt", "model.enable_gradient_checkpointing"),
    Key("n_gpus", "trainer.n_gpus_per_node", minimum=1),
)
# verl's own knobs the plan sets (rules/40-verl.yaml), kept in `extras` by this reader and typed by `Mechanisms`
# (rollout.yaml, critic.yaml, ppo_trainer.yaml @b178a3cd)
KNOBS = table(
    Key("rollout_sleeps", "actor_rollout_ref.rollout.free_cache_engine"),
    Key("rollout_gpu_fraction", "actor_rollout_ref.rollout.gpu_memory_utilization"),
    Key("log_prob_micro_batch", "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu", minimum=1),
    Key("critic_offload_params", "critic.model.fsdp_config.param_offload"),
    Key("critic_offload_optimizer", "critic.model.fsdp_config.optimizer_offload"),
    Key("response_length", "data.max_response_length", minimum=1),
    Key("remove_padding", "actor_rollout_ref.model.use_remove_padding"),
    Key("dynamic_bsz", f"{_A}.use_dynamic_bsz"),
    Key("token_budget", f"{_A}.ppo_max_token_len_per_gpu", minimum=1),
)


def override_key(setup: TrainingSetup, field: str) -> Key | None:
    """The key that holds `field` in this run: the SFT trainer's, else the PPO trainer's table and the knobs; a
    Megatron run offloads under actor.megatron / critic.megatron (_generated_ppo_megatron_trainer.yaml)."""
    if setup.stage == "sft":
        return SFT_KEYS.get(field)
    key = KEYS.get(field) or KNOBS.get(field)
    if key is not None and ".fsdp_config." in key.name and str(setup.extras.get("verl_strategy", "")) == "megatron":
        key = replace(key, name=key.name.replace(".model.fsdp_config.", ".megatron.").replace(".fsdp_config.",
                                                                                               ".megatron."))
    return key


# The entry points that read the SFT config (verl/trainer/fsdp_sft_trainer.py, verl/trainer/sft_trainer.py).
SFT_MODULES = ("verl.trainer.fsdp_sft_trainer", "verl.trainer.sft_trainer")
_PPO_GROUPS = ("actor_rollout_ref",)
_SFT_MARKERS = ("model.partial_pretrain", "data.micro_batch_size_per_gpu")


def _flat_has(data: dict, prefix: str) -> str | None:
    """A key of `data` at `prefix` (nested, or flat as a Hydra override spells it)."""
    if isinstance(data.get(prefix.split(".")[0]), dict):
        node: Any = data
        for part in prefix.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return prefix
    return next((k for k in data if isinstance(k, str) and (k == prefix or k.startswith(prefix + "."))), None)


def detect(data: dict) -> Msg | None:
    for group in _PPO_GROUPS:
        if isinstance(data.get(group), dict) or _flat_has(data, group):
            return msg("config.why.verl", keys=group)
    trainer = data.get("trainer")
    for key in _SFT_MARKERS:
        if _flat_has(data, key) and (isinstance(trainer, dict) or _flat_has(data, "trainer")):
            return msg("config.why.verl", keys=key)
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def _is_sft(doc: Doc, ctx: Context) -> bool:
    entry = ctx.entry
    if entry is not None and any(m in getattr(entry, "modules", ()) for m in SFT_MODULES):
        return True
    return doc.get("actor_rollout_ref") is None and not any(k.startswith("actor_rollout_ref.") for k in doc.data
                                                           if isinstance(k, str))


def _int(b: Builder, doc: Doc, field: str, key: str, default: int | None, minimum: int = 1) -> int | None:
    value = doc.int_(key, minimum=minimum)
    if value is not None:
        b.set(field, value, doc.src(key))
        return value
    if default is not None:
        b.default(field, default, key)
    return default


def _bool(b: Builder, doc: Doc, field: str, keys: tuple[str, ...], default: bool) -> bool:
    for key in keys:
        value = doc.bool_(key)
        if value is not None:
            b.set(field, value, doc.src(key))
            return value
    b.default(field, default, keys[0])
    return default


def _lora(b: Builder, doc: Doc, prefix: str) -> None:
    # The FSDP workers read model.lora_rank / lora_alpha (16); the Megatron workers the model.lora group, rank 0 and
    # alpha 32 by default (_generated_ppo_megatron_trainer.yaml `lora:`), the same adapter by another key.
    key, alpha_key, alpha = f"{prefix}.lora_rank", f"{prefix}.lora_alpha", 16
    if doc.get(key) is None and doc.get(f"{prefix}.lora.rank") is not None:
        key, alpha_key, alpha = f"{prefix}.lora.rank", f"{prefix}.lora.alpha", 32
    rank = doc.int_(key, minimum=0)
    if rank:
        b.set("method", "lora", doc.src(key))
        b.set("lora_rank", rank, doc.src(key))
        _int(b, doc, "lora_alpha", alpha_key, alpha)
        targets = doc.get(f"{prefix}.target_modules")
        if isinstance(targets, list) and targets:
            b.set("lora_targets", tuple(str(t) for t in targets), doc.src(f"{prefix}.target_modules"))
        elif isinstance(targets, str) and targets and targets not in ("all-linear", "all"):
            b.set("lora_targets", tuple(t.strip() for t in targets.strip("[]").split(",") if t.strip()),
                  doc.src(f"{prefix}.target_modules"))
    else:
        b.default("method", "full", f"{prefix}.lora_rank 0")


def _gpus(b: Builder, doc: Doc) -> int:
    per_node = doc.int_("trainer.n_gpus_per_node", minimum=1)
    nodes = doc.int_("trainer.nnodes", minimum=1)
    n = (per_node or 8) * (nodes or 1)
    if per_node is not None or nodes is not None:
        b.set("n_gpus", n, doc.src("trainer.n_gpus_per_node" if per_node is not None else "trainer.nnodes"))
    else:
        b.default("n_gpus", n, "trainer.n_gpus_per_node 8 × trainer.nnodes 1")
    return n


def _strategy(b: Builder, doc: Doc, key: str, default: str) -> None:
    strategy = (doc.str_(key) or default).lower()
    b.extras["verl_strategy"] = strategy
    if strategy.startswith("fsdp"):
        # FSDP's default sharding is FULL_SHARD; fsdp_size > 0 below the world size shards within groups of that
        # size and replicates across them (verl/utils/fsdp_utils.py, create_device_mesh: HYBRID_SHARD)
        if doc.get(key) is not None:
            b.set("fsdp", "full_shard", doc.src(key))
        else:
            b.default("fsdp", "full_shard", key)
    else:
        b.note(msg("config.verl_megatron", where=doc.where(key), strategy=strategy))
        _megatron(b, doc, key.rsplit(".", 1)[0] + ".megatron")


# verl's Megatron workers' parallelism (verl/trainer/config/_generated_ppo_megatron_trainer.yaml at b178a3cd,
# actor.megatron: sizes 1, virtual pipeline null, sequence_parallel true, use_distributed_optimizer true;
# override_transformer_config.recompute_granularity null = no recompute).
_MEGATRON_KEYS = (("tensor_parallel", "tensor_model_parallel_size", 1), ("pipeline_parallel", "pipeline_model_parallel_size", 1),
                  ("virtual_pipeline", "virtual_pipeline_model_parallel_size", None),
                  ("expert_parallel", "expert_model_parallel_size", 1), ("context_parallel", "context_parallel_size", 1))


def _megatron(b: Builder, doc: Doc, group: str) -> None:
    b.default("megatron", True, group)
    for field_name, name, default in _MEGATRON_KEYS:
        value = doc.int_(f"{group}.{name}", minimum=1)
        if value is not None:
            b.set(field_name, value, doc.src(f"{group}.{name}"))
        elif default is not None:
            b.default(field_name, default, f"{group}.{name}")
    for field_name, name in (("sequence_parallel", "sequence_parallel"), ("distributed_optimizer", "use_distributed_optimizer")):
        flag = doc.bool_(f"{group}.{name}")
        if flag is not None:
            b.set(field_name, flag, doc.src(f"{group}.{name}"))
        else:
            b.default(field_name, True, f"{group}.{name}")
    tp, pp, cp = (b.values.get(name, 1) or 1 for name in ("tensor_parallel", "pipeline_parallel", "context_parallel"))
    micro, mini = b.values.get("micro_batch"), doc.int_(f"{group.rsplit('.', 1)[0]}.ppo_mini_batch_size", minimum=1)
    if "grad_accum" in b.values and micro:
        # the Megatron workers split the mini-batch over Megatron's data-parallel ranks, GPUs / (TP x PP x CP)
        # (verl/workers/megatron_workers.py:354-355), not over the GPUs / Ulysses size of the FSDP workers
        dp = max(1, int(b.values.get("n_gpus", 8)) // (tp * pp * cp))
        rollout_n = doc.int_("actor_rollout_ref.rollout.n", minimum=1) or 1
        b.values["grad_accum"] = max(1, (mini or 256) * rollout_n // dp // micro)
    recompute_key = f"{group}.override_transformer_config.recompute_granularity"
    word = (doc.str_(recompute_key) or "").lower()
    if word in ("full", "selective"):
        b.set("recompute", word, doc.src(recompute_key))
    # the Megatron workers checkpoint only as TransformerConfig's recompute says (model.enable_gradient_checkpointing
    # is the FSDP workers' switch): checkpointing is on exactly when a recompute granularity is given
    if word in ("full", "selective"):
        b.set("grad_ckpt", True, doc.src(recompute_key))
    else:
        b.default("grad_ckpt", False, recompute_key)


def _read_ppo(b: Builder, doc: Doc) -> None:
    model = doc.str_(f"{_M}.path")
    if model:
        b.set("model", model, doc.src(f"{_M}.path"))
    b.default("stage", "ppo", "verl.trainer.main_ppo")
    b.extras["own_workers"] = True       # one python process; Ray places trainer.n_gpus_per_node × nnodes workers
    estimator = doc.str_("algorithm.adv_estimator")
    b.extras["adv_estimator"] = estimator or "gae"
    _lora(b, doc, _M)
    prompt = doc.int_("data.max_prompt_length", minimum=1)
    answer = doc.int_("data.max_response_length", minimum=1)
    total = (prompt or 512) + (answer or 512)
    b.extras["verl_prompt_length"] = prompt or 512     # the plan shows a length cut as data.max_response_length
    if prompt is not None or answer is not None:
        b.set("seq_len", total, doc.src("data.max_prompt_length" if prompt is not None else "data.max_response_length"))
    else:
        b.default("seq_len", total, "data.max_prompt_length 512 + data.max_response_length 512")
    n = _gpus(b, doc)
    sp = doc.int_(f"{_A}.ulysses_sequence_parallel_size", minimum=1) or 1
    if sp > 1:
        b.set("seq_parallel", sp, doc.src(f"{_A}.ulysses_sequence_parallel_size"))
    dp = max(1, n // sp)
    micro = doc.int_(f"{_A}.ppo_micro_batch_size_per_gpu", minimum=1)
    if micro is not None:
        b.set("micro_batch", micro, doc.src(f"{_A}.ppo_micro_batch_size_per_gpu"))
    else:
        old = doc.int_(f"{_A}.ppo_micro_batch_size", minimum=1)
        if old is not None:
            micro = max(1, old // dp)        # fsdp_workers.py:248-252: the global micro-batch over the dp ranks
            b.set("micro_batch", micro, doc.src(f"{_A}.ppo_micro_batch_size"))
    if doc.bool_(f"{_A}.use_dynamic_bsz"):
        tokens = doc.int_(f"{_A}.ppo_max_token_len_per_gpu", minimum=1) or 16384
        b.extras["max_token_len_per_gpu"] = tokens
        b.extras["verl_dynamic_bsz"] = True
        if micro is not None:
            b.extras["verl_budget_micro_batch"] = micro     # a micro-batch cut scales the budget (override below)
        b.note(msg("config.verl_dynamic_bsz", where=doc.where(f"{_A}.use_dynamic_bsz"), tokens=tokens))
    mini = doc.int_(f"{_A}.ppo_mini_batch_size", minimum=1)
    rollout_n = doc.int_("actor_rollout_ref.rollout.n", minimum=1) or 1
    # the sequences a data-parallel rank holds: one update's mini-batch (ppo_mini_batch_size 256 x n over the dp
    # ranks, fsdp_workers.py:241-252) and the log-prob passes' whole batch (data.train_batch_size 1024 x n,
    # _generated_ppo_trainer.yaml), what a token budget packs into micro-batches (dp_actor.py:446-461, 551-553)
    b.extras["verl_mini_batch_per_rank"] = max(1, (mini or 256) * rollout_n // dp)
    b.extras["verl_batch_per_rank"] = max(1, (doc.int_("data.train_batch_size", minimum=1) or 1024) * rollout_n // dp)
    if micro:
        per_rank = (mini or 256) * rollout_n // dp
        accum = max(1, per_rank // micro)
        key = f"{_A}.ppo_mini_batch_size"
        if mini is not None:
            b.set("grad_accum", accum, doc.src(key))
        else:
            b.default("grad_accum", accum, key)
    _bool(b, doc, "grad_ckpt", (f"{_M}.enable_gradient_checkpointing",), True)
    # the Megatron actor's offload switches sit in its megatron group (_generated_ppo_megatron_trainer.yaml)
    _bool(b, doc, "offload_params", (f"{_A}.fsdp_config.param_offload", f"{_A}.megatron.param_offload"), False)
    _bool(b, doc, "offload_optimizer", (f"{_A}.fsdp_config.optimizer_offload", f"{_A}.megatron.optimizer_offload"),
          False)
    # ppo_megatron_trainer.yaml sets actor.strategy megatron; ppo_trainer.yaml fsdp
    _strategy(b, doc, f"{_A}.strategy", "megatron" if "megatron" in str(doc.data.get("__verl_config__", "")) else "fsdp")
    for key, name in (("rollout.name", "rollout_engine"), ("rollout.gpu_memory_utilization", "rollout_gpu_memory_utilization"),
                      ("rollout.tensor_model_parallel_size", "rollout_tp"), ("rollout.n", "rollout_n")):
        value = doc.get(f"actor_rollout_ref.{key}")
        if value is not None:
            b.extras[name] = value
    _read_hybrid(b, doc, dp)
    # the PPO trainer packs by default: model.use_remove_padding true (_generated_ppo_trainer.yaml:306)
    b.extras["use_remove_padding"] = True


def _read_log_prob_budgets(b: Builder, doc: Doc) -> None:
    """The log-prob passes' own dynamic batching, else the actor's (_generated_ppo_trainer.yaml:134-135, 220-221:
    log_prob_use_dynamic_bsz and log_prob_max_token_len_per_gpu interpolate the actor's; Mechanisms resolves it)."""
    for group, name in (("rollout", "verl_log_prob"), ("ref", "verl_ref_log_prob")):
        dynamic = doc.bool_(f"actor_rollout_ref.{group}.log_prob_use_dynamic_bsz")
        if dynamic is not None:
            b.extras[f"{name}_dynamic_bsz"] = dynamic
        tokens = doc.int_(f"actor_rollout_ref.{group}.log_prob_max_token_len_per_gpu", minimum=1)
        if tokens is not None:
            b.extras[f"{name}_max_token_len"] = tokens


def _read_hybrid(b: Builder, doc: Doc, dp: int) -> None:
    """What the estimate needs of the hybrid engine's other roles beside the actor's update (verl/workers/
    fsdp_workers.py @b178a3cd; docs/estimates.md §25)."""
    free = doc.bool_("actor_rollout_ref.rollout.free_cache_engine")
    if free is not None:
        b.extras["verl_free_cache_engine"] = free
    # The actor is never wrapped with FSDP's CPUOffload (fsdp_workers.py:517-519); param_offload / optimizer_offload
    # move its shards to the host between phases and back for the update (fsdp_workers.py:895-898); fsdp2's
    # offload_policy is the real CPUOffloadPolicy (fsdp_workers.py:539-542)
    if str(b.extras.get("verl_strategy", "")).startswith("fsdp") and not doc.bool_(f"{_A}.fsdp_config.offload_policy"):
        b.extras["verl_phase_offload"] = True
    # log-prob micro-batches, the older global form divided over the data-parallel ranks (fsdp_workers.py:265-273)
    for group, name in (("rollout", "verl_log_prob_micro_batch"), ("ref", "verl_ref_log_prob_micro_batch")):
        micro = doc.int_(f"actor_rollout_ref.{group}.log_prob_micro_batch_size_per_gpu", minimum=1)
        old = doc.int_(f"actor_rollout_ref.{group}.log_prob_micro_batch_size", minimum=1)
        if micro is None and old is not None:
            micro = max(1, old // dp)
        if micro is not None:
            b.extras[name] = micro
    _read_log_prob_budgets(b, doc)
    if doc.bool_(f"{_M}.use_fused_kernels"):
        b.extras["verl_use_fused_kernels"] = True
    # dp_actor.py:570-573: the update computes the entropy when entropy_coeff != 0 (actor.yaml default 0)
    coeff = doc.get(f"{_A}.entropy_coeff")
    try:
        entropy = float(coeff) != 0.0 if coeff is not None else False
    except (TypeError, ValueError):
        entropy = False
    if entropy or doc.bool_(f"{_A}.calculate_entropy"):
        b.extras["verl_update_entropy"] = True
    # dp_actor.py:86-90: the entropy is torch.compile'd unless use_torch_compile is off (actor.yaml:102, true)
    if doc.bool_(f"{_A}.use_torch_compile") is False:
        b.extras["verl_entropy_eager"] = True
    # a reference policy when the KL is in the loss or the reward (trainer/ppo/utils.py:71-75); with LoRA it is the
    # actor with its adapters disabled (fsdp_workers.py:1042-1045), else a second model wrapped with CPUOffload
    # (fsdp_workers.py:517-519)
    wants_ref = bool(doc.bool_(f"{_A}.use_kl_loss")) or bool(doc.bool_("algorithm.use_kl_in_reward"))
    if wants_ref and b.values.get("method") != "lora":
        b.extras["verl_ref_offloaded"] = True
    # a critic when critic.enable says so, else for GAE (trainer/ppo/utils.py:86-95), in the same resource pool
    # as the actor (main_ppo.py:196-197 "global_pool")
    enable = doc.bool_("critic.enable")
    if enable if enable is not None else str(b.extras.get("adv_estimator", "gae")).lower() == "gae":
        b.extras["verl_critic"] = True
        for key, name in (("param_offload", "verl_critic_offload_params"),
                          ("optimizer_offload", "verl_critic_offload_optimizer")):
            if doc.bool_(f"critic.model.fsdp_config.{key}"):
                b.extras[name] = True


def _read_sft(b: Builder, doc: Doc) -> None:
    for key in ("model.partial_pretrain", "model.path"):
        model = doc.str_(key)
        if model:
            b.set("model", model, doc.src(key))
            break
    b.default("stage", "sft", "verl.trainer.fsdp_sft_trainer")
    _lora(b, doc, "model")
    _int(b, doc, "seq_len", "data.max_length", 1024)
    # the SFT trainer's world is torchrun's (fsdp_sft_trainer.py:811 world_size): the launcher's count, else one
    n = doc.int_("trainer.n_gpus_per_node", minimum=1) or 1
    if doc.get("trainer.n_gpus_per_node") is not None:
        b.set("n_gpus", n, doc.src("trainer.n_gpus_per_node"))
    # the engine trainer (sft_trainer_engine.yaml `engine: fsdp`) keeps its parallelism in the engine group
    # (engine/fsdp.yaml: ulysses_sequence_parallel_size, strategy, param_offload)
    sp_key = next((k for k in ("ulysses_sequence_parallel_size", "engine.ulysses_sequence_parallel_size")
                   if doc.get(k) is not None), "ulysses_sequence_parallel_size")
    sp = doc.int_(sp_key, minimum=1) or 1
    if sp > 1:
        b.set("seq_parallel", sp, doc.src(sp_key))
    micro = _int(b, doc, "micro_batch", "data.micro_batch_size_per_gpu", 4) or 4
    total = doc.int_("data.train_batch_size", minimum=1)
    accum = max(1, (total or 256) // max(1, n // sp) // micro)
    b.values["total_batch"] = (total or 256) // sp      # split over the launcher's processes (entrypoints._with_launch)
    if total is not None:
        b.set("grad_accum", accum, doc.src("data.train_batch_size"))
    else:
        b.default("grad_accum", accum, "data.train_batch_size 256")
    _bool(b, doc, "grad_ckpt", ("model.enable_gradient_checkpointing",), True)
    # fsdp_sft_trainer.py:305-308: CPUOffload(offload_params) only when cpu_offload is on
    if doc.get("engine.param_offload") is not None:
        b.set("offload_params", bool(doc.bool_("engine.param_offload")), doc.src("engine.param_offload"))
    offload = doc.bool_("model.fsdp_config.cpu_offload")
    params = doc.bool_("model.fsdp_config.offload_params")
    if "offload_params" in b.values:
        pass
    elif offload is not None or params is not None:
        on = bool(offload) and params is not False
        b.set("offload_params", on, doc.src("model.fsdp_config.cpu_offload" if offload is not None
                                            else "model.fsdp_config.offload_params"))
    else:
        b.default("offload_params", False, "model.fsdp_config.cpu_offload")
    _strategy(b, doc, "engine.strategy" if doc.get("engine.strategy") is not None else "model.strategy", "fsdp2")


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or DEFAULT_VERSION
    b = Builder(FRAMEWORK, version, f"{LABEL} {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    if _is_sft(doc, ctx):
        _read_sft(b, doc)
    else:
        _read_ppo(b, doc)
    # fsdp_config.model_dtype fp32, MixedPrecision(param_dtype=bf16): fp32 weights, bf16 compute
    b.default("precision", "bf16", "fsdp_config.mixed_precision param_dtype bf16")
    b.default("attention", "fa2", "attn_implementation flash_attention_2")
    b.default("optimizer", "adamw_torch", "optim AdamW")
    if doc.get("actor_rollout_ref.model.use_remove_padding") is not None:
        b.extras["use_remove_padding"] = doc.bool_("actor_rollout_ref.model.use_remove_padding")
    return b.build(doc, config_file=doc.path)


def override(setup: TrainingSetup, c: Change) -> tuple[Key, Any] | None:
    """The key and the value, typed as verl's config types it, that make change `c` in this run; None for a field
    verl has no key for (grad_accum follows from ppo_mini_batch_size)."""
    key = override_key(setup, c.field)
    v = c.after
    if key is None or v is None:
        return None
    tokens = setup.extras.get("max_token_len_per_gpu")
    if c.field == "micro_batch" and setup.stage != "sft" and isinstance(tokens, int) and c.before:
        # use_dynamic_bsz: micro-batches are packed up to ppo_max_token_len_per_gpu and the micro-batch in sequences
        # is not used (docs/perf/perf_tuning.rst "Tuning for Dynamic Batch Size"): the same share of the token
        # budget, one sample at least
        name = f"{_A}.ppo_max_token_len_per_gpu"
        return Key("micro_batch", name, minimum=1), max(setup.seq_len, tokens * int(v) // int(c.before))
    if isinstance(v, bool) or c.field in ("grad_ckpt", "offload_params", "offload_optimizer"):
        return key, bool(v)
    if c.field == "rollout_gpu_fraction":
        return key, float(v)
    if isinstance(v, (int, float)):
        return key, int(v)
    return None


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    """A verl run is patched as its `key=value` overrides: the plan's values, each on its key."""
    kv = override(out.setup, c)
    if kv is not None:
        out.put_key(*kv)
