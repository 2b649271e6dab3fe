"""Which dtype weights, gradients, master copies and optimizer states really live in, per framework.

Rules from docs/reference/config-formats.md §0, §1.6, §6 (each line names the framework file).
"""
from __future__ import annotations

from dataclasses import dataclass

from oomdoctor.facts import ModelShape, Msg, TrainingSetup, msg

DTYPE_BYTES = {"fp32": 4, "float32": 4, "float": 4, "32": 4, "tf32": 4, "bf16": 2, "bfloat16": 2,
               "fp16": 2, "float16": 2, "half": 2, "16": 2, "fp8": 1, "auto": 2}

# Frameworks that keep every tensor in one dtype (no autocast, no fp32 master copy).
_PURE_FRAMEWORKS = ("torchtune", "litgpt", "pytorch", "fsdp_qlora")
# Frameworks whose LoRA adapters come from PEFT, which upcasts adapters to fp32 (autocast_adapter_dtype=True).
_PEFT_FRAMEWORKS = ("llamafactory", "hf", "trl", "axolotl", "swift", "ms-swift", "openrlhf", "peft")


def dtype_bytes(name: str | None, default: int = 2) -> int:
    if not name:
        return default
    return DTYPE_BYTES.get(str(name).lower().replace("torch.", ""), default)


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in (text or "").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


@dataclass(frozen=True)
class Regime:
    compute_bytes: int          # activations (autocast / pure dtype)
    residual_bytes: int         # residual stream between layers (fp32 when fp32 embeddings feed it)
    frozen_bytes: float         # per frozen parameter (quantized: NF4 / int8 incl. constants)
    train_bytes: int            # per trainable parameter held by the module
    grad_bytes: int             # per trainable parameter (module .grad)
    master_bytes: int           # fp32 master copy held by the optimizer (DeepSpeed mixed precision)
    state_dtype_bytes: int      # dtype of optimizer states
    deepspeed: bool
    autocast: bool              # torch.autocast wraps the forward (accelerate native AMP)
    adapter_cast_copy: bool     # no autocast and adapters in fp32 over a half base: PEFT casts inputs to fp32
    embed_fp32: bool            # axolotl keeps embed_tokens / lm_head in fp32 for full fine-tunes
    notes: tuple[Msg, ...]
    compute_dtype: str = "bf16"   # names (bf16 | fp16 | fp32): same bytes is not the same dtype
    load_dtype: str = "bf16"
    train_dtype: str = "bf16"
    casts_trainable: bool = False  # autocast copies the trainable weights for every matmul (cached all forward)
    casts_frozen: bool = False     # autocast copies the frozen weights at each use
    other_dtype: str = "bf16"      # the weights a quantized run leaves unquantized (embeddings, norms, output
                                   # layer), where they differ from the compute dtype; else the compute dtype

    @property
    def load_bytes(self) -> int:
        """Bytes per element of the dtype the checkpoint is loaded in."""
        return _NAME_BYTES.get(self.load_dtype, 2)


# Whether 4-bit bitsandbytes weights quantize their absmax constants again ("double quant"), by framework default:
# LLaMA-Factory double_quantization=True (hparams/model_args.py), axolotl bnb_4bit_use_double_quant=True (loaders),
# bitsandbytes' Linear4bit compress_statistics=True (fsdp_qlora builds Linear4bit directly), torchao's NF4Tensor
# quantizes its scalers; transformers' BitsAndBytesConfig and TRL's use_bnb_nested_quant default to False, and so
# does LitGPT's `bnb.nf4` (`bnb.nf4-dq` turns it on).
_DOUBLE_QUANT_DEFAULT = {"llamafactory": True, "axolotl": True, "fsdp_qlora": True, "torchtune": True}


def double_quant(setup: TrainingSetup) -> bool:
    """Whether 4-bit weights store their absmax constants in 8 bits (see _DOUBLE_QUANT_DEFAULT)."""
    stated = setup.mechanisms.double_quant
    if stated is not None:
        return stated
    if setup.use_unsloth:
        # unsloth's loader builds BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_use_double_quant=True, nf4)
        # (unsloth/models/llama.py FastLlamaModel.from_pretrained @0927c343 line 1378), and its pre-quantized
        # `-bnb-4bit` checkpoints carry the same quantization_config
        return True
    return _DOUBLE_QUANT_DEFAULT.get((setup.framework or "").lower(), False)


