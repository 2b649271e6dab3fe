"""DeepSpeed JSON: ZeRO stage, offload, precision blocks, batch keys, buckets; "auto" filled as the HF
integration fills it.

HF resolution (transformers integrations/deepspeed.py, HfTrainerDeepSpeedConfig): micro batch, accumulation,
bf16/fp16 come from TrainingArguments; reduce_bucket_size = hidden², stage3_prefetch_bucket_size = 0.9·hidden²,
stage3_param_persistence_threshold = 10·hidden (see reference config-formats.md §4.2).
DeepSpeed's own batch rule (runtime/config.py _configure_train_batch_size): train_batch_size =
micro batch × accumulation × world size; given two of the three, it derives the third.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from oomdoctor.configs._doc import Builder, Doc, parse_file
from oomdoctor.configs._keys import DEEPSPEED, Key, table, version_chooser
from oomdoctor.configs.trainer_args import HF_VERSION
from oomdoctor.errors import InputError
from oomdoctor.facts import Framework, Source, TrainingSetup, msg
from oomdoctor.lazyre import lazy_re

NAME = "deepspeed"
FRAMEWORK: Framework = "hf"

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

KEYS = table(
    Key("zero_stage", "zero_optimization.stage", file=DEEPSPEED, minimum=0, maximum=3),
    Key("offload_optimizer", "zero_optimization.offload_optimizer.device", file=DEEPSPEED, after="stage"),
    Key("offload_params", "zero_optimization.offload_param.device", file=DEEPSPEED, after="stage"),
    Key("micro_batch", "train_micro_batch_size_per_gpu", file=DEEPSPEED, minimum=1),
    Key("grad_accum", "gradient_accumulation_steps", file=DEEPSPEED, minimum=1),
)

_BUCKET_KEYS = ("reduce_bucket_size", "allgather_bucket_size", "stage3_prefetch_bucket_size", "prefetch_bucket_size",
                "stage3_param_persistence_threshold", "param_persistence_threshold", "stage3_max_live_parameters",
                "max_live_parameters", "stage3_max_reuse_distance", "max_reuse_distance", "sub_group_size",
                "overlap_comm", "contiguous_gradients", "round_robin_gradients")
# ds_zero2.json, zero3_offload.json, ds_z3_config.json, stage2.json; FastChat's deepspeed_config_s2.json / _s3.json
_STAGE_IN_NAME = lazy_re(r"(?:zero|z|stage|(?<![A-Za-z])s)[_-]?([0-3])(?![0-9])", re.I)


def read_ref(b: Builder, doc: Doc, key: str, hf: dict[str, Any], model: str, *,
                       strict: bool = True) -> str | None:
    """Follow the DeepSpeed JSON a config names under `key`; the path found (None when only known
    by a shipped name or, for a script, not found at all)."""
    if doc.get(key) is True or str(doc.get(key)).strip().lower() == "true":
        return None     # a bare `--deepspeed`: DeepSpeed's own switch (deepspeed.add_config_arguments), no file
    ref = doc.str_(key)
    if not ref:
        return None
    if ref.lstrip().startswith("{"):
        b.note(msg("config.ds_inline", where=doc.where(key)))
        return None
    written = doc.inline.get(ref) or doc.inline.get(ref.lstrip("./"))
    if written is not None and not os.path.isfile(ref):
        # The script writes this JSON itself (`cat > ds.json <<EOF`): read what it writes.
        from oomdoctor.configs._doc import parse_text

        read_deepspeed_doc(b, parse_text(written, doc.file_of(key)), hf, model)
        return None
    path, shipped = find_deepspeed(ref, doc, key, strict=strict)
    if path is None and shipped is None:
        apply_guess(b, ref, doc.src(key))
        return None
    apply_deepspeed(b, path, shipped, doc.src(key), hf, model)
    return path


def detect(data: dict) -> Any:
    if isinstance(data.get("zero_optimization"), dict):
        return msg("config.why.deepspeed", keys="zero_optimization")
    if "train_micro_batch_size_per_gpu" in data and "model_name_or_path" not in data:
        return msg("config.why.deepspeed", keys="train_micro_batch_size_per_gpu")
    if "train_batch_size" in data and not any(k in data for k in ("model_name_or_path", "base_model", "model")):
        return msg("config.why.deepspeed", keys="train_batch_size")
    return None


def _is_file(path: Path) -> bool:
    """Path.is_file, with a name the OS refuses (ENAMETOOLONG, EACCES on a parent) taken as no file:
    pathlib ignores only ENOENT, ENOTDIR, EBADF and ELOOP."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def find_deepspeed(ref: str, config: Doc, key: str, *, strict: bool = True) -> tuple[str | None, str | None]:
    """(path of an existing file, or None; shipped-file name when only known by name).

    Not found: an error naming the config's line, or with `strict=False` (a script, copied without its
    repository) (None, None)."""
    ref = os.path.expanduser(ref)
    base = Path(config.file_of(key)).resolve().parent
    candidates = [Path(ref)] if os.path.isabs(ref) else [base / ref, Path.cwd() / ref]
    if not os.path.isabs(ref):
        # "examples/deepspeed/x.json" is written relative to the framework's repo root, a parent of the YAML.
        candidates += [parent / ref for parent in base.parents]
    for c in candidates:
        if _is_file(c):
            rel = os.path.relpath(c) if not os.path.isabs(ref) else str(c)
            return (rel if not rel.startswith("../../..") else str(c)), None
    name = Path(ref).name
    if name in SHIPPED:
        return None, name
    if not strict:
        return None, None
    raise config.fail(key, msg("config.ds_not_found", ref=ref, config=config.file_of(key)))


