"""LLaMA-Factory YAML/JSON (`llamafactory-cli train x.yaml`, or the flags of `src/train_bash.py` and
`src/train.py`): one flat mapping of HfArgumentParser keys. One key table reads it and patches it.

Defaults are those of LLaMA-Factory 0.9.4 unless another release is chosen (reference config-formats.md §1;
older releases read from the tags of hiyouga/LLaMA-Factory, hparams/*.py):
- cutoff_len 1024 up to 0.9.0, 2048 from 0.9.1;
- freeze layers `num_layer_trainable` (default 3 in 0.5, 2 from 0.6) until 0.7.0, `freeze_trainable_layers` from 0.7.1;
- flash_attn a bool up to 0.6.3, auto/off/sdpa/fa2 in 0.7.0–0.8.2, auto/disabled/sdpa/fa2(/fa3) from 0.8.3;
- lora_target required in 0.5 (no default), "all" from 0.6;
- quantization_method "bitsandbytes" up to 0.9.1 ("bnb" after);
- weights load in the checkpoint's dtype from 0.9.4 (the compute dtype before, loader.py / patcher.py).
"""
from __future__ import annotations

from typing import Any

from oomdoctor.configs import deepspeed as ds
from oomdoctor.configs import trainer_args as hf_args
from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out, precision, zero
from oomdoctor.configs._keys import (
    Key,
    Marker,
    at_most,
    has_key,
    prequantized,
    read_int,
    table,
    value_is,
    version_chooser,
)
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "llamafactory"
FRAMEWORK: Framework = "llamafactory"
LABEL = "LLaMA-Factory"
PACKAGE = "llamafactory"            # the name its banner prints in a crash log
LF_VERSION = "0.9.4"
DEFAULT_VERSION = LF_VERSION

KEYS = {
    **hf_args.KEYS,
    **table(
        Key("seq_len", "cutoff_len", after="template", minimum=1),
        Key("method", "finetuning_type", after="stage"),
        Key("lora_rank", "lora_rank", after="finetuning_type", minimum=1),
        Key("lora_alpha", "lora_alpha", after="lora_rank", minimum=1),
        Key("lora_targets", "lora_target", after="lora_rank"),
        Key("quant_bits", "quantization_bit", after="model_name_or_path"),
        Key("pure_bf16", "pure_bf16", after="bf16"),
        Key("grad_ckpt", "disable_gradient_checkpointing", after="finetuning_type"),
        Key("attention", "flash_attn", after="model_name_or_path"),
        Key("fused_ce", "enable_liger_kernel", after="model_name_or_path"),
        Key("packing", "packing", after="cutoff_len"),
        Key("use_dora", "use_dora", after="lora_rank"),
        Key("galore", "use_galore", after="finetuning_type"),
        Key("badam", "use_badam", after="finetuning_type"),
        Key("apollo", "use_apollo", after="finetuning_type"),
        Key("use_unsloth", "use_unsloth", after="model_name_or_path"),
        Key("freeze_trainable_layers", "freeze_trainable_layers", after="finetuning_type",
            until=(("0.7.0", "num_layer_trainable"),)),
        Key("zero_stage", "deepspeed", after="finetuning_type"),
        Key("eval_batch", "per_device_eval_batch_size", after="val_size", minimum=1),
    ),
}

# Keys that only LLaMA-Factory files have: any one of them makes a file LLaMA-Factory's.
HALLMARK_KEYS = ("stage", "finetuning_type", "cutoff_len", "template", "quantization_bit", "lora_target",
                 "flash_attn", "disable_gradient_checkpointing", "val_size", "pure_bf16", "enable_liger_kernel",
                 "use_unsloth", "freeze_trainable_layers", "num_layer_trainable", "name_module_trainable",
                 "neat_packing", "use_galore", "use_badam", "use_apollo", "dataset_dir")
