"""HF TrainingArguments and TRL SFTConfig/DPOConfig (+ TRL ModelConfig) as YAML, JSON or the flags of a
script, and the argument files other HF-based projects write (a model, TrainingArguments and a few keys of
their own). One key table reads them and patches them.

Defaults from transformers 4.57 training_args.py and TRL's sft_config.py / base_config.py by release
(reference config-formats.md §3; the tags of huggingface/trl):
- TRL <= 0.14: max_seq_length None = min(tokenizer max, 1024); 0.15-0.17: max_seq_length 1024;
  from 0.18 max_length 1024 (max_seq_length an alias until 0.19, removed in 0.20);
- TRL bf16 = not fp16 from 0.19 (no AMP before unless set); gradient_checkpointing on from 0.22;
- a model given by name loads in float32 (trl/trainer/utils.py) unless model_init_kwargs sets a dtype.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oomdoctor.configs import deepspeed as ds
from oomdoctor.configs import trainer_args as hf_args
from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out, precision, zero
from oomdoctor.configs._keys import Key, Marker, at_least, choose_version, has_key, read_int, read_peft_targets, table
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "hf"
FRAMEWORK: Framework = "hf"
LABEL = "HF Trainer / TRL"
PACKAGE = "transformers"
HF_VERSION = hf_args.HF_VERSION
TRL_VERSION = "0.23"
DEFAULT_VERSION = HF_VERSION

# Keys only TRL configs (SFT/DPO/ModelConfig/ScriptArguments) have.
TRL_KEYS = frozenset("""
dataset_name dataset_text_field max_length max_seq_length packing packing_strategy padding_free use_peft
lora_r lora_alpha lora_target_modules load_in_4bit load_in_8bit model_init_kwargs completion_only_loss
assistant_only_loss loss_type beta max_prompt_length activation_offloading dataset_config dataset_train_split
torch_dtype attn_implementation use_bnb_nested_quant dataset_mixture
""".split())

KEYS = {
    **hf_args.KEYS,
    **table(
        Key("seq_len", "max_length", after="per_device_train_batch_size", minimum=1,
            until=(("0.17", "max_seq_length"),)),
        Key("method", "use_peft", after="model_name_or_path"),
        Key("lora_rank", "lora_r", after="use_peft", minimum=1),
        Key("lora_alpha", "lora_alpha", after="lora_r", minimum=1),
        Key("lora_targets", "lora_target_modules", after="lora_r"),
        Key("quant_bits", "load_in_4bit", after="use_peft"),
        Key("attention", "attn_implementation", after="model_name_or_path"),
        Key("packing", "packing", after="max_length"),
        Key("load_dtype", "dtype", after="model_name_or_path", aliases=("torch_dtype",)),
    ),
}

TRL_MARKERS = (
    Marker(has_key("max_seq_length"), "<=", "0.19"),
    Marker(has_key("packing_strategy"), ">=", "0.19"),
    Marker(has_key("completion_only_loss", "assistant_only_loss"), ">=", "0.20"),
)
HF_MARKERS = (
    Marker(has_key("evaluation_strategy"), "<=", "4.45"),
    Marker(has_key("activation_checkpointing"), ">=", "5.0"),
)

DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
          "float32": "fp32", "fp32": "fp32", "float": "fp32", "auto": None}
ATTN = {"eager": "eager", "sdpa": "sdpa", "flash_attention_2": "fa2", "flash_attention_3": "fa2",
        "kernels-community/flash-attn": "fa2", "kernels-community/vllm-flash-attn3": "fa2", "flex_attention": "sdpa"}
_HF_ATTN = {"eager": "eager", "sdpa": "sdpa", "fa2": "flash_attention_2"}


# Fields only TRL's own dataclasses define, no TrainingArguments and no other reader's: ModelConfig's
# (trl/trainer/model_config.py: use_peft, lora_r, lora_task_type, use_rslora, use_bnb_nested_quant) and GRPOConfig's
# (trl/trainer/grpo_config.py: num_generations, use_vllm, vllm_gpu_memory_utilization, max_completion_length,
# reward_funcs) at f2cd57710.
_TRL_OWN_KEYS = frozenset({"use_peft", "lora_r", "lora_task_type", "use_rslora", "use_bnb_nested_quant",
                           "num_generations", "use_vllm", "vllm_gpu_memory_utilization", "max_completion_length",
                           "reward_funcs"})


def is_trl(doc: Doc) -> bool:
    return any(k in TRL_KEYS for k in doc.data)


def detect(data: dict) -> Msg | None:
    model_key = next((k for k in ("model_name_or_path", "model_id") if data.get(k)), None)
    if model_key is None and isinstance(data.get("model"), str) and any(
            k in data for k in ("per_device_train_batch_size", "output_dir")):
        model_key = "model"
    if model_key is None:
        own = [k for k in data if k in _TRL_OWN_KEYS]
        if len(own) >= 2 and any(k in data for k in ("per_device_train_batch_size", "gradient_accumulation_steps")):
            # the model left to the command line or the script's code: TRL's own dataclass fields say whose
            return msg("config.why.trl", keys=tuple(own[:3]))
        return None
    trl = [k for k in data if k in TRL_KEYS][:2]
    if trl:
        return msg("config.why.trl", keys=tuple([model_key] + trl))
    return msg("config.why.hf", keys=model_key)


def uses_trl(doc: Doc, entry: Any) -> bool:
    """TRL's defaults apply: a TRL entry point, or TRL keys in a config file. A script oomdoctor does
    not know is never given TRL's defaults: its TRL-like flags are read as conventions."""
    return entry.trl if entry is not None else is_trl(doc)


