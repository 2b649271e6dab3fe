"""LitGPT's YAML configs (Lightning-AI/litgpt config_hub/finetune/<model>/{lora,qlora,full}.yaml, run as
`litgpt finetune_lora|finetune_full --config x.yaml`): jsonargparse over the setup() of litgpt/finetune/*.py.

What the file means (litgpt at 26857050):
- checkpoint_dir: the converted model; `litgpt download <repo_id>` writes it to checkpoints/<repo_id>
  (litgpt/scripts/download.py: directory = checkpoint_dir / repo_id), so the hub id is what follows checkpoints/;
- lora_r / lora_alpha / lora_* (finetune/lora.py setup: r 8, alpha 16 by default): LoRA; without them, a full
  fine-tune (finetune/full.py);
- quantize bnb.nf4[-dq] / bnb.fp4[-dq] (4-bit) and bnb.int8-training (8-bit) quantise the frozen base: QLoRA;
- precision: Lightning's words (bf16-true keeps the weights in bf16; bf16-mixed, the default where the card has
  bf16 (litgpt/utils.py get_default_supported_precision), keeps them in fp32);
- devices × num_nodes processes; train.micro_batch_size per step, train.global_batch_size the batch of one
  optimizer step: accumulation = global_batch_size // (devices × num_nodes) // micro_batch_size (litgpt/args.py
  TrainArgs.gradient_accumulation_iters); train.max_seq_length (None: the longest sample, up to the model's
  block size);
- one device runs as it is, several are fully sharded with every block checkpointed.
"""
from __future__ import annotations

from typing import Any

from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import Key, read_int, table, version_chooser
from oomdoctor.facts import Change, Framework, Msg, TrainingSetup, msg

NAME = "litgpt"
FRAMEWORK: Framework = "litgpt"          # the regime the memory model knows (its own model code, no HF Trainer)
LABEL = "LitGPT"
PACKAGE = "litgpt"
DEFAULT_VERSION = "0.5"
MODEL_KEY = "checkpoint_dir"

KEYS = table(
    Key("micro_batch", "train.micro_batch_size", minimum=1),
    Key("grad_accum", "train.global_batch_size", minimum=1),     # derived from the global batch: patched there
    Key("seq_len", "train.max_seq_length", minimum=1),
    Key("lora_rank", "lora_r", minimum=1),
    Key("lora_alpha", "lora_alpha", after="lora_r", minimum=1),
    Key("n_gpus", "devices", minimum=1),
)

# finetune/lora.py and finetune/full.py setup(): TrainArgs(global_batch_size=16, micro_batch_size=1).
_GLOBAL_BATCH, _MICRO_BATCH = 16, 1
_LORA_LAYERS = (("query", True), ("key", False), ("value", True), ("projection", False), ("mlp", False),
                ("head", False))
_SEQ_ASSUMED = 2048             # max_seq_length None: the longest sample decides; what the estimate assumes
_QUANTIZE = {"bnb.nf4": 4, "bnb.nf4-dq": 4, "bnb.fp4": 4, "bnb.fp4-dq": 4, "bnb.int8-training": 8}
_PRECISION = {"bf16-true": ("bf16", "bf16"), "bf16-mixed": ("bf16", "fp32"), "16-true": ("fp16", "fp16"),
              "16-mixed": ("fp16", "fp32"), "32-true": ("fp32", "fp32"), "transformer-engine": ("bf16", "bf16")}


# setup()'s own top-level parameters beside checkpoint_dir (finetune/lora.py: precision, quantize, devices, lora_r,
# lora_alpha, ...): jsonargparse writes them flat, so a file cut before its `train:` group is still LitGPT's.
_SETUP_KEYS = ("lora_r", "lora_alpha", "quantize", "precision", "devices", "num_nodes")


