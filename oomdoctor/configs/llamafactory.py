"""LLaMA-Factory YAML/JSON (`llamafactory-cli train x.yaml`): one flat mapping of HfArgumentParser keys.

Defaults are those of LLaMA-Factory 0.9.4 unless told otherwise (reference config-formats.md §1, read from
hparams/model_args.py, finetuning_args.py, data_args.py and the inherited Seq2SeqTrainingArguments).
Version-dependent defaults: cutoff_len 1024 up to 0.9.0 (2048 from 0.9.1); quantization_method
"bitsandbytes" up to 0.9.1 ("bnb" after); weights load in the checkpoint's dtype from 0.9.4
(in the compute dtype before, loader.py / patcher.py).
"""
from __future__ import annotations

import re

from oomdoctor.configs._doc import Builder, Doc
from oomdoctor.facts import TrainingSetup

LF_VERSION = "0.9.4"

# Keys only LLaMA-Factory has (TrainingArguments keys are shared with plain HF configs).
LF_ONLY_KEYS = frozenset("""
stage finetuning_type cutoff_len template dataset dataset_dir lora_rank lora_target quantization_bit
quantization_method flash_attn disable_gradient_checkpointing val_size pure_bf16 enable_liger_kernel use_unsloth
freeze_trainable_layers use_galore use_badam use_apollo additional_target use_dora neat_packing
max_samples upcast_layernorm use_unsloth_gc plot_loss
""".split())

_FLASH = {"auto": "sdpa", "sdpa": "sdpa", "disabled": "eager", "eager": "eager", "fa2": "fa2", "fa3": "fa2"}
_STAGES = ("pt", "sft", "rm", "ppo", "dpo", "kto")
_PREQUANT = re.compile(r"(gptq|awq|aqlm|bnb-4bit|4bit|int4)", re.I)


def _vt(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3]) or (0, 9, 4)


def is_llamafactory(doc: Doc) -> bool:
    return bool(doc.get("model_name_or_path")) and any(k in LF_ONLY_KEYS for k in doc.data)