def version(doc: Doc, flag: str | None, log_versions: dict[str, str], hint: tuple[str, Msg] | None = None,
            entry: Any = None) -> tuple[str, Msg]:
    if uses_trl(doc, entry):
        return choose_version("trl", TRL_VERSION, TRL_MARKERS, doc, flag=flag, log=log_versions.get("trl"),
                              log_name="trl", hint=hint)
    return choose_version(NAME, HF_VERSION, HF_MARKERS, doc, flag=flag, log=log_versions.get("transformers"),
                          log_name="transformers", hint=hint)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    from oomdoctor.configs.trainer_args import read_conventions

    entry = ctx.entry
    trl = uses_trl(doc, entry)
    version = ctx.framework_version or (TRL_VERSION if trl else HF_VERSION)
    b = _builder(entry, trl, version)
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    model_key = next((k for k in ("model_name_or_path", "model", "model_id") if doc.get(k) is not None), None)
    if trl and doc.str_("sft_model_path"):
        # TRL's PPO scripts load the trained policy from PPOConfig's sft_model_path (RLOOConfig's up to 0.16 the
        # same); model_name_or_path is only the tokenizer's (examples/scripts/ppo/ppo.py:88,96 at f2cd57710,
        # trl/experimental/ppo/ppo_config.py:181)
        model_key = "sft_model_path"
    model = doc.str_(model_key) if model_key else None
    if model and model_key:
        b.set("model", model, doc.src(model_key))
    elif entry is None and trl and sum(k in _TRL_OWN_KEYS for k in doc.data) >= 2:
        # a TRL config whose model its script takes elsewhere (the command line, its own code): read, the model
        # asked for
        b.values["no_model"] = msg("config.trl_no_model")
    elif entry is None:
        raise doc.fail(model_key or "", msg("config.no_model", key="model_name_or_path"))
    hf = hf_args.read_trainer_args(b, doc)
    if trl:
        _read_trl(b, doc, version)
    else:
        # Another project's argument file or script: its own names for length, LoRA, quantisation.
        read_conventions(b, doc, ctx)
        if "seq_len" not in b.values:
            b.default("seq_len", 2048, msg("config.default.hf_no_seq", tokens=2048))
        if "grad_ckpt" not in b.values:
            b.default("grad_ckpt", False)
        if "precision" not in b.values:
            b.default("precision", "fp32", msg("config.default.no_autocast"))
        if "method" not in b.values:
            b.default("method", "full")
    _read_stage(b, doc, trl)
    fields: dict[str, Any] = {"config_file": doc.path}
    path = ds.read_ref(b, doc, _deepspeed_key(doc), hf, model or "", strict=doc.kind != "cli" and not doc.tolerant)
    if path:
        fields["deepspeed_file"] = path
    n = doc.int_("nproc_per_node", minimum=1)
    if n:
        b.set("n_gpus", n, doc.src("nproc_per_node"))
    if trl:
        _read_trl_launch(b, doc)
    if entry is not None:
        _entry_defaults(b, doc, entry)
    return b.build(doc, **fields)


