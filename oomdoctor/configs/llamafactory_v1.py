"""LLaMA-Factory's v1 format (hiyouga/LLaMA-Factory src/llamafactory/v1/config/*.py, examples/v1/): `model:` a hub
id or path, plugin blocks (`peft_config`, `quant_config`, `dist_config`, `kernel_config`), `micro_batch_size`,
`global_batch_size`, `cutoff_len`, `bf16` (on by default), `enable_activation_checkpointing` (on by default),
`cp_size`. It is read by naming each v1 key by its v0 counterpart and handing that to the LLaMA-Factory reader,
then putting the v1 key names back into the provenance; what v1 sets differently from v0 is set here:

- ModelArguments: model, flash_attn (eager | sdpa | flash_attention_2; sdpa by default), trust_remote_code;
- peft_config (plugins/model_plugins/peft.py LoraParams): name lora | freeze, r 8, lora_alpha 16 (not v0's
  2 × rank), target_modules "all", use_dora; no peft_config: a full fine-tune;
- quant_config (plugins/model_plugins/quantization.py): name bnb | auto, quantization_bit (bnb: 4 when unset);
- dist_config: name fsdp2 | fsdpturbo (FSDP, full shard) | deepspeed (config_file: its JSON);
- TrainingArguments: micro_batch_size 1, global_batch_size None (= data-parallel size × micro-batch: no
  accumulation), cutoff_len 2048, bf16 True, enable_activation_checkpointing True, cp_size 1;
  batching_strategy normal | dynamic_batching (padded rows) | padding_free | dynamic_padding_free (a micro-batch's
  samples packed into one row without padding: packing).

The stage is the command's (`llamafactory-cli sft|dpo|rm x.yaml`), not the file's: SFT when the file is given
alone. No patch is written into a v1 file yet (its keys are not v0's): the plan's values are shown to set by hand.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from oomdoctor.configs._doc import Doc
from oomdoctor.configs.registry import LF_V1_ONLY
from oomdoctor.errors import InputError
from oomdoctor.facts import Source, TrainingSetup, msg

_ATTENTION = {"flash_attention_2": "fa2", "flash_attention_3": "fa3", "sdpa": "sdpa", "eager": "disabled"}


def readable(data: Mapping[str, Any]) -> bool:
    """v1 with `model:` a hub id or a path (an early draft's `model:` mapping is not read)."""
    return isinstance(data.get("model"), str)


def _block(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _translate_peft(put: Callable[[str, Any, str], None], out: dict[str, Any], peft: dict[str, Any]) -> None:
    """peft_config: LoRA (r 8, alpha 16, target_modules "all" by default), freeze, or none (a full fine-tune)."""
    name = str(peft.get("name", "")).lower() if peft else ""
    if name in ("lora", "freeze"):
        put("finetuning_type", name, "peft_config.name")
    else:
        out["finetuning_type"] = "full"
    if name != "lora" or not peft:
        return
    put("lora_rank", peft.get("r", 8), "peft_config.r" if "r" in peft else "peft_config.name")
    put("lora_alpha", peft.get("lora_alpha", 16), "peft_config.lora_alpha" if "lora_alpha" in peft
        else "peft_config.name")
    targets = peft.get("target_modules", "all")
    put("lora_target", ",".join(targets) if isinstance(targets, list) else targets,
        "peft_config.target_modules" if "target_modules" in peft else "peft_config.name")
    if "use_dora" in peft:
        put("use_dora", peft["use_dora"], "peft_config.use_dora")


def _translate_quant(put: Callable[[str, Any, str], None], quant: dict[str, Any]) -> None:
    if not quant:
        return
    bits = quant.get("quantization_bit")
    if bits is None and str(quant.get("name", "bnb")).lower() == "bnb":
        bits = 4            # quantization_bnb: "default to 4-bit quantization"
    if bits is not None:
        put("quantization_bit", bits, "quant_config.quantization_bit" if "quantization_bit" in quant
            else "quant_config.name")
    if "double_quantization" in quant:
        put("double_quantization", quant["double_quantization"], "quant_config.double_quantization")


def translate(doc: Doc) -> tuple[Doc, dict[str, str]]:
    """(a v0 LLaMA-Factory Doc saying what the v1 file says, v0 key -> the v1 key it came from)."""
    data = doc.data
    out: dict[str, Any] = {"stage": "sft", "do_train": True}
    origin: dict[str, str] = {}

    def put(v0: str, value: Any, v1: str) -> None:
        out[v0] = value
        origin[v0] = v1

    put("model_name_or_path", data.get("model"), "model")
    if "trust_remote_code" in data:
        put("trust_remote_code", data["trust_remote_code"], "trust_remote_code")
    if "flash_attn" in data:
        word = str(data["flash_attn"]).lower()
        put("flash_attn", _ATTENTION.get(word, word), "flash_attn")
    else:
        out["flash_attn"] = "sdpa"
    _translate_peft(put, out, _block(data, "peft_config"))
    _translate_quant(put, _block(data, "quant_config"))
    dist = _block(data, "dist_config")
    dist_name = str(dist.get("name", "")).lower() if dist else ""
    if dist_name == "deepspeed" and dist.get("config_file"):
        put("deepspeed", dist["config_file"], "dist_config.config_file")
    elif dist_name.startswith("fsdp"):
        put("fsdp", "full_shard", "dist_config.name")
    put("per_device_train_batch_size", data.get("micro_batch_size", 1),
        "micro_batch_size" if "micro_batch_size" in data else "")
    micro = data.get("micro_batch_size", 1)
    total = data.get("global_batch_size")
    if isinstance(total, int) and isinstance(micro, int) and micro > 0 and total >= micro:
        # global = data-parallel size × micro × accumulation; one process is assumed until GPUs are known
        put("gradient_accumulation_steps", total // micro, "global_batch_size")
    else:
        out["gradient_accumulation_steps"] = 1
    put("cutoff_len", data.get("cutoff_len", 2048), "cutoff_len" if "cutoff_len" in data else "")
    # v1 plugins/trainer_plugins/batching.py: the padding-free batchers concatenate a micro-batch's samples into one
    # row (_pack_padding_free_samples), up to micro_batch_size × cutoff_len tokens: v0's packing
    if str(data.get("batching_strategy", "")).lower() in ("padding_free", "dynamic_padding_free"):
        put("packing", True, "batching_strategy")
    bf16 = data.get("bf16", True)
    put("bf16", bf16, "bf16" if "bf16" in data else "")
    ckpt = data.get("enable_activation_checkpointing", True)
    put("disable_gradient_checkpointing", not bool(ckpt) if isinstance(ckpt, bool) else ckpt,
        "enable_activation_checkpointing" if "enable_activation_checkpointing" in data else "")
    for key in ("output_dir", "learning_rate", "max_steps", "num_train_epochs"):
        if key in data:
            put(key, data[key], key)
    lines = {v0: doc.lines[v1] for v0, v1 in origin.items() if v1 and v1 in doc.lines}
    translated = Doc(doc.path, out, lines, doc.kind, doc.tolerant, list(doc.notes), dict(doc.files), dict(doc.inline),
                     doc.header)
    return translated, {k: v for k, v in origin.items() if v}


def finish(setup: TrainingSetup, doc: Doc, origin: Mapping[str, str]) -> TrainingSetup:
    """The setup read from the translation, with the v1 key names in its provenance, the v1-only facts
    (context parallelism, FSDP) and a note that no patch is written into a v1 file."""
    sources = {}
    default = Source(default=msg("config.default.of", framework="LLaMA-Factory v1"))
    for name, src in setup.sources.items():
        if src.file == doc.path:
            # a v1 key the file has, under its own name; a value the translation filled in is v1's default
            v1 = origin.get(src.key or "")
            src = replace(src, key=v1, line=doc.lines.get(v1, src.line)) if v1 else default
        sources[name] = src
    values: dict[str, Any] = {}
    cp = doc.data.get("cp_size")
    if isinstance(cp, int) and not isinstance(cp, bool) and cp > 1:
        values["seq_parallel"] = cp
        sources["seq_parallel"] = Source(file=doc.path, key="cp_size", line=doc.lines.get("cp_size"))
    if "fsdp" in origin and setup.fsdp is None:
        values["fsdp"] = "full_shard"
        sources["fsdp"] = Source(file=doc.path, key="dist_config.name", line=doc.lines.get("dist_config.name"))
    warnings = (*setup.warnings, msg("config.lf_v1_read", where=doc.path))
    extras = {**setup.extras, "llamafactory_v1": True}
    return replace(setup, sources=sources, extras=extras, warnings=warnings,
                   framework_reason=msg("config.why.lf_v1", keys=", ".join(k for k in LF_V1_ONLY if k in doc.data)),
                   **values)


def read(doc: Doc, *, framework_version: str | None = None,
         log_versions: Mapping[str, str] | None = None) -> TrainingSetup:
    """A v1 file read through the LLaMA-Factory reader; an early draft whose `model:` is a mapping is refused
    in one line."""
    from oomdoctor.configs import registry

    if not readable(doc.data):
        raise InputError(msg("config.lf_v1"), doc.path, doc.lines.get("model"))
    translated, origin = translate(doc)
    setup = registry.read_doc(translated, "llamafactory", None, framework_version=framework_version,
                              log_versions=log_versions)
    return finish(setup, doc, origin)