def apply_guess(b: Builder, ref: str, ref_src: Source) -> None:
    """A DeepSpeed JSON a script names that is not here: the ZeRO stage its name says (ds_zero2.json,
    zero3_offload.json), said to be a guess."""
    name = Path(ref).name
    m = _STAGE_IN_NAME.search(name)
    if m is None:
        b.note(msg("config.ds_missing_unknown", where=ref_src.describe(), ref=ref))
        return
    stage = int(m.group(1))
    offload = "offload" in name.lower()
    src = Source(file=ref_src.file, key=ref_src.key, line=ref_src.line)
    b.set("zero_stage", stage, src)
    b.set("offload_optimizer", offload, src)
    b.set("offload_params", offload and stage == 3, src)
    b.note(msg("config.ds_missing_guess", where=ref_src.describe(), ref=ref, stage=stage))


def apply_deepspeed(b: Builder, ds_path: str | None, shipped: str | None, ref_src: Source,
                    hf: dict[str, Any], model: str) -> None:
    """Fill zero_stage, offload and precision (when the JSON fixes it) into the builder; extras get the rest.

    `hf` holds the TrainingArguments values the "auto" entries take: micro_batch, grad_accum, bf16, fp16.
    """
    if ds_path is None:
        stage, off_opt, off_par, bf16 = SHIPPED[shipped or ""]      # a shipped name whenever no path
        note = msg("config.default.ds_shipped", name=shipped)
        b.note(msg("config.ds_shipped", where=ref_src.describe(), name=shipped))
        src = Source(file=None, key="zero_optimization.stage", default=note)
        b.set("zero_stage", stage, src)
        b.set("offload_optimizer", off_opt, Source(default=note))
        b.set("offload_params", off_par, Source(default=note))
        if bf16 is True and not hf.get("bf16") and not hf.get("fp16"):
            b.set("precision", "bf16", Source(default=note))
        b.extras["deepspeed"] = {"shipped": shipped}
        return
    doc = parse_file(ds_path)
    read_deepspeed_doc(b, doc, hf, model)