def _deepspeed_key(doc: Doc) -> str:
    """The flag that names the DeepSpeed JSON: TrainingArguments' `--deepspeed FILE`, or, on a script's command
    line, DeepSpeed's own `--deepspeed_config FILE` (`--deepscale_config`, its old name) that
    deepspeed.add_config_arguments() adds beside the bare `--deepspeed` switch (deepspeed/__init__.py,
    _add_core_arguments)."""
    if doc.kind != "cli" or (doc.get("deepspeed") is not None and str(doc.get("deepspeed")).lower() != "true"):
        return "deepspeed"
    return next((k for k in ("deepspeed_config", "deepscale_config") if doc.str_(k)), "deepspeed")


def _builder(entry: Any, trl: bool, version: str) -> Builder:
    own = getattr(entry, "framework", None)
    if own:
        # A framework of its own on transformers (ms-swift, OpenRLHF): named as itself; the transformers
        # release its defaults follow is kept for the memory model.
        b = Builder(own, "", f"{str(entry.label).split()[0]} (transformers {version})")
        b.extras["transformers_version"] = version
        return b
    return Builder("trl" if trl else FRAMEWORK, version, f"TRL {version}" if trl else f"transformers {version}")


def _read_stage(b: Builder, doc: Doc, trl: bool) -> None:
    stage = doc.str_("stage")
    grpo = trl and next((k for k in _GRPO_KEYS if doc.has(k)), None)
    if stage in ("sft", "dpo", "kto", "ppo", "rm", "pt"):
        b.set("stage", stage, doc.src("stage"))
    elif trl and doc.str_("sft_model_path") and not doc.has("rloo_k"):
        # PPOConfig's own field (a policy, a value model from reward_model_path, a frozen reference): PPO;
        # the old RLOOConfig shares sft_model_path but is told apart by its rloo_k (TRL 0.11-0.16 rloo_config.py)
        b.set("stage", "ppo", doc.src("sft_model_path"))
    elif grpo:
        _read_grpo(b, doc, grpo)
    elif trl and (doc.has("beta") or doc.has("max_prompt_length")):
        orpo = _orpo_hint(doc)
        if orpo is not None:
            # ORPOConfig's keys are DPOConfig's less the reference model's: only a name tells them apart.
            b.default("stage", "orpo", msg("config.default.orpo_hint", where=orpo))
            b.note(msg("config.trl_orpo_hint", where=orpo))
        else:
            b.default("stage", "dpo", msg("config.default.dpo_keys", keys="beta / max_prompt_length"))


def _entry_defaults(b: Builder, doc: Doc, entry: Any) -> None:
    """The script's own dataclass defaults replace TrainingArguments' where the command line is silent."""
    b.extras["entry"] = entry.name
    for field_name, value in entry.defaults_for(doc.data):
        src = b.sources.get(field_name)
        if field_name in ("grad_ckpt", "attention", "precision", "stage", "fsdp", "offload_params", "offload_optimizer",
                          "optimizer", "eval_batch") and (src is None or src.file is None):
            b.default(field_name, value, entry.label)
    if entry.name == "unsloth_cli":
        # unsloth-cli.py loads with FastLanguageModel and passes --use_gradient_checkpointing ("unsloth" by default)
        # to get_peft_model (unslothai/unsloth@015bdef0 unsloth-cli.py): unsloth's own mechanisms (memory/loss.py
        # unsloth_loss, estimate.py _stack_bytes)
        b.default("use_unsloth", True, entry.label)
        if str(doc.data.get("use_gradient_checkpointing", "unsloth")).strip().strip("'\"").lower() == "unsloth":
            b.extras["use_gradient_checkpointing"] = "unsloth"
    src = b.sources.get("precision")
    if entry.precision_from_dtype and (src is None or src.file is None):
        dtype = b.values.get("load_dtype")
        where = b.sources.get("load_dtype")
        autocast = "bf16" if dtype in (None, "bf16") else "fp16"
        if where is not None and where.file:
            b.set("precision", autocast, where)
        else:
            b.default("precision", autocast, entry.label)


# `trl sft|dpo|… --config x.yaml` hands the keys its training parser does not take to `accelerate launch`
# (trl/cli/commands/training.py): `num_processes`, and `accelerate_config`, a path or the name of a profile
# TRL ships (trl/cli/accelerate_config.py). The profiles, trl/accelerate_configs/*.yaml: 8 processes, bf16.
_TRL_PROFILES: dict[str, dict[str, Any]] = {
    "zero1": {"zero_stage": 1}, "zero2": {"zero_stage": 2}, "zero3": {"zero_stage": 3},
    "fsdp1": {"fsdp": "full_shard"}, "fsdp2": {"fsdp": "full_shard"}, "multi_gpu": {},
    "single_gpu": {"n_gpus": 1},        # distributed_type "NO": one process
}
_TRL_PROFILE_GPUS = 8