def _pretrain(data: dict) -> bool:
    """litgpt/pretrain.py setup()'s file (config_hub/pretrain/*.yaml): `model_name` or `model_config`, no checkpoint_dir."""
    train = data.get("train")
    return "checkpoint_dir" not in data and ("model_name" in data or "model_config" in data) and \
        isinstance(train, dict) and ("micro_batch_size" in train or "global_batch_size" in train)


def detect(data: dict) -> Msg | None:
    if _pretrain(data):
        return msg("config.why.litgpt", keys=("model_name" if "model_name" in data else "model_config", "train"))
    train = data.get("train")
    if "checkpoint_dir" in data and isinstance(train, dict) and (
            "micro_batch_size" in train or "global_batch_size" in train):
        return msg("config.why.litgpt", keys=("checkpoint_dir", "train"))
    own = [k for k in _SETUP_KEYS if k in data]
    if "checkpoint_dir" in data and len(own) >= 2:
        return msg("config.why.litgpt", keys=("checkpoint_dir", own[0], own[1]))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def _model(doc: Doc, key: str = "checkpoint_dir") -> str | None:
    path = (doc.str_(key) or "").rstrip("/")
    head, _, rest = path.partition("checkpoints/")
    return rest if not head and rest.count("/") == 1 else (path or None)


def _pretrain_model(doc: Doc) -> tuple[str, str] | None:
    """(the model, the key that says it) of a pretraining file: the checkpoint it starts from, else the hub repo
    `litgpt download` wrote its tokenizer to when that repo is the model_name's, else the model_name itself."""
    if doc.str_("initial_checkpoint_dir"):
        return _model(doc, "initial_checkpoint_dir") or "", "initial_checkpoint_dir"
    name = doc.str_("model_name") or ""
    repo = _model(doc, "tokenizer_dir") or ""
    if name and repo.count("/") == 1 and repo.split("/")[1].lower() == name.lower():
        return repo, "tokenizer_dir"
    return (name, "model_name") if name else None


# pretrain.py setup(): TrainArgs(global_batch_size=512, micro_batch_size=4); every sample is a block of the model's
# max_seq_length (the dataloaders cut the token stream into such blocks); more than one device runs
# FSDPStrategy(sharding_strategy="HYBRID_SHARD") with no activation checkpointing.
_PRETRAIN_GLOBAL, _PRETRAIN_MICRO = 512, 4


def _read_pretrain(b: Builder, doc: Doc) -> None:
    found = _pretrain_model(doc)
    if not found or not found[0]:
        raise doc.fail("model_name", msg("config.no_model", key="model_name"))
    b.set("model", found[0], doc.src(found[1]))
    b.default("stage", "pt", "litgpt pretrain")
    b.default("method", "full", "litgpt pretrain")
    _batch(b, doc, _PRETRAIN_MICRO, _PRETRAIN_GLOBAL, "litgpt pretrain")
    b.default("packing", True, "litgpt pretrain")
    b.default("grad_ckpt", False, "litgpt pretrain")
    if b.values["n_gpus"] > 1:
        b.default("fsdp", "hybrid_shard", "litgpt pretrain")


def _method(b: Builder, doc: Doc, ctx: Context) -> None:
    said = dict(getattr(ctx.entry, "defaults", ()) or ()).get("method")    # the CLI's subcommand, when one ran it
    lora = said == "lora" or (said is None and any(k.startswith("lora_") for k in doc.data))
    bits = _QUANTIZE.get((doc.str_("quantize") or "").lower())
    if bits:
        b.set("quant_bits", bits, doc.src("quantize"))
    if not lora:
        b.default("method", "full", "litgpt finetune_full")
        return
    b.set("method", "qlora" if bits else "lora", doc.src("quantize" if bits else "lora_r"))
    for field, default in (("lora_rank", 8), ("lora_alpha", 16)):
        if not read_int(b, doc, KEYS[field]):
            b.default(field, default, "litgpt finetune_lora")
    # lora_query, lora_key, ... (finetune/lora.py setup: query and value on by default) name the adapted layers.
    on = [name for name, default in _LORA_LAYERS if doc.bool_("lora_" + name) in (True, None if default else True)]
    said = [k for k in ("lora_" + n for n, _ in _LORA_LAYERS) if doc.has(k)]
    targets = tuple("lm_head" if n == "head" else n for n in on)
    if said:
        b.set("lora_targets", targets, doc.src(said[0]))
    else:
        b.default("lora_targets", targets, "litgpt finetune_lora")