def read_deepspeed_doc(b: Builder, doc: Doc, hf: dict[str, Any], model: str) -> None:
    zero = doc.get("zero_optimization")
    if zero is not None and not isinstance(zero, dict):
        # DeepSpeed reads it as a dict (runtime/zero/config.py: DeepSpeedZeroConfig(**param_dict[...])).
        raise doc.fail("zero_optimization", msg("config.ds_zero_not_mapping", kind=type(zero).__name__))
    stage = doc.int_(KEYS["zero_stage"].name, minimum=0, maximum=3)
    if stage is not None:
        b.set("zero_stage", stage, doc.src(KEYS["zero_stage"].name))
    else:
        b.set("zero_stage", 0, Source(default=msg("config.default.ds_unset", key="zero_optimization.stage")))
    _read_offload(b, doc, stage)
    # Precision blocks: explicit true decides; "auto" takes TrainingArguments (HF integration).
    for dtype in ("bf16", "fp16"):
        enabled = doc.get(f"{dtype}.enabled")
        if enabled is True or (isinstance(enabled, str) and enabled.lower() == "true"):
            if not hf.get("bf16") and not hf.get("fp16"):
                b.set("precision", dtype, doc.src(f"{dtype}.enabled"))
    # Both blocks turned off in so many words: the engine trains in fp32 (runtime/config.py get_fp16_enabled and
    # get_bfloat16_enabled are False, so no mixed-precision wrapper); transformers refuses a TrainingArguments dtype
    # that contradicts a value that is not "auto" (integrations/deepspeed.py fill_match), so the file decides.
    if "precision" not in b.values and all(_off(doc.get(f"{dtype}.enabled")) for dtype in ("bf16", "fp16")):
        b.set("precision", "fp32", doc.src("bf16.enabled"))
    ds: dict[str, Any] = {"file": doc.path, "_blocks": tuple(
        k for k in ("offload_optimizer", "offload_param") if isinstance(doc.get("zero_optimization." + k), dict))}
    _read_batch_keys(b, doc, hf, ds)
    _read_buckets(doc, model, ds)
    for k in ("gradient_clipping", "zero_allow_untested_optimizer"):
        if doc.get(k) is not None:
            ds[k] = doc.get(k)
    if isinstance(doc.get("optimizer"), dict):
        ds["optimizer"] = str(doc.get("optimizer.type"))
    b.extras["deepspeed"] = ds


def _off(enabled: Any) -> bool:
    return enabled is False or (isinstance(enabled, str) and enabled.lower() == "false")


def _read_offload(b: Builder, doc: Doc, stage: int | None) -> None:
    for field, key in (("offload_optimizer", "zero_optimization.offload_optimizer"),
                       ("offload_params", "zero_optimization.offload_param")):
        dev = doc.get(key + ".device")
        if dev is None and isinstance(doc.get(key), str):
            dev = doc.get(key)
        # The deprecated booleans DeepSpeed still maps onto the same sections (runtime/zero/config.py: `cpu_offload`
        # -> offload_optimizer on cpu, `cpu_offload_param` -> offload_param on cpu).
        old = "zero_optimization." + ("cpu_offload" if field == "offload_optimizer" else "cpu_offload_param")
        if dev is not None:
            b.set(field, str(dev).lower() in ("cpu", "nvme"), doc.src(key + ".device" if doc.has(key + ".device") else key))
        elif doc.bool_(old) is not None:
            b.set(field, bool(doc.bool_(old)), doc.src(old))
        else:
            b.set(field, False, Source(default=msg("config.default.ds_unset", key=key)))
    if b.values.get("offload_params") and (stage or 0) < 3:
        # DeepSpeed only partitions (and so only offloads) parameters at stage 3 (zero/config.py).
        line = b.sources["offload_params"]
        b.set("offload_params", False, Source(file=line.file, key=line.key, line=line.line,
                                              default=msg("config.default.ds_offload_param_ignored")))
        b.note(msg("config.ds_offload_param_ignored", where=line.describe(), stage=stage or 0))


def _read_batch_keys(b: Builder, doc: Doc, hf: dict[str, Any], ds: dict[str, Any]) -> None:
    # Batch keys: "auto" = TrainingArguments; a number that disagrees is an HF error at launch.
    for key, hf_key in (("train_micro_batch_size_per_gpu", "micro_batch"), ("gradient_accumulation_steps", "grad_accum"),
                        ("train_batch_size", None)):
        val = _batch_value(doc, key)
        if val is None:
            continue
        ds[key] = val
        if hf_key and hf.get(hf_key) is not None and val != hf[hf_key]:
            b.note(msg("config.ds_mismatch", where=doc.where(key), key=key, value=val, other=hf[hf_key]))