# Keys LLaMA-Factory shares with other projects' argument files (Firefly, HF scripts).
LF_ONLY_KEYS = frozenset(HALLMARK_KEYS + ("lora_rank", "dataset", "max_samples", "use_dora", "upcast_layernorm",
                                          "use_unsloth_gc", "plot_loss", "additional_target", "quantization_method"))

MARKERS = (
    Marker(has_key("num_layer_trainable", "name_module_trainable"), "<=", "0.7.0"),
    Marker(value_is("flash_attn", r"^(true|false)$"), "<=", "0.6.3"),
    Marker(value_is("flash_attn", r"^off$"), "<=", "0.8.2"),
    Marker(value_is("stage", r"^kto$"), ">=", "0.8.0"),
    Marker(has_key("neat_packing", "quantization_method"), ">=", "0.8.3"),
    Marker(value_is("flash_attn", r"^disabled$"), ">=", "0.8.3"),
    Marker(has_key("enable_liger_kernel"), ">=", "0.9.0"),
)

_STAGES = ("pt", "sft", "rm", "ppo", "dpo", "kto", "orpo")
_FTYPES = ("lora", "oft", "freeze", "full")
# flash_attn across releases: a bool (<= 0.6.3), then auto/off/sdpa/fa2, then auto/disabled/sdpa/fa2/fa3.
_FLASH = {"auto": "sdpa", "sdpa": "sdpa", "disabled": "eager", "off": "eager", "eager": "eager", "fa2": "fa2",
          "fa3": "fa2", "true": "fa2", "false": "sdpa"}