def _quant_bytes(bits: int | None, method: str, nested: bool = True) -> float:
    if not bits:
        return 0.0
    if bits == 4:
        # NF4: 0.5 B/param + one fp32 absmax per 64 values; double quant stores the absmax in 8 bits with an
        # fp32 constant per 256 blocks (bitsandbytes functional.quantize_4bit): 0.5 + 1/64 + 4/(64*256).
        if method == "gptq":
            return 0.5 + 2 / 128 + 0.5 / 128
        return 0.5 + 1 / 64 + 4 / (64 * 256) if nested else 0.5 + 4 / 64
    if bits == 8:
        # LLM.int8: 1 B/param + one fp32 scale per output row (negligible); GPTQ int8 similar.
        return 1.0 + 0.01
    return bits / 8


_NAMES = {"fp32": "fp32", "float32": "fp32", "float": "fp32", "32": "fp32", "tf32": "fp32",
          "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "half": "fp16", "16": "fp16",
          "fp8": "fp8", "auto": "bf16"}
_NAME_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}


def dtype_name(value: str | None, default: str = "bf16") -> str:
    """bf16 | fp16 | fp32 | fp8 for any spelling a config uses (torch.bfloat16, float16, half, ...)."""
    if not value:
        return default
    return _NAMES.get(str(value).lower().replace("torch.", ""), default)


def regime_of(setup: TrainingSetup, shape: ModelShape) -> Regime:
    fw = (setup.framework or "").lower()
    notes: list[Msg] = []
    fp32_run = setup.precision in ("fp32", "no", "float32")
    compute_name = "fp32" if fp32_run else ("fp16" if dtype_name(setup.precision) == "fp16" else "bf16")
    compute = _NAME_BYTES[compute_name]
    ds = setup.zero_stage >= 1
    quant = setup.quant_bits if setup.method == "qlora" or setup.quant_bits else None
    adapters = setup.method in ("lora", "qlora")
    load_name = _load_dtype(setup, shape, fw, compute_name, notes)
    if quant:
        load_name = compute_name if compute_name != "fp32" else "bf16"   # bnb_4bit_compute_dtype
    load = _NAME_BYTES.get(load_name, 2)
    other_name = _unquantized_dtype(setup, shape, fw) if quant else None

    pure = fw in _PURE_FRAMEWORKS or setup.pure_bf16   # pure_bf16: no autocast, no fp32 upcast
    frozen = _quant_bytes(quant, setup.mechanisms.quant_method, double_quant(setup)) if quant else float(load)
    train_name = _train_dtype(setup, fw, load_name, bool(quant), notes)
    train = _NAME_BYTES.get(train_name, 2)
    embed_fp32 = (fw == "axolotl" and not adapters and not setup.fsdp and not ds
                  and setup.attention in ("eager", "sdpa", "") and load != 4)
    if embed_fp32:
        notes.append(msg("memory.regime.axolotl_fp32_embeddings"))

    # FSDP over several GPUs prepared by accelerate with mixed precision (below: its fp32 upcast and half gathers)
    fsdp_mp = _accelerate_fsdp_upcast(setup, fw, compute_name, pure)
    grad = train
    master = 0
    state = train
    if ds and compute == 2:
        # DeepSpeed bf16/fp16: module in half, fp32 master weights and fp32 optimizer states
        # (deepspeed/runtime/zero/stage_1_and_2.py estimator: 2P + 18P/N).
        train = grad = 2
        train_name = load_name = compute_name
        frozen = frozen if quant else 2.0
        master = 4
        state = 4
        notes.append(msg("memory.regime.deepspeed_mixed"))
    elif ds and fp32_run:
        # DeepSpeed's ZeRO optimizer clones its fp32 partition from the module's even when the module is fp32
        # (stage_1_and_2.py:401 and stage3.py:906 `.clone().float().detach()`): a master copy beside the weights
        master = 4
    elif not adapters and train == 2 and fsdp_mp:
        # accelerate upcasts FSDP's trainable parameters to fp32 under mixed precision, compute staying in the
        # MixedPrecision param_dtype: FSDP1 since 0.30 (accelerator.py prepare_model, `param.data =
        # param.data.to(torch.float32)  # upcasting` on each requires_grad FlatParameter), FSDP2 since 1.6
        # (utils/fsdp_utils.py fsdp2_prepare_model, `model.to(torch.float32)`; requires_grad parameters only
        # from 1.13). The sharded weights, their gradients and AdamW's states are fp32.
        train = grad = state = 4
        notes.append(msg("memory.regime.fsdp_upcast"))
    elif not adapters and train == 2 and not pure and fw in ("hf", "axolotl", "trl", "swift", "ms-swift"):
        notes.append(msg("memory.regime.half_loaded_trainer"))
    if pure and not adapters and train == 2:
        notes.append(msg("memory.regime.pure_half"))

    # accelerate wraps the forward in torch.autocast for bf16/fp16 runs, except under DeepSpeed (which casts
    # the module instead) and pure half precision (accelerator.py native_amp)
    autocast = not pure and compute_name != "fp32" and not ds
    if pure:
        compute = load if not quant else 2
        compute_name = load_name if not quant else "bf16"
    residual = _residual_bytes(setup, embed_fp32, bool(quant), autocast, ds, compute, compute_name, train_name,
                               load_name, other_name)
    adapter_cast_copy = adapters and not autocast and train == 4 and compute == 2
    # FSDP's mixed precision gathers every unit in its param_dtype (FSDP2 _fsdp_param.py init_dtype_attrs,
    # `param_dtype = mp_policy.param_dtype`; FSDP1 MixedPrecision.param_dtype): the layers compute on half
    # copies that the gather buffers already count, and autocast, finding half weights, caches none
    if fsdp_mp:
        # the embedding too is gathered in param_dtype: the residual stream starts, and stays, in half precision
        residual = compute
    return Regime(compute_bytes=compute, residual_bytes=residual, frozen_bytes=frozen, train_bytes=train,
                  grad_bytes=grad, master_bytes=master, state_dtype_bytes=state, deepspeed=ds,
                  autocast=autocast, adapter_cast_copy=adapter_cast_copy, embed_fp32=embed_fp32,
                  notes=tuple(notes), compute_dtype=compute_name, load_dtype=load_name, train_dtype=train_name,
                  casts_trainable=autocast and train_name != compute_name and not fsdp_mp,
                  casts_frozen=autocast and load_name != compute_name and not quant and not fsdp_mp,
                  other_dtype=other_name or compute_name)


