"""accelerate launcher configs (`accelerate launch --config_file x.yaml`): world size, FSDP or the DeepSpeed
plugin, mixed precision, context parallelism. They name no model: combine() overlays them on the training
config. One key table reads them and patches them.

Context parallelism (accelerate >= 1.10, parallelism_config.py): `parallelism_config:` with
`parallelism_config_cp_size: N` splits each sequence across N GPUs.
"""
from __future__ import annotations

from typing import Any

from oomdoctor.configs import deepspeed as ds
from oomdoctor.configs._doc import Builder, Context, Doc
from oomdoctor.configs._edit import Out
from oomdoctor.configs._keys import LAUNCHER, Key, table, version_chooser
from oomdoctor.facts import Change, Framework, Msg, Source, TrainingSetup, msg

NAME = "accelerate"
FRAMEWORK: Framework = "hf"
LABEL = "accelerate"
PACKAGE = "accelerate"
ACCELERATE_VERSION = "1.7"
DEFAULT_VERSION = ACCELERATE_VERSION

KEYS = table(
    Key("n_gpus", "num_processes", file=LAUNCHER, minimum=1),
    Key("precision", "mixed_precision", file=LAUNCHER),
    Key("zero_stage", "deepspeed_config.zero_stage", file=LAUNCHER, minimum=0, maximum=3),
    Key("offload_optimizer", "deepspeed_config.offload_optimizer_device", file=LAUNCHER),
    Key("offload_params", "deepspeed_config.offload_param_device", file=LAUNCHER),
    Key("grad_ckpt", "fsdp_config.fsdp_activation_checkpointing", file=LAUNCHER),
    Key("seq_parallel", "parallelism_config.parallelism_config_cp_size", file=LAUNCHER, minimum=1,
        aliases=("parallelism_config.cp_size",)),
)

_SHARDING = {"full_shard": "full_shard", "1": "full_shard", "shard_grad_op": "shard_grad_op", "2": "shard_grad_op",
             "no_shard": None, "3": None, "hybrid_shard": "hybrid_shard", "4": "hybrid_shard",
             "hybrid_shard_zero2": "hybrid_shard", "5": "hybrid_shard"}


def _fsdp_mode(doc: Doc, fc: str) -> tuple[str | None, str]:
    """(the FSDP sharding mode, the key that says it). accelerate >= 1.6 (utils/dataclasses.py,
    FullyShardedDataParallelPlugin) reads fsdp_reshard_after_forward as a bool under FSDP2 and as the sharding
    strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD[_ZERO2] or its number 1-5) under FSDP1, where it
    replaces the older fsdp_sharding_strategy."""
    strategy = (doc.str_(fc + "fsdp_sharding_strategy") or "").lower()
    reshard_key = fc + "fsdp_reshard_after_forward"
    fsdp2 = doc.int_(fc + "fsdp_version", minimum=1) == 2
    named = str(doc.get(reshard_key)).lower() if isinstance(doc.get(reshard_key), (str, int)) else ""
    if not fsdp2 and not strategy and named in _SHARDING:
        return _SHARDING[named], reshard_key
    if fsdp2 or not strategy:
        reshard = doc.bool_(reshard_key)
        return ("shard_grad_op" if reshard is False else "full_shard"), (
            reshard_key if reshard is not None else fc + "fsdp_version")
    return _SHARDING.get(strategy, "full_shard"), fc + "fsdp_sharding_strategy"


def detect(data: dict) -> Msg | None:
    for key in ("distributed_type", "compute_environment"):
        if key in data:
            return msg("config.why.accelerate", keys=key)
    if isinstance(data.get("fsdp_config"), dict) and "num_processes" in data:
        return msg("config.why.accelerate", keys=("fsdp_config", "num_processes"))
    return None


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def read(doc: Doc, ctx: Context) -> TrainingSetup:
    version = ctx.framework_version or ACCELERATE_VERSION
    b = Builder(FRAMEWORK, version, f"accelerate {version}")
    b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
    b.extras["launcher"] = "accelerate"
    kind = (doc.str_("distributed_type") or "").upper()
    n = doc.int_("num_processes", minimum=1)
    if kind == "NO":
        # distributed_type NO runs the script in one process whatever num_processes says (commands/launch.py
        # launch_command: no multi-GPU, FSDP or DeepSpeed launcher, so simple_launcher).
        b.set("n_gpus", 1, doc.src("distributed_type"))
    elif n:
        b.set("n_gpus", n, doc.src("num_processes"))
    _read_precision(b, doc)
    fields: dict[str, Any] = {"config_file": doc.path}
    # distributed_type picks the plugin; `accelerate config` writes the other section empty (`fsdp_config: {}`
    # beside a DeepSpeed run), so a section decides only when the type names neither.
    if kind == "FSDP" or (kind != "DEEPSPEED" and doc.get("fsdp_config")):
        _read_fsdp(b, doc)
    elif kind == "DEEPSPEED" or doc.get("deepspeed_config"):
        _read_deepspeed(b, doc, fields)
    _read_sequence_split(b, doc)
    b.keep(doc, ("distributed_type", "num_machines", "mixed_precision"))
    b.note(msg("config.accelerate_alone", where=doc.path))
    return b.build(doc, **fields)


