"""Training configs of every supported framework, normalised into one TrainingSetup with provenance.

Public API: classify, load_config, edits_for, setup_from_log, combine.
Frameworks: LLaMA-Factory, HF TrainingArguments / TRL (YAML, JSON, command line in a shell script),
axolotl, torchtune recipes, accelerate (FSDP / DeepSpeed plugin) configs and bare DeepSpeed JSONs.
"""
from __future__ import annotations

import os
from typing import Sequence

from oomdoctor.errors import InputError
from oomdoctor.facts import Change, CrashReport, KeyEdit, TrainingSetup

__all__ = ["classify", "load_config", "edits_for", "setup_from_log", "combine"]

_CONFIG_EXT = (".yaml", ".yml", ".json")
_LOG_EXT = (".log", ".txt", ".out", ".err", ".jsonl", ".gz")
_SCRIPT_EXT = (".sh", ".bash", ".zsh", ".slurm", ".sbatch")
_HEAD_BYTES = 64 * 1024
_LOG_MARKERS = (b"Traceback (most recent call last)", b"out of memory", b"OutOfMemoryError", b"CUDA error")


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""


def classify(path: str) -> str:
    """"config" for a training config (YAML/JSON mapping with training keys, or a shell script holding a
    training command line), else "log". Reads at most the first 64 KiB."""
    from oomdoctor.configs._doc import TRAINING_KEYS, parse_command_line, parse_text

    low = path.lower()
    if path == "-" or low.endswith(_LOG_EXT):
        return "log"
    head = _head(path)
    if b"\0" in head[:8192]:
        return "log"
    text = head.decode("utf-8", "replace")
    if low.endswith(_SCRIPT_EXT) or text.startswith("#!"):
        doc = parse_command_line(text, path)
        return "config" if doc is not None else "log"
    truncated = len(head) >= _HEAD_BYTES
    if low.endswith(_CONFIG_EXT):
        if truncated:
            return "log" if any(m in head for m in _LOG_MARKERS) else "config"
        try:
            doc = parse_text(text, path)
        except InputError:
            # A broken YAML is still a config the user meant: load_config reports the line.
            return "log" if any(m in head for m in _LOG_MARKERS) else "config"
        return "config"
    if truncated or any(m in head for m in _LOG_MARKERS):
        return "log"
    try:
        doc = parse_text(text, path)
    except InputError:
        return "log"
    if any(k in TRAINING_KEYS for k in doc.data) or _is_torchtune(doc.data):
        return "config"
    return "log"


def _is_torchtune(data: dict) -> bool:
    model = data.get("model")
    return isinstance(model, dict) and "_component_" in model


def detect_framework(data: dict) -> str:
    """llamafactory | hf | axolotl | torchtune | accelerate | deepspeed | llamafactory_v1 | unknown."""
    from oomdoctor.configs.llamafactory import LF_ONLY_KEYS

    if "base_model" in data:
        return "axolotl"
    if _is_torchtune(data):
        return "torchtune"
    if "distributed_type" in data or "compute_environment" in data or (
            isinstance(data.get("fsdp_config"), dict) and "num_processes" in data):
        return "accelerate"
    if isinstance(data.get("zero_optimization"), dict) or (
            "train_micro_batch_size_per_gpu" in data and "model_name_or_path" not in data):
        return "deepspeed"
    if "model_name_or_path" in data or "model_id" in data:
        if any(k in LF_ONLY_KEYS for k in data):
            return "llamafactory"
        return "hf"
    if isinstance(data.get("model"), dict) and ("peft_config" in data or "dist_config" in data):
        return "llamafactory_v1"
    if isinstance(data.get("model"), str) and any(k in data for k in ("per_device_train_batch_size", "output_dir")):
        return "hf"
    return "unknown"


def load_config(path: str, *, framework_version: str | None = None) -> TrainingSetup:
    """Read one training config into a TrainingSetup; every field's origin is in `setup.sources`."""
    from oomdoctor.configs._doc import parse_command_line, parse_text, read_text

    text = read_text(path)
    low = path.lower()
    if low.endswith(_SCRIPT_EXT) or (text.startswith("#!") and not low.endswith(_CONFIG_EXT)):
        doc = parse_command_line(text, path)
        if doc is None:
            raise InputError("no training command with --model_name_or_path / --per_device_train_batch_size "
                             "flags found in this script", path)
        from oomdoctor.configs.hf import load_cli

        return load_cli(doc, framework_version)
    if not text.strip():
        raise InputError("the file is empty", path)
    doc = parse_text(text, path)
    kind = detect_framework(doc.data)
    if kind == "llamafactory":
        from oomdoctor.configs.llamafactory import load_llamafactory

        return load_llamafactory(doc, framework_version)
    if kind == "hf":
        from oomdoctor.configs.hf import load_hf

        return load_hf(doc, framework_version)
    if kind == "axolotl":
        from oomdoctor.configs.axolotl import load_axolotl

        return load_axolotl(doc, framework_version)
    if kind == "torchtune":
        from oomdoctor.configs.torchtune import load_torchtune

        return load_torchtune(doc, framework_version)
    if kind == "accelerate":
        from oomdoctor.configs.accelerate import load_accelerate

        return load_accelerate(doc, framework_version)
    if kind == "deepspeed":
        from oomdoctor.configs.deepspeed import load_bare

        return load_bare(doc)
    if kind == "llamafactory_v1":
        raise InputError("LLaMA-Factory v1 configs (model: / peft_config: / dist_config:) are not supported yet; "
                         "use the classic flat YAML with model_name_or_path", path)
    raise InputError("not a training config oomdoctor knows: expected LLaMA-Factory (model_name_or_path + "
                     "stage/finetuning_type), HF/TRL TrainingArguments, axolotl (base_model), a torchtune "
                     "recipe, an accelerate config or a DeepSpeed JSON", path)


