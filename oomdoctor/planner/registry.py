"""The closed registry of facts a rule condition may read, and how to gather them.

A fact name is ``<namespace>.<name>``: ``setup.*`` (the training setup and values derived from it),
``crash.*`` (the parsed crash log), ``gpu.*`` (the card), ``estimate.*`` (the current estimate,
recomputed after every applied step) and ``model.*`` (the architecture). A fact that is unknown in
a given run (no crash log, an optional setting left unset) is simply absent from the facts mapping.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from oomdoctor.facts import COMPONENTS, CrashReport, Estimate, Hardware, ModelShape, TrainingSetup
from oomdoctor.records import record

# Value kinds a fact (or an action's field) may hold.
INT, FLOAT, BOOL, STR, LIST = "int", "float", "bool", "str", "list"


@record
class FactSpec:
    """A fact a rule condition may read: its name, kind and words for people."""

    name: str
    kind: str           # int | float | bool | str | list (a list of strings)
    label: str          # how a person would say it, for skip reasons
    choices: tuple[str, ...] = ()   # known values of a str fact (validated in rule files)


# Known values of the enumerated setup fields; a rule that sets or compares one of them to another
# value is a typo, caught when the rule file loads.
FIELD_CHOICES: Mapping[str, tuple[str, ...]] = {
    "method": ("full", "freeze", "lora", "qlora"),
    "precision": ("bf16", "fp16", "fp32"),
    "attention": ("eager", "sdpa", "fa2"),
    "stage": ("pt", "sft", "rm", "dpo", "kto", "ppo"),
    "framework": ("llamafactory", "hf", "trl", "axolotl", "torchtune"),
    "fsdp": ("full_shard", "shard_grad_op", "hybrid_shard"),
}

_LABELS = {
    "micro_batch": "the micro-batch", "grad_accum": "gradient accumulation", "seq_len": "the sequence length",
    "method": "the fine-tuning method", "precision": "the precision", "attention": "the attention kernel",
    "grad_ckpt": "gradient checkpointing", "fused_ce": "fused cross-entropy", "optimizer": "the optimizer",
    "zero_stage": "the ZeRO stage", "n_gpus": "the number of GPUs", "lora_rank": "the LoRA rank",
    "packing": "packing", "eval_batch": "the evaluation batch", "eval_accum": "eval_accumulation_steps",
    "offload_optimizer": "optimizer offload", "offload_params": "parameter offload", "quant_bits": "quantisation bits",
}


def _kind_of(annotation: str) -> str | None:
    """Map a TrainingSetup annotation (a string: facts.py postpones them) to a fact kind; None for
    fields rules cannot touch. `int | None` counts as int. Read as text, not through
    typing.get_type_hints, which cannot evaluate `X | None` before Python 3.10."""
    parts = [p.strip() for p in str(annotation).split("|") if p.strip() != "None"]
    return {"int": INT, "float": FLOAT, "bool": BOOL, "str": STR}.get(parts[0]) if len(parts) == 1 else None


def _setup_fields() -> dict[str, str]:
    out: dict[str, str] = {}
    for f in dataclasses.fields(TrainingSetup):
        kind = _kind_of(f.type)
        if kind is not None and f.name not in ("config_file", "deepspeed_file", "defaults_of", "framework_version"):
            out[f.name] = kind
    return out


# Canonical TrainingSetup fields an action may change, with their kinds.
SETUP_FIELDS: Mapping[str, str] = _setup_fields()


def _build_registry() -> dict[str, FactSpec]:
    reg: dict[str, FactSpec] = {}

    def add(name: str, kind: str, label: str, choices: tuple[str, ...] = ()) -> None:
        reg[name] = FactSpec(name, kind, label, choices)

    for fname, kind in SETUP_FIELDS.items():
        add(f"setup.{fname}", kind, _LABELS.get(fname, fname.replace("_", " ")), FIELD_CHOICES.get(fname, ()))
    add("setup.effective_batch", INT, "the effective batch (micro-batch x accumulation x GPUs)")
    add("setup.trainable_params", INT, "the trainable parameter count")
    add("setup.tokens_per_micro_batch", INT, "the tokens per micro-batch")
    add("setup.is_adapter", BOOL, "adapter training (LoRA/QLoRA)")

    add("model.params_total", INT, "the model's parameter count")
    add("model.vocab_size", INT, "the vocabulary size")
    add("model.hidden_size", INT, "the hidden size")
    add("model.num_layers", INT, "the number of layers")
    add("model.is_moe", BOOL, "a mixture-of-experts model")

    add("crash.present", BOOL, "a crash log")
    add("crash.kind", STR, "the crash kind")
    add("crash.phase", STR, "the phase of the crash")
    add("crash.tried_gib", FLOAT, "the failed allocation (GiB)")
    add("crash.capacity_gib", FLOAT, "the capacity the log reports (GiB)")
    add("crash.free_gib", FLOAT, "the free memory the log reports (GiB)")
    add("crash.allocated_gib", FLOAT, "the memory allocated by PyTorch (GiB)")
    add("crash.reserved_unallocated_gib", FLOAT, "the reserved-but-unallocated memory (GiB)")
    add("crash.fragmentation", FLOAT, "the share of reserved memory that is not allocated (fragmentation)")
    add("crash.diagnoses", LIST, "the log's diagnoses")
    add("crash.at_eval", BOOL, "a crash during evaluation")
    add("crash.other_processes_gib", FLOAT, "memory held by other processes (GiB)")

    add("gpu.name", STR, "the GPU")
    add("gpu.gib", FLOAT, "the GPU memory (GiB)")
    add("gpu.usable_gib", FLOAT, "the usable GPU memory (GiB)")
    add("gpu.bf16", BOOL, "bf16 support on the card")
    add("gpu.flash_attn2", BOOL, "FlashAttention-2 support on the card")
    add("gpu.n_gpus", INT, "the number of GPUs available")
    add("gpu.host_ram_gib", FLOAT, "the host memory (GiB)")

    add("estimate.peak_gib", FLOAT, "the estimated peak (GiB)")
    add("estimate.allocated_gib", FLOAT, "the estimated allocated memory (GiB)")
    add("estimate.capacity_gib", FLOAT, "the usable capacity (GiB)")
    add("estimate.over_gib", FLOAT, "how far the estimate is over budget (GiB)")
    add("estimate.fits", BOOL, "the estimate fitting")
    add("estimate.phase", STR, "the phase that sets the peak")
    add("estimate.host_ram_gib", FLOAT, "the host memory the run needs (GiB)")
    for comp in COMPONENTS:
        add(f"estimate.{comp}_gib", FLOAT, f"the {comp} memory (GiB)")
        add(f"estimate.{comp}_share", FLOAT, f"the {comp} share of the peak")
    add("estimate.model_states_gib", FLOAT, "weights + gradients + optimizer states (GiB)")
    add("estimate.model_states_share", FLOAT, "the share of weights, gradients and optimizer states")
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
        value = getattr(setup, fname)
        if value is not None:
            facts[f"setup.{fname}"] = value
    facts["setup.effective_batch"] = setup.effective_batch
    facts["setup.trainable_params"] = trainable_params(setup, shape)
    facts["setup.tokens_per_micro_batch"] = setup.micro_batch * setup.seq_len
    facts["setup.is_adapter"] = setup.method in ("lora", "qlora")

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
