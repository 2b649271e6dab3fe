"""torchtune recipe YAML (OmegaConf, `_component_` builders). Keys read with `cfg.get(k, d)` default to d,
keys read as `cfg.k` are required (torchtune bd2a0fc recipes; reference config-formats.md §5).
The whole model and optimizer state live in `dtype` (no AMP, no fp32 master copy). One key table reads
it and patches it.

Releases (tags of pytorch/torchtune): up to 0.2 the dataset builder truncated (`dataset.max_seq_len`,
512 by default in the alpaca-style builders) and checkpointers and loggers lived in `torchtune.utils`;
from 0.3 the tokenizer truncates (`tokenizer.max_seq_len`, null = no truncation) and they moved to
`torchtune.training`. The distributed recipe splits sequences with `context_parallel_dim`.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, Marker, at_most, has_key, read_int, table, value_is, version_chooser
from oomdoctor.facts import Change, Framework, Msg, Source, TrainingSetup, msg
from oomdoctor.lazyre import lazy_re

NAME = "torchtune"
FRAMEWORK: Framework = "torchtune"
LABEL = "torchtune"
PACKAGE = "torchtune"
TORCHTUNE_VERSION = "0.6"
DEFAULT_VERSION = TORCHTUNE_VERSION

KEYS = table(
    Key("micro_batch", "batch_size", after="shuffle", minimum=1),
    Key("grad_accum", "gradient_accumulation_steps", after="epochs", minimum=1),
    Key("eval_batch", "batch_size_val", after="dataset_val", minimum=1),
    Key("seq_len", "tokenizer.max_seq_len", after="path", minimum=1, until=(("0.2.1", "dataset.max_seq_len"),)),
    Key("method", "model._component_"),
    Key("lora_rank", "model.lora_rank", after="_component_", minimum=1),
    Key("lora_alpha", "model.lora_alpha", after="lora_rank", minimum=1),
    Key("precision", "dtype", after="device"),
    Key("grad_ckpt", "enable_activation_checkpointing", after="device"),
    Key("optimizer", "optimizer._component_"),
    Key("fused_ce", "loss._component_"),
    Key("packing", "dataset.packed", after="_component_"),
    Key("offload_params", "fsdp_cpu_offload", after="enable_activation_offloading"),
    Key("seq_parallel", "context_parallel_dim", after="tensor_parallel_dim", minimum=1,
        aliases=("context_parallel_size",)),
)

MARKERS = (
    Marker(value_is("checkpointer._component_", r"^torchtune\.utils\."), "<=", "0.2.1"),
    Marker(value_is("metric_logger._component_", r"^torchtune\.utils\."), "<=", "0.2.1"),
    Marker(has_key("dataset.max_seq_len"), "<=", "0.2.1"),
    Marker(has_key("tokenizer.max_seq_len"), ">=", "0.3.0"),
    Marker(has_key("context_parallel_dim"), ">=", "0.6.0"),
)

# torchtune's async GRPO recipe keeps its trainer's settings under `training:` (recipes/dev/
# async_grpo_full_finetune_distributed.py:137 `cfg.training.batch_size`; torchtune/dev/rl/workers/trainers/training.py
# :70-133 `cfg.training.{checkpointer,optimizer,loss,enable_activation_checkpointing,fsdp_cpu_offload}`), trains in
# bf16 whatever the config says (training.py:63 `get_dtype("bf16")`) on `orchestration.num_training_workers` GPUs.
_TRAINER_SECTION = "training"
_IN_SECTION = ("micro_batch", "grad_accum", "grad_ckpt", "optimizer", "fused_ce", "offload_params")


def _section(doc: Doc) -> str | None:
    """`training` when the trainer's settings live there (no top-level batch_size, `training.batch_size` set)."""
    if not doc.has("batch_size") and isinstance(doc.get(_TRAINER_SECTION), dict) \
            and doc.has(f"{_TRAINER_SECTION}.batch_size"):
        return _TRAINER_SECTION
    return None


def _keys(section: str | None) -> dict[str, Key]:
    if not section:
        return KEYS
    return {f: (replace(k, name=f"{section}.{k.name}", aliases=tuple(f"{section}.{a}" for a in k.aliases))
                if f in _IN_SECTION else k) for f, k in KEYS.items()}


_DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "fp32": "fp32", "float32": "fp32"}
_OPTIM = {"adamw": "adamw_torch", "adam": "adamw_torch", "pagedadamw8bit": "paged_adamw_8bit",
          "adamw8bit": "adamw_8bit", "pagedadamw": "paged_adamw_32bit", "sgd": "sgd", "adafactor": "adafactor",
          "lion": "lion_32bit", "adamw4bit": "adamw_torch_4bit"}
# torchtune/rlhf/loss/dpo.py (DPOLoss, RSOLoss: a chosen/rejected pair) and ppo.py (PPOLoss).
_LOSS_STAGES = {"DPOLoss": "dpo", "RSOLoss": "dpo", "SimPOLoss": "simpo", "PPOLoss": "ppo"}
_CHUNKED_LOSSES = ("LinearCrossEntropyLoss", "CEWithChunkedOutputLoss", "ChunkedCrossEntropyLoss")


def _interpolate(doc: Doc) -> Doc:
    """Resolve `${key}` references to top-level scalars, as OmegaConf would (a new Doc: the parsed
    data is shared with the parse cache)."""
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
    return Doc(doc.path, {k: sub(v) for k, v in doc.data.items()}, doc.lines, doc.kind, doc.tolerant, doc.notes,
               doc.files, doc.inline, doc.header)


