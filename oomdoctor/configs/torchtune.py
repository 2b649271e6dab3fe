"""torchtune recipe YAML (OmegaConf, `_component_` builders). Keys read with `cfg.get(k, d)` default to d,
keys read as `cfg.k` are required (torchtune bd2a0fc recipes; reference config-formats.md §5).
The whole model and optimizer state live in `dtype` (no AMP, no fp32 master copy)."""
from __future__ import annotations

import re

from oomdoctor.configs._doc import Builder, Doc
from oomdoctor.facts import Source, TrainingSetup

TORCHTUNE_VERSION = "0.6"

_DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "fp32": "fp32", "float32": "fp32"}
_OPTIM = {"adamw": "adamw_torch", "adam": "adamw_torch", "pagedadamw8bit": "paged_adamw_8bit",
          "adamw8bit": "adamw_8bit", "pagedadamw": "paged_adamw_32bit", "sgd": "sgd", "adafactor": "adafactor",
          "lion": "lion_32bit", "adamw4bit": "adamw_torch_4bit"}
_CHUNKED_LOSSES = ("LinearCrossEntropyLoss", "CEWithChunkedOutputLoss", "ChunkedCrossEntropyLoss")


def _interpolate(doc: Doc) -> None:
    """Resolve `${key}` references to top-level scalars, as OmegaConf would."""
    def sub(value):
        if isinstance(value, str):
            m = re.fullmatch(r"\$\{([\w.]+)\}", value.strip())
            if m:
                return doc.get(m.group(1), value)
        if isinstance(value, dict):
            return {k: sub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [sub(v) for v in value]
        return value
    doc.data = {k: sub(v) for k, v in doc.data.items()}


def model_from_builder(builder: str) -> str:
    """torchtune builder -> a model name the catalog resolves: qlora_llama3_1_8b -> meta-llama/Llama-3.1-8B.

    "qwen2_5_1_5b" could be Qwen2.5-1.5B or Qwen2-5.1.5B: both readings are tried against the catalog."""
    from oomdoctor.models import _catalog_id

    name = builder.rsplit(".", 1)[-1]
    name = re.sub(r"^(q?lora|q?dora)_", "", name)
    tokens = name.split("_")
    suffix: list[str] = []
    while tokens and not re.fullmatch(r"\d+b|\d+x\d+b", tokens[-1]):
        suffix.insert(0, tokens.pop())
    if not tokens:
        return name
    size = tokens.pop()
    tail = "".join("-" + s for s in suffix)
    readings = []
    if len(tokens) > 1 and tokens[-1].isdigit():
        readings.append((tokens[:-1], tokens[-1] + "." + size))      # decimal size: 1_5b -> 1.5b
    readings.append((tokens, size))
    for fam, sz in readings:
        short = fam[0] + "".join("." + t for t in fam[1:]) + "-" + sz + tail
        found = _catalog_id(short, loose=True)
        if found:
            return found
    fam, sz = readings[-1]
    return fam[0] + "".join("." + t for t in fam[1:]) + "-" + sz + tail


def load_torchtune(doc: Doc, framework_version: str | None) -> TrainingSetup:
    version = framework_version or TORCHTUNE_VERSION
    b = Builder("torchtune", version, f"torchtune {version}")
    _interpolate(doc)
    builder = doc.str_("model._component_")
    ckpt_dir = doc.str_("checkpointer.checkpoint_dir")
    import os

    if ckpt_dir and os.path.isfile(os.path.join(os.path.expanduser(ckpt_dir), "config.json")):
        b.set("model", ckpt_dir, doc.src("checkpointer.checkpoint_dir"))
    else:
        b.set("model", model_from_builder(builder), doc.src("model._component_"))
    b.extras["model_builder"] = builder
    b.default("stage", "sft")
    short = builder.rsplit(".", 1)[-1]
    if short.startswith(("qlora_", "qdora_")):
        b.set("method", "qlora", doc.src("model._component_"))
        b.set("quant_bits", 4, doc.src("model._component_"))
    elif short.startswith(("lora_", "dora_")):
        b.set("method", "lora", doc.src("model._component_"))
    else:
        b.set("method", "full", doc.src("model._component_"))
    if short.startswith(("dora_", "qdora_")) or doc.bool_("model.use_dora"):
        b.set("use_dora", True, doc.src("model._component_"))
    if b.values["method"] != "full":
        b.from_doc("lora_rank", doc, "model.lora_rank", doc.int_("model.lora_rank")) or \
            b.default("lora_rank", 8, "builder lora_rank")
        b.from_doc("lora_alpha", doc, "model.lora_alpha", doc.int_("model.lora_alpha")) or \
            b.default("lora_alpha", 16, "builder lora_alpha")
        attn = doc.get("model.lora_attn_modules")
        if isinstance(attn, list):
            targets = [str(t) for t in attn]
            if doc.bool_("model.apply_lora_to_mlp"):
                targets += ["w1", "w2", "w3"]
            if doc.bool_("model.apply_lora_to_output"):
                targets.append("output")
            b.set("lora_targets", tuple(targets), doc.src("model.lora_attn_modules"))

    for key, name in (("batch_size", "micro_batch"), ("gradient_accumulation_steps", "grad_accum")):
        value = doc.int_(key)
        if value is None:
            if key == "batch_size":
                raise doc.fail("", "batch_size is required in a torchtune recipe config")
            b.default(name, 1, f"{key} missing (the recipe requires it)")
        else:
            if value < 1:
                raise doc.fail(key, f"{key} must be at least 1, got {value}")
            b.set(name, value, doc.src(key))
    seq = doc.int_("tokenizer.max_seq_len")
    b.from_doc("seq_len", doc, "tokenizer.max_seq_len", seq) or \
        b.default("seq_len", 2048, "tokenizer.max_seq_len null: no truncation, the longest sample decides; assumed 2048")
    b.from_doc("packing", doc, "dataset.packed", doc.bool_("dataset.packed")) or b.default("packing", False)

    dtype = doc.str_("dtype")
    if dtype:
        if dtype.lower() not in _DTYPES:
            raise doc.fail("dtype", f"dtype must be bf16, fp16 or fp32, got {dtype!r}")
        prec = _DTYPES[dtype.lower()]
        b.set("precision", prec, doc.src("dtype"))
        b.set("load_dtype", prec, doc.src("dtype"))
        b.set("pure_bf16", prec == "bf16", doc.src("dtype"))
    else:
        b.default("precision", "fp32", "dtype unset: fp32 (training.get_dtype)")
        b.default("load_dtype", "fp32", "dtype unset")

    b.from_doc("grad_ckpt", doc, "enable_activation_checkpointing", doc.bool_("enable_activation_checkpointing")) or \
        b.default("grad_ckpt", False, "enable_activation_checkpointing")
    if doc.bool_("enable_activation_offloading"):
        b.extras["activation_offloading"] = True
    b.default("attention", "sdpa", "torchtune attention uses scaled_dot_product_attention")

    opt = doc.str_("optimizer._component_")
    if opt:
        cls = opt.rsplit(".", 1)[-1].lower()
        name = _OPTIM.get(cls, cls)
        if name == "adamw_torch" and doc.bool_("optimizer.fused"):
            name = "adamw_torch_fused"
        if "torchao" in opt and "8bit" in cls:
            name = "adamw_torch_8bit"
        b.set("optimizer", name, doc.src("optimizer._component_"))
    else:
        b.default("optimizer", "adamw_torch")
    loss = doc.str_("loss._component_") or ""
    if loss.rsplit(".", 1)[-1] in _CHUNKED_LOSSES:
        b.set("fused_ce", True, doc.src("loss._component_"))
    if doc.bool_("optimizer_in_bwd"):
        b.extras["optimizer_in_bwd"] = True

    # Distributed recipes shard with FSDP2 (full_finetune_distributed / lora_finetune_distributed).
    distributed = any(doc.has(k) for k in ("fsdp_cpu_offload", "custom_sharded_layers", "fsdp_reshard_after_forward"))
    if distributed:
        reshard = doc.bool_("fsdp_reshard_after_forward")
        b.set("fsdp", "shard_grad_op" if reshard is False else "full_shard",
              doc.src(next(k for k in ("fsdp_reshard_after_forward", "custom_sharded_layers", "fsdp_cpu_offload") if doc.has(k))))
        b.extras["recipe"] = "distributed"
    else:
        b.extras["recipe"] = "single_device"
    off = doc.bool_("fsdp_cpu_offload")
    if off:
        b.set("offload_params", True, doc.src("fsdp_cpu_offload"))
        b.set("offload_optimizer", True, doc.src("fsdp_cpu_offload"))
    if doc.get("run_val_every_n_steps") not in (None, ""):
        b.set("do_eval", True, doc.src("run_val_every_n_steps"))
        b.from_doc("eval_batch", doc, "batch_size_val", doc.int_("batch_size_val"))
    if "eval_batch" not in b.values:
        b.set("eval_batch", b.values["micro_batch"], Source(default="batch_size_val = batch_size"))
    b.keep(doc, ("epochs", "max_steps_per_epoch", "compile", "custom_sharded_layers", "clip_grad_norm"))
    return b.build(config_file=doc.path)
