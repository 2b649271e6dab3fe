"""Firefly's argument JSON (`torchrun train.py --train_args_file train_args/sft/qlora/x.json`): HF
TrainingArguments plus Firefly's own keys (component/argument.py, yangjianxin1/Firefly): `max_seq_length`,
`train_mode` (full / lora / qlora, default qlora), `task_type` (pretrain / sft / dpo), `lora_rank` 64,
`lora_alpha` 16, `template_name`, `train_file`. Files from before `train_mode` existed were QLoRA files
when they held LoRA keys (train_qlora.py) and full fine-tunes otherwise (train.py). QLoRA is bnb NF4.
Read through the shared HF-arguments reader with this table; patched through the same table.
"""
from __future__ import annotations

from typing import Any

from oomdoctor.configs import trainer_args as hf_args
from oomdoctor.configs._doc import Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, table, version_chooser
from oomdoctor.configs.entries import by_name
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "firefly"
FRAMEWORK: Framework = "hf"
LABEL = "Firefly"
PACKAGE = "transformers"
DEFAULT_VERSION = hf_args.HF_VERSION
HALLMARK_KEYS = ("train_file", "template_name", "train_mode", "task_type")
# Every key of Firefly's own CustomizedArguments (component/argument.py); use_unsloth is LLaMA-Factory's name too,
# so it never makes a file with Firefly's own keys LLaMA-Factory's.
OWN_KEYS = frozenset(("max_seq_length", "train_file", "model_name_or_path", "template_name", "eval_file",
                      "max_prompt_length", "beta", "tokenize_num_workers", "task_type", "train_mode", "lora_rank",
                      "lora_alpha", "lora_dropout", "use_unsloth"))

ENTRY = by_name("firefly")

KEYS = {
    **hf_args.KEYS,
    **table(
        Key("seq_len", "max_seq_length", after="gradient_accumulation_steps", minimum=1),
        Key("method", "train_mode", after="model_name_or_path"),
        Key("lora_rank", "lora_rank", after="train_mode", minimum=1),
        Key("lora_alpha", "lora_alpha", after="lora_rank", minimum=1),
    ),
}


def detect(data: dict) -> Msg | None:
    from oomdoctor.configs.llamafactory import HALLMARK_KEYS as LF_KEYS

    if not data.get("model_name_or_path") or any(k in data for k in LF_KEYS if k not in OWN_KEYS):
        return None
    keys = [k for k in HALLMARK_KEYS if k in data][:2]
    if keys and ("max_seq_length" in data or "train_mode" in data):
        return msg("config.why.firefly", keys=tuple(keys + ["max_seq_length"] * ("max_seq_length" in data)))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    from dataclasses import replace

    from oomdoctor.configs import hf

    entry = ENTRY
    if ENTRY is not None and doc.get("train_mode") is None and not any(doc.has(k) for k in ("lora_rank", "lora_alpha")):
        # Before train_mode, a file without LoRA keys was a full fine-tune run by train.py.
        entry = replace(ENTRY, defaults=tuple((k, "full" if k == "method" else v) for k, v in ENTRY.defaults))
    setup = hf.read(doc, replace(ctx, entry=entry))
    if doc.bool_("use_unsloth"):
        # Firefly train.py (load_unsloth_model): use_unsloth loads and wraps the model with FastLanguageModel.
        setup = replace(setup, use_unsloth=True, sources={**setup.sources, "use_unsloth": doc.src("use_unsloth")})
    task = (doc.str_("task_type") or "").lower()
    if task in ("pretrain", "dpo"):
        stage = {"pretrain": "pt", "dpo": "dpo"}[task]
        setup = replace(setup, stage=stage, sources={**setup.sources, "stage": doc.src("task_type")})
    return setup


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    from oomdoctor.configs import hf

    hf.edit(out, c, final)
