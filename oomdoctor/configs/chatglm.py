"""ChatGLM3 / GLM-4 `finetune_demo` YAMLs (THUDM/ChatGLM3 finetune_demo/configs/{lora,ptuning_v2,sft}.yaml,
THUDM/GLM-4 finetune/configs/{lora,sft}.yaml), run as `python finetune_hf.py DATA_DIR MODEL_DIR CONFIG.yaml`
(GLM-4: finetune.py). The YAML is the script's FinetuningConfig: `data_config`, `max_input_length`,
`max_output_length`, `training_args` (a nested Seq2SeqTrainingArguments mapping) and `peft_config` (a PEFT
config: LORA with r / lora_alpha, PREFIX_TUNING with num_virtual_tokens; none: a full fine-tune).

What the scripts do (finetune_hf.py / finetune.py): a sample is cut to max_input_length + max_output_length
(+1) tokens; gradient checkpointing is always enabled; ChatGLM3 loads the model in its default dtype (float32)
and GLM-4 in bfloat16 ("Must use BFloat 16"); LoRA defaults of peft's LoraConfig (r 8, lora_alpha 8). The model
is the script's second positional argument, never in the YAML: a script that runs it gives it, a YAML read
alone needs --model.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from oomdoctor.configs import deepspeed as ds
from oomdoctor.configs import trainer_args as hf_args
from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out, precision, zero
from oomdoctor.configs._keys import Key, Marker, has_key, read_int, read_peft_targets, table, version_chooser
from oomdoctor.facts import Change, Framework, Msg, Source, TrainingSetup, msg

NAME = "chatglm"
FRAMEWORK: Framework = "hf"
LABEL = "ChatGLM3 / GLM-4 finetune_demo"
PACKAGE = "transformers"
DEFAULT_VERSION = hf_args.HF_VERSION
ARGS = "training_args"
HALLMARK_KEYS = ("max_input_length", "max_output_length", "data_config", "peft_config")
MODEL_KEY = "model_dir"         # set only by a script's positional argument (entries.py)


def _nested(key: Key) -> Key:
    return replace(key, name=f"{ARGS}.{key.name}", aliases=tuple(f"{ARGS}.{a}" for a in key.aliases))


KEYS = {
    **{f: _nested(k) for f, k in hf_args.KEYS.items()},
    **table(
        Key("seq_len", "max_output_length", after="max_input_length", minimum=1),
        Key("method", "peft_config.peft_type"),
        Key("lora_rank", "peft_config.r", after="peft_type", minimum=1),
        Key("lora_alpha", "peft_config.lora_alpha", after="r", minimum=1),
    ),
}

MARKERS = (
    Marker(has_key(f"{ARGS}.evaluation_strategy"), "<=", "4.45"),
)

# PEFT types the scripts take: LoRA-like ones, and the prefix family (ChatGLM's own P-tuning v2).
_LORA = ("LORA", "ADALORA", "LOHA", "LOKR", "IA3")
_PREFIX = ("PREFIX_TUNING", "P_TUNING", "PROMPT_TUNING")


def detect(data: dict) -> Msg | None:
    if not isinstance(data.get(ARGS), dict):
        return None
    keys = [k for k in HALLMARK_KEYS if k in data][:2]
    if not keys:
        return None
    return msg("config.why.chatglm", keys=tuple(keys + [ARGS]))


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE, MARKERS)


def _args_doc(doc: Doc) -> Doc:
    """training_args as a Doc of its own: its keys read flat, at their lines in the file."""
    prefix = ARGS + "."
    args = doc.get(ARGS)
    lines = {k[len(prefix):]: v for k, v in doc.lines.items() if k.startswith(prefix)}
    files = {k[len(prefix):]: v for k, v in doc.files.items() if k.startswith(prefix)}
    return Doc(doc.path, dict(args) if isinstance(args, dict) else {}, lines, doc.kind, doc.tolerant, [], files,
               dict(doc.inline))


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or DEFAULT_VERSION
    b = Builder(FRAMEWORK, version, f"{LABEL} (transformers {version})")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    glm4 = any(doc.has(k) for k in ("freezeV", "combine"))
    model = doc.str_(MODEL_KEY)
    if model:
        b.set("model", model, doc.src(MODEL_KEY))
    else:
        b.values["no_model"] = msg("config.chatglm_no_model",
                                   script="finetune.py" if glm4 else "finetune_hf.py")
    inner = _args_doc(doc)
    hf = hf_args.read_trainer_args(b, inner)
    path = ds.read_ref(b, inner, "deepspeed", hf, model or "", strict=False)
    # Sources name the nested key a patch writes to.
    for field_name, src in list(b.sources.items()):
        if src.file == doc.path and src.key in inner.data:
            b.sources[field_name] = Source(file=src.file, key=f"{ARGS}.{src.key}", line=src.line)
    script = "GLM-4 finetune.py" if glm4 else "ChatGLM3 finetune_hf.py"
    if "precision" not in b.values:
        b.default("precision", "fp32", msg("config.default.no_autocast"))
    if "grad_ckpt" not in b.values:
        b.default("grad_ckpt", True, script)
    if glm4:
        b.default("load_dtype", "bf16", script)
    _read_length(b, doc)
    _read_peft(b, doc)
    b.default("stage", "sft", script)
    fields: dict[str, Any] = {"config_file": doc.path}
    if path:
        fields["deepspeed_file"] = path
    b.keep(doc, ("max_input_length", "max_output_length"))
    return b.build(doc, inner, **fields)


def _read_length(b: Builder, doc: Doc) -> None:
    prompt = doc.int_("max_input_length", minimum=1)
    answer = doc.int_("max_output_length", minimum=1)
    if prompt is None and answer is None:
        raise doc.fail("", msg("config.no_model", key="max_input_length / max_output_length"))
    where = "max_output_length" if answer is not None else "max_input_length"
    b.set("seq_len", (prompt or 0) + (answer or 0), doc.src(where))


def _read_peft(b: Builder, doc: Doc) -> None:
    peft = doc.get("peft_config")
    if not isinstance(peft, dict):
        b.default("method", "full", "peft_config")
        return
    kind = (doc.str_("peft_config.peft_type") or "").upper()
    if kind in _PREFIX:
        b.set("method", "lora", doc.src("peft_config.peft_type"))
        b.note(msg("config.ptuning_yaml", where=doc.where("peft_config.peft_type"), kind=kind))
        b.extras["peft_type"] = kind        # the estimate lengthens the sequence or the keys by the virtual tokens
        tokens = doc.int_("peft_config.num_virtual_tokens", minimum=1)
        if tokens:
            b.extras["prefix_tokens"] = tokens
        return
    if kind not in _LORA:
        doc._bad("peft_config.peft_type", msg("config.not_a_choice", key="peft_config.peft_type", value=kind,
                                               choices=_LORA + _PREFIX))
        b.default("method", "full", "peft_config")
        return
    b.set("method", "lora", doc.src("peft_config.peft_type"))
    if kind == "IA3":
        b.extras["peft_type"] = kind        # IA3's scaling vectors and what their products keep are estimated
        ff = doc.get("peft_config.feedforward_modules")
        if ff:
            b.extras["feedforward_modules"] = ff
    elif kind != "LORA":
        b.note(msg("config.peft_as_lora", where=doc.where("peft_config.peft_type"), kind=kind))
    if not read_int(b, doc, KEYS["lora_rank"]):
        b.default("lora_rank", 8, "peft_config.r")
    if not read_int(b, doc, KEYS["lora_alpha"]):
        b.default("lora_alpha", 8, "peft_config.lora_alpha")
    read_peft_targets(b, doc, "peft_config.target_modules")


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if f in ("micro_batch", "grad_accum", "eval_batch", "lora_rank", "lora_alpha"):
        out.put_key(KEYS[f], int(v))
    elif f == "eval_accum":
        out.put_key(KEYS["eval_accum"], int(v) if v else None)
    elif f == "seq_len":
        # Both halves shrink (or grow) in proportion: the prompt and the answer are cut apart.
        extras = out.setup.extras
        prompt = int(extras.get("max_input_length") or 0)
        answer = int(extras.get("max_output_length") or 0)
        total = int(v)
        new_prompt = max(1, round(total * prompt / (prompt + answer))) if prompt and answer else (total if prompt else 0)
        new_prompt = min(new_prompt, total - 1) if answer else new_prompt
        if prompt:
            out.put("max_input_length", new_prompt)
        if answer:
            out.put("max_output_length", total - new_prompt, after="max_input_length")
    elif f == "precision":
        precision(out, v, bf16_key=f"{ARGS}.bf16", fp16_key=f"{ARGS}.fp16", after="learning_rate")
    elif f in ("grad_ckpt", "fused_ce"):
        out.put_key(KEYS[f], bool(v))
    elif f == "optimizer":
        out.put_key(KEYS["optimizer"], v)
    elif f in ("zero_stage", "offload_optimizer", "offload_params"):
        zero(out, c, final, f"{ARGS}.deepspeed", "output_dir")
    elif f == "method" and v == "lora" and out.setup.method == "full":
        out.put("peft_config", {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": int(final.get("lora_rank") or 8),
                                "lora_alpha": 32, "lora_dropout": 0.1})
