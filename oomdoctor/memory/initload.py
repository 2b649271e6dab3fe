"""What a run's model loading leaves on the GPU before its first step: a model built and quantized on the device
passes through transients far larger than its quantized weights, and the caching allocator keeps their segments.

torchtune 0.1's QLoRA (recipes/lora_finetune_single_device.py `_setup_model` at 0914d5cfb) builds the model on the
GPU in bf16 (`with utils.set_default_dtype(self._dtype), self._device: model = config.instantiate(cfg_model)`),
quantizes each LoRA-wrapped base linear there (torchtune/modules/peft/lora.py `_create_weight_and_bias`:
`to_nf4(linear.weight)`), deep-copies one built layer into every layer (torchtune/modules/transformer.py:93
`_get_clones`: an NF4Tensor's deepcopy is its clone, which torchtune registers as `to_nf4(get_original_weight())`,
torchtune/utils/_register_nf4_dispatch_ops.py), then loads the checkpoint, whose NF4 copy_ moves each bf16 weight
to the GPU and quantizes it there (`to_nf4(args[0][1].to(dest_tensor.device))`, the same file). torchtune 0.1 pins
torchao 0.1 (pyproject.toml at 0914d5cfb), whose `to_nf4` compares every element with the 16 NF4 levels at once
(torchao/dtypes/nf4tensor.py `quantize_tensor_nearest` at v0.1: `(value.unsqueeze(-1) - nf4).abs()`, 32 bytes an
element twice over); torchao 0.2 quantizes in chunks (6081796bc, "perform in chunks") and torchtune 0.2 pins 0.3.1.
Nothing empties the cache before training, and `memory_stats_log` after init resets the peaks to the reserved bytes
(torchtune/utils/memory.py), so the training's max_memory_reserved starts from what loading left reserved.

The sequence of allocations and frees each op makes is replayed through the allocator model (memory/allocator.py);
sizes are bytes of the op's output as torchao 0.1's code computes it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from oomdoctor.facts import ModelShape, TrainingSetup
from oomdoctor.memory.allocator import Allocator
from oomdoctor.memory.params import layer_linears, matched_linears
from oomdoctor.memory.regime import _version

NF4_BLOCK = 64            # torchao 0.1 to_nf4(block_size=64, scaler_block_size=256)
NF4_SCALER_BLOCK = 256
NF4_LEVELS = 16
# torchtune builds a layer's linears in this order and registers them so (lora_llama2_self_attention: q, k, v,
# output; lora_llama2_mlp: w1 gate, w2 down, w3 up); the checkpoint loads in module order
_BUILD_ORDER = ("q", "k", "v", "o", "gate", "down", "up")


@dataclass(frozen=True)
class InitLoad:
    max_allocated: int      # bytes: the allocated peak of building and loading the model
    reserved: int           # bytes the caching allocator holds when training starts


def applies(setup: TrainingSetup) -> bool:
    """torchtune before 0.2 (torchao 0.1) quantizing its base weights to NF4 on one GPU; the release must be stated,
    as the framework's default is the newest."""
    if setup.framework != "torchtune" or not setup.framework_version:
        return False
    if setup.method not in ("lora", "qlora") or setup.quant_bits != 4:
        return False
    return _version(setup.framework_version) < (0, 2) and max(1, setup.n_gpus) == 1


def device_quantized_init(setup: TrainingSetup, shape: ModelShape) -> InitLoad | None:
    """The allocated peak and the reserved bytes torchtune 0.1's QLoRA model init leaves (see module doc)."""
    if not applies(setup):
        return None
    dense, _ = layer_linears(shape)
    wrapped = {m.name for m in matched_linears(setup.lora_targets, dense)}
    order = {role: i for i, role in enumerate(_BUILD_ORDER)}
    linears = tuple((m.in_features, m.out_features, m.name in wrapped)
                    for m in sorted(dense, key=lambda m: order.get(m.role, len(order))))
    tied = shape.tie_word_embeddings
    return _replay(linears, shape.num_layers, shape.hidden_size, shape.vocab_size, tied, max(1, setup.lora_rank))


class _Trace:
    def __init__(self) -> None:
        self.al = Allocator()
        self._live: dict[int, int] = {}
        self._n = 0

    def alloc(self, n_bytes: float) -> int:
        self._n += 1
        self._live[self._n] = self.al.malloc(int(n_bytes))
        return self._n

    def free(self, *names: int) -> None:
        for name in names:
            self.al.free(self._live.pop(name))