def _read_trl_launch(b: Builder, doc: Doc) -> None:
    name = doc.str_("accelerate_config")
    if name:
        profile = _TRL_PROFILES.get(name.lower())
        if profile is None:
            b.extras["accelerate_config"] = name        # a path: read with the launcher's (entrypoints)
        else:
            src = doc.src("accelerate_config")
            for field_name, value in {"n_gpus": _TRL_PROFILE_GPUS, **profile}.items():
                b.set(field_name, value, src)
            if "precision" not in b.sources or b.sources["precision"].file is None:
                b.set("precision", "bf16", src)
    n = doc.int_("num_processes", minimum=1)
    if n:
        b.set("n_gpus", n, doc.src("num_processes"))


# DPOConfig keys ORPOConfig does not take (the reference model's, and DPO's loss variants).
_DPO_ONLY = ("ref_model_init_kwargs", "precompute_ref_log_probs", "sync_ref_model", "ref_adapter_name",
             "force_use_ref_model", "reference_free", "ref_model_mixup_alpha", "ref_model_sync_steps",
             "rpo_alpha", "f_divergence_type", "loss_type", "label_smoothing", "use_weighting")
_ORPO_NAMES = ("hub_model_id", "run_name", "output_dir")


def _orpo_hint(doc: Doc) -> str | None:
    """Where the file says it is an ORPO run, when its keys cannot (alignment-handbook recipes/*/orpo/
    config_*.yaml: the path, or the hub id / run name / output folder): `file` or `file:line`; None when
    nothing says so or a key only DPOConfig takes is there."""
    import re

    if any(doc.has(k) for k in _DPO_ONLY):
        return None
    # The file's name and the two folders above it (recipes/<model>/orpo/config_full.yaml).
    tail = "/".join(doc.path.replace("\\", "/").lower().split("/")[-3:])
    if "orpo" in re.split(r"[^a-z0-9]+", tail):
        return doc.path
    for key in _ORPO_NAMES:
        value = doc.get(key)
        if isinstance(value, str) and "orpo" in re.split(r"[^a-z0-9]+", value.lower()):
            return doc.where(key)
    return None


# GRPOConfig's own keys: an online RL run, not a preference pair (open-r1 recipes/*/grpo/*.yaml).
_GRPO_KEYS = ("num_generations", "max_completion_length", "reward_funcs", "use_vllm")


def _read_grpo(b: Builder, doc: Doc, key: str) -> None:
    """A GRPO run trains on one prompt + completion per sample (no chosen/rejected pair; the reference
    model only with beta > 0, 0.0 by default): read as one sequence of max_prompt_length +
    max_completion_length (512 each by default), said in a note."""
    b.default("stage", "sft", msg("config.default.grpo_keys", keys=key))
    if not (b.sources.get("seq_len") and b.sources["seq_len"].file and doc.has("max_length")):
        prompt = doc.int_("max_prompt_length", minimum=1) or 512
        completion = doc.int_("max_completion_length", minimum=1) or 512
        where = "max_completion_length" if doc.has("max_completion_length") else (
            "max_prompt_length" if doc.has("max_prompt_length") else None)
        if where:
            b.set("seq_len", prompt + completion, doc.src(where))
        else:
            b.default("seq_len", prompt + completion, "max_prompt_length + max_completion_length")
    b.note(msg("config.trl_grpo", where=doc.where(key), tokens=b.values["seq_len"]))


def _read_trl(b: Builder, doc: Doc, version: str) -> None:
    _read_trl_training(b, doc, version)
    _read_trl_model(b, doc)
    loss = (doc.str_("loss_type") or "").lower()
    if loss == "chunked_nll":
        b.set("fused_ce", True, doc.src("loss_type"))
    b.keep(doc, ("loss_type", "padding_free", "packing_strategy", "activation_offloading", "max_prompt_length",
                 "beta", "dataset_name", "completion_only_loss", "use_bnb_nested_quant"))
    if doc.bool_("activation_offloading"):
        b.extras["activation_offloading"] = True


