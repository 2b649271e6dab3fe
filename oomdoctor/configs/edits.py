"""Canonical changes -> key edits of the user's own files, in each framework's key names.

A key already in a file is edited where it is (its Source names file and key); an absent key is inserted
next to a related key (`after_key`). ZeRO changes go to the DeepSpeed JSON, or to a new one beside the config.
"""
from __future__ import annotations

import json
import os
from typing import Any, Sequence

from oomdoctor.facts import Change, KeyEdit, TrainingSetup

_LF_ATTN = {"eager": "disabled", "sdpa": "sdpa", "fa2": "fa2"}
_HF_ATTN = {"eager": "eager", "sdpa": "sdpa", "fa2": "flash_attention_2"}
_TT_OPTIM = {"adamw_torch": "torch.optim.AdamW", "adamw_torch_fused": "torch.optim.AdamW",
             "paged_adamw_8bit": "bitsandbytes.optim.PagedAdamW8bit", "adamw_8bit": "bitsandbytes.optim.AdamW8bit",
             "adamw_bnb_8bit": "bitsandbytes.optim.AdamW8bit", "sgd": "torch.optim.SGD"}


class _Out:
    def __init__(self, setup: TrainingSetup) -> None:
        self.setup = setup
        self.edits: list[KeyEdit] = []
        self.ds_text: dict[str, Any] | None = None     # a DeepSpeed JSON being created

    def put(self, key: str, value: Any, after: str | None = None, file: str | None = None) -> None:
        """Set `key` (dotted) in `file` (default: the main config) unless that edit is already there."""
        file = file or self.setup.config_file or ""
        path = tuple(key.split("."))
        self.edits = [e for e in self.edits if not (e.file == file and e.key_path == path)]
        self.edits.append(KeyEdit(file=file, key_path=path, value=value, after_key=after))

    def has_key(self, key: str) -> bool:
        """Whether the main config holds `key` (known from any field's provenance or from the extras)."""
        cfg = self.setup.config_file
        return any(s.file == cfg and s.key == key for s in self.setup.sources.values()) or key in self.setup.extras

    def field_key(self, name: str) -> tuple[str | None, str | None]:
        s = self.setup.sources.get(name)
        return (s.file, s.key) if s is not None and s.file else (None, None)


def edits_for(setup: TrainingSetup, changes: Sequence[Change]) -> list[KeyEdit]:
    out = _Out(setup)
    final = {c.field: c.after for c in changes}
    fw = setup.framework
    for c in changes:
        if fw == "llamafactory":
            _llamafactory(out, c, final)
        elif fw == "axolotl":
            _axolotl(out, c, final)
        elif fw == "torchtune":
            _torchtune(out, c, final)
        else:
            _hf(out, c, final)
    if out.ds_text is not None:
        name = out.ds_text.pop("__file__")
        out.edits.append(KeyEdit(file=name, key_path=(), value=json.dumps(out.ds_text, indent=2) + "\n", create=True))
    return out.edits


# ---------------------------------------------------------------- DeepSpeed (shared)

def _zero(out: _Out, c: Change, final: dict[str, Any], ref_key: str, ref_after: str) -> None:
    """zero_stage / offload_optimizer / offload_params: edit the run's JSON, or create one."""
    s = out.setup
    stage = final.get("zero_stage", s.zero_stage)
    off_opt = final.get("offload_optimizer", s.offload_optimizer)
    off_par = final.get("offload_params", s.offload_params)
    if s.deepspeed_file:
        f = s.deepspeed_file
        if c.field == "zero_stage":
            out.put("zero_optimization.stage", int(c.after), file=f)
        elif c.field == "offload_optimizer":
            _ds_offload(out, f, "offload_optimizer", bool(c.after))
        elif c.field == "offload_params":
            _ds_offload(out, f, "offload_param", bool(c.after))
        return
    if out.ds_text is None:
        if s.fsdp and c.field != "zero_stage":
            return          # FSDP offload lives in the launcher config: advice, not a key here
        base = os.path.dirname(s.config_file or "")
        name = f"ds_z{stage}{'_offload' if (off_opt or off_par) else ''}_config.json"
        out.put(ref_key, name, after=ref_after)
        out.ds_text = {"__file__": os.path.join(base, name) if base else name}
    out.ds_text.update(_ds_template(stage, off_opt, off_par))


