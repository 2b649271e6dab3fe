"""mlx-lm's fine-tuning (ml-explore/mlx-lm mlx_lm/lora.py at d78bf58e, 2026-08): `mlx_lm.lora --train` with argparse
flags (`--batch-size`, dashes) or a `-c/--config` YAML of the same names (mlx_lm/examples/lora_config.yaml).
CONFIG_DEFAULTS there: model Qwen/Qwen3-0.6b, fine_tune_type lora (lora | dora | full), num_layers 16 (the last 16
blocks get adapters or, for full, are unfrozen; -1 all), batch_size 4, grad_accumulation_steps 1, max_seq_length
2048, grad_checkpoint false, optimizer adam, lora_parameters {rank 8, scale 20.0, dropout 0.0}; LoRA goes on every
linear layer of those blocks unless lora_parameters.keys names some (tuner/utils.py linear_to_lora_layers).
Before 13bb6dca (2024-09-30, "Adding full finetuning") the layers were `lora_layers` (`--lora-layers`) and DoRA
was `use_dora` (`--use-dora`).
MLX has no mixed precision: the weights stay in the checkpoint's dtype (a quantised mlx-community checkpoint is
LoRA over a quantised base, QLoRA); it runs on Apple silicon, one device, in unified memory (no CUDA allocator).
"""
from __future__ import annotations

from typing import Any

from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, prequantized, table, version_chooser
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "mlx_lm"
FRAMEWORK: Framework = "mlx-lm"
LABEL = "mlx-lm"
PACKAGE = "mlx_lm"
DEFAULT_VERSION = "0.29.0"
MODEL_KEY = "model"

KEYS = table(
    Key("micro_batch", "batch_size", minimum=1),
    Key("grad_accum", "grad_accumulation_steps", after="batch_size", minimum=1),
    Key("seq_len", "max_seq_length", minimum=1),
    Key("lora_rank", "lora_parameters.rank", minimum=1),
    Key("grad_ckpt", "grad_checkpoint"),
)
# Keys only mlx_lm.lora's config has (lora.py CONFIG_DEFAULTS and build_parser), older names included.
_OWN = ("fine_tune_type", "lora_parameters", "grad_checkpoint", "lora_layers", "adapter_path", "resume_adapter_file",
        "steps_per_eval", "steps_per_report", "val_batches", "test_batches", "training_mode", "train_mode")


def detect(data: dict) -> Msg | None:
    own = [k for k in _OWN if k in data]
    if len(own) >= 2 and ("model" in data or "iters" in data or "fine_tune_type" in data):
        return msg("config.why.mlx_lm", keys=", ".join(own[:3]))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def _first(doc: Doc, *keys: str) -> str | None:
    return next((k for k in keys if doc.get(k) is not None), None)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or DEFAULT_VERSION
    b = Builder(FRAMEWORK, version, f"{LABEL} {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    model = doc.str_("model")
    if model:
        b.set("model", model, doc.src("model"))
    kind_key = _first(doc, "fine_tune_type")
    kind = (doc.str_(kind_key) if kind_key else None) or ("dora" if doc.bool_("use_dora") else "lora")
    kind = kind.lower()
    layers_key = _first(doc, "num_layers", "lora_layers")
    layers = doc.int_(layers_key, minimum=-1) if layers_key else None
    if layers is None:
        layers = 16
    b.extras["trained_layers"] = layers
    quant = prequantized(model or "")
    if kind == "full":
        if layers == -1:
            b.set("method", "full", doc.src(kind_key or "model"))
        else:
            # lora.py train_model: only the last num_layers blocks are unfrozen
            b.set("method", "freeze", doc.src(kind_key or "model"))
            b.set("freeze_trainable_layers", layers, doc.src(layers_key) if layers_key else doc.src(kind_key or "model"))
    else:
        src = doc.src(kind_key) if kind_key else doc.src("model")
        if quant is not None:
            b.set("method", "qlora", doc.src("model"))
            b.set("quant_bits", quant[0], doc.src("model"))
        elif kind_key:
            b.set("method", "lora", src)
        else:
            b.default("method", "lora", "fine_tune_type lora")
        if kind == "dora":
            b.set("use_dora", True, src)
        rank = doc.int_("lora_parameters.rank", minimum=1)
        if rank is not None:
            b.set("lora_rank", rank, doc.src("lora_parameters.rank"))
        else:
            b.default("lora_rank", 8, "lora_parameters.rank")
        keys = doc.get("lora_parameters.keys")
        if isinstance(keys, list) and keys:
            b.set("lora_targets", tuple(str(k).rsplit(".", 1)[-1] for k in keys), doc.src("lora_parameters.keys"))
    for field, key, default in (("micro_batch", "batch_size", 4), ("grad_accum", "grad_accumulation_steps", 1),
                                ("seq_len", "max_seq_length", 2048)):
        value = doc.int_(key, minimum=1)
        if value is not None:
            b.set(field, value, doc.src(key))
        else:
            b.default(field, default, key)
    ckpt = doc.bool_("grad_checkpoint")
    if ckpt is not None:
        b.set("grad_ckpt", ckpt, doc.src("grad_checkpoint"))
    else:
        b.default("grad_ckpt", False, "grad_checkpoint")
    mode_key = _first(doc, "training_mode", "train_mode")
    mode = (doc.str_(mode_key) or "").lower() if mode_key else ""
    if mode and mode not in ("normal", "sft"):
        # a fork's --training-mode (mlx-examples pull request 1209, mlx-lm-lora): dpo, orpo, grpo, ...
        b.set("stage", mode, doc.src(mode_key or ""))
    else:
        b.default("stage", "sft", "mlx_lm.lora")
    optimizer = doc.str_("optimizer")
    if optimizer:
        b.set("optimizer", optimizer, doc.src("optimizer"))
    else:
        b.default("optimizer", "adam", "optimizer")
    b.default("precision", "bf16", msg("config.default.mlx_dtype"))
    b.default("n_gpus", 1, msg("config.default.mlx_device"))
    b.default("attention", "sdpa", "mx.fast.scaled_dot_product_attention")
    b.extras["unified_memory"] = True
    b.note(msg("config.mlx_unified", where=doc.path))
    return b.build(doc, config_file=doc.path)


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    key = KEYS.get(c.field)
    if key is None:
        return
    if c.field == "grad_ckpt":
        out.put_key(key, bool(c.after))
    else:
        out.put_key(key, int(c.after))