def load_llamafactory(doc: Doc, framework_version: str | None) -> TrainingSetup:
    from oomdoctor.configs import deepspeed as ds
    from oomdoctor.configs.hf import read_trainer_args

    version = (framework_version or LF_VERSION).lstrip("v")
    vt = _vt(version)
    b = Builder("llamafactory", version, f"LLaMA-Factory {version}")
    model = doc.str_("model_name_or_path")
    if not model:
        raise doc.fail("model_name_or_path", "no model_name_or_path in this LLaMA-Factory config")
    b.set("model", model, doc.src("model_name_or_path"))

    stage = doc.str_("stage")
    if stage is not None and stage not in _STAGES:
        raise doc.fail("stage", f"stage must be one of {', '.join(_STAGES)}, got {stage!r}")
    b.from_doc("stage", doc, "stage", stage) or b.default("stage", "sft")
    stage = b.values["stage"]

    # ---- method
    ftype = doc.str_("finetuning_type")
    if ftype is not None and ftype not in ("lora", "oft", "freeze", "full"):
        raise doc.fail("finetuning_type", f"finetuning_type must be lora, oft, freeze or full, got {ftype!r}")
    if ftype == "oft":
        b.extras["finetuning_type"] = "oft"    # orthogonal adapters: memory close to LoRA
    method = "lora" if ftype in (None, "oft") else ftype
    b.from_doc("method", doc, "finetuning_type", method if ftype else None) or \
        b.default("method", "lora", "finetuning_type")
    qbits = doc.int_("quantization_bit")
    if qbits is not None:
        if qbits not in (2, 3, 4, 5, 6, 8):
            raise doc.fail("quantization_bit", f"quantization_bit must be 4 or 8, got {qbits}")
        b.set("quant_bits", qbits, doc.src("quantization_bit"))
        if method == "lora":
            b.set("method", "qlora", doc.src("quantization_bit"))
    elif method == "lora" and _PREQUANT.search(model):
        # GPTQ/AWQ/bnb checkpoints carry their own quantization; LoRA on top is QLoRA-like.
        b.set("method", "qlora", doc.src("model_name_or_path"))
        b.set("quant_bits", 4, doc.src("model_name_or_path"))
        b.extras["quantization_method"] = _PREQUANT.search(model).group(1).lower()
    qmethod = doc.str_("quantization_method")
    if qmethod:
        b.extras["quantization_method"] = qmethod
    elif qbits is not None:
        b.extras["quantization_method"] = "bitsandbytes" if vt <= (0, 9, 1) else "bnb"

    rank = doc.int_("lora_rank")
    b.from_doc("lora_rank", doc, "lora_rank", rank) or b.default("lora_rank", 8)
    alpha = doc.int_("lora_alpha")
    b.from_doc("lora_alpha", doc, "lora_alpha", alpha) or \
        b.default("lora_alpha", 2 * b.values["lora_rank"], "2 × lora_rank")
    target = doc.get("lora_target")
    if target is not None:
        items = target if isinstance(target, list) else str(target).split(",")
        items = tuple(str(t).strip() for t in items if str(t).strip())
        b.set("lora_targets", ("all",) if items in (("all",), ()) else items, doc.src("lora_target"))
    else:
        b.default("lora_targets", ("all",), "lora_target: all")
    b.from_doc("use_dora", doc, "use_dora", doc.bool_("use_dora"))
    b.from_doc("freeze_trainable_layers", doc, "freeze_trainable_layers", doc.int_("freeze_trainable_layers")) or \
        b.default("freeze_trainable_layers", 2)

    # ---- batch, precision, optimizer (inherited TrainingArguments)
    hf = read_trainer_args(b, doc)
    if doc.bool_("pure_bf16"):
        b.set("pure_bf16", True, doc.src("pure_bf16"))
        b.set("precision", "bf16", doc.src("pure_bf16"))
    if "precision" not in b.values:
        b.default("precision", "fp32", "no bf16/fp16: no autocast; weights load in the GPU's best half dtype")
    for flag, field in (("use_galore", "galore"), ("use_badam", "badam"), ("use_apollo", "apollo"),
                        ("use_unsloth", "use_unsloth")):
        b.from_doc(field, doc, flag, doc.bool_(flag))

    # ---- sequence, packing
    cutoff = doc.int_("cutoff_len")
    b.from_doc("seq_len", doc, "cutoff_len", cutoff) or \
        b.default("seq_len", 1024 if vt <= (0, 9, 0) else 2048, "cutoff_len")
    packing = doc.bool_("packing")
    if doc.bool_("neat_packing"):
        b.set("packing", True, doc.src("neat_packing"))
    elif packing is not None:
        b.set("packing", packing, doc.src("packing"))
    else:
        b.default("packing", stage == "pt", "packing is on for stage pt only")

    # ---- memory switches LLaMA-Factory owns
    disable_gc = doc.bool_("disable_gradient_checkpointing")
    if disable_gc is not None:
        b.set("grad_ckpt", not disable_gc, doc.src("disable_gradient_checkpointing"))
    elif "grad_ckpt" not in b.values or b.values["grad_ckpt"] is False:
        # LLaMA-Factory enables checkpointing itself whatever gradient_checkpointing says.
        b.default("grad_ckpt", True, "disable_gradient_checkpointing: false")
    flash = doc.str_("flash_attn")
    if flash is not None:
        if flash.lower() not in _FLASH:
            raise doc.fail("flash_attn", f"flash_attn must be auto, disabled, sdpa, fa2 or fa3, got {flash!r}")
        b.set("attention", _FLASH[flash.lower()], doc.src("flash_attn"))
    else:
        b.default("attention", "sdpa", "flash_attn: auto keeps transformers' sdpa")
    liger = doc.bool_("enable_liger_kernel")
    if liger is not None:
        # Liger's fused linear cross-entropy is patched in for pt/sft only (model_utils/liger_kernel.py).
        b.set("fused_ce", bool(liger) and stage in ("pt", "sft"), doc.src("enable_liger_kernel"))

    # ---- eval
    val_size = doc.float_("val_size")
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
    b.extras["weights_dtype_rule"] = "checkpoint" if vt >= (0, 9, 4) else "compute"

    fields = {"config_file": doc.path}
    ref = doc.str_("deepspeed")
    if ref:
        path, shipped = ds.find_deepspeed(ref, doc, "deepspeed")
        ds.apply_deepspeed(b, path, shipped, doc.src("deepspeed"), hf, model)
        fields["deepspeed_file"] = path
        if b.values.get("zero_stage") == 3 and b.values.get("pure_bf16"):
            b.warnings.append(f"{doc.path}: pure_bf16 is refused by LLaMA-Factory under ZeRO-3")
    return b.build(**fields)
