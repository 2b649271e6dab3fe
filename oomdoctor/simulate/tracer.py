"""Run real training steps of the user's model code on fake tensors and count live storage bytes.

Recipe (docs/reference/fake-tensor-tracing.md): build on `meta`, `to_empty(device="cpu")` inside
`FakeTensorMode(allow_non_fake_inputs=True)`, count every new storage once in a TorchDispatchMode and
subtract it when the storage dies. CPU fake storages have the bytes a CUDA run allocates (the CUDA caching
allocator's 512-byte rounding aside). Imports torch, transformers and peft: load it only for --simulate.
"""
from __future__ import annotations

import math
import re
import time
import weakref
from collections import defaultdict
from typing import Any, Callable

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.weak import WeakIdKeyDictionary

from oomdoctor.facts import ModelShape, Msg, TrainingSetup, msg
from oomdoctor.memory.regime import double_quant as stated_double_quant
from oomdoctor.simulate.errors import SimulateError, SimulateTimeout
from oomdoctor.simulate.regime import Regime, regime
from oomdoctor.simulate.result import CATEGORIES, PhasePeak, TraceResult

_TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
_PRIM_DEVICE = torch.ops.prim.device.default
_BERNOULLI = torch.ops.aten.bernoulli_.float

LIMITS = (msg("simulate.limit.no_cuda"), msg("simulate.limit.no_fragmentation"), msg("simulate.limit.cpu_autocast"))


# ---------------------------------------------------------------- counting live bytes


class LiveBytes(TorchDispatchMode):
    """Live tensor bytes by category, with the peak of each phase, counted as ops run."""

    def __init__(self, vocab_size: int) -> None:
        super().__init__()
        self._entries: WeakIdKeyDictionary = WeakIdKeyDictionary()   # storage -> [category, nbytes]
        self.by_cat = dict.fromkeys(CATEGORIES, 0)
        self.live = 0
        self.vocab_size = vocab_size
        self.phase_peaks: dict[tuple[int, str], list[Any]] = {}      # (step, phase) -> [bytes, by_cat]
        self._current: list[Any] | None = None
        self.clock: Callable[[], None] | None = None   # called every 1024 ops: the time limit and heartbeat
        self._ops = 0

    def count(self, t: torch.Tensor, category: str | None = None) -> None:
        """Count t's storage once; with a category, (re)label it."""
        storage = t.untyped_storage()
        entry = self._entries.get(storage)
        if entry is None:
            if category is None:
                # logits and their gradient: [..., vocab] tensors that are not parameters
                category = "logits" if t.dim() >= 2 and t.shape[-1] == self.vocab_size else "activations"
            n_bytes = storage.nbytes()
            entry = [category, n_bytes]
            self._entries[storage] = entry
            self.live += n_bytes
            self.by_cat[category] += n_bytes
            weakref.finalize(storage, self._free, entry).atexit = False
        elif category is not None and entry[0] != category:
            self.by_cat[entry[0]] -= entry[1]
            self.by_cat[category] += entry[1]
            entry[0] = category

    def _free(self, entry: list[Any]) -> None:
        self.live -= entry[1]
        self.by_cat[entry[0]] -= entry[1]

    def enter(self, step: int, phase: str) -> None:
        self._current = self.phase_peaks.setdefault((step, phase), [0, dict(self.by_cat)])
        self._note()

    def _note(self) -> None:
        current = self._current
        if current is not None and self.live > current[0]:
            current[0] = self.live
            current[1] = dict(self.by_cat)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is _PRIM_DEVICE:
            # Two in three calls are C++ asking a fake tensor its device: answer it without another
            # trip through FakeTensorMode; nothing is allocated.
            device = getattr(args[0], "fake_device", None)
            return device if device is not None else func(*args, **(kwargs or {}))
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self.count(t)
        if func is _BERNOULLI and isinstance(args[0], torch.Tensor):
            self._as_bool_mask(args[0])
        self._note()
        self._ops += 1
        if self.clock is not None and not self._ops & 1023:
            self.clock()
        return out

    def _as_bool_mask(self, noise: torch.Tensor) -> None:
        """CPU dropout fills a mask in the input's dtype (ATen Dropout.cpp _dropout_impl); CUDA's native_dropout
        keeps a bool mask, one byte per element. Count the mask as the GPU would hold it."""
        entry = self._entries.get(noise.untyped_storage())
        if entry is None:
            return
        target = noise.numel()
        if target < entry[1]:
            self.live -= entry[1] - target
            self.by_cat[entry[0]] -= entry[1] - target
            entry[1] = target