def _ds_offload(out: _Out, f: str, block: str, on: bool) -> None:
    extras = out.setup.extras.get("deepspeed") or {}
    device = "cpu" if on else "none"
    if block in (extras.get("_blocks") or ()):
        out.put(f"zero_optimization.{block}.device", device, file=f)
    else:
        out.put(f"zero_optimization.{block}", {"device": device, "pin_memory": True}, after="stage", file=f)


def _ds_template(stage: int, off_opt: bool, off_par: bool) -> dict[str, Any]:
    """A DeepSpeed JSON whose batch and precision entries follow the training config ("auto")."""
    zero: dict[str, Any] = {"stage": int(stage), "overlap_comm": False, "contiguous_gradients": True}
    if stage == 3:
        zero.update({"sub_group_size": 1_000_000_000, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
                     "stage3_param_persistence_threshold": "auto", "stage3_max_live_parameters": 1_000_000_000,
                     "stage3_max_reuse_distance": 1_000_000_000, "stage3_gather_16bit_weights_on_model_save": True})
    else:
        zero.update({"allgather_partitions": True, "allgather_bucket_size": 500_000_000, "reduce_scatter": True,
                     "reduce_bucket_size": 500_000_000})
    if off_opt:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if off_par and stage == 3:
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    return {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
            "zero_allow_untested_optimizer": True, "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"},
            "zero_optimization": zero}


def _precision(out: _Out, to: str, bf16_key: str = "bf16", fp16_key: str = "fp16", after: str | None = None) -> None:
    """bf16/fp16/fp32 as two booleans; the other flag is cleared only where the file set it."""
    if to == "bf16":
        out.put(bf16_key, True, after=fp16_key if out.has_key(fp16_key) else (after or fp16_key))
        if out.has_key(fp16_key) or out.setup.precision == "fp16":
            out.put(fp16_key, False)
    elif to == "fp16":
        out.put(fp16_key, True, after=bf16_key if out.has_key(bf16_key) else (after or bf16_key))
        if out.has_key(bf16_key) or out.setup.precision == "bf16":
            out.put(bf16_key, False)
    else:
        for k in (bf16_key, fp16_key):
            if out.has_key(k) or out.setup.precision == k[:4]:
                out.put(k, False)


# ---------------------------------------------------------------- LLaMA-Factory

def _llamafactory(out: _Out, c: Change, final: dict[str, Any]) -> None:
    v = c.after
    f = c.field
    if f == "micro_batch":
        out.put("per_device_train_batch_size", int(v), after="gradient_accumulation_steps")
    elif f == "grad_accum":
        out.put("gradient_accumulation_steps", int(v), after="per_device_train_batch_size")
    elif f == "seq_len":
        out.put("cutoff_len", int(v), after="template")
    elif f == "method":
        ftype = "lora" if v in ("lora", "qlora") else v
        out.put("finetuning_type", ftype, after="stage")
        if ftype == "lora":
            if "lora_rank" not in final and not out.has_key("lora_rank"):
                out.put("lora_rank", out.setup.lora_rank, after="finetuning_type")
            if not out.has_key("lora_target"):
                out.put("lora_target", "all", after="lora_rank")
        if v == "qlora":
            out.put("quantization_bit", int(final.get("quant_bits") or 4), after="model_name_or_path")
        elif out.setup.quant_bits and "quant_bits" not in final:
            out.put("quantization_bit", None, after="model_name_or_path")
    elif f == "lora_rank":
        out.put("lora_rank", int(v), after="finetuning_type")
    elif f == "lora_targets":
        out.put("lora_target", ",".join(v) if isinstance(v, (tuple, list)) else str(v), after="lora_rank")
    elif f == "quant_bits":
        out.put("quantization_bit", int(v) if v else None, after="model_name_or_path")
    elif f == "precision":
        _precision(out, v, after="learning_rate")
        if v != "bf16" and out.setup.pure_bf16:
            out.put("pure_bf16", False)
    elif f == "pure_bf16":
        out.put("pure_bf16", bool(v), after="bf16")
    elif f == "grad_ckpt":
        out.put("disable_gradient_checkpointing", not v, after="finetuning_type")
    elif f == "attention":
        out.put("flash_attn", _LF_ATTN.get(v, v), after="model_name_or_path")
    elif f == "fused_ce":
        out.put("enable_liger_kernel", bool(v), after="model_name_or_path")
    elif f == "optimizer":
        out.put("optim", v, after="learning_rate")
    elif f in ("zero_stage", "offload_optimizer", "offload_params"):
        _zero(out, c, final, "deepspeed", "finetuning_type")
    elif f == "eval_batch":
        out.put("per_device_eval_batch_size", int(v), after="val_size")
    elif f == "eval_accum":
        out.put("eval_accumulation_steps", int(v) if v else None, after="per_device_eval_batch_size")
    elif f == "packing":
        out.put("packing", bool(v), after="cutoff_len")
    elif f == "use_dora":
        out.put("use_dora", bool(v), after="lora_rank")
    elif f in ("galore", "badam", "apollo"):
        out.put(f"use_{f}", bool(v), after="finetuning_type")
    elif f == "use_unsloth":
        out.put("use_unsloth", bool(v), after="model_name_or_path")
    elif f == "freeze_trainable_layers":
        out.put("freeze_trainable_layers", int(v), after="finetuning_type")


