"""DeepSpeed JSON: ZeRO stage, offload, precision blocks, buckets; "auto" filled as the HF integration fills it.

HF resolution (transformers integrations/deepspeed.py, HfTrainerDeepSpeedConfig): micro batch, accumulation,
bf16/fp16 come from TrainingArguments; reduce_bucket_size = hidden², stage3_prefetch_bucket_size = 0.9·hidden²,
stage3_param_persistence_threshold = 10·hidden (see reference config-formats.md §4.2).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from oomdoctor.configs._doc import Builder, Doc, parse_text, read_text
from oomdoctor.errors import InputError
from oomdoctor.facts import Source

# What the frameworks' own example DeepSpeed files hold (LLaMA-Factory examples/deepspeed/, axolotl
# deepspeed_configs/). Configs name them relative to the framework's repo root; when that checkout is not
# beside the config we still know what they say. (stage, optimizer offload, parameter offload, bf16.enabled)
SHIPPED = {
    "ds_z0_config.json": (0, False, False, "auto"),
    "ds_z2_config.json": (2, False, False, "auto"),
    "ds_z2_offload_config.json": (2, True, False, "auto"),
    "ds_z2_autotp_config.json": (2, False, False, "auto"),
    "ds_z3_config.json": (3, False, False, "auto"),
    "ds_z3_offload_config.json": (3, True, True, "auto"),
    "ds_z3_fp8_config.json": (3, True, False, "auto"),
    "zero1.json": (1, False, False, "auto"),
    "zero2.json": (2, True, False, "auto"),         # axolotl's zero2 offloads the optimizer
    "zero3.json": (3, False, False, "auto"),
    "zero3_bf16.json": (3, False, False, True),
    "zero3_bf16_cpuoffload_params.json": (3, False, True, True),
    "zero3_bf16_cpuoffload_all.json": (3, True, True, True),
}

_BUCKET_KEYS = ("reduce_bucket_size", "allgather_bucket_size", "stage3_prefetch_bucket_size", "prefetch_bucket_size",
                "stage3_param_persistence_threshold", "param_persistence_threshold", "stage3_max_live_parameters",
                "max_live_parameters", "stage3_max_reuse_distance", "max_reuse_distance", "sub_group_size",
                "overlap_comm", "contiguous_gradients", "round_robin_gradients")


def find_deepspeed(ref: str, config: Doc, key: str) -> tuple[str | None, str | None]:
    """(path of an existing file, or None; shipped-file name when only known by name). Error when neither."""
    ref = os.path.expanduser(ref)
    base = Path(config.path).resolve().parent
    candidates = [Path(ref)] if os.path.isabs(ref) else [base / ref, Path.cwd() / ref]
    if not os.path.isabs(ref):
        # "examples/deepspeed/x.json" is written relative to the framework's repo root, a parent of the YAML.
        candidates += [parent / ref for parent in base.parents]
    for c in candidates:
        if c.is_file():
            rel = os.path.relpath(c) if not os.path.isabs(ref) else str(c)
            return (rel if not rel.startswith("../../..") else str(c)), None
    name = Path(ref).name
    if name in SHIPPED:
        return None, name
    raise config.fail(key, f"DeepSpeed config {ref!r} not found (looked beside {config.path} and in the "
                      "current directory)")


def apply_deepspeed(b: Builder, ds_path: str | None, shipped: str | None, ref_src: Source,
                    hf: dict[str, Any], model: str) -> None:
    """Fill zero_stage, offload and precision (when the JSON fixes it) into the builder; extras get the rest.

    `hf` holds the TrainingArguments values the "auto" entries take: micro_batch, grad_accum, bf16, fp16.
    """
    if ds_path is None:
        stage, off_opt, off_par, bf16 = SHIPPED[shipped]
        note = f"{shipped} as the framework ships it (file not found here)"
        b.warnings.append(f"{ref_src.describe()}: {shipped} not found; used the framework's shipped {shipped}")
        src = Source(file=None, key="zero_optimization.stage", default=note)
        b.set("zero_stage", stage, src)
        b.set("offload_optimizer", off_opt, Source(default=note))
        b.set("offload_params", off_par, Source(default=note))
        if bf16 is True and not hf.get("bf16") and not hf.get("fp16"):
            b.set("precision", "bf16", Source(default=note))
        b.extras["deepspeed"] = {"shipped": shipped}
        return
    doc = parse_text(read_text(ds_path), ds_path)
    read_deepspeed_doc(b, doc, hf, model)


def read_deepspeed_doc(b: Builder, doc: Doc, hf: dict[str, Any], model: str) -> None:
    stage = doc.int_("zero_optimization.stage")
    if stage is not None:
        if stage not in (0, 1, 2, 3):
            raise doc.fail("zero_optimization.stage", f"ZeRO stage must be 0-3, got {stage}")
        b.set("zero_stage", stage, doc.src("zero_optimization.stage"))
    else:
        b.set("zero_stage", 0, Source(default="DeepSpeed default (no zero_optimization.stage)"))
    for field, key in (("offload_optimizer", "zero_optimization.offload_optimizer"),
                       ("offload_params", "zero_optimization.offload_param")):
        dev = doc.get(key + ".device")
        if dev is None and isinstance(doc.get(key), str):
            dev = doc.get(key)
        if dev is not None:
            b.set(field, str(dev).lower() in ("cpu", "nvme"), doc.src(key + ".device" if doc.has(key + ".device") else key))
        else:
            b.set(field, False, Source(default=f"DeepSpeed default (no {key})"))
    if b.values.get("offload_params") and (stage or 0) < 3:
        b.warnings.append(f"{doc.path}: offload_param only works with ZeRO stage 3; DeepSpeed ignores it here")
    # Precision blocks: explicit true decides; "auto" takes TrainingArguments (HF integration).
    for dtype in ("bf16", "fp16"):
        enabled = doc.get(f"{dtype}.enabled")
        if enabled is True or (isinstance(enabled, str) and enabled.lower() == "true"):
            if not hf.get("bf16") and not hf.get("fp16"):
                b.set("precision", dtype, doc.src(f"{dtype}.enabled"))
    # Batch keys: "auto" = TrainingArguments; a number that disagrees is an HF error at launch.
    ds: dict[str, Any] = {"file": doc.path, "_blocks": tuple(
        k for k in ("offload_optimizer", "offload_param") if isinstance(doc.get("zero_optimization." + k), dict))}
    for key, hf_key in (("train_micro_batch_size_per_gpu", "micro_batch"), ("gradient_accumulation_steps", "grad_accum")):
        raw = doc.get(key)
        if raw is None or str(raw).lower() == "auto":
            continue
        val = doc.int_(key)
        ds[key] = val
        if hf.get(hf_key) is not None and val != hf[hf_key]:
            b.warnings.append(f"{doc.path}:{doc.lines.get(key, '?')}: {key} {val} disagrees with the training "
                              f"config's {hf[hf_key]}; the HF Trainer refuses to start on such a mismatch")
    hidden = _hidden_size(model) if any(str(doc.get("zero_optimization." + k)).lower() == "auto" for k in _BUCKET_KEYS) else None
    for k in _BUCKET_KEYS:
        raw = doc.get("zero_optimization." + k)
        if raw is None:
            continue
        if isinstance(raw, str) and raw.lower() == "auto":
            ds[k] = _auto_bucket(k, hidden)
        elif isinstance(raw, bool):
            ds[k] = raw
        else:
            ds[k] = doc.float_("zero_optimization." + k)
            if ds[k] is not None and ds[k] == int(ds[k]):
                ds[k] = int(ds[k])
    for k in ("gradient_clipping", "zero_allow_untested_optimizer"):
        if doc.get(k) is not None:
            ds[k] = doc.get(k)
    if isinstance(doc.get("optimizer"), dict):
        ds["optimizer"] = str(doc.get("optimizer.type"))
    b.extras["deepspeed"] = ds


def _hidden_size(model: str) -> int | None:
    if not model:
        return None
    from oomdoctor.models import resolve_model

    try:
        return resolve_model(model).hidden_size
    except InputError:
        return None


def _auto_bucket(key: str, hidden: int | None) -> int | str:
    if hidden is None:
        return "auto"
    if key == "reduce_bucket_size":
        return hidden * hidden
    if key in ("stage3_prefetch_bucket_size", "prefetch_bucket_size"):
        return int(0.9 * hidden * hidden)
    if key in ("stage3_param_persistence_threshold", "param_persistence_threshold"):
        return 10 * hidden
    return "auto"


def load_bare(doc: Doc) -> "TrainingSetup":  # noqa: F821
    """A DeepSpeed JSON given alone: the ZeRO facts; everything else stays the HF Trainer default."""
    from oomdoctor.configs.hf import HF_VERSION

    b = Builder("hf", HF_VERSION, f"transformers {HF_VERSION}")
    read_deepspeed_doc(b, doc, {}, "")
    for key, name in (("train_micro_batch_size_per_gpu", "micro_batch"), ("gradient_accumulation_steps", "grad_accum")):
        raw = doc.get(key)
        if raw is not None and str(raw).lower() != "auto":
            b.set(name, doc.int_(key), doc.src(key))
    if "micro_batch" not in b.values:
        b.default("micro_batch", 8, "per_device_train_batch_size")
    if "precision" not in b.values:
        b.default("precision", "bf16", "bf16.enabled is auto: assumed the run sets bf16")
    b.warnings.append(f"{doc.path}: a DeepSpeed JSON alone names no model; pass the training config or --model")
    return b.build(config_file=doc.path, deepspeed_file=doc.path)