def _to_nf4(t: _Trace, n: int) -> list[int]:
    """torchao 0.1 NF4Tensor.from_tensor on a live bf16 tensor of n elements; returns the new tensor's fields."""
    nb = n // NF4_BLOCK
    ns = nb // NF4_SCALER_BLOCK
    nf4 = t.alloc(2 * NF4_LEVELS)
    # double_quantize_scalers: get_block_absmax (abs, max values and indices), minus the mean
    a = t.alloc(2 * n)
    s1 = t.alloc(2 * nb)
    i = t.alloc(8 * nb)
    t.free(a, i)
    mean = t.alloc(2)
    s1b = t.alloc(2 * nb)
    t.free(s1)
    a = t.alloc(2 * nb)
    absmax = t.alloc(2 * ns)
    i = t.alloc(8 * ns)
    t.free(a, i)
    # 256 / (2 * expanded absmax) materialises one factor an element of the scalers; the field keeps it as a view
    two = t.alloc(2 * nb)
    factor = t.alloc(2 * nb)
    t.free(two)
    q1 = t.alloc(2 * nb)
    q2 = t.alloc(2 * nb)          # round()
    t.free(q1)
    q3 = t.alloc(2 * nb)          # clamp()
    t.free(q2)
    scalers = t.alloc(nb)         # .to(int8)
    t.free(q3, s1b, absmax)
    # convert_to_norm_float_weight: the block scalers again, the scaled blocks, the nearest of 16 levels
    a = t.alloc(2 * n)
    sc = t.alloc(2 * nb)
    i = t.alloc(8 * nb)
    t.free(a, i)
    scaled = t.alloc(2 * n)
    diff = t.alloc(2 * NF4_LEVELS * n)
    absdiff = t.alloc(2 * NF4_LEVELS * n)
    t.free(diff)
    values = t.alloc(2 * n)
    idx = t.alloc(8 * n)          # min(dim=-1).indices, int64
    t.free(values, absdiff)
    hi = t.alloc(4 * n)           # indices[::2] << 4, int64
    both = t.alloc(4 * n)         # | indices[1::2]
    t.free(hi)
    data = t.alloc(n // 2)        # .to(uint8)
    t.free(both, idx, scaled, sc)
    return [nf4, mean, factor, scalers, data]


def _original_weight(t: _Trace, n: int) -> int:
    """NF4Tensor.get_original_weight (torchao 0.1): unpack, dequantize, scale, interleave; returns the bf16 copy."""
    nb = n // NF4_BLOCK
    u = t.alloc(n // 2)
    first = t.alloc(4 * n)        # (data >> 4).to(long)
    t.free(u)
    u = t.alloc(n // 2)
    second = t.alloc(4 * n)
    t.free(u)
    d1 = t.alloc(n)               # nf4[first], bf16
    d2 = t.alloc(n)
    s = t.alloc(2 * nb)
    scalers = t.alloc(2 * nb)     # + scaler_mean
    t.free(s)
    r = t.alloc(n)                # repeated.flatten() of the expanded scalers
    f1 = t.alloc(n)
    t.free(r)
    r = t.alloc(n)
    f2 = t.alloc(n)
    t.free(r)
    out = t.alloc(2 * n)          # torch.stack
    t.free(first, second, d1, d2, scalers, f1, f2)
    return out


def _field_copies(t: _Trace, n: int) -> list[int]:
    """Tensor.__deepcopy__ deep-copies the subclass's __dict__: each field's whole storage."""
    nb = n // NF4_BLOCK
    return [t.alloc(2 * NF4_LEVELS), t.alloc(2), t.alloc(2 * nb), t.alloc(nb), t.alloc(n // 2)]


@lru_cache(maxsize=32)
def _replay(linears: tuple[tuple[int, int, bool], ...], layers: int, hidden: int, vocab: int, tied: bool,
            rank: int) -> InitLoad:
    t = _Trace()
    template: list[list[int]] = []
    for d_in, d_out, nf4 in linears:
        n = d_in * d_out
        weight = t.alloc(2 * n)   # nn.Linear built on the device in bf16
        if nf4:
            fields = _to_nf4(t, n)
            t.free(weight)
            template.append(fields + [t.alloc(2 * rank * d_in), t.alloc(2 * rank * d_out)])
        else:
            template.append([weight])
    norms = [t.alloc(2 * hidden), t.alloc(2 * hidden)]
    t.alloc(2 * vocab * hidden)                   # tok_embeddings
    if not tied:
        t.alloc(2 * vocab * hidden)               # output
    built: list[list[list[int]]] = []
    for _ in range(layers):
        layer = []
        for d_in, d_out, nf4 in linears:
            n = d_in * d_out
            if nf4:
                orig = _original_weight(t, n)
                clone = _to_nf4(t, n)
                t.free(orig)
                fields = _field_copies(t, n)
                t.free(*clone)
                layer.append(fields + [t.alloc(2 * rank * d_in), t.alloc(2 * rank * d_out)])
            else:
                layer.append([t.alloc(2 * n)])
        layer.append([t.alloc(2 * hidden), t.alloc(2 * hidden)])
        built.append(layer)
    for entry in template:
        t.free(*entry)
    t.free(*norms)
    for layer in built:
        for k, (d_in, d_out, nf4) in enumerate(linears):
            if not nf4:
                continue                          # a bf16 copy_ from the host writes in place
            n = d_in * d_out
            src = t.alloc(2 * n)
            fields = _to_nf4(t, n)
            t.free(*layer[k][:5])
            layer[k][:5] = fields
            t.free(src)
    return InitLoad(max_allocated=t.al.max_allocated, reserved=t.al.reserved)