# ---------------------------------------------------------------- HF TrainingArguments / TRL (YAML, JSON, CLI)

def _hf(out: _Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if out.setup.extras.get("launcher") == "accelerate":
        return _accelerate(out, c)
    if f == "micro_batch":
        out.put("per_device_train_batch_size", int(v), after="gradient_accumulation_steps")
    elif f == "grad_accum":
        out.put("gradient_accumulation_steps", int(v), after="per_device_train_batch_size")
    elif f == "seq_len":
        _, key = out.field_key("seq_len")
        out.put(key or "max_length", int(v), after="per_device_train_batch_size")
    elif f == "method":
        if v in ("lora", "qlora"):
            out.put("use_peft", True, after="model_name_or_path")
            if not out.has_key("lora_r") and "lora_rank" not in final:
                out.put("lora_r", 16, after="use_peft")
            if v == "qlora":
                out.put("load_in_4bit" if (final.get("quant_bits") or 4) == 4 else "load_in_8bit", True, after="use_peft")
        else:
            out.put("use_peft", False, after="model_name_or_path")
    elif f == "lora_rank":
        out.put("lora_r", int(v), after="use_peft")
    elif f == "quant_bits":
        out.put("load_in_4bit" if v == 4 else "load_in_8bit", bool(v), after="use_peft")
    elif f == "precision":
        _precision(out, v, after="learning_rate")
    elif f == "grad_ckpt":
        out.put("gradient_checkpointing", bool(v), after="per_device_train_batch_size")
    elif f == "attention":
        out.put("attn_implementation", _HF_ATTN.get(v, v), after="model_name_or_path")
    elif f == "fused_ce":
        out.put("use_liger_kernel", bool(v), after="bf16")
    elif f == "optimizer":
        out.put("optim", v, after="learning_rate")
    elif f in ("zero_stage", "offload_optimizer", "offload_params"):
        _zero(out, c, final, "deepspeed", "output_dir")
    elif f == "eval_batch":
        out.put("per_device_eval_batch_size", int(v), after="per_device_train_batch_size")
    elif f == "eval_accum":
        out.put("eval_accumulation_steps", int(v) if v else None, after="per_device_eval_batch_size")
    elif f == "packing":
        out.put("packing", bool(v), after="max_length")
    elif f == "load_dtype":
        out.put("dtype", {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}.get(v, v), after="model_name_or_path")


def _accelerate(out: _Out, c: Change) -> None:
    v, f = c.after, c.field
    if f == "precision":
        out.put("mixed_precision", "no" if v == "fp32" else v)
    elif f == "zero_stage":
        out.put("deepspeed_config.zero_stage", int(v))
    elif f == "offload_optimizer":
        if out.setup.fsdp:
            out.put("fsdp_config.fsdp_offload_params", bool(v))
        else:
            out.put("deepspeed_config.offload_optimizer_device", "cpu" if v else "none")
    elif f == "offload_params":
        if out.setup.fsdp:
            out.put("fsdp_config.fsdp_offload_params", bool(v))
        else:
            out.put("deepspeed_config.offload_param_device", "cpu" if v else "none")
    elif f == "n_gpus":
        out.put("num_processes", int(v))
    elif f == "grad_ckpt" and out.setup.fsdp:
        out.put("fsdp_config.fsdp_activation_checkpointing", bool(v))


# ---------------------------------------------------------------- axolotl

def _axolotl(out: _Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if f == "micro_batch":
        out.put("micro_batch_size", int(v), after="gradient_accumulation_steps")
    elif f == "grad_accum":
        out.put("gradient_accumulation_steps", int(v), after="micro_batch_size")
    elif f == "seq_len":
        out.put("sequence_len", int(v), after="output_dir")
    elif f == "method":
        if v in ("lora", "qlora"):
            out.put("adapter", v, after="base_model")
            bits = final.get("quant_bits") or 4
            if v == "qlora":
                out.put("load_in_4bit" if bits == 4 else "load_in_8bit", True, after="adapter")
            if not out.has_key("lora_r") and out.setup.sources.get("lora_rank", None) is not None \
                    and not out.setup.sources["lora_rank"].file:
                out.put("lora_r", 8, after="adapter")
                out.put("lora_alpha", 16, after="lora_r")
            if not out.has_key("lora_target_linear") and not out.has_key("lora_target_modules"):
                out.put("lora_target_linear", True, after="adapter")
        else:
            out.put("adapter", None, after="base_model")
    elif f == "lora_rank":
        out.put("lora_r", int(v), after="adapter")
    elif f == "quant_bits":
        out.put("load_in_4bit", v == 4, after="adapter")
        if v == 8 or out.has_key("load_in_8bit"):
            out.put("load_in_8bit", v == 8, after="adapter")
    elif f == "precision":
        _precision(out, v, after="gradient_checkpointing")
    elif f == "grad_ckpt":
        out.put("gradient_checkpointing", bool(v), after="micro_batch_size")
    elif f == "attention":
        _, key = out.field_key("attention")
        if key == "flash_attention" or (v == "fa2" and key in (None, "flash_attention")):
            if v == "fa2":
                out.put("flash_attention", True, after="gradient_checkpointing")
                return
            out.put("flash_attention", False)
        out.put("attn_implementation", _HF_ATTN.get(v, v), after="gradient_checkpointing")
    elif f == "fused_ce":
        out.put("chunked_cross_entropy", bool(v), after="gradient_checkpointing")
    elif f == "optimizer":
        out.put("optimizer", v, after="learning_rate")
    elif f in ("zero_stage", "offload_optimizer", "offload_params"):
        _zero(out, c, final, "deepspeed", "gradient_checkpointing")
    elif f == "eval_batch":
        out.put("eval_batch_size", int(v), after="micro_batch_size")
    elif f == "packing":
        out.put("sample_packing", bool(v), after="sequence_len")


# ---------------------------------------------------------------- torchtune

def _torchtune(out: _Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    s = out.setup
    if f == "micro_batch":
        out.put("batch_size", int(v), after="shuffle")
    elif f == "grad_accum":
        out.put("gradient_accumulation_steps", int(v), after="epochs")
    elif f == "seq_len":
        out.put("tokenizer.max_seq_len", int(v), after="path")
    elif f == "method":
        builder = str(s.extras.get("model_builder") or "")
        module, _, name = builder.rpartition(".")
        for prefix in ("qlora_", "lora_", "qdora_", "dora_"):
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        new = {"full": name, "lora": "lora_" + name, "qlora": "qlora_" + name}.get(v, name)
        out.put("model._component_", f"{module}.{new}" if module else new)
        if v in ("lora", "qlora") and "model.lora_rank" not in {src.key for src in s.sources.values()}:
            out.put("model.lora_attn_modules", ["q_proj", "v_proj", "output_proj"], after="_component_")
            out.put("model.apply_lora_to_mlp", True, after="lora_attn_modules")
            out.put("model.lora_rank", s.lora_rank, after="apply_lora_to_mlp")
            out.put("model.lora_alpha", s.lora_alpha or 2 * s.lora_rank, after="lora_rank")
    elif f == "lora_rank":
        out.put("model.lora_rank", int(v), after="_component_")
    elif f in ("precision", "load_dtype"):
        out.put("dtype", v, after="device")
    elif f == "pure_bf16" and v:
        out.put("dtype", "bf16", after="device")
    elif f == "grad_ckpt":
        out.put("enable_activation_checkpointing", bool(v), after="device")
    elif f == "fused_ce" and v:
        out.put("loss._component_", "torchtune.modules.loss.LinearCrossEntropyLoss")
    elif f == "optimizer":
        out.put("optimizer._component_", _TT_OPTIM.get(v, v))
    elif f == "packing":
        out.put("dataset.packed", bool(v), after="_component_")
    elif f in ("offload_params", "offload_optimizer") and s.fsdp:
        out.put("fsdp_cpu_offload", bool(v), after="enable_activation_offloading")
    elif f == "eval_batch":
        out.put("batch_size_val", int(v), after="dataset_val")