def _batch(b: Builder, doc: Doc, micro: int = _MICRO_BATCH, global_batch: int = _GLOBAL_BATCH,
           default_source: str = "litgpt TrainArgs") -> None:
    """GPUs from `devices` × `num_nodes`; accumulation from the global batch, as LitGPT's `TrainArgs` derives it."""
    devices = doc.int_("devices", minimum=1) if isinstance(doc.get("devices"), int) else None
    nodes = doc.int_("num_nodes", minimum=1) or 1
    if devices:
        b.set("n_gpus", devices * nodes, doc.src("devices"))
    else:
        b.default("n_gpus", nodes, "devices")
    if not read_int(b, doc, KEYS["micro_batch"]):
        b.default("micro_batch", micro, default_source)
    total = doc.int_("train.global_batch_size", minimum=1) or global_batch
    accum = max(1, total // b.values["n_gpus"] // b.values["micro_batch"])
    where = "train.global_batch_size"
    if doc.has(where):
        b.set("grad_accum", accum, doc.src(where))
    else:
        b.default("grad_accum", accum, default_source)
    b.extras["global_batch_size"] = total


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or DEFAULT_VERSION
    b = Builder(FRAMEWORK, version, f"{LABEL} {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    pretrain = _pretrain(doc.data)
    if pretrain:
        _read_pretrain(b, doc)
    else:
        model = _model(doc)
        if not model:
            raise doc.fail("checkpoint_dir", msg("config.no_model", key="checkpoint_dir"))
        b.set("model", model, doc.src("checkpoint_dir"))
        _method(b, doc, ctx)
        _batch(b, doc)
    if not read_int(b, doc, KEYS["seq_len"]):
        b.default("seq_len", _SEQ_ASSUMED, msg("config.default.litgpt_seq", tokens=_SEQ_ASSUMED))
    word = (doc.str_("precision") or "").lower()
    mixed, weights = _PRECISION.get(word) or _PRECISION["bf16-mixed"]
    if word in _PRECISION:
        b.set("precision", mixed, doc.src("precision"))
        b.set("load_dtype", weights, doc.src("precision"))
    else:
        b.default("precision", mixed, "litgpt get_default_supported_precision")
        b.default("load_dtype", weights, "litgpt get_default_supported_precision")
    # More than one device: finetune/lora.py wraps the model in ModelParallelStrategy(parallelize_fn) and
    # finetune/full.py in FSDPStrategy, both fully sharded with each block checkpointed; one device runs it
    # as it is ("auto"), without activation checkpointing.
    sharded = b.values["n_gpus"] > 1
    strategy = msg("config.default.litgpt_strategy", n=b.values["n_gpus"])
    if not pretrain:
        b.default("grad_ckpt", sharded, strategy)
        if sharded:
            b.default("fsdp", "full_shard", strategy)
        b.default("stage", "sft", LABEL)
    return b.build(doc, config_file=doc.path)


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if f in ("micro_batch", "lora_rank", "lora_alpha", "seq_len"):
        out.put_key(KEYS[f], int(v))
    elif f == "grad_accum":
        # The accumulation is derived: the global batch says it.
        n = int(final.get("n_gpus") or out.setup.n_gpus or 1)
        out.put_key(KEYS["grad_accum"], int(v) * int(final.get("micro_batch") or out.setup.micro_batch or 1) * n)