# ---------------------------------------------------------------- the model


def _config(shape: ModelShape, hf_config: dict | None, notes: list[Msg]):
    import transformers

    if hf_config is not None:
        values = {k: v for k, v in hf_config.items()
                  if k not in ("quantization_config", "auto_map", "architectures", "transformers_version")}
        model_type = values.pop("model_type", None)
        if not model_type:
            raise SimulateError(msg("simulate.no_model_type"))
    else:
        model_type = shape.model_type or "llama"
        values = dict(hidden_size=shape.hidden_size, intermediate_size=shape.intermediate_size,
                      num_hidden_layers=shape.num_layers, num_attention_heads=shape.num_heads,
                      num_key_value_heads=shape.num_kv_heads, head_dim=shape.head_dim_,
                      vocab_size=shape.vocab_size, tie_word_embeddings=shape.tie_word_embeddings,
                      attention_bias=shape.attention_bias, mlp_bias=shape.mlp_bias)
        if shape.num_experts:
            values.update(num_local_experts=shape.num_experts, num_experts=shape.num_experts,
                          num_experts_per_tok=shape.experts_per_token)
            if shape.moe_intermediate_size:
                values["moe_intermediate_size"] = shape.moe_intermediate_size
    values["use_cache"] = False   # training runs without a KV cache
    try:
        return transformers.AutoConfig.for_model(model_type, **values)
    except ValueError:
        if hf_config is not None:
            raise SimulateError(msg("simulate.unknown_model_type", version=transformers.__version__,
                                    model_type=model_type)) from None
        notes.append(msg("simulate.note.unknown_model_type", model_type=model_type))
        return transformers.AutoConfig.for_model("llama", **values)


def _build_meta(cfg, load: torch.dtype, attention: str, notes: list[Msg]):
    import transformers

    def build(impl: str):
        with torch.device("meta"):
            return transformers.AutoModelForCausalLM.from_config(cfg, dtype=load, attn_implementation=impl)

    try:
        return build(attention), attention
    except (ValueError, ImportError) as err:
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        refuses_attention = attention != "eager" and re.search(r"attn|attention|sdpa", message, re.I)
        if not refuses_attention:
            raise SimulateError(msg("simulate.cannot_build", model_type=cfg.model_type, error=message[:300])) from None
    notes.append(msg("simulate.note.eager", model_type=cfg.model_type, attention=attention))
    return build("eager"), "eager"


def _layer_list(model, n_layers: int) -> tuple[str, torch.nn.ModuleList]:
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n_layers:
            return name, module
    raise SimulateError(msg("simulate.no_layers"))


