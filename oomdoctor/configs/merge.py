"""Laying one setup over another: a launcher config over the training config, a crash log's world size
over what no file said."""
from __future__ import annotations

from dataclasses import replace

from oomdoctor.facts import CrashReport, Source, TrainingSetup

# Notes that only hold for a launcher file read alone.
_ALONE = ("config.accelerate_alone", "config.ds_alone")


def combine(main: TrainingSetup, launcher: TrainingSetup) -> TrainingSetup:
    """Overlay what a launcher config (accelerate YAML, DeepSpeed JSON) decides onto the training config."""
    take = ("n_gpus", "fsdp", "zero_stage", "offload_optimizer", "offload_params", "seq_parallel")
    values = {k: getattr(launcher, k) for k in take if k in launcher.sources and launcher.sources[k].file}
    if "zero_stage" in launcher.sources and "zero_stage" not in values and launcher.deepspeed_file:
        values.update({k: getattr(launcher, k) for k in ("zero_stage", "offload_optimizer", "offload_params")})
    own = main.sources.get("precision")
    if "precision" in launcher.sources and launcher.sources["precision"].file and (
            own is None or (own.file is None and main.precision == "fp32")):
        # Neither bf16 nor fp16 set: TrainingArguments keeps the ACCELERATE_MIXED_PRECISION that `accelerate
        # launch` exports from its config (a default that turns autocast on, TRL's bf16, overrides it).
        values["precision"] = launcher.precision
    if launcher.sources.get("grad_ckpt") is not None and launcher.sources["grad_ckpt"].file and launcher.grad_ckpt:
        values["grad_ckpt"] = True          # FSDP activation checkpointing in the launcher config
    if launcher.deepspeed_file and not main.deepspeed_file:
        values["deepspeed_file"] = launcher.deepspeed_file
    sources = {**main.sources, **{k: launcher.sources[k] for k in values if k in launcher.sources}}
    warnings = tuple(w for w in main.warnings + launcher.warnings if getattr(w, "code", None) not in _ALONE)
    extras = {**main.extras, **{k: v for k, v in launcher.extras.items() if k not in main.extras}}
    return replace(main, **values, sources=sources, extras=extras, warnings=tuple(dict.fromkeys(warnings)))


def with_log_world_size(setup: TrainingSetup, crash: CrashReport | None) -> TrainingSetup:
    """The number of GPUs the log shows (world size, or the highest rank seen + 1) where no file
    said it: a LLaMA-Factory or HF config never does, the launcher does, and ZeRO and FSDP shard
    by it."""
    if crash is None or not crash.world_size or setup.source_of("n_gpus").file is not None:
        return setup
    return replace(setup, n_gpus=crash.world_size,
                   sources={**setup.sources, "n_gpus": Source(file=crash.file, key="world_size")})
