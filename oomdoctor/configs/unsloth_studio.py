"""Unsloth Studio's training YAMLs (unslothai/unsloth studio/backend/assets/configs/: lora_text.yaml, full_finetune.yaml,
and the per-model presets under model_defaults/): a `training:` group, a `lora:` group and, in the presets, no model
key. What a key means, from the Studio backend (studio/backend at 015bdef0):
- the model: `model:`, else the preset's file name, which Studio looks up as the model id with `/` written `_`
  (utils/models/model_config.py load_model_defaults: "org/model -> org_model.yaml");
- training.training_type lora (LoRA/QLoRA) or full; training.load_in_4bit defaults to true
  (models/training.py TrainingStartRequest: load_in_4bit Field(True)), so a LoRA run is QLoRA on bnb 4-bit unless
  the file turns it off;
- training.batch_size per device, gradient_accumulation_steps, max_seq_length (2048), packing, optim (adamw_8bit),
  gradient_checkpointing ("unsloth" or "true" on, "" or "false" off); lora.lora_r (16), lora_alpha (16),
  target_modules, use_dora;
- Unsloth trains in bf16 where the card has it (unsloth is_bfloat16_supported), fp16 otherwise.
"""
from __future__ import annotations

import os
from typing import Any

from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, read_int, table, version_chooser
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "unsloth_studio"
FRAMEWORK: Framework = "hf"             # the HF Trainer under Unsloth's patches: the regime the memory model knows
LABEL = "Unsloth Studio"
PACKAGE = "unsloth"
DEFAULT_VERSION = "2026.8"

KEYS = table(
    Key("micro_batch", "training.batch_size", minimum=1),
    Key("grad_accum", "training.gradient_accumulation_steps", after="batch_size", minimum=1),
    Key("seq_len", "training.max_seq_length", minimum=1),
    Key("lora_rank", "lora.lora_r", minimum=1),
    Key("lora_alpha", "lora.lora_alpha", after="lora_r", minimum=1),
    Key("packing", "training.packing"),
    Key("grad_ckpt", "training.gradient_checkpointing"),
    Key("optimizer", "training.optim"),
)
_TRAINING_KEYS = ("max_seq_length", "batch_size", "gradient_accumulation_steps", "gradient_checkpointing",
                  "training_type", "load_in_4bit")
_CKPT_ON = ("unsloth", "true", "1", "yes")


def detect(data: dict) -> Msg | None:
    training = data.get("training")
    if not isinstance(training, dict) or not any(k in training for k in _TRAINING_KEYS):
        return None
    if isinstance(data.get("lora"), dict) or "training_type" in training:
        return msg("config.why.unsloth_studio", keys=("training", "lora" if "lora" in data else "training_type"))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def _model(doc: Doc) -> tuple[str, str | None] | None:
    """(the model, the key that names it; None when it is the preset's file name)."""
    if doc.str_("model"):
        return doc.str_("model") or "", "model"
    stem = os.path.splitext(os.path.basename(doc.path))[0]
    org, sep, name = stem.partition("_")
    return (f"{org}/{name}", None) if sep and org and name else None


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or DEFAULT_VERSION
    b = Builder(FRAMEWORK, version, f"{LABEL} {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    found = _model(doc)
    if found is not None:
        model, key = found
        b.set("model", model, doc.src(key) if key else doc.src("training"))
        if key is None:
            b.note(msg("config.unsloth_studio_model", where=doc.path, model=model))
    b.set("use_unsloth", True, doc.src("training"))
    kind = (doc.str_("training.training_type") or "lora").lower()
    full = kind.startswith("full") or "pretraining" in kind
    four = doc.bool_("training.load_in_4bit")
    if full:
        b.set("method", "full", doc.src("training.training_type"))
    else:
        b.set("method", "qlora" if four in (None, True) else "lora",
              doc.src("training.load_in_4bit") if four is not None else doc.src("lora"))
        if four in (None, True):
            b.set("quant_bits", 4, doc.src("training.load_in_4bit") if four is not None else doc.src("lora"))
        for field, default in (("lora_rank", 16), ("lora_alpha", 16)):
            if not read_int(b, doc, KEYS[field]):
                b.default(field, default, "Unsloth Studio")
        b.from_doc("use_dora", doc, "lora.use_dora", doc.bool_("lora.use_dora"))
    for field, default in (("micro_batch", 1), ("grad_accum", 1), ("seq_len", 2048)):
        if not read_int(b, doc, KEYS[field]):
            b.default(field, default, "Unsloth Studio")
    if not b.from_doc("packing", doc, "training.packing", doc.bool_("training.packing")):
        b.default("packing", False, "Unsloth Studio")
    ckpt = doc.get("training.gradient_checkpointing")
    if ckpt is not None:
        b.set("grad_ckpt", str(ckpt).strip().lower() in _CKPT_ON, doc.src("training.gradient_checkpointing"))
    else:
        b.default("grad_ckpt", False, "Unsloth Studio")
    optim = doc.str_("training.optim")
    if optim:
        b.set("optimizer", optim, doc.src("training.optim"))
    else:
        b.default("optimizer", "adamw_8bit", "Unsloth Studio")
    b.default("precision", "bf16", "unsloth is_bfloat16_supported")
    b.default("n_gpus", 1, "Unsloth Studio")
    b.default("stage", "pt" if "pretraining" in kind else "sft", "Unsloth Studio")
    return b.build(doc, config_file=doc.path)


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if f in ("micro_batch", "grad_accum", "lora_rank", "lora_alpha", "seq_len"):
        out.put_key(KEYS[f], int(v))
    elif f == "packing":
        out.put_key(KEYS[f], bool(v))
    elif f == "grad_ckpt":
        out.put_key(KEYS[f], "unsloth" if v else "false")
    elif f == "optimizer":
        out.put_key(KEYS[f], str(v))