def _read_trl_training(b: Builder, doc: Doc, version: str) -> None:
    """TRL's SFTConfig side: length, packing, checkpointing and precision, with their version's defaults."""
    seq = KEYS["seq_len"]
    if not read_int(b, doc, seq, version):
        b.default("seq_len", 1024, seq.name_for(version))
    b.from_doc("packing", doc, "packing", doc.bool_("packing"))
    if "grad_ckpt" not in b.values:
        if at_least(version, "0.22"):
            b.default("grad_ckpt", True, msg("config.default.trl_grad_ckpt", version="0.22"))
        else:
            b.default("grad_ckpt", False, "gradient_checkpointing")
    if "precision" not in b.values:
        if doc.bool_("fp16"):
            b.set("precision", "fp16", doc.src("fp16"))
        elif at_least(version, "0.19"):
            b.default("precision", "bf16", "bf16 = not fp16")
        else:
            b.default("precision", "fp32", msg("config.default.no_autocast"))


def _read_trl_model(b: Builder, doc: Doc) -> None:
    """TRL's ModelConfig side: LoRA / QLoRA, load dtype and attention."""
    if doc.bool_("use_peft"):
        _read_trl_peft(b, doc)
    else:
        b.default("method", "full", "use_peft false")
    dkey = next((k for k in ("dtype", "torch_dtype", "model_init_kwargs.dtype", "model_init_kwargs.torch_dtype")
                 if doc.get(k) is not None), None)
    dtype = doc.str_(dkey) if dkey else None
    if dkey and dtype and DTYPES.get(dtype.lower()):
        b.set("load_dtype", DTYPES[dtype.lower()], doc.src(dkey))
    elif dkey is None:
        b.default("load_dtype", "fp32", msg("config.default.trl_fp32_load"))
    akey = next((k for k in ("attn_implementation", "model_init_kwargs.attn_implementation") if doc.get(k)), None)
    if akey and doc.str_(akey):
        word = (doc.str_(akey) or "").lower()
        b.set("attention", ATTN.get(word, "fa2" if "flash" in word else "sdpa"), doc.src(akey))
    elif akey is None:
        # The switch the projects built on TRL's scripts name it by (open-instruct, FastChat: use_flash_attn; peft's
        # examples: use_flash_attention_2): the conventions' name for FlashAttention-2, said as assumed.
        fkey = next((k for k in ("use_flash_attn", "use_flash_attention_2") if doc.bool_(k)), None)
        if fkey is not None:
            b.set("attention", "fa2", doc.src(fkey))
            b.note(msg("config.flag_assumed", where=doc.where(fkey), flag=fkey, field=msg("config.kind.flash")))


def _read_trl_peft(b: Builder, doc: Doc) -> None:
    b.set("method", "lora", doc.src("use_peft"))
    if not read_int(b, doc, KEYS["lora_rank"]):
        b.default("lora_rank", 16, "lora_r")
    if not read_int(b, doc, KEYS["lora_alpha"]):
        b.default("lora_alpha", 32, "lora_alpha")
    read_peft_targets(b, doc, "lora_target_modules")
    for bits, key in ((4, "load_in_4bit"), (8, "load_in_8bit")):
        if doc.bool_(key):
            b.set("method", "qlora", doc.src(key))
            b.set("quant_bits", bits, doc.src(key))
    b.from_doc("use_dora", doc, "use_dora", doc.bool_("use_dora"))


def _edit_method(out: Out, v: Any, final: dict[str, Any]) -> None:
    """TRL's ModelConfig switches: use_peft, lora_r (16 by default), load_in_4bit / load_in_8bit."""
    if v not in ("lora", "qlora"):
        out.put("use_peft", False, after="model_name_or_path")
        return
    out.put("use_peft", True, after="model_name_or_path")
    if not out.has_key("lora_r") and "lora_rank" not in final:
        out.put("lora_r", 16, after="use_peft")
    if v == "qlora":
        out.put("load_in_4bit" if (final.get("quant_bits") or 4) == 4 else "load_in_8bit", True, after="use_peft")


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    from oomdoctor.configs.entries import by_name

    entry = by_name(out.setup.extras.get("entry"))
    if entry is not None and not entry.trl and (c.field not in _TRAINER_FIELDS or (
            entry.trainer_fields is not None and c.field not in entry.trainer_fields)):
        return _edit_entry(out, entry, c, final)
    v, f = c.after, c.field
    if f in ("micro_batch", "grad_accum", "eval_batch", "lora_rank"):
        out.put_key(KEYS[f], int(v))
    elif f == "seq_len":
        _, key = out.field_key("seq_len")
        out.put(key or KEYS["seq_len"].name_for(out.version), int(v), after=KEYS["seq_len"].after)
    elif f == "method":
        _edit_method(out, v, final)
    elif f == "quant_bits":
        out.put("load_in_4bit" if v == 4 else "load_in_8bit", bool(v), after="use_peft")
    elif f == "precision":
        precision(out, v, after="learning_rate")
    elif f in ("grad_ckpt", "fused_ce", "packing"):
        _, key = out.field_key(f)
        out.put(key if key in KEYS[f].names() else KEYS[f].name, bool(v), after=KEYS[f].after)
    elif f == "attention":
        out.put_key(KEYS["attention"], _HF_ATTN.get(v, v))
    elif f == "optimizer":
        out.put_key(KEYS["optimizer"], v)
    elif f in ("zero_stage", "offload_optimizer", "offload_params"):
        zero(out, c, final, "deepspeed", "output_dir")
    elif f == "eval_accum":
        out.put_key(KEYS["eval_accum"], int(v) if v else None)
    elif f == "load_dtype":
        out.put_key(KEYS["load_dtype"], {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}.get(v, v))