# axolotl is not here: since d6e4a611e (2025-07, "FSDP1 -> FSDP2") it replaces accelerate's fsdp2_prepare_model
# with its own (src/axolotl/monkeypatch/accelerate/fsdp2.py patch_accelerate_fsdp2), which upcasts nothing;
# its FSDP1 runs go through accelerate's, but the setup does not say which version a run used.
_ACCELERATE_FRAMEWORKS = ("hf", "trl", "swift", "ms-swift", "llamafactory")


def _accelerate_fsdp_upcast(setup: TrainingSetup, fw: str, compute_name: str, pure: bool) -> bool:
    """FSDP over several GPUs prepared by accelerate (the HF Trainer's frameworks) with mixed precision on."""
    fsdp = (setup.fsdp or "").lower()
    return (bool(fsdp) and fsdp != "no_shard" and setup.n_gpus > 1 and fw in _ACCELERATE_FRAMEWORKS
            and not pure and compute_name != "fp32")


def _transformers_version(setup: TrainingSetup) -> tuple[int, ...]:
    """The transformers version the run used: stated, the framework's own, or LLaMA-Factory's pin."""
    stated = setup.mechanisms.transformers_version
    if stated:
        return _version(stated)
    if setup.framework in ("hf", "trl", "swift", "ms-swift") and setup.framework_version:
        return _version(setup.framework_version)
    if setup.framework == "llamafactory" and setup.framework_version:
        ver = _version(setup.framework_version)
        if ver and ver < (0, 9, 1):
            return (4, 45)       # LLaMA-Factory <= 0.9.0 pins transformers <= 4.45 (setup.py requirements)
    return ()


def _unquantized_dtype(setup: TrainingSetup, shape: ModelShape, fw: str) -> str | None:
    """The dtype bitsandbytes-quantized runs keep their other weights in (embeddings, norms, output layer, biases).
    transformers < 5 loads a bitsandbytes model asked for no torch_dtype in float16 ("Overriding torch_dtype=None
    with `torch_dtype=torch.float16` due to requirements of `bitsandbytes`": modeling_utils.from_pretrained up to
    4.36, quantizers/quantizer_bnb_4bit.py update_torch_dtype from 4.37). ms-swift 1.5.0 passes none for Qwen-1
    under bnb (swift/llm/utils/model.py get_model_tokenizer_qwen `torch_dtype = None`, from 232a22b32 until
    f52dfd35c "fix bnb qwen bug" passed the dtype again under bnb, first tagged v1.5.1).
    axolotl before 0.3.0 keeps PEFT's fp32 upcast of them (below)."""
    if _axolotl_keeps_kbit_upcast(setup, fw):
        return "fp32"
    if setup.load_dtype or setup.mechanisms.quant_method.lower() not in ("bnb", "bitsandbytes", "nf4", "fp4"):
        return None
    tf = _transformers_version(setup)
    if tf and tf >= (5,):
        return None
    ver = _version(setup.framework_version or setup.mechanisms.swift_version)
    qwen_loader = fw in ("swift", "ms-swift") and (shape.model_type or "").lower() == "qwen" \
        and bool(ver) and (1, 5) <= ver < (1, 5, 1)
    return "fp16" if qwen_loader else None


