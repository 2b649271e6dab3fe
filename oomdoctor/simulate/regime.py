"""Which dtypes and which training recipe a framework really uses, decided from the setup alone.

Pure Python (no torch): the tracer turns these names into torch dtypes. Facts and their sources are in
docs/reference/config-formats.md sections 0, 1.6 and 6.
"""
from __future__ import annotations

from dataclasses import dataclass

from oomdoctor.facts import ModelShape, Msg, TrainingSetup, msg

_DTYPE_ALIASES = {
    "bf16": "bf16", "bfloat16": "bf16", "torch.bfloat16": "bf16",
    "fp16": "fp16", "float16": "fp16", "half": "fp16", "torch.float16": "fp16",
    "fp32": "fp32", "float32": "fp32", "float": "fp32", "torch.float32": "fp32",
}


def dtype_name(value: object, default: str = "bf16") -> str:
    """Normalise a dtype spelling from a config (bfloat16, torch.float16, fp32, auto ...) to bf16/fp16/fp32."""
    if value is None:
        return default
    return _DTYPE_ALIASES.get(str(value).strip().lower(), default)


@dataclass(frozen=True)
class Regime:
    load_dtype: str            # dtype the model is built in (frozen weights stay in it)
    trainable_dtype: str       # dtype trainable parameters (full/freeze weights, LoRA adapters) live in
    autocast_dtype: str | None  # mixed-precision compute dtype for the forward, None = no autocast
    reentrant_ckpt: bool | None  # torch.utils.checkpoint(use_reentrant=...); None = the installed transformers' default
    notes: tuple[Msg, ...] = ()


def _version_at_most(version: str, limit: tuple[int, ...]) -> bool:
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return bool(parts) and tuple(parts) <= limit


def regime(setup: TrainingSetup, shape: ModelShape, checkpoint_dtype: str | None = None) -> Regime:
    """The dtypes the framework of `setup` gives the weights, the trainables and the forward."""
    compute = dtype_name(setup.precision)
    ckpt = dtype_name(checkpoint_dtype or shape.torch_dtype)
    notes: list[Msg] = []
    fw = setup.framework
    quantized = setup.method == "qlora" or bool(setup.quant_bits)

    if setup.load_dtype:
        load = dtype_name(setup.load_dtype, compute)
    elif quantized:
        # bnb_4bit_compute_dtype = compute dtype: the dequantised weights the matmuls see
        load = compute if compute != "fp32" else "bf16"
    elif fw == "llamafactory":
        # <= 0.9.3 loaded in compute_dtype (patcher.py:142-148); >= 0.9.4 torch_dtype="auto" (loader.py:151-154)
        if setup.framework_version and _version_at_most(setup.framework_version, (0, 9, 3)):
            load = compute
        else:
            load = ckpt
            notes.append(msg("simulate.note.lf_checkpoint_dtype", dtype=ckpt))
    elif fw == "trl":
        load = "fp32"  # trl/trainer/utils.py: dtype = kwargs.get("dtype", "float32")
        notes.append(msg("simulate.note.trl_fp32"))
    else:
        load = compute

    lora = setup.method in ("lora", "qlora")
    adapter_dtype = setup.mechanisms.adapter_dtype
    if lora:
        # peft get_peft_model(autocast_adapter_dtype=True) upcasts the adapters of a half-precision base to fp32,
        # whatever LLaMA-Factory's pure_bf16 says (adapter.py calls it with the default)
        trainable = dtype_name(adapter_dtype) if adapter_dtype else "fp32"
    elif fw == "llamafactory":
        # adapter.py:337-349: trainables to fp32 unless pure_bf16, BAdam, or ZeRO-3 without quantization
        keep = setup.pure_bf16 or setup.badam or (setup.zero_stage >= 3 and not quantized)
        trainable = load if keep else "fp32"
    else:
        trainable = load    # HF Trainer / axolotl / torchtune do not upcast

    mixed = compute in ("bf16", "fp16") and not setup.pure_bf16
    autocast = compute if mixed else None
    reentrant: bool | None
    if fw == "llamafactory":
        reentrant = setup.mechanisms.reentrant_default   # model_args.py:149-152 use_reentrant_gc
    elif fw == "axolotl":
        reentrant = True   # axolotl config/__init__.py:377-383 fills {"use_reentrant": True}
    elif fw in ("swift", "ms-swift"):
        # ms-swift patches torch.utils.checkpoint's default by its version (the memory model's rule)
        from oomdoctor.memory.estimate import _reentrant
        reentrant = _reentrant(setup)
    else:
        reentrant = setup.mechanisms.use_reentrant
    return Regime(load, trainable, autocast, reentrant, tuple(notes))
