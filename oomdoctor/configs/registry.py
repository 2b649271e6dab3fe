"""The frameworks oomdoctor reads, in one mapping: name -> the module that owns its key table.

Every framework module has the same parts: NAME, FRAMEWORK (the regime name the memory model knows),
LABEL, PACKAGE (the name its crash-log banner prints), DEFAULT_VERSION, KEYS (field -> Key: the table
that reads and patches), detect(data) -> why this file is this framework's (a Msg) or None,
version(doc, flag, log, hint) -> (release, why), read(doc, ctx) -> TrainingSetup, edit(out, change, final).

Modules are imported by name when first used, so the registry imports none of them: no framework module
can import another through it, and configs/ keeps an import graph without cycles
(tests/test_configs_registry.py checks the graph).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from oomdoctor.facts import Framework, Msg, TrainingSetup, msg

if TYPE_CHECKING:
    from oomdoctor.configs._doc import Context, Doc
    from oomdoctor.configs._edit import Out
    from oomdoctor.configs._keys import Key
    from oomdoctor.facts import Change


class FrameworkModule(Protocol):
    """What every module FRAMEWORKS names provides (a module satisfies it by its top-level names)."""

    NAME: str                   # its registry name
    FRAMEWORK: Framework        # the regime name the memory model knows
    LABEL: str                  # how the report names it
    PACKAGE: str                # the package name its crash-log banner prints
    DEFAULT_VERSION: str        # the release whose defaults fill unset keys
    KEYS: Mapping[str, Key]     # field -> Key: the one table that reads and patches
    # (doc, flag, log, hint) -> (release, why); hf's takes every banner's version and the entry point too
    version: Callable[..., tuple[str, Msg]]

    def detect(self, data: dict, /) -> Msg | None: ...

    def read(self, doc: Doc, ctx: Context, /) -> TrainingSetup: ...

    def edit(self, out: Out, c: Change, final: dict[str, Any], /) -> None: ...

# Detection order matters: the first module whose detect() answers owns the file. axolotl, torchtune,
# accelerate and DeepSpeed files have unmistakable keys; ChatGLM3 / GLM-4 finetune_demo YAMLs a nested
# training_args; Firefly's argument files before LLaMA-Factory
# (they share lora_rank); HF/TRL last (any mapping with a model and TrainingArguments).
FRAMEWORKS: Mapping[str, str] = {
    "autotrain": "oomdoctor.configs.autotrain",      # before axolotl: both name a `base_model`
    "axolotl": "oomdoctor.configs.axolotl",
    "torchtune": "oomdoctor.configs.torchtune",
    "litgpt": "oomdoctor.configs.litgpt",
    "unsloth_studio": "oomdoctor.configs.unsloth_studio",
    "verl": "oomdoctor.configs.verl",
    "mlx_lm": "oomdoctor.configs.mlx_lm",
    "accelerate": "oomdoctor.configs.accelerate",
    "deepspeed": "oomdoctor.configs.deepspeed",
    "chatglm": "oomdoctor.configs.chatglm",
    "firefly": "oomdoctor.configs.firefly",
    "llamafactory": "oomdoctor.configs.llamafactory",
    "xtuner": "oomdoctor.configs.xtuner",            # its Python configs, read as their top-level names
    "hf": "oomdoctor.configs.hf",
}


def module(name: str) -> FrameworkModule:
    return cast(FrameworkModule, importlib.import_module(FRAMEWORKS[name]))


def detect(data: dict) -> tuple[str | None, Msg | None]:
    """(registry name, why) of the framework a parsed mapping belongs to; (None, None) when none."""
    for name in FRAMEWORKS:
        reason = module(name).detect(data)
        if reason is not None:
            return name, reason
    return None, None


# Keys only LLaMA-Factory's v1 format has (src/llamafactory/v1/config/*.py; read by configs/llamafactory_v1.py).
LF_V1_ONLY = ("peft_config", "quant_config", "dist_config", "kernel_config", "model_class", "init_config",
              "optim_config", "lr_scheduler_config", "train_dataset", "micro_batch_size", "global_batch_size", "cp_size",
              "enable_activation_checkpointing", "batching_strategy", "sample_backend")


def is_llamafactory_v1(data: dict) -> bool:
    """A v1 file: `model:` (not v0's model_name_or_path) beside at least one key only v1 has; torchtune's
    `model:` builder mapping (it shares enable_activation_checkpointing) is not."""
    model = data.get("model")
    if model is None or "model_name_or_path" in data or (isinstance(model, dict) and "_component_" in model):
        return False
    return any(k in data for k in LF_V1_ONLY)


def read_doc(doc: Any, name: str, reason: Msg | None, *, framework_version: str | None = None,
             log_versions: Mapping[str, str] | None = None, entry: Any = None,
             hint: tuple[str, Msg] | None = None) -> TrainingSetup:
    """Read a parsed file with the named framework's reader, at the release chosen for it."""
    from dataclasses import replace

    from oomdoctor.configs._doc import Context

    mod = module(name)
    logs = dict(log_versions or {})
    if name == "hf":
        version, why = mod.version(doc, framework_version, logs, hint, entry)
    else:
        version, why = mod.version(doc, framework_version, logs.get(mod.PACKAGE), hint)
    setup = mod.read(doc, Context(framework_version=version, version_reason=why, reason=reason, entry=entry))
    return replace(setup, extras={**setup.extras, "reader": name})


def reader_of(setup: TrainingSetup) -> str:
    """The registry name whose key table patches this setup's files."""
    name = setup.extras.get("reader")
    if isinstance(name, str) and name in FRAMEWORKS:
        return name
    if setup.extras.get("launcher") == "accelerate":
        return "accelerate"
    return {"llamafactory": "llamafactory", "axolotl": "axolotl", "torchtune": "torchtune"}.get(setup.framework, "hf")


def unknown_config(path: str) -> Any:
    from oomdoctor.errors import InputError

    return InputError(msg("config.unknown_kind"), path)