def _read_precision(b: Builder, doc: Doc) -> None:
    mp = (doc.str_("mixed_precision") or "").lower()
    if mp in ("bf16", "fp16"):
        b.set("precision", mp, doc.src("mixed_precision"))
    elif mp in ("no", "fp8"):
        b.set("precision", "fp32" if mp == "no" else "bf16", doc.src("mixed_precision"))


def _read_fsdp(b: Builder, doc: Doc) -> None:
    fc = "fsdp_config."
    mode, key = _fsdp_mode(doc, fc)
    if mode:
        b.set("fsdp", mode, doc.src(key) if doc.has(key) else Source(file=doc.path, key="distributed_type",
                                                                      line=doc.lines.get("distributed_type")))
    off = doc.bool_(fc + "fsdp_offload_params")
    if off is not None:
        # FSDP CPU offload moves parameters, gradients and the optimizer step to the host.
        b.set("offload_params", off, doc.src(fc + "fsdp_offload_params"))
        b.set("offload_optimizer", off, doc.src(fc + "fsdp_offload_params"))
    ac = doc.bool_(fc + "fsdp_activation_checkpointing")
    if ac is not None:
        b.set("grad_ckpt", ac, doc.src(fc + "fsdp_activation_checkpointing"))
    b.keep(doc, ("fsdp_config",))
    version = doc.int_(fc + "fsdp_version", minimum=1)
    if version is not None:
        b.extras["fsdp_version"] = version   # 2: torch's fully_shard (the memory model's all-gather stream pool)


def _read_deepspeed(b: Builder, doc: Doc, fields: dict[str, Any]) -> None:
    dc = "deepspeed_config."
    if doc.str_(dc + "deepspeed_config_file"):
        # The launcher hands the path on as written (ACCELERATE_DEEPSPEED_CONFIG_FILE) and the process opens it
        # from its launch directory (utils/dataclasses.py DeepSpeedPlugin, HfDeepSpeedConfig(path)), not beside
        # the YAML, which `accelerate config` keeps in ~/.cache: a file not found here is said and guessed by name.
        path = ds.read_ref(b, doc, dc + "deepspeed_config_file", {}, "", strict=False)
        if path:
            fields["deepspeed_file"] = path
    else:
        stage = doc.int_(dc + "zero_stage", minimum=0, maximum=3)
        if stage is not None:
            b.set("zero_stage", stage, doc.src(dc + "zero_stage"))
        for field, key in (("offload_optimizer", "offload_optimizer_device"), ("offload_params", "offload_param_device")):
            dev = doc.str_(dc + key)
            if dev is not None:
                b.set(field, dev.lower() in ("cpu", "nvme"), doc.src(dc + key))
        if b.values.get("offload_params") and (stage or 0) < 3:
            src = b.sources["offload_params"]
            b.set("offload_params", False, Source(file=src.file, key=src.key, line=src.line,
                                                  default=msg("config.default.ds_offload_param_ignored")))
            b.note(msg("config.ds_offload_param_ignored", where=src.describe(), stage=stage or 0))
    b.keep(doc, ("deepspeed_config",))


def _read_sequence_split(b: Builder, doc: Doc) -> None:
    # Context parallelism and DeepSpeed's Ulysses sequence parallelism both split each sequence.
    split, src = 1, None
    for key in KEYS["seq_parallel"].names() + ("parallelism_config.parallelism_config_sp_size",):
        size = doc.int_(key, minimum=1) if doc.get(key) is not None else None
        if size:
            split *= size
            src = src or key
    if src:
        b.set("seq_parallel", split, doc.src(src))
    # dp_replicate_size > 1 with dp_shard_size > 1 shards within a group and replicates across groups: HSDP
    # (parallelism_config.py ParallelismConfig docstring).
    rep, shard = (f"parallelism_config.parallelism_config_dp_{k}_size" for k in ("replicate", "shard"))
    if b.values.get("fsdp") and (doc.int_(rep, minimum=1) or 1) > 1 and (doc.int_(shard, minimum=1) or 1) > 1:
        b.set("fsdp", "hybrid_shard", doc.src(rep))


def edit(out: Out, c: Change, final: dict[str, Any]) -> None:
    v, f = c.after, c.field
    if f == "precision":
        out.put("mixed_precision", "no" if v == "fp32" else v)
    elif f == "zero_stage":
        out.put("deepspeed_config.zero_stage", int(v))
    elif f == "offload_optimizer":
        if out.setup.fsdp:
            out.put("fsdp_config.fsdp_offload_params", bool(v))
        else:
            out.put("deepspeed_config.offload_optimizer_device", "cpu" if v else "none")
    elif f == "offload_params":
        if out.setup.fsdp:
            out.put("fsdp_config.fsdp_offload_params", bool(v))
        else:
            out.put("deepspeed_config.offload_param_device", "cpu" if v else "none")
    elif f == "n_gpus":
        out.put("num_processes", int(v))
    elif f == "grad_ckpt" and out.setup.fsdp:
        out.put("fsdp_config.fsdp_activation_checkpointing", bool(v))
    elif f == "seq_parallel":
        out.put(KEYS["seq_parallel"].name, int(v))
