"""HF TrainingArguments and TRL SFTConfig/DPOConfig (+ TRL ModelConfig) as YAML, JSON or a command line.

Defaults from transformers 4.57 training_args.py and TRL 0.23 base_config.py / sft_config.py
(reference config-formats.md §3): batch 8, no GC and no AMP in plain HF; TRL turns GC and bf16 on,
truncates at max_length 1024 and loads a model given by name in float32.
"""
from __future__ import annotations

from typing import Any

from oomdoctor.configs._doc import Builder, Doc
from oomdoctor.facts import Source, TrainingSetup

HF_VERSION = "4.57"
TRL_VERSION = "0.23"

# Keys only TRL configs (SFT/DPO/ModelConfig/ScriptArguments) have.
TRL_KEYS = frozenset("""
dataset_name dataset_text_field max_length max_seq_length packing packing_strategy padding_free use_peft
lora_r lora_alpha lora_target_modules load_in_4bit load_in_8bit model_init_kwargs completion_only_loss
assistant_only_loss loss_type beta max_prompt_length activation_offloading dataset_config dataset_train_split
torch_dtype attn_implementation use_bnb_nested_quant
""".split())

_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
           "float32": "fp32", "fp32": "fp32", "float": "fp32", "auto": None}
_ATTN = {"eager": "eager", "sdpa": "sdpa", "flash_attention_2": "fa2", "flash_attention_3": "fa2",
         "kernels-community/flash-attn": "fa2", "kernels-community/vllm-flash-attn3": "fa2", "flex_attention": "sdpa"}


def read_trainer_args(b: Builder, doc: Doc) -> dict[str, Any]:
    """The TrainingArguments every HF-based framework inherits. Returns the values DeepSpeed "auto" takes."""
    b.from_doc("micro_batch", doc, "per_device_train_batch_size", doc.int_("per_device_train_batch_size")) or \
        b.default("micro_batch", 8, "per_device_train_batch_size")
    b.from_doc("grad_accum", doc, "gradient_accumulation_steps", doc.int_("gradient_accumulation_steps")) or \
        b.default("grad_accum", 1)
    b.from_doc("eval_batch", doc, "per_device_eval_batch_size", doc.int_("per_device_eval_batch_size")) or \
        b.default("eval_batch", 8, "per_device_eval_batch_size")
    b.from_doc("eval_accum", doc, "eval_accumulation_steps", doc.int_("eval_accumulation_steps"))
    for name, value in (("micro_batch", b.values["micro_batch"]), ("grad_accum", b.values["grad_accum"]),
                        ("eval_batch", b.values["eval_batch"])):
        if value < 1:
            key = b.sources[name].key or name
            raise doc.fail(key, f"{key} must be at least 1, got {value}")
    optim = doc.str_("optim")
    if optim:
        b.set("optimizer", optim.lower(), doc.src("optim"))
    elif doc.bool_("adafactor"):
        b.set("optimizer", "adafactor", doc.src("adafactor"))
    else:
        b.default("optimizer", "adamw_torch", "adamw_torch_fused when torch >= 2.8; same memory")
    bf16, fp16 = doc.bool_("bf16"), doc.bool_("fp16")
    if bf16:
        b.set("precision", "bf16", doc.src("bf16"))
    elif fp16:
        b.set("precision", "fp16", doc.src("fp16"))
    gc_key = "gradient_checkpointing" if doc.has("gradient_checkpointing") else "activation_checkpointing"
    b.from_doc("grad_ckpt", doc, gc_key, doc.bool_(gc_key))
    b.from_doc("fused_ce", doc, "use_liger_kernel", doc.bool_("use_liger_kernel"))
    strategy = doc.str_("eval_strategy") or doc.str_("evaluation_strategy")
    skey = "eval_strategy" if doc.has("eval_strategy") else "evaluation_strategy"
    if doc.bool_("do_eval") is not None:
        b.set("do_eval", bool(doc.bool_("do_eval")), doc.src("do_eval"))
    if strategy and strategy.lower() != "no":
        b.set("do_eval", True, doc.src(skey))
    fsdp = doc.get("fsdp")
    if fsdp:
        words = fsdp if isinstance(fsdp, list) else str(fsdp).split()
        words = [str(w).lower() for w in words]
        mode = next((w for w in words if w in ("full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2")), None)
        if mode or str(fsdp).lower() == "true":
            b.set("fsdp", (mode or "full_shard").replace("hybrid_shard_zero2", "hybrid_shard"), doc.src("fsdp"))
        if "offload" in words:
            b.set("offload_params", True, doc.src("fsdp"))
            b.set("offload_optimizer", True, doc.src("fsdp"))
    fcfg = doc.get("fsdp_config")
    if isinstance(fcfg, dict):
        for key in ("offload_params", "fsdp_offload_params", "cpu_offload"):
            if fcfg.get(key) is not None and doc.bool_(f"fsdp_config.{key}") is not None:
                b.set("offload_params", bool(doc.bool_(f"fsdp_config.{key}")), doc.src(f"fsdp_config.{key}"))
                b.set("offload_optimizer", bool(doc.bool_(f"fsdp_config.{key}")), doc.src(f"fsdp_config.{key}"))
    b.keep(doc, ("num_train_epochs", "max_steps", "eval_strategy", "evaluation_strategy", "eval_steps", "save_steps",
                 "torch_compile", "auto_find_batch_size", "gradient_checkpointing_kwargs", "output_dir",
                 "bf16_full_eval", "fp16_full_eval", "torch_empty_cache_steps", "group_by_length", "fsdp_config"))
    return {"micro_batch": b.values["micro_batch"], "grad_accum": b.values["grad_accum"], "bf16": bool(bf16),
            "fp16": bool(fp16)}


