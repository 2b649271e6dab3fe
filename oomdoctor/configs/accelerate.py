"""accelerate launcher configs (`accelerate launch --config_file x.yaml`): world size, FSDP or the DeepSpeed
plugin, mixed precision. They name no model: combine() overlays them on the training config."""
from __future__ import annotations

from oomdoctor.configs._doc import Builder, Doc
from oomdoctor.facts import Source, TrainingSetup

ACCELERATE_VERSION = "1.7"

_SHARDING = {"full_shard": "full_shard", "1": "full_shard", "shard_grad_op": "shard_grad_op", "2": "shard_grad_op",
             "no_shard": None, "3": None, "hybrid_shard": "hybrid_shard", "4": "hybrid_shard",
             "hybrid_shard_zero2": "hybrid_shard", "5": "hybrid_shard"}


def load_accelerate(doc: Doc, framework_version: str | None) -> TrainingSetup:
    from oomdoctor.configs import deepspeed as ds

    version = framework_version or ACCELERATE_VERSION
    b = Builder("hf", version, f"accelerate {version}")
    b.extras["launcher"] = "accelerate"
    n = doc.int_("num_processes")
    if n:
        b.set("n_gpus", n, doc.src("num_processes"))
    mp = (doc.str_("mixed_precision") or "").lower()
    if mp in ("bf16", "fp16"):
        b.set("precision", mp, doc.src("mixed_precision"))
    elif mp in ("no", "fp8"):
        b.set("precision", "fp32" if mp == "no" else "bf16", doc.src("mixed_precision"))
    kind = (doc.str_("distributed_type") or "").upper()
    fields = {"config_file": doc.path}
    if kind == "FSDP" or isinstance(doc.get("fsdp_config"), dict):
        fc = "fsdp_config."
        strategy = (doc.str_(fc + "fsdp_sharding_strategy") or "").lower()
        if doc.int_(fc + "fsdp_version") == 2 or not strategy:
            reshard = doc.bool_(fc + "fsdp_reshard_after_forward")
            mode = "shard_grad_op" if reshard is False else "full_shard"
            key = fc + ("fsdp_reshard_after_forward" if reshard is not None else "fsdp_version")
        else:
            mode = _SHARDING.get(strategy, "full_shard")
            key = fc + "fsdp_sharding_strategy"
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
    elif kind == "DEEPSPEED" or isinstance(doc.get("deepspeed_config"), dict):
        dc = "deepspeed_config."
        ref = doc.str_(dc + "deepspeed_config_file")
        if ref:
            path, shipped = ds.find_deepspeed(ref, doc, dc + "deepspeed_config_file")
            ds.apply_deepspeed(b, path, shipped, doc.src(dc + "deepspeed_config_file"), {}, "")
            fields["deepspeed_file"] = path
        else:
            stage = doc.int_(dc + "zero_stage")
            if stage is not None:
                b.set("zero_stage", stage, doc.src(dc + "zero_stage"))
            for field, key in (("offload_optimizer", "offload_optimizer_device"), ("offload_params", "offload_param_device")):
                dev = doc.str_(dc + key)
                if dev is not None:
                    b.set(field, dev.lower() in ("cpu", "nvme"), doc.src(dc + key))
        b.keep(doc, ("deepspeed_config",))
    b.keep(doc, ("distributed_type", "num_machines", "mixed_precision"))
    b.warnings.append(f"{doc.path}: an accelerate config names no model; give the training config too")
    return b.build(**fields)
