"""The closed registry of facts a rule condition may read, and how to gather them.

A fact name is ``<namespace>.<name>``: ``setup.*`` (the training setup and values derived from it),
``crash.*`` (the parsed crash log), ``gpu.*`` (the card), ``estimate.*`` (the current estimate,
recomputed after every applied step) and ``model.*`` (the architecture). A fact that is unknown in
a given run (no crash log, an optional setting left unset) is simply absent from the facts mapping.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin

from oomdoctor import facts as _facts
from oomdoctor.facts import COMPONENTS, CrashReport, Estimate, Hardware, ModelShape, Msg, TrainingSetup, msg
from oomdoctor.memory.regime import regime_of
from oomdoctor.records import record

# Value kinds a fact (or an action's field) may hold.
INT, FLOAT, BOOL, STR, LIST = "int", "float", "bool", "str", "list"


@record
class FactSpec:
    """A fact a rule condition may read: its name and kind; words/plan.py names it for people."""

    name: str
    kind: str           # int | float | bool | str | list (a list of strings)
    choices: tuple[str, ...] = ()   # known values of a str fact (validated in rule files)

    @property
    def label(self) -> Msg:
        """How a person would say it, for skip reasons: words code plan.fact.<name>."""
        return msg(f"plan.fact.{self.name}")


# Known values of the enumerated setup fields; a rule that sets or compares one of them to another
# value is a typo, caught when the rule file loads.
FIELD_CHOICES: Mapping[str, tuple[str, ...]] = {
    "method": get_args(_facts.Method),
    "precision": get_args(_facts.Precision),
    "attention": ("eager", "sdpa", "fa2"),
    "stage": ("pt", "sft", "rm", "dpo", "kto", "ppo"),
    "framework": ("llamafactory", "hf", "trl", "axolotl", "torchtune", "ms-swift", "openrlhf", "verl"),
    "rollout_engine": ("vllm", "sglang", "hf"),
    "fsdp": ("full_shard", "shard_grad_op", "hybrid_shard"),
}

def _kind_of(annotation: object) -> str | None:
    """Map a TrainingSetup annotation (a string: facts.py postpones them) to a fact kind; None for
    fields rules cannot touch. `int | None` counts as int, and a Literal alias of facts.py (`Method`) as str.
    Read as text, not through typing.get_type_hints, which cannot evaluate `X | None` before Python 3.10."""
    parts = [p.strip() for p in str(annotation).split("|") if p.strip() != "None"]
    if len(parts) != 1:
        return None
    if get_origin(getattr(_facts, parts[0], None)) is Literal:
        return STR
    return {"int": INT, "float": FLOAT, "bool": BOOL, "str": STR}.get(parts[0])


def _setup_fields() -> dict[str, str]:
    out: dict[str, str] = {}
    for f in dataclasses.fields(TrainingSetup):
        kind = _kind_of(f.type)
        if kind is not None and f.name not in ("config_file", "deepspeed_file", "defaults_of", "framework_version"):
            out[f.name] = kind
    return out


# verl's hybrid-engine keys, which configs/verl.py keeps in `TrainingSetup.extras` and `Mechanisms` types:
# field -> (kind, extras key). They are facts and action fields of a verl setup only (absent for any other).
EXTRA_FIELDS: Mapping[str, tuple[str, str]] = {
    "rollout_engine": (STR, "rollout_engine"),                          # rollout.name
    "rollout_gpu_fraction": (FLOAT, "rollout_gpu_memory_utilization"),  # rollout.gpu_memory_utilization
    "rollout_sleeps": (BOOL, "verl_free_cache_engine"),                 # rollout.free_cache_engine
    "log_prob_micro_batch": (INT, "verl_log_prob_micro_batch"),         # rollout.log_prob_micro_batch_size_per_gpu
    "critic": (BOOL, "verl_critic"),
    "critic_offload_params": (BOOL, "verl_critic_offload_params"),      # critic.model.fsdp_config.param_offload
    "critic_offload_optimizer": (BOOL, "verl_critic_offload_optimizer"),
    # data.max_response_length: the sample (seq_len) less the prompt (data.max_prompt_length, configs/verl.py)
    "response_length": (INT, "verl_prompt_length"),
    "remove_padding": (BOOL, "use_remove_padding"),                     # model.use_remove_padding
    "dynamic_bsz": (BOOL, "verl_dynamic_bsz"),                          # actor.use_dynamic_bsz
    "token_budget": (INT, "max_token_len_per_gpu"),                     # actor.ppo_max_token_len_per_gpu
}

# Canonical TrainingSetup fields an action may change, with their kinds.
SETUP_FIELDS: Mapping[str, str] = {**_setup_fields(), **{n: k for n, (k, _) in EXTRA_FIELDS.items()}}


def value_of(setup: TrainingSetup, name: str) -> Any:
    """A setup field's value; a verl extras field as `Mechanisms` reads it, None when the setup is not verl's
    (or, for the log-prob micro-batch and the engine, when the config leaves them unsaid)."""
    if name not in EXTRA_FIELDS:
        return getattr(setup, name)
    if setup.framework != "verl":
        return None
    if name == "response_length":
        prompt = setup.extras.get("verl_prompt_length")
        return setup.seq_len - prompt if isinstance(prompt, int) and setup.seq_len > prompt else None
    value = getattr(setup.mechanisms, name)
    return None if name in ("log_prob_micro_batch", "rollout_engine", "token_budget") and not value else value


def with_values(setup: TrainingSetup, values: Mapping[str, Any]) -> TrainingSetup:
    """`setup` with fields changed; a verl extras field is written under its extras key."""
    extra = {EXTRA_FIELDS[n][1]: v for n, v in values.items() if n in EXTRA_FIELDS and n != "response_length"}
    plain = {n: v for n, v in values.items() if n not in EXTRA_FIELDS}
    if "response_length" in values and isinstance(setup.extras.get("verl_prompt_length"), int):
        plain["seq_len"] = setup.extras["verl_prompt_length"] + values["response_length"]
    if extra:
        plain["extras"] = {**setup.extras, **extra}
    return setup.with_changes(**plain) if plain else setup


def _build_registry() -> dict[str, FactSpec]:
    reg: dict[str, FactSpec] = {}

    def add(name: str, kind: str, choices: tuple[str, ...] = ()) -> None:
        reg[name] = FactSpec(name, kind, choices)

    for fname, kind in SETUP_FIELDS.items():
        add(f"setup.{fname}", kind, FIELD_CHOICES.get(fname, ()))
    add("setup.effective_batch", INT)
    add("setup.trainable_params", INT)
    add("setup.tokens_per_micro_batch", INT)
    add("setup.is_adapter", BOOL)
    add("setup.base_dtype", STR, ("bf16", "fp16", "fp32", "fp8"))

    add("model.params_total", INT)
    add("model.vocab_size", INT)
    add("model.hidden_size", INT)
    add("model.num_layers", INT)
    add("model.is_moe", BOOL)

    add("crash.present", BOOL)
    add("crash.kind", STR)
    add("crash.phase", STR)
    add("crash.tried_gib", FLOAT)
    add("crash.capacity_gib", FLOAT)
    add("crash.free_gib", FLOAT)
    add("crash.allocated_gib", FLOAT)
    add("crash.reserved_unallocated_gib", FLOAT)
    add("crash.fragmentation", FLOAT)
    add("crash.diagnoses", LIST)
    add("crash.at_eval", BOOL)
    add("crash.other_processes_gib", FLOAT)

    add("gpu.name", STR)
    add("gpu.gib", FLOAT)
    add("gpu.usable_gib", FLOAT)
    add("gpu.bf16", BOOL)
    add("gpu.flash_attn2", BOOL)
    add("gpu.n_gpus", INT)
    add("gpu.host_ram_gib", FLOAT)

    add("estimate.peak_gib", FLOAT)
    add("estimate.allocated_gib", FLOAT)
    add("estimate.capacity_gib", FLOAT)
    add("estimate.over_gib", FLOAT)
    add("estimate.fits", BOOL)
    add("estimate.phase", STR)
    add("estimate.host_ram_gib", FLOAT)
    for comp in COMPONENTS:
        add(f"estimate.{comp}_gib", FLOAT)
        add(f"estimate.{comp}_share", FLOAT)
    add("estimate.model_states_gib", FLOAT)
    add("estimate.model_states_share", FLOAT)
    return reg


FACTS: Mapping[str, FactSpec] = _build_registry()

# LoRA adapts these projections; "all" means every linear layer of the blocks (not lm_head).
_PROJ_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def _base_params(shape: ModelShape) -> int:
    if shape.params_total:
        return int(shape.params_total)
    h, L = shape.hidden_size, shape.num_layers
    return L * sum(i * o for i, o in _linear_dims(shape).values()) + shape.vocab_size * h * (
        1 if shape.tie_word_embeddings else 2)


def _linear_dims(shape: ModelShape) -> dict[str, tuple[int, int]]:
    h, hd = shape.hidden_size, shape.head_dim_
    q, kv = shape.num_heads * hd, shape.num_kv_heads * hd
    inter = shape.intermediate_size
    dims = {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h),
            "gate_proj": (h, inter), "up_proj": (h, inter), "down_proj": (inter, h)}
    if not shape.gated_mlp:
        dims.pop("gate_proj")
    return dims


def trainable_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """Parameters that receive gradients: all of them (full), the adapters (LoRA: r*(in+out) per
    adapted linear, Hu et al. 2021), or the last/first layers (freeze)."""
    total = _base_params(shape)
    if setup.method in ("lora", "qlora"):
        dims = _linear_dims(shape)
        targets = dims.keys() if "all" in setup.lora_targets else [t for t in setup.lora_targets if t in dims]
        return shape.num_layers * sum(setup.lora_rank * (dims[t][0] + dims[t][1]) for t in targets)
    if setup.method == "freeze":
        layers = min(abs(setup.freeze_trainable_layers), shape.num_layers)
        return int(total * layers / max(1, shape.num_layers))
    return total


def gather(setup: TrainingSetup, shape: ModelShape, hw: Hardware, crash: CrashReport | None,
           est: Estimate | None) -> dict[str, Any]:
    """The facts of one moment of planning. Unknown values are left out (they are 'missing')."""
    facts: dict[str, Any] = {}
    for fname in SETUP_FIELDS:
        value = value_of(setup, fname)
        if value is not None:
            facts[f"setup.{fname}"] = value
    facts["setup.effective_batch"] = setup.effective_batch
    facts["setup.trainable_params"] = trainable_params(setup, shape)
    facts["setup.tokens_per_micro_batch"] = setup.micro_batch * setup.seq_len
    facts["setup.is_adapter"] = setup.method in ("lora", "qlora")
    # the dtype the checkpoint's weights are held in, as the framework resolves it (an explicit dtype, else
    # the framework's rule: from_pretrained loads fp32 unless told otherwise, transformers 4.x modeling_utils)
    facts["setup.base_dtype"] = regime_of(setup, shape).load_dtype

    facts["model.params_total"] = _base_params(shape)
    facts["model.vocab_size"] = shape.vocab_size
    facts["model.hidden_size"] = shape.hidden_size
    facts["model.num_layers"] = shape.num_layers
    facts["model.is_moe"] = shape.num_experts > 0

    facts["crash.present"] = crash is not None and bool(crash.events)
    if crash is not None:
        facts["crash.diagnoses"] = tuple(crash.diagnoses)
        event = crash.primary
        phases = {e.phase for e in crash.events if e.phase}
        facts["crash.at_eval"] = "eval" in phases or "eval" in crash.diagnoses
        if event is not None:
            facts["crash.kind"] = event.kind
            for name in ("phase", "tried_gib", "capacity_gib", "free_gib", "allocated_gib",
                         "reserved_unallocated_gib", "other_processes_gib"):
                value = getattr(event, name)
                if value is not None:
                    facts[f"crash.{name}"] = value
            alloc, spare = event.allocated_gib, event.reserved_unallocated_gib
            if alloc is not None and spare is not None and alloc + spare > 0:
                facts["crash.fragmentation"] = spare / (alloc + spare)

    facts["gpu.name"] = hw.gpu
    if hw.gpu_gib > 0:
        facts["gpu.gib"] = hw.gpu_gib
        facts["gpu.usable_gib"] = hw.usable_gib
    facts["gpu.bf16"] = hw.bf16
    facts["gpu.flash_attn2"] = hw.flash_attn2
    facts["gpu.n_gpus"] = hw.n_gpus
    if hw.host_ram_gib is not None:
        facts["gpu.host_ram_gib"] = hw.host_ram_gib

    if est is not None:
        peak = est.peak_gib
        facts["estimate.peak_gib"] = peak
        facts["estimate.allocated_gib"] = est.allocated_gib
        facts["estimate.capacity_gib"] = est.capacity_gib
        facts["estimate.over_gib"] = peak - est.capacity_gib * (1.0 - est.headroom)
        facts["estimate.fits"] = est.fits
        facts["estimate.phase"] = est.phase
        facts["estimate.host_ram_gib"] = est.host_ram_gib
        for comp in COMPONENTS:
            gib = float(est.components.get(comp, 0.0))
            facts[f"estimate.{comp}_gib"] = gib
            facts[f"estimate.{comp}_share"] = gib / peak if peak > 0 else 0.0
        states = sum(float(est.components.get(c, 0.0)) for c in ("weights", "gradients", "optimizer"))
        facts["estimate.model_states_gib"] = states
        facts["estimate.model_states_share"] = states / peak if peak > 0 else 0.0
    return facts