def is_trl(doc: Doc) -> bool:
    return any(k in TRL_KEYS for k in doc.data)


def load_hf(doc: Doc, framework_version: str | None) -> TrainingSetup:
    from oomdoctor.configs import deepspeed as ds

    trl = is_trl(doc)
    version = framework_version or (TRL_VERSION if trl else HF_VERSION)
    b = Builder("trl" if trl else "hf", version, f"TRL {version}" if trl else f"transformers {version}")
    model_key = next((k for k in ("model_name_or_path", "model", "model_id") if doc.str_(k)), None)
    if model_key is None:
        raise doc.fail("", "no model_name_or_path in this training config")
    b.set("model", doc.str_(model_key), doc.src(model_key))
    hf = read_trainer_args(b, doc)
    if trl:
        _read_trl(b, doc, version)
    else:
        for key in ("max_seq_length", "max_length", "model_max_length", "block_size"):
            if b.from_doc("seq_len", doc, key, doc.int_(key)):
                break
        else:
            b.default("seq_len", 2048, "no sequence length in TrainingArguments: the script decides; assumed 2048")
        if "grad_ckpt" not in b.values:
            b.default("grad_ckpt", False)
        if "precision" not in b.values:
            b.default("precision", "fp32", "no bf16/fp16: no autocast")
        b.default("method", "full")
        attn = doc.str_("attn_implementation")
        if attn:
            b.set("attention", _ATTN.get(attn.lower(), "sdpa"), doc.src("attn_implementation"))
    if doc.has("stage") and doc.str_("stage") in ("sft", "dpo", "kto", "ppo", "rm", "pt"):
        b.set("stage", doc.str_("stage"), doc.src("stage"))
    elif trl and (doc.has("beta") or doc.has("max_prompt_length")):
        b.default("stage", "dpo", "DPO keys (beta / max_prompt_length) present")
    fields = {"config_file": doc.path}
    ref = doc.str_("deepspeed")
    if ref:
        path, shipped = ds.find_deepspeed(ref, doc, "deepspeed")
        ds.apply_deepspeed(b, path, shipped, doc.src("deepspeed"), hf, b.values["model"])
        fields["deepspeed_file"] = path
    n = doc.int_("nproc_per_node")
    if n:
        b.set("n_gpus", n, doc.src("nproc_per_node"))
    return b.build(**fields)


def _read_trl(b: Builder, doc: Doc, version: str) -> None:
    for key in ("max_length", "max_seq_length"):
        if b.from_doc("seq_len", doc, key, doc.int_(key)):
            break
    else:
        b.default("seq_len", 1024, "max_length")
    b.from_doc("packing", doc, "packing", doc.bool_("packing"))
    if "grad_ckpt" not in b.values:
        b.default("grad_ckpt", True, "gradient_checkpointing is on since TRL 0.22")
    if "precision" not in b.values:
        if doc.bool_("fp16"):
            b.set("precision", "fp16", doc.src("fp16"))
        else:
            b.default("precision", "bf16", "bf16 = not fp16")
    # ModelConfig: LoRA / QLoRA, load dtype and attention.
    peft = doc.bool_("use_peft")
    if peft:
        b.set("method", "lora", doc.src("use_peft"))
        b.from_doc("lora_rank", doc, "lora_r", doc.int_("lora_r")) or b.default("lora_rank", 16, "lora_r")
        b.from_doc("lora_alpha", doc, "lora_alpha", doc.int_("lora_alpha")) or b.default("lora_alpha", 32, "lora_alpha")
        targets = doc.get("lora_target_modules")
        if targets:
            tl = (targets,) if isinstance(targets, str) else tuple(str(t) for t in targets)
            b.set("lora_targets", ("all",) if tl in (("all-linear",), ("all",)) else tl, doc.src("lora_target_modules"))
        for bits, key in ((4, "load_in_4bit"), (8, "load_in_8bit")):
            if doc.bool_(key):
                b.set("method", "qlora", doc.src(key))
                b.set("quant_bits", bits, doc.src(key))
        b.from_doc("use_dora", doc, "use_dora", doc.bool_("use_dora"))
    else:
        b.default("method", "full", "use_peft false")
    dkey = next((k for k in ("dtype", "torch_dtype", "model_init_kwargs.dtype", "model_init_kwargs.torch_dtype")
                 if doc.str_(k)), None)
    if dkey and _DTYPES.get(doc.str_(dkey).lower()):
        b.set("load_dtype", _DTYPES[doc.str_(dkey).lower()], doc.src(dkey))
    elif dkey is None:
        b.default("load_dtype", "fp32", "a model given by name loads in float32")
    akey = next((k for k in ("attn_implementation", "model_init_kwargs.attn_implementation") if doc.str_(k)), None)
    if akey:
        b.set("attention", _ATTN.get(doc.str_(akey).lower(), "sdpa"), doc.src(akey))
    loss = (doc.str_("loss_type") or "").lower()
    if loss == "chunked_nll":
        b.set("fused_ce", True, doc.src("loss_type"))
    b.keep(doc, ("loss_type", "padding_free", "packing_strategy", "activation_offloading", "max_prompt_length",
                 "beta", "dataset_name", "completion_only_loss"))
    if doc.bool_("activation_offloading"):
        b.extras["activation_offloading"] = True


def load_cli(doc: Doc, framework_version: str | None) -> TrainingSetup:
    """A command line: LLaMA-Factory flags go to that reader, the rest to HF/TRL."""
    from oomdoctor.configs.llamafactory import LF_ONLY_KEYS, load_llamafactory

    if any(k in LF_ONLY_KEYS for k in doc.data):
        return load_llamafactory(doc, framework_version)
    setup = load_hf(doc, framework_version)
    return setup