def detect(data: dict) -> Msg | None:
    if not any(data.get(k) for k in ("model_name_or_path",)):
        return None
    keys = [k for k in HALLMARK_KEYS if k in data][:3]
    if keys:
        return msg("config.why.llamafactory", keys=tuple(keys))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE, MARKERS)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = (ctx.framework_version or LF_VERSION).lstrip("v")
    b = Builder(FRAMEWORK, version, f"LLaMA-Factory {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    model = doc.str_("model_name_or_path")
    if not model:
        raise doc.fail("model_name_or_path", msg("config.no_model", key="model_name_or_path"))
    b.set("model", model, doc.src("model_name_or_path"))

    stage = doc.choice("stage", _STAGES)
    if not b.from_doc("stage", doc, "stage", stage):
        b.default("stage", "sft")
    stage = b.values["stage"]
    _read_method(b, doc, model, version)
    _read_adapter(b, doc, version)

    # ---- batch, precision, optimizer (inherited TrainingArguments)
    hf = hf_args.read_trainer_args(b, doc)
    if doc.bool_(KEYS["pure_bf16"].name):
        b.set("pure_bf16", True, doc.src(KEYS["pure_bf16"].name))
        b.set("precision", "bf16", doc.src(KEYS["pure_bf16"].name))
    if "precision" not in b.values:
        b.default("precision", "fp32", msg("config.default.lf_no_autocast"))
    for flag, field in (("use_galore", "galore"), ("use_badam", "badam"), ("use_apollo", "apollo"),
                        ("use_unsloth", "use_unsloth")):
        b.from_doc(field, doc, flag, doc.bool_(flag))
    if doc.bool_("use_unsloth"):
        # get_unsloth_peft_model passes use_gradient_checkpointing="unsloth" (src/llamafactory/model/model_utils/
        # unsloth.py): unsloth's offloaded checkpointing, the key Mechanisms.unsloth_offload reads
        b.extras["use_gradient_checkpointing"] = "unsloth"
    _read_sequence(b, doc, version, stage)
    _read_switches(b, doc, stage)
    _read_megatron_bridge(b, doc)

    # ---- eval
    val_size = doc.float_("val_size", minimum=0)
    if val_size and "do_eval" not in b.values and (doc.str_("eval_strategy") or "no") != "no":
        b.set("do_eval", True, doc.src("val_size"))

    b.keep(doc, ("cutoff_len", "max_samples", "val_size", "eval_dataset", "num_train_epochs", "lora_dropout",
                 "quantization_type", "double_quantization", "additional_target", "upcast_layernorm",
                 "upcast_lmhead_output", "use_unsloth_gc", "neat_packing", "mixture_of_depths", "use_llama_pro",
                 "galore_rank", "galore_layerwise", "apollo_rank", "apollo_layerwise", "badam_mode",
                 "use_adam_mini", "use_muon", "ref_model", "reward_model", "template", "rope_scaling",
                 "enable_liger_kernel", "use_reentrant_gc", "freeze_trainable_modules", "freeze_extra_modules",
                 "train_from_scratch", "use_rslora", "pissa_init"))
    # Which dtype the weights load in: the checkpoint's from 0.9.4 (loader.py torch_dtype="auto"),
    # the compute dtype before (patcher.py).
    b.extras["weights_dtype_rule"] = "compute" if at_most(version, "0.9.3") else "checkpoint"

    # A Ray run (USE_RAY=1) starts ray_num_workers training workers, one GPU each
    # (hparams/training_args.py RayArguments; train/tuner.py _ray_training_function).
    workers = doc.int_("ray_num_workers", minimum=1)
    if workers:
        b.set("n_gpus", workers, doc.src("ray_num_workers"))

    fields: dict[str, Any] = {"config_file": doc.path}
    path = ds.read_ref(b, doc, KEYS["zero_stage"].name, hf, model, strict=doc.kind != "cli")
    if path:
        fields["deepspeed_file"] = path
    if b.values.get("zero_stage") == 3 and b.values.get("pure_bf16"):
        b.note(msg("config.lf_pure_bf16_zero3", where=doc.path))
    return b.build(doc, **fields)


def _read_method(b: Builder, doc: Doc, model: str, version: str) -> None:
    """finetuning_type, and the quantised base (quantization_bit, or a GPTQ/AWQ/bnb checkpoint) under LoRA."""
    k_method, k_qbits = KEYS["method"].name, KEYS["quant_bits"].name
    ftype = doc.choice(k_method, _FTYPES)
    if ftype == "oft":
        b.extras["finetuning_type"] = "oft"    # orthogonal adapters: memory close to LoRA
    method = "lora" if ftype in (None, "oft") else ftype
    if not b.from_doc("method", doc, k_method, method if ftype else None):
        b.default("method", "lora", k_method)
    qbits = doc.int_(k_qbits)
    prequant = prequantized(model)
    if qbits is not None:
        if qbits not in (2, 3, 4, 5, 6, 8):
            raise doc.fail(k_qbits, msg("config.not_a_choice", key=k_qbits, value=str(qbits), choices=("4", "8")))
        b.set("quant_bits", qbits, doc.src(k_qbits))
        if method == "lora":
            b.set("method", "qlora", doc.src(k_qbits))
    elif method == "lora" and prequant:
        # GPTQ/AWQ/bnb checkpoints carry their own quantization; LoRA on top is QLoRA-like.
        b.set("method", "qlora", doc.src("model_name_or_path"))
        b.set("quant_bits", prequant[0], doc.src("model_name_or_path"))
        b.extras["quantization_method"] = prequant[1]
    qmethod = doc.str_("quantization_method")
    if qmethod:
        b.extras["quantization_method"] = qmethod
    elif qbits is not None:
        b.extras["quantization_method"] = "bitsandbytes" if at_most(version, "0.9.1") else "bnb"


def _read_adapter(b: Builder, doc: Doc, version: str) -> None:
    """LoRA rank, alpha (2 × rank by default) and targets, DoRA, and the freeze tuner's layer count."""
    k_target = KEYS["lora_targets"].name
    if not read_int(b, doc, KEYS["lora_rank"]):
        b.default("lora_rank", 8)
    if not read_int(b, doc, KEYS["lora_alpha"]):
        b.default("lora_alpha", 2 * b.values["lora_rank"], "2 × lora_rank")
    target = doc.get(k_target)
    if target is not None:
        listed = target if isinstance(target, list) else str(target).split(",")
        items = tuple(str(t).strip() for t in listed if str(t).strip())
        b.set("lora_targets", ("all",) if items in (("all",), ()) else items, doc.src(k_target))
    else:
        b.default("lora_targets", ("all",), "lora_target: all")
        if at_most(version, "0.5.3") and b.values["method"] in ("lora", "qlora"):
            b.note(msg("config.lf_lora_target_required", where=doc.path, version=version))
    b.from_doc("use_dora", doc, "use_dora", doc.bool_("use_dora"))
    freeze = KEYS["freeze_trainable_layers"]
    if not read_int(b, doc, freeze, version):
        b.default("freeze_trainable_layers", 3 if at_most(version, "0.5.3") else 2, freeze.name_for(version))


def _read_sequence(b: Builder, doc: Doc, version: str, stage: str) -> None:
    source, target = doc.int_("max_source_length", minimum=1), doc.int_("max_target_length", minimum=1)
    if doc.get("cutoff_len") is None and (source or target):
        # Before cutoff_len (v0.2.0, dc68c313): the prompt and the answer are cut apart, max_source_length and
        # max_target_length (512 each), so a sample is as long as both (src/llmtuner/dsets/preprocess.py:57 at
        # d3fd8f89); pre-training chunks the text into max_source_length blocks (:43)
        key = "max_source_length" if source else "max_target_length"
        b.set("seq_len", (source or 512) if stage == "pt" else (source or 512) + (target or 512), doc.src(key))
    elif not read_int(b, doc, KEYS["seq_len"]):
        b.default("seq_len", 1024 if at_most(version, "0.9.0") else 2048, "cutoff_len")
    k_pack = KEYS["packing"].name
    packing = doc.bool_(k_pack)
    if doc.bool_("neat_packing"):
        b.set("packing", True, doc.src("neat_packing"))
    elif packing is not None:
        b.set("packing", packing, doc.src(k_pack))
    else:
        b.default("packing", stage == "pt", msg("config.default.lf_packing"))


# LLaMA-Factory's Megatron Bridge run (USE_MEGATRON_BRIDGE=1): these keys parse only into MegatronBridgeArguments
# (src/llamafactory/hparams/megatron_bridge_args.py; hparams/parser.py _TRAIN_MBRIDGE_ARGS), so a config that
# writes one of them trains a Megatron model. Key -> (setup field, its dataclass default).
_MBRIDGE_KEYS = (("tensor_model_parallel_size", "tensor_parallel", 1), ("pipeline_model_parallel_size", "pipeline_parallel", 1),
                 ("expert_model_parallel_size", "expert_parallel", 1), ("context_parallel_size", "context_parallel", 1),
                 ("virtual_pipeline_model_parallel_size", "virtual_pipeline", None),
                 ("sequence_parallel", "sequence_parallel", False), ("use_distributed_optimizer", "distributed_optimizer", True),
                 ("recompute_granularity", "recompute", None), ("recompute_method", "recompute_method", None),
                 ("recompute_num_layers", "recompute_layers", None))


def _read_megatron_bridge(b: Builder, doc: Doc) -> None:
    """A config with Megatron Bridge's own keys: Megatron's parallel sizes, distributed optimizer and recompute,
    each from its key or MegatronBridgeArguments' default; checkpointing is Megatron's recompute (none: off)."""
    if not any(doc.has(key) for key, _, _ in _MBRIDGE_KEYS):
        return
    b.set("megatron", True, doc.src(next(key for key, _, _ in _MBRIDGE_KEYS if doc.has(key))))
    for key, field_name, default in _MBRIDGE_KEYS:
        if isinstance(default, bool):
            value: Any = doc.bool_(key)
        elif field_name.startswith("recompute") and field_name != "recompute_layers":
            value = doc.str_(key)
        else:
            value = doc.int_(key, minimum=1)
        if value is not None:
            b.set(field_name, value, doc.src(key))
        elif default is not None:
            b.default(field_name, default, key)
    recompute = b.values.get("recompute")
    if recompute:
        b.set("grad_ckpt", True, doc.src("recompute_granularity"))
    else:
        b.default("grad_ckpt", False, "recompute_granularity")


def _read_switches(b: Builder, doc: Doc, stage: str) -> None:
    """The memory switches LLaMA-Factory owns: checkpointing, FlashAttention, Liger."""
    k_nogc, k_flash, k_liger = KEYS["grad_ckpt"].name, KEYS["attention"].name, KEYS["fused_ce"].name
    disable_gc = doc.bool_(k_nogc)
    if disable_gc is not None:
        b.set("grad_ckpt", not disable_gc, doc.src(k_nogc))
    elif "grad_ckpt" not in b.values or b.values["grad_ckpt"] is False:
        # LLaMA-Factory enables checkpointing itself whatever gradient_checkpointing says.
        b.default("grad_ckpt", True, "disable_gradient_checkpointing: false")
    flash = doc.choice(k_flash, tuple(_FLASH))
    if flash is not None:
        b.set("attention", _FLASH[flash], doc.src(k_flash))
    else:
        b.default("attention", "sdpa", msg("config.default.lf_flash_auto"))
    liger = doc.bool_(k_liger)
    if liger is not None:
        # Liger's fused linear cross-entropy is patched in for pt/sft only (model_utils/liger_kernel.py).
        b.set("fused_ce", bool(liger) and stage in ("pt", "sft"), doc.src(k_liger))
        if liger and stage in ("pt", "sft"):
            b.values["loss_kernel"] = "liger"     # fused in training only (memory/estimate.py _fused_in_eval)


def _edit_method(out: Out, v: Any, final: dict[str, Any]) -> None:
    ftype = "lora" if v in ("lora", "qlora") else v
    out.put_key(KEYS["method"], ftype)
    if ftype == "lora":
        if "lora_rank" not in final and not out.has_key("lora_rank"):
            out.put("lora_rank", out.setup.lora_rank, after="finetuning_type")
        if not out.has_key("lora_target"):
            out.put("lora_target", "all", after="lora_rank")
    if v == "qlora":
        out.put_key(KEYS["quant_bits"], int(final.get("quant_bits") or 4))
    elif out.setup.quant_bits and "quant_bits" not in final:
        out.put_key(KEYS["quant_bits"], None)


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    version = out.version
    if f in ("micro_batch", "grad_accum", "seq_len", "lora_rank", "eval_batch", "freeze_trainable_layers"):
        out.put_key(KEYS[f], int(v))
    elif f == "method":
        _edit_method(out, v, final)
    elif f == "lora_targets":
        out.put_key(KEYS["lora_targets"], ",".join(v) if isinstance(v, (tuple, list)) else str(v))
    elif f == "quant_bits":
        out.put_key(KEYS["quant_bits"], int(v) if v else None)
    elif f == "precision":
        precision(out, v, after="learning_rate")
        if v != "bf16" and out.setup.pure_bf16:
            out.put("pure_bf16", False)
    elif f in ("pure_bf16", "fused_ce", "packing", "use_dora", "galore", "badam", "apollo", "use_unsloth"):
        out.put_key(KEYS[f], bool(v))
    elif f == "grad_ckpt":
        out.put_key(KEYS["grad_ckpt"], not v)
    elif f == "attention":
        out.put_key(KEYS["attention"], _flash_value(v, version))
    elif f == "optimizer":
        out.put_key(KEYS["optimizer"], v)
    elif f in ("zero_stage", "offload_optimizer", "offload_params"):
        zero(out, c, final, "deepspeed", "finetuning_type")
    elif f == "eval_accum":
        out.put_key(KEYS["eval_accum"], int(v) if v else None)


def _flash_value(attention: str, version: str | None) -> Any:
    """The flash_attn value that means `attention` in this release."""
    if version and at_most(version, "0.6.3"):
        return attention == "fa2"
    if attention == "eager":
        return "off" if version and at_most(version, "0.8.2") else "disabled"
    return {"sdpa": "sdpa", "fa2": "fa2"}.get(attention, attention)
