"""AutoTrain Advanced's config files (huggingface/autotrain-advanced configs/llm_finetuning/*.yml, run with
`autotrain --config FILE`): `task: llm-sft|llm-dpo|llm-orpo|llm-reward|llm-generic`, `base_model`, and the trainer's
settings under `params:`. What a key means, from the source at b5c98fb:
- autotrain/parser.py AutoTrainConfigParser: `params` are LLMTrainingParams fields, the task's trainer from its name;
- trainers/clm/params.py LLMTrainingParams: batch_size 2, gradient_accumulation 4, block_size -1, model_max_length
  2048, peft False, quantization int4, lora_r 16, lora_alpha 32, optimizer adamw_torch, mixed_precision None,
  disable_gradient_checkpointing False;
- trainers/clm/utils.py get_model: the base quantized (int4/int8) only when peft is on; train_clm_sft.py:23: the SFT
  sequence is block_size (configure_block_size: -1 -> the tokenizer's length, capped at 1024).
"""
from __future__ import annotations

from typing import Any

from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, read_int, table, version_chooser
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "autotrain"
FRAMEWORK: Framework = "trl"            # its trainers are TRL's (SFTTrainer, DPOTrainer, ORPOTrainer, RewardTrainer)
LABEL = "AutoTrain Advanced"
PACKAGE = "autotrain-advanced"
DEFAULT_VERSION = "0.8.36"

KEYS = table(
    Key("micro_batch", "params.batch_size", minimum=1),
    Key("grad_accum", "params.gradient_accumulation", after="batch_size", minimum=1),
    Key("seq_len", "params.block_size", minimum=1),
    Key("lora_rank", "params.lora_r", minimum=1),
    Key("lora_alpha", "params.lora_alpha", after="lora_r", minimum=1),
    Key("optimizer", "params.optimizer"),
)
_STAGES = {"llm-sft": "sft", "llm-dpo": "dpo", "llm-orpo": "orpo", "llm-reward": "rm", "llm-generic": "pt",
           "llm": "sft"}
_BLOCK_CAP = 1024


def detect(data: dict) -> Msg | None:
    task = data.get("task")
    if isinstance(task, str) and task.startswith("llm") and "base_model" in data and isinstance(data.get("params"), dict):
        return msg("config.why.autotrain", keys=("task", "base_model", "params"))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or DEFAULT_VERSION
    b = Builder.over(FRAMEWORK, LABEL, version, ctx)
    if doc.str_("base_model"):
        b.set("model", doc.str_("base_model") or "", doc.src("base_model"))
    task = (doc.str_("task") or "llm").lower()
    b.set("stage", _STAGES.get(task, "sft"), doc.src("task"))
    peft = doc.bool_("params.peft")
    quant = (doc.str_("params.quantization") or "").lower() if doc.has("params.quantization") else "int4"
    bits = {"int4": 4, "int8": 8}.get(quant)
    if peft:
        b.set("method", "qlora" if bits else "lora", doc.src("params.peft"))
        if bits:
            b.set("quant_bits", bits, doc.src("params.quantization") if doc.has("params.quantization")
                  else doc.src("params.peft"))
        for field, default in (("lora_rank", 16), ("lora_alpha", 32)):
            if not read_int(b, doc, KEYS[field]):
                b.default(field, default, LABEL)
    else:
        b.set("method", "full", doc.src("params.peft") if doc.has("params.peft") else doc.src("params"))
    for field, default in (("micro_batch", 2), ("grad_accum", 4)):
        if not read_int(b, doc, KEYS[field]):
            b.default(field, default, LABEL)
    if not read_int(b, doc, KEYS["seq_len"]):
        cap = doc.get("params.model_max_length")
        b.default("seq_len", min(int(cap), _BLOCK_CAP) if isinstance(cap, int) and cap > 0 else _BLOCK_CAP, LABEL)
    precision = (doc.str_("params.mixed_precision") or "").lower()
    if precision in ("fp16", "bf16"):
        b.set("precision", precision, doc.src("params.mixed_precision"))
    else:
        b.default("precision", "fp32", msg("config.default.missing", key="params.mixed_precision"))
    optim = doc.str_("params.optimizer")
    if optim:
        b.set("optimizer", optim, doc.src("params.optimizer"))
    else:
        b.default("optimizer", "adamw_torch", LABEL)
    off = doc.bool_("params.disable_gradient_checkpointing")
    if off is not None:
        b.set("grad_ckpt", not off, doc.src("params.disable_gradient_checkpointing"))
    else:
        b.default("grad_ckpt", True, LABEL)
    if doc.bool_("params.use_flash_attention_2"):
        b.set("attention", "fa2", doc.src("params.use_flash_attention_2"))
    if doc.bool_("params.unsloth"):
        b.set("use_unsloth", True, doc.src("params.unsloth"))
    return b.build(doc, config_file=doc.path)


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if f in ("micro_batch", "grad_accum", "lora_rank", "lora_alpha", "seq_len"):
        out.put_key(KEYS[f], int(v))
    elif f == "optimizer":
        out.put_key(KEYS[f], str(v))