def _lora_targets(setup: TrainingSetup, model) -> Any:
    if not setup.lora_targets or "all" in setup.lora_targets:
        return "all-linear"   # peft: every Linear except the output layer, like LLaMA-Factory's "all"
    names = {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    missing = [t for t in setup.lora_targets if t not in names]
    if missing:
        raise SimulateError(msg("simulate.lora_missing", targets=tuple(missing), linears=tuple(sorted(names))))
    return list(setup.lora_targets)


def _apply_method(model, setup: TrainingSetup, cfg, rg: Regime):
    """Mark trainables the way the framework does; returns the model to train (peft-wrapped for LoRA)."""
    if setup.method in ("lora", "qlora"):
        import peft

        lora = peft.LoraConfig(r=setup.lora_rank, lora_alpha=setup.lora_alpha or 2 * setup.lora_rank,
                               target_modules=_lora_targets(setup, model), use_dora=setup.use_dora,
                               lora_dropout=setup.mechanisms.lora_dropout,
                               task_type="CAUSAL_LM")
        model = peft.get_peft_model(model, lora)
    elif setup.method == "freeze":
        prefix, layers = _layer_list(model, cfg.num_hidden_layers)
        n = setup.freeze_trainable_layers
        ids = range(len(layers) - n, len(layers)) if n > 0 else range(0, -n)
        keep = tuple(f"{prefix}.{i}." for i in ids)
        for name, p in model.named_parameters():
            p.requires_grad_(name.startswith(keep))
    else:
        for p in model.parameters():
            p.requires_grad_(True)
    want = _TORCH_DTYPES[rg.trainable_dtype]
    for p in model.parameters():
        if p.requires_grad and p.dtype != want:
            p.data = p.data.to(want)   # still on meta: no memory moves
    return model


def _to_empty_keeping_ties(model) -> None:
    """to_empty() gives each module its own new Parameter, untying shared ones (tied embeddings): re-share them."""
    holders: dict[int, list[tuple[torch.nn.Module, str]]] = {}
    for module in model.modules():
        for name, p in module._parameters.items():
            if p is not None:
                holders.setdefault(id(p), []).append((module, name))
    model.to_empty(device="cpu")
    for group in holders.values():
        first_module, first_name = group[0]
        for module, name in group[1:]:
            module._parameters[name] = first_module._parameters[first_name]


# ---------------------------------------------------------------- optimizers


class _Bnb8bitShapes(torch.optim.Optimizer):
    """bitsandbytes 8-bit Adam/Lion state shapes; the update itself is a plain in-place step.

    bnb keeps 1-byte states with one fp32 absmax per 256 elements, and 32-bit states for tensors under
    4096 elements (bitsandbytes optim/optimizer.py: min_8bit_size, blockwise 256).
    """

    def __init__(self, params, n_states: int, lr: float = 1e-5) -> None:
        super().__init__(params, {"lr": lr})
        self.n_states = n_states

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    for k in range(self.n_states):
                        if p.numel() >= 4096:
                            state[f"state{k}"] = torch.zeros(p.shape, dtype=torch.uint8, device=p.device)
                            state[f"absmax{k}"] = torch.zeros(math.ceil(p.numel() / 256), dtype=torch.float32,
                                                              device=p.device)
                        else:
                            state[f"state{k}"] = torch.zeros(p.shape, dtype=torch.float32, device=p.device)
                p.add_(p.grad, alpha=-group["lr"])


class _MasterWeights:
    """DeepSpeed bf16/fp16: half-precision weights and grads, fp32 master copy + states in the optimizer."""

    def __init__(self, params: list, make_inner: Callable[[list], torch.optim.Optimizer]) -> None:
        self.params = params
        self.make_inner = make_inner
        self.inner: torch.optim.Optimizer | None = None
        self.masters: list = []
        self.tag: Callable[[torch.Tensor, str], None] = lambda t, category: None

    @torch.no_grad()
    def step(self) -> None:
        if self.inner is None:
            for p in self.params:
                self.masters.append(p.detach().float())
                self.tag(self.masters[-1], "optimizer")
            self.inner = self.make_inner(self.masters)
        for m, p in zip(self.masters, self.params):
            m.grad = None if p.grad is None else p.grad.float()   # DeepSpeed's fp32 gradient partition
            if m.grad is not None:
                self.tag(m.grad, "gradients")
        self.inner.step()
        for m, p in zip(self.masters, self.params):
            m.grad = None
            p.copy_(m)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None


def _optimizer(setup: TrainingSetup, params: list, notes: list[Msg], limits: list[Msg],
               master: bool) -> tuple[Any, Msg]:
    name = (setup.optimizer or "adamw_torch").lower()
    lr = 1e-5
    wd = setup.mechanisms.weight_decay

    def adamw(ps, **kw):
        return torch.optim.AdamW(ps, lr=lr, weight_decay=wd, **kw)

    if setup.galore or setup.apollo or setup.badam:
        limits.append(msg("simulate.limit.galore"))
    make: Callable[[list], Any]
    if "8bit" in name:
        n_states = 1 if "lion" in name else 2
        words = msg("simulate.opt.8bit", name="Lion" if n_states == 1 else "AdamW")
        limits.append(msg("simulate.limit.bnb8bit_paged" if "paged" in name else "simulate.limit.bnb8bit"))
        make = lambda ps: _Bnb8bitShapes(ps, n_states, lr)   # noqa: E731
    elif name == "sgd":
        make, words = (lambda ps: torch.optim.SGD(ps, lr=lr)), msg("simulate.opt.sgd")
    elif name.startswith("adafactor"):
        from transformers.optimization import Adafactor

        make = lambda ps: Adafactor(ps, lr=lr, scale_parameter=False, relative_step=False)  # noqa: E731
        words = msg("simulate.opt.adafactor")
    elif "lion" in name:
        make, words = (lambda ps: _Bnb8bitShapes(ps, 1, lr)), msg("simulate.opt.lion")
        limits.append(msg("simulate.limit.lion"))
    elif "fused" in name:
        make, words = (lambda ps: adamw(ps, fused=True)), msg("simulate.opt.adamw_fused")
    elif name.startswith("adamw") or name.startswith("adam"):
        # torch picks foreach on CUDA when foreach=None (optim/optimizer.py _default_to_fused_or_foreach)
        make, words = (lambda ps: adamw(ps, foreach=True)), msg("simulate.opt.adamw_foreach_default")
    else:
        notes.append(msg("simulate.note.optimizer_as_adamw", optimizer=setup.optimizer))
        make, words = (lambda ps: adamw(ps, foreach=True)), msg("simulate.opt.adamw_foreach")
    if master:
        return _MasterWeights(params, make), msg("simulate.opt.master", optimizer=words)
    return make(params), words


def _tag_optimizer_state(opt: Any, tracker: LiveBytes) -> None:
    """Label every tensor the optimizer stores in its state as optimizer memory, the moment it is stored."""

    def tag(value: Any) -> None:
        for t in tree_flatten(value)[0]:
            if isinstance(t, torch.Tensor):
                tracker.count(t, "optimizer")

    class TaggedState(dict):
        def __setitem__(self, key, value):
            tag(value)
            super().__setitem__(key, value)

    if isinstance(opt, _MasterWeights):
        opt.tag = tracker.count
        make = opt.make_inner

        def make_tagged(ps):
            inner = make(ps)
            _tag_optimizer_state(inner, tracker)
            return inner

        opt.make_inner = make_tagged
    else:
        opt.state = defaultdict(TaggedState)


# ---------------------------------------------------------------- QLoRA and sharding


def _quantized_bytes(model, setup: TrainingSetup, output_layer) -> tuple[int, int, int]:
    """(quantised bytes, their dequantised bytes, largest dequantised weight) of the base linear layers."""
    bits = setup.quant_bits or 4
    double_quant = stated_double_quant(setup)      # the stated flag, else the framework's default (memory.regime)
    quant = dequant = largest = 0
    for name, m in model.named_modules():
        if not isinstance(m, torch.nn.Linear) or m is output_layer or "lora_" in name:
            continue
        w = m.weight
        n = w.numel()
        if bits == 4:
            # NF4: 4 bits/element + absmax per 64; double quant stores absmax in 8 bits + fp32 per 256 blocks
            scales = n / 64 * (1 + 4 / 256) if double_quant else n / 64 * 4
            quant += int(n / 2 + scales)
        else:
            quant += n + w.shape[0] * 4   # LLM.int8: int8 weights + one fp32 scale per output row
        dequant += n * w.element_size()
        largest = max(largest, n * w.element_size())
    return quant, dequant, largest


def _shard_factors(setup: TrainingSetup, limits: list[Msg]) -> dict[str, float]:
    n = max(1, setup.n_gpus)
    factors = dict.fromkeys(CATEGORIES, 1.0)
    sharded: tuple[str, ...] = ()
    if setup.fsdp:
        sharded = ("gradients", "optimizer") if setup.fsdp == "shard_grad_op" else ("weights", "gradients", "optimizer")
    elif setup.zero_stage >= 1:
        sharded = ("optimizer", "gradients", "weights")[: min(3, setup.zero_stage)]
    if sharded and n > 1:
        for cat in sharded:
            factors[cat] = 1.0 / n
        limits.append(msg("simulate.limit.sharding", scheme="FSDP" if setup.fsdp else f"ZeRO-{setup.zero_stage}",
                          parts=tuple(msg(f"memory.component_long.{c}") for c in sharded), n=n))
    if setup.offload_optimizer:
        factors["optimizer"] = 0.0
        limits.append(msg("simulate.limit.optimizer_offload"))
    if setup.offload_params and (setup.zero_stage >= 3 or setup.fsdp):
        factors["weights"] = 0.0
        limits.append(msg("simulate.limit.param_offload"))
    return factors


# ---------------------------------------------------------------- the run


def _say(progress: Callable[[Msg], None] | None, message: Msg) -> None:
    if progress is not None:
        progress(message)


def _clock(started: float, limit_s: float | None, progress: Callable[[Msg], None] | None) -> Callable[[], None]:
    """Stop the trace past `limit_s` seconds; say it is still running every HEARTBEAT_S seconds."""
    said = [started]

    def tick() -> None:
        now = time.perf_counter()
        if limit_s is not None and now - started > limit_s:
            raise SimulateTimeout(msg("simulate.timeout", seconds=limit_s))
        if progress is not None and now - said[0] >= HEARTBEAT_S:
            said[0] = now
            progress(msg("simulate.progress.still", elapsed=now - started, limit=limit_s or 0.0)
                     if limit_s else msg("simulate.progress.still_unbounded", elapsed=now - started))
    return tick


HEARTBEAT_S = 10.0


def _phases(tracker: LiveBytes, factors: dict[str, float]) -> tuple[list[PhasePeak], dict[str, dict[str, int]]]:
    """Each step's phase peaks, scaled to one GPU's share by `factors`, and as traced (unscaled)."""
    phases = []
    traced_cats = {}
    for (step, phase), (_, cats) in tracker.phase_peaks.items():
        scaled = {c: int(b * factors[c]) for c, b in cats.items()}
        phases.append(PhasePeak(step, phase, sum(scaled.values()), scaled))
        traced_cats[f"step {step} {phase}"] = dict(cats)
    return phases, traced_cats


def _quantized_peak(quant: tuple[int, int, int] | None, top: PhasePeak, factors: dict[str, float],
                    limits: list[Msg]) -> tuple[int | None, int | None]:
    """(quantised weight bytes, the peak with them quantised) for a QLoRA trace, else (None, None)."""
    if quant is None:
        return None, None
    quant_bytes, dequant_bytes, largest = quant
    # one dequantised weight exists at a time while bnb computes a matmul
    peak_quant = top.peak_bytes - int((dequant_bytes - quant_bytes) * factors["weights"]) + largest
    limits.append(msg("simulate.limit.quantized_peak"))
    return quant_bytes, peak_quant


def _untraced(setup: TrainingSetup, load: str, fused: bool, notes: list[Msg], limits: list[Msg]) -> None:
    """What the trace runs otherwise than the real kernels would, said as limits and notes."""
    if setup.method == "qlora" or setup.quant_bits:
        limits.append(msg("simulate.limit.bnb_kernels", bits=setup.quant_bits or 4, dtype=load))
    if setup.fused_ce and not fused:
        limits.append(msg("simulate.limit.fused_ce"))
    if fused:
        notes.append(msg("simulate.note.liger_traced"))
    if setup.stage in ("dpo", "kto", "ppo", "rm"):
        limits.append(msg("simulate.limit.preference", stage=setup.stage.upper()))


def _checkpointing(hf_model: Any, rg: Regime) -> None:
    """Gradient checkpointing as the trainer turns it on (with the regime's use_reentrant)."""
    kwargs = None if rg.reentrant_ckpt is None else {"use_reentrant": rg.reentrant_ckpt}
    if hasattr(hf_model, "activation_checkpointing_enable"):   # transformers >= 5 name
        hf_model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        hf_model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    if any(not p.requires_grad for p in hf_model.parameters()):
        hf_model.enable_input_require_grads()   # else a frozen base recomputes nothing


def _forward_and_loss(model: Any, hf_model: Any, output_layer: Any, ids: Any, fused: bool, tracker: LiveBytes,
                      step_ref: list[int]) -> Callable[[], Any]:
    """The forward and loss of one step: the model's own, or Liger's fused linear cross-entropy."""
    if not fused:
        return lambda: model(input_ids=ids, labels=ids).loss
    from oomdoctor.simulate.fused_loss import LinearCrossEntropy

    decoder = hf_model.get_decoder()
    labels = torch.nn.functional.pad(ids, (0, 1), value=-100)[..., 1:].contiguous().view(-1)

    def fused_forward() -> Any:
        # Liger's causal-LM forward: the decoder's last hidden state straight into the fused loss
        hidden = decoder(input_ids=ids)[0]
        tracker.enter(step_ref[0], "loss")
        if hidden.requires_grad:
            hidden.register_hook(lambda grad: tracker.enter(step_ref[0], "layers backward"))
        flat = hidden.view(-1, hidden.shape[-1])
        return LinearCrossEntropy.apply(flat, output_layer.weight, labels)
    return fused_forward


def _phase_marks(tracker: LiveBytes, step_ref: list[int]) -> Callable[[Any, Any], None]:
    """The output layer's forward pre-hook that marks the loss phase and, on the way back, the layers' backward."""
    def to_loss(module: Any, inputs: Any) -> None:
        # the output layer is about to make the logits: the decoder stack's forward is done
        tracker.enter(step_ref[0], "loss")
        hidden = inputs[0] if inputs else None
        if isinstance(hidden, torch.Tensor) and hidden.requires_grad:
            # its gradient arrives once the logits' backward (loss, lm_head) has finished and freed them
            hidden.register_hook(lambda grad: tracker.enter(step_ref[0], "layers backward"))
    return to_loss


def _one_step(step: int, steps: int, model: Any, ids: Any, rg: Regime, fused: bool, forward_and_loss: Callable[[], Any],
              opt: Any, tracker: LiveBytes, progress: Callable[[Msg], None] | None) -> None:
    """One training step on fake tensors, each phase marked in the tracker."""
    _say(progress, msg("simulate.progress.forward", step=step, steps=steps))
    tracker.enter(step, "forward")
    if rg.autocast_dtype:
        with torch.autocast("cpu", dtype=_TORCH_DTYPES[rg.autocast_dtype]):
            if fused:
                loss = forward_and_loss()
            else:
                out = model(input_ids=ids, labels=ids)
        if not fused:
            # accelerate's convert_outputs_to_fp32 wraps the forward under mixed precision
            logits32 = out.logits.float() if out.logits.dtype != torch.float32 else None
            del logits32
            loss = out.loss
            del out
    else:
        loss = forward_and_loss()
    _say(progress, msg("simulate.progress.backward", step=step, steps=steps))
    tracker.enter(step, "logits backward")
    loss.backward()
    del loss
    _say(progress, msg("simulate.progress.optimizer", step=step, steps=steps))
    tracker.enter(step, "optimizer")
    opt.step()
    opt.zero_grad(set_to_none=True)


def run(setup: TrainingSetup, shape: ModelShape, *, steps: int = 2,
        progress: Callable[[Msg], None] | None = None, hf_config: dict | None = None,
        time_limit_s: float | None = None, fused_loss: bool = False) -> TraceResult:
    """`fused_loss`: trace Liger's fused linear cross-entropy (simulate/fused_loss.py) in place of the model's
    own loss when the setup asks for a fused loss. `time_limit_s`: raise SimulateTimeout past it."""
    import peft
    import transformers

    started = time.perf_counter()
    notes: list[Msg] = []
    limits = list(LIMITS)
    cfg = _config(shape, hf_config, notes)
    ckpt_dtype = None
    if hf_config is not None:
        ckpt_dtype = hf_config.get("torch_dtype") or hf_config.get("dtype")
    rg = regime(setup, shape, ckpt_dtype)
    notes += rg.notes

    attention = {"fa2": "sdpa", "flash_attention_2": "sdpa", "eager": "eager"}.get(setup.attention, "sdpa")
    if setup.attention in ("fa2", "flash_attention_2"):
        notes.append(msg("simulate.note.fa2"))
    deepspeed_master = setup.zero_stage >= 1 and rg.autocast_dtype is not None and setup.method in ("full", "freeze")
    if deepspeed_master:
        # the DeepSpeed engine casts the module to bf16/fp16 and keeps fp32 masters in the optimizer
        load = rg.autocast_dtype or rg.load_dtype
        rg = Regime(load, load, None, rg.reentrant_ckpt, rg.notes)
        notes.append(msg("simulate.note.deepspeed_master", dtype=rg.load_dtype))
    load = rg.load_dtype
    fused = bool(fused_loss and setup.fused_ce)
    _untraced(setup, load, fused, notes, limits)

    _say(progress, msg("simulate.progress.building", model_type=cfg.model_type, dtype=load, attention=attention))
    hf_model, attention = _build_meta(cfg, _TORCH_DTYPES[load], attention, notes)
    output_layer = hf_model.get_output_embeddings()
    model = _apply_method(hf_model, setup, cfg, rg)
    if setup.grad_ckpt:
        _checkpointing(hf_model, rg)
    model.train()

    vocab = int(cfg.get_text_config().vocab_size if hasattr(cfg, "get_text_config") else cfg.vocab_size)
    tracker = LiveBytes(vocab)
    tracker.clock = _clock(started, time_limit_s, progress)
    fake = FakeTensorMode(allow_non_fake_inputs=True)
    with fake:
        _say(progress, msg("simulate.progress.to_fake"))
        _to_empty_keeping_ties(model)
        params = list(model.parameters())
        trainable = [p for p in params if p.requires_grad]
        if not trainable:
            raise SimulateError(msg("simulate.nothing_trainable"))
        buffers = list(model.buffers())
        for t in params + buffers:
            tracker.count(t, "weights")
        for p in trainable:
            p.register_post_accumulate_grad_hook(lambda p: tracker.count(p.grad, "gradients"))
        opt, opt_words = _optimizer(setup, trainable, notes, limits, deepspeed_master)
        _tag_optimizer_state(opt, tracker)
        ids = torch.randint(0, vocab, (setup.micro_batch, setup.seq_len))
        step_ref = [1]
        forward_and_loss = _forward_and_loss(model, hf_model, output_layer, ids, fused, tracker, step_ref)
        hook = output_layer.register_forward_pre_hook(_phase_marks(tracker, step_ref))
        try:
            with tracker:
                for step in range(1, steps + 1):
                    step_ref[0] = step
                    _one_step(step, steps, model, ids, rg, fused, forward_and_loss, opt, tracker, progress)
        except SimulateError:
            raise
        except (RuntimeError, ValueError, TypeError, NotImplementedError, AssertionError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise SimulateError(msg("simulate.fake_failed", error=first[:300])) from None
        finally:
            hook.remove()

        quant = None
        if setup.method == "qlora" or setup.quant_bits:
            quant = _quantized_bytes(hf_model, setup, output_layer)

    factors = _shard_factors(setup, limits)
    phases, traced_cats = _phases(tracker, factors)
    top = max(phases, key=lambda p: p.peak_bytes)
    traced_peak = max(v[0] for v in tracker.phase_peaks.values())
    quant_bytes, peak_quant = _quantized_peak(quant, top, factors, limits)

    return TraceResult(
        peak_bytes=top.peak_bytes, phases=tuple(phases), categories=dict(top.categories), peak_phase=top.name,
        traced_peak_bytes=traced_peak,
        params_total=sum(p.numel() for p in params), params_trainable=sum(p.numel() for p in trainable),
        buffer_bytes=sum(b.numel() * b.element_size() for b in buffers),
        versions={"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__,
                  "peft": peft.__version__},
        attention=attention,
        dtypes={"load": rg.load_dtype, "trainable": rg.trainable_dtype, "autocast": rg.autocast_dtype or ""},
        optimizer=opt_words, micro_batch=setup.micro_batch, seq_len=setup.seq_len, steps=steps,
        seconds=time.perf_counter() - started, limits=tuple(limits), notes=tuple(notes),
        quantized_weights_bytes=quant_bytes, peak_bytes_quantized=peak_quant,
        phase_categories_traced=traced_cats,
    )


__all__ = ["LiveBytes", "run"]