def _axolotl_keeps_kbit_upcast(setup: TrainingSetup, fw: str) -> bool:
    """A bitsandbytes 8/4-bit adapter run of axolotl before 0.3.0 without flash attention: PEFT's
    prepare_model_for_kbit_training casts every fp16/bf16 parameter left unquantized (embeddings, norms, output
    layer) to fp32 (peft utils/other.py at ec267c644: `param.data = param.data.to(torch.float32)`), and axolotl's
    load_model cast them back only for llama-adapter (utils/models.py at dc71d8872, load_llama_adapter); from
    0b7ba57ec (2023-08-25) it casts back with flash attention, from v0.3.0 (f319b0bc6's `needs_fa2_dtype`) for
    every adapter."""
    ver = _version(setup.framework_version)
    return (fw == "axolotl" and bool(ver) and ver < (0, 3) and setup.method in ("lora", "qlora")
            and bool(setup.quant_bits) and setup.attention != "fa2"
            and setup.mechanisms.quant_method.lower() in ("bnb", "bitsandbytes", "nf4", "fp4"))


def _load_dtype(setup: TrainingSetup, shape: ModelShape, fw: str, compute_name: str, notes: list[Msg]) -> str:
    """The dtype the checkpoint is loaded in, before quantization."""
    if setup.load_dtype:
        return dtype_name(setup.load_dtype, compute_name)
    if fw == "llamafactory":
        if _version(setup.framework_version) and _version(setup.framework_version) < (0, 9, 4):
            return compute_name   # <= 0.9.3 loads in compute_dtype (v0.9.3 model/patcher.py:142-148)
        load_name = dtype_name(shape.torch_dtype)   # >= 0.9.4 torch_dtype="auto" (loader.py:151-154)
        if load_name == "fp32":
            notes.append(msg("memory.regime.lf_loads_fp32_checkpoint"))
        return load_name
    if fw == "trl":
        notes.append(msg("memory.regime.trl_loads_fp32"))
        return "fp32"   # trl/trainer/utils.py: dtype defaults to float32 for a model given by name
    if fw == "hf":
        major = _version(setup.framework_version)[:1]
        # from_pretrained loads fp32 unless told otherwise; transformers 5 defaults to dtype="auto"
        return dtype_name(shape.torch_dtype) if major and major[0] >= 5 else "fp32"
    return compute_name   # axolotl config/__init__.py: torch_dtype follows bf16/fp16


def _train_dtype(setup: TrainingSetup, fw: str, load_name: str, quant: bool, notes: list[Msg]) -> str:
    """The dtype trainable parameters live in: PEFT upcasts adapters to fp32 (not the pure-dtype frameworks, nor
    an explicit half adapter_dtype); LLaMA-Factory upcasts every trainable parameter to fp32 unless pure_bf16,
    BAdam or unquantised ZeRO-3."""
    if setup.method in ("lora", "qlora"):
        half_adapters = fw in _PURE_FRAMEWORKS or setup.mechanisms.adapter_dtype in ("bf16", "fp16")
        train_name = load_name if half_adapters else "fp32"
        if fw == "llamafactory" and train_name == "fp32":
            notes.append(msg("memory.regime.lf_upcasts_adapters"))
        return train_name
    if fw == "llamafactory":
        upcast = not (setup.pure_bf16 or setup.badam or (setup.zero_stage == 3 and not quant))
        if upcast:
            notes.append(msg("memory.regime.lf_upcasts_trainables"))
        return "fp32" if upcast else load_name
    return load_name


def _residual_bytes(setup: TrainingSetup, embed_fp32: bool, quant: bool, autocast: bool, ds: bool, compute: int,
                    compute_name: str, train_name: str, load_name: str, other_name: str | None = None) -> int:
    """The residual stream starts as the embedding's output; a layer's compute-dtype output added to it promotes
    it to fp32 when the two dtypes differ (fp32 embeddings, or an fp16 checkpoint under bf16 autocast)."""
    embed_name = "fp32" if embed_fp32 else (train_name if setup.method == "full" else load_name)
    if quant:
        # the embedding stays in the dtype the unquantized weights are left in (fp32 after PEFT's kbit upcast)
        embed_name = other_name if other_name == "fp32" else compute_name
    if autocast and embed_name != compute_name:
        return 4
    if autocast:
        return compute
    return _NAME_BYTES.get(embed_name, compute) if not ds else compute