# Fields whose keys are TrainingArguments names: every HF-based script takes them.
_TRAINER_FIELDS = ("micro_batch", "grad_accum", "eval_batch", "eval_accum", "precision", "grad_ckpt", "optimizer",
                   "zero_stage", "offload_optimizer", "offload_params", "fused_ce")


def _edit_entry(out: Out, entry: Any, c: Change, final: dict[str, Any]) -> None:
    """A script's own flags: the one it has, or one its parser is known to take. A flag the script may
    not take is never added (HfArgumentParser refuses unknown flags): that change stays advice."""
    v, f = c.after, c.field
    known = entry.flags is not None

    def put(kind: str, value: Any, field_name: str | None = None) -> None:
        if isinstance(value, bool) and entry.trainer_fields is not None:
            return      # an argparse store_true switch takes no value: `--only_optimize_lora true` would not parse
        file, key = out.field_key(field_name) if field_name else (None, None)
        flag = key if key and file == out.setup.config_file else (entry.flag_for(kind) if known else None)
        if flag:
            out.put(flag, value, after=_after(out))

    if f == "seq_len":
        put("seq", int(v), "seq_len")
    elif f == "lora_rank":
        put("rank", int(v), "lora_rank")
    elif f == "method":
        _edit_entry_method(put, set((entry.flags or {}).values()), v, final)
    elif f == "quant_bits":
        flags = entry.flags or {}
        if "bits" in flags.values():
            put("bits", int(v) if v else 16)
        elif "q_lora" in flags.values():
            put("q_lora", bool(v))
    elif f == "attention" and v == "fa2":
        put("flash", True)
    elif f == "zero_stage" and "zero" in (entry.flags or {}).values():
        put("zero", int(v), "zero_stage")
    elif f == "precision" and v in ("bf16", "fp16") and "precision" in (entry.flags or {}).values():
        put("precision", v, "precision")
    elif f == "micro_batch" and out.setup.megatron:
        # Megatron's accumulation follows: global_batch_size // (micro_batch_size x data parallel)
        # (megatron/core/num_microbatches_calculator.py), so the global batch stays as written
        put("micro", int(v), "micro_batch")
    elif f == "grad_ckpt" and out.setup.megatron and v:
        put("recompute", "full", "recompute")      # Megatron's activation checkpointing: --recompute_granularity


def _edit_entry_method(put: Callable[..., None], kinds: set[str], v: Any, final: dict[str, Any]) -> None:
    """The method through a script's own switches: a mode word, a LoRA or full switch, a 4-bit switch."""
    if "train_type" in kinds:
        put("train_type", v, "method")
    elif v in ("lora", "qlora") and "use_lora" in kinds:
        put("use_lora", True)
        if v == "qlora":
            put("q_lora", True)
    elif v in ("lora", "qlora") and "full" in kinds:
        put("full", False)
        if v == "qlora":
            put("bits", int(final.get("quant_bits") or 4))
    elif v == "qlora" and "q_lora" in kinds:
        put("q_lora", True)
    elif v == "full" and "use_lora" in kinds:
        put("use_lora", False)


def _after(out: Out) -> str | None:
    """Add a new flag after the script's last TrainingArguments flag it already has."""
    for name in ("gradient_checkpointing", "per_device_train_batch_size", "model_name_or_path"):
        if out.has_key(name):
            return name
    return None