def combine(main: TrainingSetup, launcher: TrainingSetup) -> TrainingSetup:
    """Overlay what a launcher config (accelerate YAML, DeepSpeed JSON) decides onto the training config."""
    from dataclasses import replace

    take = ("n_gpus", "fsdp", "zero_stage", "offload_optimizer", "offload_params")
    values = {k: getattr(launcher, k) for k in take if k in launcher.sources}
    if "precision" in launcher.sources and "precision" not in main.sources:
        values["precision"] = launcher.precision
    if launcher.deepspeed_file and not main.deepspeed_file:
        values["deepspeed_file"] = launcher.deepspeed_file
    sources = {**main.sources, **{k: launcher.sources[k] for k in values if k in launcher.sources}}
    extras = {**main.extras, **{k: v for k, v in launcher.extras.items() if k not in main.extras}}
    return replace(main, **values, sources=sources, extras=extras)


def edits_for(setup: TrainingSetup, changes: Sequence[Change]) -> list[KeyEdit]:
    """The key edits, in the right files, that make `setup`'s config files say `changes`."""
    from oomdoctor.configs.edits import edits_for as _edits

    return _edits(setup, changes)


def setup_from_log(crash: CrashReport) -> TrainingSetup | None:
    """A setup from the training arguments / command line a log printed; None without a model name."""
    from oomdoctor.configs._doc import Doc
    from oomdoctor.configs.hf import load_hf
    from oomdoctor.configs.llamafactory import LF_ONLY_KEYS, load_llamafactory

    args = {str(k).lstrip("-"): v for k, v in (crash.train_args or {}).items()}
    if not any(args.get(k) for k in ("model_name_or_path", "model", "base_model")):
        return None
    if "model_name_or_path" not in args:
        args["model_name_or_path"] = args.get("model") or args.get("base_model")
    from dataclasses import replace

    doc = Doc(crash.file, dict(args), {}, "cli")
    version = (crash.versions or {}).get("llamafactory")
    def load(d: Doc) -> TrainingSetup:
        if any(k in LF_ONLY_KEYS for k in d.data) or version:
            return load_llamafactory(d, version)
        return load_hf(d, (crash.versions or {}).get("trl"))

    try:
        setup = load(doc)
    except InputError:
        if "deepspeed" not in args:
            return None
        # The DeepSpeed JSON the log names is on another machine: judge without it.
        missing = args.pop("deepspeed")
        try:
            setup = load(Doc(crash.file, args, {}, "cli"))
        except InputError:
            return None
        from oomdoctor.facts import msg

        note = msg("crash.setup.path_missing", path=str(missing), key="--deepspeed")
        setup = replace(setup, extras={**setup.extras, "warnings": (*setup.extras.get("warnings", ()), note)})
    return replace(with_log_world_size(setup, crash), config_file=None)


# The package whose version a framework's `framework_version` means (the log's banners name them).
VERSION_PACKAGE = {"llamafactory": "llamafactory", "hf": "transformers", "trl": "trl", "axolotl": "axolotl",
                   "torchtune": "torchtune"}


def log_version(setup: TrainingSetup, crash: CrashReport | None) -> str | None:
    """The version of the setup's framework that the log printed, when it differs from the one assumed."""
    package = VERSION_PACKAGE.get(setup.framework or "")
    found = (crash.versions or {}).get(package) if crash is not None and package else None
    if not found or found.lstrip("v") == (setup.framework_version or "").lstrip("v"):
        return None
    return found


def with_log_world_size(setup: TrainingSetup, crash: CrashReport | None) -> TrainingSetup:
    """The number of GPUs the log shows (world size, or the highest rank seen + 1) where no file
    said it: a LLaMA-Factory or HF config never does, the launcher does, and ZeRO and FSDP shard
    by it."""
    if crash is None or not crash.world_size or setup.source_of("n_gpus").file is not None:
        return setup
    from dataclasses import replace

    from oomdoctor.facts import Source

    return replace(setup, n_gpus=crash.world_size,
                   sources={**setup.sources, "n_gpus": Source(file=crash.file, key="world_size")})