# Builders whose hub repository the catalog cannot spell from the name: torchtune's own recipes download these
# (torchtune models/<family>/_model_builders.py and recipes/configs/<family>/*.yaml headers). The builder's own
# version decides: llama3_3_70b is Llama 3.3, never 3.1.
_HUB_IDS = (
    (r"phi4_14b", "microsoft/phi-4"),
    (r"phi3_mini", "microsoft/Phi-3-mini-4k-instruct"),
    (r"llama3_3_70b", "meta-llama/Llama-3.3-70B-Instruct"),
    (r"llama3_2_vision_(11|90)b", "meta-llama/Llama-3.2-{0}B-Vision-Instruct"),
    (r"llama4_scout_17b_16e", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    (r"llama4_maverick_17b_128e", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"),
)


def _downloaded(header: tuple[str, ...], ckpt_dir: str | None) -> tuple[int, str] | None:
    """(line, repo) of the header's `tune download <repo> [--output-dir DIR]` when that download is the
    checkpointer's directory (DIR, or /tmp/<repo name> when no DIR is given: `tune download`'s default)."""
    if not ckpt_dir:
        return None
    want = os.path.normpath(ckpt_dir.rstrip("/"))
    for number, line in enumerate(header, 1):
        m = re.search(r"tune download\s+([\w.-]+/[\w.-]+)(.*)", line)
        if not m:
            continue
        out = re.search(r"--output-dir[= ]\s*(\S+)", m.group(2))
        where = out.group(1) if out else "/tmp/" + m.group(1).split("/")[-1]
        if os.path.normpath(where.rstrip("/")) == want:
            return number, m.group(1)
    return None


def model_from_builder(builder: str) -> str:
    """torchtune builder -> a model name the catalog resolves: qlora_llama3_1_8b -> meta-llama/Llama-3.1-8B.

    "qwen2_5_1_5b" could be Qwen2.5-1.5B or Qwen2-5.1.5B: both readings are tried against the catalog."""
    from oomdoctor.models import _catalog_id

    name = builder.rsplit(".", 1)[-1]
    name = re.sub(r"^(q?lora|q?dora)_", "", name)
    for pattern, hub in _HUB_IDS:
        m = re.fullmatch(pattern, name)
        if m:
            return hub.format(*m.groups())
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
            # The catalog keys base models; keep the variant the builder names (…_instruct -> -Instruct).
            variant = "".join("-" + t.capitalize() for t in suffix)
            return found if not variant or found.lower().endswith(variant.lower()) else found + variant
    fam, sz = readings[-1]
    return fam[0] + "".join("." + t for t in fam[1:]) + "-" + sz + tail


def detect(data: dict) -> Msg | None:
    model = data.get("model")
    if isinstance(model, dict) and "_component_" in model:
        return msg("config.why.torchtune", keys="model._component_")
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE, MARKERS)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or TORCHTUNE_VERSION
    b = Builder(FRAMEWORK, version, f"torchtune {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    doc = _interpolate(doc)
    builder = doc.str_("model._component_")
    run = _run_comment(doc.header)
    cut = not builder and not doc.has("model") and run is not None and method_of_recipe(run[1]) is not None
    if not builder and not cut:
        raise doc.fail("model._component_", msg("config.no_model", key="model._component_"))
    section = _section(doc)
    keys, at = _keys(section), f"{section}." if section else ""
    if section:
        b.extras["trainer_section"] = section
    b.default("stage", "sft")
    if cut and run is not None:
        # A printed config cut before its `model:` section: the checkpoint it loads names the model, the recipe
        # the method (lora_finetune_*, full_finetune_*), said in a note.
        _read_model_from_checkpoint(b, doc, at)
        b.set("method", method_of_recipe(run[1]), Source(file=doc.path, key="tune run", line=run[0]))
    else:
        _read_model(b, doc, builder or "", at)
        b.extras["model_builder"] = builder
        _read_method(b, doc, (builder or "").rsplit(".", 1)[-1])
    _read_batch_and_length(b, doc, version, keys)
    if section and not doc.has("dtype"):
        b.default("precision", "bf16", msg("config.default.tt_trainer_bf16"))
        b.default("load_dtype", "bf16", msg("config.default.tt_trainer_bf16"))
        b.default("pure_bf16", True, msg("config.default.tt_trainer_bf16"))
    else:
        _read_precision(b, doc)
    ckpt = keys["grad_ckpt"].name
    if not b.from_doc("grad_ckpt", doc, ckpt, doc.bool_(ckpt)):
        b.default("grad_ckpt", False, ckpt)
    if doc.bool_(f"{at}enable_activation_offloading"):
        b.extras["activation_offloading"] = True
    b.default("attention", "sdpa", msg("config.default.tt_sdpa"))
    _read_optimizer(b, doc, at)
    _read_loss(b, doc, at)
    if doc.bool_("optimizer_in_bwd"):
        b.extras["optimizer_in_bwd"] = True
    if section:
        _read_trainer_workers(b, doc, at)
    else:
        _read_distribution(b, doc)
    if b.values.get("fsdp") and not at_most(version, "0.2.1"):
        # the distributed recipes shard with torch's fully_shard since 0.3.0 (recipes/full_finetune_distributed.py
        # afd23fd0b, lora_finetune_distributed.py 6deeda92c); before, FullyShardedDataParallel (FSDP1)
        b.extras["fsdp_version"] = 2
    if doc.get("run_val_every_n_steps") not in (None, ""):
        b.set("do_eval", True, doc.src("run_val_every_n_steps"))
        read_int(b, doc, KEYS["eval_batch"])
    if "eval_batch" not in b.values:
        b.default("eval_batch", b.values["micro_batch"], "batch_size_val = batch_size")
    b.keep(doc, ("epochs", "max_steps_per_epoch", "compile", "custom_sharded_layers", "clip_grad_norm",
                 "tensor_parallel_dim"))
    return b.build(doc, config_file=doc.path)


def _read_model(b: Builder, doc: Doc, builder: str, at: str = "") -> None:
    ckpt_key = f"{at}checkpointer.checkpoint_dir"
    ckpt_dir = doc.str_(ckpt_key)
    downloaded = _downloaded(doc.header, ckpt_dir)
    if ckpt_dir and os.path.isfile(os.path.join(os.path.expanduser(ckpt_dir), "config.json")):
        b.set("model", ckpt_dir, doc.src(ckpt_key))
    elif downloaded is not None:
        # The header's `tune download <repo> --output-dir <dir>` fetched the checkpoint the checkpointer reads.
        b.set("model", downloaded[1], Source(file=doc.path, key="tune download", line=downloaded[0]))
    else:
        b.set("model", model_from_builder(builder), doc.src("model._component_"))


def _read_model_from_checkpoint(b: Builder, doc: Doc, at: str = "") -> None:
    """The model a checkpointer's folder holds: its config.json when here, else the catalog's repository its name
    is (the variant the folder names kept: /tmp/Llama-3.2-11B-Vision-Instruct), else the folder as written."""
    from oomdoctor.models import _catalog_id

    key = f"{at}checkpointer.checkpoint_dir"
    ckpt_dir = doc.str_(key)
    if not ckpt_dir:
        raise doc.fail("model._component_", msg("config.no_model", key="model._component_"))
    name = os.path.basename(os.path.normpath(ckpt_dir))
    found = None if os.path.isfile(os.path.join(os.path.expanduser(ckpt_dir), "config.json")) else \
        _catalog_id(name, loose=True)
    if found and name.lower().startswith(found.split("/")[-1].lower()):
        found = found.split("/")[0] + "/" + name
    b.set("model", found if found and found.endswith("/" + name) else ckpt_dir, doc.src(key))


def _read_method(b: Builder, doc: Doc, short: str) -> None:
    if short.startswith(("qlora_", "qdora_")):
        b.set("method", "qlora", doc.src("model._component_"))
        b.set("quant_bits", 4, doc.src("model._component_"))
    elif short.startswith(("lora_", "dora_")):
        b.set("method", "lora", doc.src("model._component_"))
    else:
        b.set("method", "full", doc.src("model._component_"))
    if short.startswith(("dora_", "qdora_")) or doc.bool_("model.use_dora"):
        b.set("use_dora", True, doc.src("model._component_"))
    if b.values["method"] == "full":
        # The vision builders' decoder_trainable / encoder_trainable / fusion_trainable (torchtune/models/
        # llama3_2_vision/_model_builders.py llama3_2_vision_11b/_90b: decoder_trainable=False, the others True): a
        # frozen part gets no gradient and no optimizer state, which the estimate cannot take apart yet: said, so
        # the over-count is not silent
        vision = short.startswith("llama3_2_vision_")
        frozen = tuple(k for k in ("decoder_trainable", "encoder_trainable", "fusion_trainable")
                       if doc.get(f"model.{k}") is False or (vision and k == "decoder_trainable"
                                                             and doc.get(f"model.{k}") is None))
        if frozen:
            key = f"model.{frozen[0]}" if doc.get(f"model.{frozen[0]}") is not None else "model._component_"
            b.note(msg("config.torchtune_frozen_parts", where=doc.where(key),
                       parts=tuple(k.split("_")[0] for k in frozen)))
        return
    if not read_int(b, doc, KEYS["lora_rank"]):
        b.default("lora_rank", 8, msg("config.default.builder", key="lora_rank"))
    alpha = doc.float_("model.lora_alpha", minimum=0)
    if not b.from_doc("lora_alpha", doc, "model.lora_alpha", None if alpha is None else int(alpha)):
        b.default("lora_alpha", 16, msg("config.default.builder", key="lora_alpha"))
    attn = doc.get("model.lora_attn_modules")
    if isinstance(attn, list):
        targets = [str(t) for t in attn]
        if doc.bool_("model.apply_lora_to_mlp"):
            targets += ["w1", "w2", "w3"]
        if doc.bool_("model.apply_lora_to_output"):
            targets.append("output")
        b.set("lora_targets", tuple(targets), doc.src("model.lora_attn_modules"))


def _read_batch_and_length(b: Builder, doc: Doc, version: str, keys: dict[str, Key]) -> None:
    if not read_int(b, doc, keys["micro_batch"]):
        raise doc.fail("", msg("config.torchtune_batch_required"))
    if not read_int(b, doc, keys["grad_accum"]):
        b.default("grad_accum", 1, msg("config.default.missing", key="gradient_accumulation_steps"))
    if not read_int(b, doc, KEYS["seq_len"], version):
        if at_most(version, "0.2.1"):
            b.default("seq_len", 512, msg("config.default.tt_seq_old", tokens=512))
        else:
            b.default("seq_len", 2048, msg("config.default.tt_no_truncation", tokens=2048))
    read_int(b, doc, KEYS["seq_parallel"])
    if not b.from_doc("packing", doc, "dataset.packed", doc.bool_("dataset.packed")):
        b.default("packing", False)


def _read_precision(b: Builder, doc: Doc) -> None:
    dtype = doc.choice("dtype", tuple(_DTYPES))
    if dtype:
        prec = _DTYPES[dtype]
        b.set("precision", prec, doc.src("dtype"))
        b.set("load_dtype", prec, doc.src("dtype"))
        b.set("pure_bf16", prec == "bf16", doc.src("dtype"))
    else:
        b.default("precision", "fp32", msg("config.default.tt_dtype"))
        b.default("load_dtype", "fp32", msg("config.default.missing", key="dtype"))


def _read_optimizer(b: Builder, doc: Doc, at: str = "") -> None:
    opt = doc.str_(f"{at}optimizer._component_")
    if not opt:
        b.default("optimizer", "adamw_torch")
        return
    cls = opt.rsplit(".", 1)[-1].lower()
    name = _OPTIM.get(cls, cls)
    if name == "adamw_torch" and doc.bool_(f"{at}optimizer.fused"):
        name = "adamw_torch_fused"
    if "torchao" in opt and "8bit" in cls:
        name = "adamw_torch_8bit"
    b.set("optimizer", name, doc.src(f"{at}optimizer._component_"))


def _read_loss(b: Builder, doc: Doc, at: str = "") -> None:
    loss = (doc.str_(f"{at}loss._component_") or "").rsplit(".", 1)[-1]
    stage = _LOSS_STAGES.get(loss)
    if stage:
        # The preference recipes (lora_dpo_*, ppo_full_finetune_*) take their loss from torchtune.rlhf.loss.
        b.set("stage", stage, doc.src(f"{at}loss._component_"))
    if loss in _CHUNKED_LOSSES:
        b.set("fused_ce", True, doc.src(f"{at}loss._component_"))
        # the memory model tells the chunked output (all chunks' logits at once) from the fused projection
        b.values["loss_kernel"] = "linear" if loss == "LinearCrossEntropyLoss" else "chunked"


def _read_distribution(b: Builder, doc: Doc) -> None:
    # Distributed recipes shard with FSDP2 (full_finetune_distributed / lora_finetune_distributed).
    distributed = any(doc.has(k) for k in ("fsdp_cpu_offload", "custom_sharded_layers", "fsdp_reshard_after_forward"))
    run = _run_comment(doc.header)
    if distributed:
        reshard = doc.bool_("fsdp_reshard_after_forward")
        b.set("fsdp", "shard_grad_op" if reshard is False else "full_shard",
              doc.src(next(k for k in ("fsdp_reshard_after_forward", "custom_sharded_layers", "fsdp_cpu_offload") if doc.has(k))))
        b.extras["recipe"] = "distributed"
    elif run is not None and _distributed(run[1]):
        # No FSDP key, but the config's own header says it runs with a distributed recipe (FSDP2).
        b.set("fsdp", "full_shard", Source(file=doc.path, key="tune run", line=run[0]))
        b.extras["recipe"] = "distributed"
    else:
        b.extras["recipe"] = "single_device"
    if run is not None and run[2] and _distributed(run[1]):
        b.set("n_gpus", run[2], Source(file=doc.path, key="tune run --nproc_per_node", line=run[0]))
        b.note(msg("config.torchtune_header", where=f"{doc.path}:{run[0]}", recipe=run[1], n=run[2]))
    off = doc.bool_("fsdp_cpu_offload")
    if off:
        b.set("offload_params", True, doc.src("fsdp_cpu_offload"))
        b.set("offload_optimizer", True, doc.src("fsdp_cpu_offload"))


def _read_trainer_workers(b: Builder, doc: Doc, at: str) -> None:
    """The async recipe's trainer: FSDP2 over its own workers (the inference workers hold vLLM, not the model
    being trained)."""
    b.extras["recipe"] = "distributed"
    workers = doc.int_("orchestration.num_training_workers", minimum=1)
    if workers:
        b.set("n_gpus", workers, doc.src("orchestration.num_training_workers"))
    b.set("fsdp", "full_shard", doc.src(at.rstrip(".")))
    if doc.bool_(f"{at}fsdp_cpu_offload"):
        b.set("offload_params", True, doc.src(f"{at}fsdp_cpu_offload"))
        b.set("offload_optimizer", True, doc.src(f"{at}fsdp_cpu_offload"))


_TT_OPTIM = {"adamw_torch": "torch.optim.AdamW", "adamw_torch_fused": "torch.optim.AdamW",
             "paged_adamw_8bit": "bitsandbytes.optim.PagedAdamW8bit", "adamw_8bit": "bitsandbytes.optim.AdamW8bit",
             "adamw_bnb_8bit": "bitsandbytes.optim.AdamW8bit", "sgd": "torch.optim.SGD"}


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    s = out.setup
    section = s.extras.get("trainer_section")
    keys, at = _keys(section if isinstance(section, str) else None), f"{section}." if section else ""
    if f in ("micro_batch", "grad_accum", "seq_len", "lora_rank", "eval_batch", "seq_parallel"):
        out.put_key(keys[f], int(v))
    elif f == "method":
        builder = str(s.extras.get("model_builder") or "")
        module, _, name = builder.rpartition(".")
        for prefix in ("qlora_", "lora_", "qdora_", "dora_"):
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        new = {"full": name, "lora": "lora_" + name, "qlora": "qlora_" + name}.get(v, name)
        out.put("model._component_", f"{module}.{new}" if module else new)
        if v in ("lora", "qlora") and "model.lora_rank" not in {src.key for src in s.sources.values()}:
            out.put("model.lora_attn_modules", ["q_proj", "v_proj", "output_proj"], after="_component_")
            out.put("model.apply_lora_to_mlp", True, after="lora_attn_modules")
            out.put("model.lora_rank", s.lora_rank, after="apply_lora_to_mlp")
            out.put("model.lora_alpha", s.lora_alpha or 2 * s.lora_rank, after="lora_rank")
    elif f in ("precision", "load_dtype", "pure_bf16") and section:
        return          # the async trainer's dtype is fixed (bf16): no key to patch
    elif f in ("precision", "load_dtype"):
        out.put_key(KEYS["precision"], v)
    elif f == "pure_bf16" and v:
        out.put_key(KEYS["precision"], "bf16")
    elif f in ("grad_ckpt", "packing"):
        out.put_key(keys[f], bool(v))
    elif f == "fused_ce" and v:
        out.put(f"{at}loss._component_", "torchtune.modules.loss.LinearCrossEntropyLoss")
    elif f == "optimizer":
        out.put(f"{at}optimizer._component_", _TT_OPTIM.get(v, v))
    elif f in ("offload_params", "offload_optimizer") and s.fsdp:
        out.put_key(keys["offload_params"], bool(v))


_TUNE_RUN = lazy_re(r"^\s*#\s*(?:\$\s*)?tune\s+run\s+(.*)$")
_RECIPE_IN = lazy_re(r"^\s*#.*\bin\s+([A-Za-z0-9_/]+)\.py\b")       # "# Config for … in lora_finetune_distributed.py"
_NEEDS_GPUS = lazy_re(r"^\s*#.*\bneeds\s+(\d{1,3})\s+GPUs\b")         # "# This config needs 8 GPUs to run"


def _distributed(recipe: str) -> bool:
    """lora_finetune_distributed, full_finetune_distributed, …_distributed_multi_dataset, lora_finetune_fsdp2."""
    return "distributed" in recipe or "fsdp" in recipe


def _run_comment(header: tuple[str, ...]) -> tuple[int, str, int | None] | None:
    """(line, recipe, GPUs) the config's header comment documents: its `tune run … <recipe> --config …`
    command, else the recipe its first line names ("Config for … in <recipe>.py") and a "needs N GPUs";
    torchtune's shipped configs say how they are run there. None when the header names no recipe."""
    named: tuple[int, str] | None = None
    needs: int | None = None
    for number, line in enumerate(header, 1):
        m = _TUNE_RUN.match(line)
        if m:
            run = _tune_run(m.group(1), number)
            if run is not None:
                return run
            continue
        m = _RECIPE_IN.match(line)
        if m and named is None:
            named = (number, os.path.basename(m.group(1)))
        m = _NEEDS_GPUS.match(line)
        if m and int(m.group(1)) > 0:
            needs = int(m.group(1))
    return (named[0], named[1], needs) if named is not None else None


def _tune_run(rest: str, number: int) -> tuple[int, str, int | None] | None:
    words = rest.split()
    options: dict[str, str] = {}
    i = 0
    while i < len(words) and words[i].startswith("-"):
        name, _, value = words[i].partition("=")
        if not value and i + 1 < len(words):
            value = words[i + 1]
            i += 1
        options[name.replace("-", "_")] = value
        i += 1
    if i >= len(words) or not re.fullmatch(r"[A-Za-z0-9_./-]+", words[i]):
        return None
    per = options.get("__nproc_per_node", "")
    nodes = options.get("__nnodes", "1").split(":")[-1]
    gpus = int(per) * (int(nodes) if nodes.isdigit() and int(nodes) > 0 else 1) if per.isdigit() and \
        0 < int(per) < 1 << 12 else None
    return number, os.path.basename(words[i]).removesuffix(".py"), gpus


# ---------------------------------------------------------------- the config a run printed

# torchtune logs the config it runs with before training (torchtune/config/_utils.py log_config: "Running {recipe}
# with resolved config:\n\n{OmegaConf.to_yaml(cfg)}"): the recipe class, then the YAML with every override applied.
_RESOLVED = lazy_re(r"Running ([A-Za-z0-9_]+) with resolved config:\s*$")
# a line of the log around it: `INFO:torchtune…:`, glog's `W1107 16:59:28`, `[rank0]:`, a timestamp
_LOG_LINE = lazy_re(r"^(?:[A-Z]+:[\w.]+:|\[?[WIEF]\d{4} \d|\[rank\d+\]|\d{4}-\d\d-\d\d[ T])")
_TERMINAL_WIDTH = 80        # a terminal narrower than this wraps nothing a command line would hold


def _recipe_of_class(name: str) -> str:
    """FullFinetuneRecipeDistributed -> full_finetune_distributed, LoRAFinetuneRecipeSingleDevice ->
    lora_finetune_single_device (the recipe classes of recipes/*.py)."""
    words = re.findall(r"LoRA|DoRA|QAT|DPO|PPO|GRPO|KD|[A-Z][a-z0-9]*", name)
    return "_".join(w.lower() for w in words if w != "Recipe")


def resolved_config(path: str, text: str) -> Doc | None:
    """The config a `tune run` printed as it started, cut where the paste stopped (its last whole line kept), with
    the recipe its class names and the GPUs of the command above it as the header a shipped config has; the
    command's `key=value` overrides stand for the keys the cut left out. None when the text holds no such print."""
    from oomdoctor import lined
    from oomdoctor.errors import InputError

    rows = text.split("\n")
    found = next(((i, m) for i, row in enumerate(rows) if (m := _RESOLVED.search(row))), None)
    if found is None:
        return None
    at, match = found
    end = next((j for j in range(at + 1, len(rows)) if _LOG_LINE.match(rows[j])), len(rows))
    block = rows[at + 1:end]
    read = None
    for drop in range(min(len(block), 8)):
        try:
            read = lined.read_yaml("\n" * (at + 1) + "\n".join(block[:len(block) - drop]), path)
        except InputError:
            continue
        if isinstance(read.data, dict) and read.data:
            break
        read = None
    if read is None:
        return None
    data, lines = dict(read.data), dict(read.lines)
    recipe = _recipe_of_class(match.group(1))
    command = _printed_command(rows[:at])
    header = [""] * (at + 1)
    notes = [msg("config.torchtune_resolved", where=f"{path}:{at + 1}", recipe=match.group(1))]
    if command is not None:
        line, gpus, overrides = command
        header[line - 1] = f"# tune run{f' --nproc_per_node {gpus}' if gpus else ''} {recipe} --config resolved"
        for key, value in overrides.items():
            node: Any = data
            parts = key.split(".")
            for part in parts[:-1]:
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, dict) and parts[-1] not in node:
                node[parts[-1]] = value
                lines[key] = line
    else:
        header[at] = f"# tune run {recipe} --config resolved"
    return Doc(path, data, lines, "yaml", header=tuple(header), notes=notes)


def _printed_command(rows: list[str]) -> tuple[int, int | None, dict[str, Any]] | None:
    """(line, GPUs, overrides) of the last `tune run` before the printed config, its lines joined where a terminal
    wrapped them (a line as wide as a terminal, the next going on with no blank first)."""
    import yaml

    start = next((i for i in range(len(rows) - 1, -1, -1) if re.search(r"\btune\s+run\b", rows[i])), None)
    if start is None:
        return None
    joined = rows[start]
    k = start
    while len(rows[k]) >= _TERMINAL_WIDTH and k + 1 < len(rows) and rows[k + 1][:1].strip() and \
            not _LOG_LINE.match(rows[k + 1]) and not rows[k + 1].startswith("Running"):
        k += 1
        joined += rows[k]
    head = re.search(r"\btune\s+run\b", joined)
    words = joined[head.end():].split() if head else []
    gpus = None
    overrides: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if word.startswith("--"):
            if name.replace("-", "_") == "__nproc_per_node":
                value = value if eq else (words[i + 1] if i + 1 < len(words) else "")
                gpus = int(value) if value.isdigit() and 0 < int(value) < 1 << 12 else None
            i += 1 if eq or name in ("--standalone",) else 2
            continue
        if eq and re.fullmatch(r"[A-Za-z_][\w.]*", name):
            try:
                overrides[name] = yaml.safe_load(value)
            except yaml.YAMLError:
                overrides[name] = value
        i += 1
    return start + 1, gpus, overrides


def method_of_recipe(recipe: str) -> str | None:
    """The method a recipe trains with when the config's model section is cut off: lora_* and full_* recipes."""
    head = recipe.split("_", 1)[0]
    return {"lora": "lora", "qlora": "qlora", "dora": "lora", "full": "full"}.get(head)