def _read_buckets(doc: Doc, model: str, ds: dict[str, Any]) -> None:
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
            value = doc.float_("zero_optimization." + k, minimum=0)
            ds[k] = int(value) if value is not None and value == int(value) else value


def _batch_value(doc: Doc, key: str) -> int | None:
    raw = doc.get(key)
    if raw is None or str(raw).lower() == "auto":
        return None
    return doc.int_(key, minimum=1)


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


def read(doc: Doc, ctx: Any) -> TrainingSetup:
    """A DeepSpeed JSON given alone: the ZeRO facts and its own batch keys; the rest stays the HF
    Trainer's default. With train_batch_size, DeepSpeed's rule gives what is missing."""
    version = ctx.framework_version or HF_VERSION
    b = Builder(FRAMEWORK, version, f"transformers {version}")
    b.framework_reason = ctx.reason
    b.version_reason = ctx.version_reason
    read_deepspeed_doc(b, doc, {}, "")
    micro, accum, total = (_batch_value(doc, k) for k in
                           ("train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "train_batch_size"))
    if micro is not None:
        b.set("micro_batch", micro, doc.src("train_micro_batch_size_per_gpu"))
    if accum is not None:
        b.set("grad_accum", accum, doc.src("gradient_accumulation_steps"))
    if total is not None:
        _derive_from_total(b, doc, total, micro, accum)
    if "micro_batch" not in b.values:
        b.default("micro_batch", 8, "per_device_train_batch_size")
    if "grad_accum" not in b.values:
        b.default("grad_accum", 1)
    if "precision" not in b.values:
        b.default("precision", "bf16", msg("config.default.ds_bf16_auto"))
    b.note(msg("config.ds_alone", where=doc.path))
    return b.build(doc, config_file=doc.path, deepspeed_file=doc.path)


def _derive_from_total(b: Builder, doc: Doc, total: int, micro: int | None, accum: int | None) -> None:
    src = doc.src("train_batch_size")
    if micro is not None and accum is not None:
        world, rest = divmod(total, micro * accum)
        if rest or world < 1:
            raise doc.fail("train_batch_size", msg("config.ds_batch_mismatch", total=total, micro=micro, accum=accum))
        b.set("n_gpus", world, src)
    elif micro is not None:
        # One GPU unless a launcher says more: accumulation = total / micro.
        accum_steps, rest = divmod(total, micro)
        if rest or accum_steps < 1:
            raise doc.fail("train_batch_size", msg("config.ds_batch_mismatch", total=total, micro=micro, accum=1))
        b.set("grad_accum", accum_steps, src)
        b.note(msg("config.ds_accum_derived", where=doc.where("train_batch_size"), total=total, micro=micro,
                   accum=accum_steps))
    elif accum is not None:
        micro_size, rest = divmod(total, accum)
        if rest or micro_size < 1:
            raise doc.fail("train_batch_size", msg("config.ds_batch_mismatch", total=total, micro=1, accum=accum))
        b.set("micro_batch", micro_size, src)
    else:
        b.set("micro_batch", total, src)


LABEL = "DeepSpeed"
PACKAGE = "transformers"        # a DeepSpeed JSON alone is read with the HF Trainer's defaults
DEFAULT_VERSION = HF_VERSION


version = version_chooser(NAME, DEFAULT_VERSION, PACKAGE)


def edit(out: Any, c: Any, final: dict[str, Any]) -> None:
    from oomdoctor.configs._edit import zero

    f, v = c.field, c.after
    if f in ("zero_stage", "offload_optimizer", "offload_params"):
        zero(out, c, final, "deepspeed", "output_dir")
    elif f in ("micro_batch", "grad_accum"):
        key = KEYS[f]
        if (out.setup.extras.get("deepspeed") or {}).get(key.name) is not None:
            out.put(key.name, int(v), file=out.setup.deepspeed_file)
