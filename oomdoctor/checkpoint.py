"""The tensor inventory of a local checkpoint, read without loading a weight.

A `.safetensors` file starts with an 8-byte little-endian header length and a JSON header naming every
tensor with its dtype, shape and byte range (https://github.com/huggingface/safetensors, "Format"); only
that header is read, never tensor data. `model.safetensors.index.json` / `pytorch_model.bin.index.json`
map tensor names to shard files and carry `metadata.total_size` (bytes). From names and shapes: the exact
parameter count, embeddings and head (tying: no head tensor), one layer's linear modules with their real
names, the stored dtype, and quantized storage (GPTQ/AWQ packed int32, bitsandbytes 4/8-bit with their
quant-state tensors, FP8 with scales, MXFP4 blocks). Buffers some checkpoints store (rotary `inv_freq`,
GPT-2/GPT-NeoX causal masks) are not parameters.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import Linear, ModelShape, Msg, msg

# huggingface_hub refuses headers over 25 MB (constants.SAFETENSORS_MAX_HEADER_LENGTH); a shard of the
# largest MoE models has a few MB. Anything past this is not a header we want to parse.
MAX_HEADER_BYTES = 64 << 20
_MAX_DIMS = 8
_MAX_DIM = 1 << 40

_FLOAT_DTYPES = {"BF16": "bf16", "F16": "fp16", "F32": "fp32", "F64": "fp64", "F8_E4M3": "fp8", "F8_E5M2": "fp8"}
_KNOWN_DTYPES = set(_FLOAT_DTYPES) | {"BOOL", "U8", "I8", "I16", "U16", "I32", "U32", "I64", "U64", "F8_E8M0",
                                     "F4", "F6_E2M3", "F6_E3M2", "C64"}
_BUFFER = re.compile(r"(\.inv_freq|\.masked_bias|\.cos_cached|\.sin_cached|position_ids|_float_tensor)$")
# bitsandbytes / FP8 / GPTQ / AWQ companions of a quantized weight: storage, not parameters
_QUANT_SIDE = re.compile(r"\.(absmax|quant_map|nested_absmax|nested_quant_map|quant_state\.[\w.]+|SCB|weight_format"
                         r"|weight_scale_inv|weight_scale|input_scale|k_scale|v_scale|qzeros|scales|g_idx|"
                         r"weight_zero_point|weight_g_idx|weight_shape)$")
_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks|layer)\.(\d+)\.(.+)$")
_EXPERT = re.compile(r"\.experts\.(\d+)\.")
_EMBED = re.compile(r"(embed_tokens|\bwte|word_embeddings|tok_embeddings|embed_in|embd\.wte)\.weight$")
_HEAD = re.compile(r"^(?:model\.|transformer\.)?(lm_head|embed_out|output|output_layer)\.(weight|qweight)$")
_FINAL_NORM = re.compile(r"^(?:model\.|transformer\.|gpt_neox\.|transformer\.encoder\.)?(norm|ln_f|final_layernorm|"
                         r"final_layer_norm|norm_f)\.(weight|bias)$")
_POSITIONS = re.compile(r"(wpe|embed_positions)\.weight$")


@dataclass
class Inventory:
    """What a checkpoint's headers (or index) say about its parameters."""

    path: str
    total: int = 0                                  # parameters, buffers and quant-state left out
    embed: tuple[int, int] | None = None            # (rows, cols) of the input embedding
    head_params: int = 0                            # the output layer's parameters, 0 when none is stored
    final_norm: int = 0
    extra: int = 0                                  # outside layers, embeddings, head and final norm
    layers: dict[int, dict[str, tuple[Any, ...]]] = field(default_factory=dict)   # idx -> module -> (kind, ...)
    layer_params: dict[int, int] = field(default_factory=dict)
    beyond_layers: int = 0                          # parameters in layers past num_hidden_layers (MTP)
    dtype_elems: dict[str, int] = field(default_factory=dict)
    quant: str | None = None
    quant_bits: int | None = None
    exact: bool = True                              # False: from an index's total_size, not per-tensor shapes
    notes: list[Msg] = field(default_factory=list)

    @property
    def stored_dtype(self) -> str | None:
        return max(self.dtype_elems, key=lambda d: self.dtype_elems[d]) if self.dtype_elems else None


class _Unreadable(Exception):
    def __init__(self, reason: Msg | str) -> None:      # str: the system's own words (OSError.strerror)
        super().__init__(reason)
        self.reason = reason


def _bad_header(path: str, reason: str, **values: Any) -> InputError:
    return InputError(msg("model.checkpoint.bad_header", reason=msg(f"model.checkpoint.reason.{reason}", **values)), path)


def read_header(path: str) -> dict[str, tuple[str, tuple[int, ...]]]:
    """name -> (dtype, shape) from a .safetensors file's header. Reads 8 + header-length bytes, no more."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if head.startswith(b"version "):
                raise _Unreadable(msg("model.checkpoint.reason.lfs_pointer"))
            if len(head) < 8:
                raise _bad_header(path, "short")
            size = int.from_bytes(head, "little")
            if size > MAX_HEADER_BYTES:
                raise InputError(msg("model.checkpoint.header_too_big", size=size, limit=MAX_HEADER_BYTES), path)
            raw = f.read(size)
    except OSError as err:
        raise _Unreadable(err.strerror or str(err)) from None
    if len(raw) < size:
        raise _bad_header(path, "cut", got=len(raw), size=size)
    from oomdoctor.bounded import load_json

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad_header(path, "not_utf8") from None
    data = load_json(text, path)
    if not isinstance(data, dict):
        raise _bad_header(path, "not_object")
    out: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, info in data.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict) or not isinstance(info.get("shape"), list) or not isinstance(info.get("dtype"), str):
            raise _bad_header(path, "no_shape", name=name[:60])
        dims = info["shape"]
        if len(dims) > _MAX_DIMS or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= _MAX_DIM
                                            for d in dims):
            raise _bad_header(path, "bad_shape", name=name[:60])
        if info["dtype"] not in _KNOWN_DTYPES:
            raise _bad_header(path, "bad_dtype", name=name[:60], dtype=info["dtype"][:20])
        out[name] = (info["dtype"], tuple(dims))
    return out


def read_index(path: str) -> tuple[dict[str, str], int | None]:
    """(weight_map, metadata.total_size) of a checkpoint index file."""
    from oomdoctor.bounded import load_json, read_bytes

    data = load_json(read_bytes(path).decode("utf-8", "replace"), path)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()):
        raise InputError(msg("model.checkpoint.bad_index", reason=msg("model.checkpoint.reason.no_weight_map")), path)
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    total = meta.get("total_size")
    if total is not None:
        from oomdoctor.values import BadValue, as_int

        try:
            total = as_int(total, "metadata.total_size", minimum=0)
        except BadValue as err:
            raise InputError(err.message, path) from None
    return weight_map, total


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _linear_of(module: str, parts: dict[str, tuple[str, tuple[int, ...]]], quant: str | None, bits: int,
               conv1d: bool) -> tuple[str, int, int, int, bool] | None:
    """(kind, in, out, params, known) of one module's stored tensors; None when it is not a matrix."""
    if "qweight" in parts:                         # GPTQ packs along in (rows), AWQ along out (columns)
        rows, cols = parts["qweight"][1][:2]
        per_int = 32 // max(1, bits)
        awq = quant == "awq" or ("scales" in parts and parts["scales"][1][-1] != cols and "g_idx" not in parts)
        fin, fout = (rows, cols * per_int) if awq else (rows * per_int, cols)
        if "g_idx" in parts and not awq:
            fin = _numel(parts["g_idx"][1])
        return "linear", fin, fout, fin * fout, True
    if "weight_blocks" in parts or "blocks" in parts:  # MXFP4: two 4-bit values per byte, 32 per block
        dtype, shape = parts.get("weight_blocks") or parts["blocks"]
        return "fused", shape[-2] * 32, shape[-3] if len(shape) >= 3 else 1, _numel(shape) * 2, True
    if "weight" not in parts:
        return None
    dtype, shape = parts["weight"]
    if len(shape) == 2 and dtype == "U8" and shape[1] == 1 and "absmax" in parts:
        return "linear", 0, 0, shape[0] * 2, False   # bitsandbytes 4-bit: packed pairs, shape in quant_state
    if len(shape) == 2:
        fout, fin = shape
        if conv1d:
            fin, fout = shape
        return "linear", fin, fout, fin * fout, True
    if len(shape) == 3:                            # all experts in one 3-D parameter
        return "fused", shape[2], shape[1], _numel(shape), True
    return None


_BNB_SIDE = re.compile(r"\.weight\.(absmax|quant_map|nested_absmax|nested_quant_map|quant_state)(\.[\w.]+)?$")


def _split(rest: str) -> tuple[str, str]:
    """("self_attn.q_proj", "weight") from a name inside a layer, quant-state and fused-expert names included."""
    side = _BNB_SIDE.search(rest)
    if side:
        return rest[:side.start()], side.group(1)
    module, _, param = rest.rpartition(".")
    if module.endswith("experts") and not param.startswith(("weight", "bias")):
        # GPT-OSS / Llama-4 style: all experts in one parameter named after the projection
        for suffix in ("_blocks", "_scales", "_bias"):
            if param.endswith(suffix):
                return f"{module}.{param[:-len(suffix)]}", suffix[1:]
        return f"{module}.{param}", "weight"
    return (module, param) if module else (rest, "weight")


def _count_dtype(inv: Inventory, dtype: str, n: int) -> None:
    if dtype in _FLOAT_DTYPES:
        inv.dtype_elems[_FLOAT_DTYPES[dtype]] = inv.dtype_elems.get(_FLOAT_DTYPES[dtype], 0) + n


def inventory(tensors: dict[str, tuple[str, tuple[int, ...]]], path: str, *, num_layers: int,
              quant: str | None, bits: int | None, model_type: str) -> Inventory:
    """Parameters by place (embedding, head, layers, the rest) from every tensor's name, dtype and shape."""
    inv = Inventory(path=path, quant=quant, quant_bits=bits)
    modules: dict[int, dict[str, dict[str, tuple[str, tuple[int, ...]]]]] = {}
    expert_ids: dict[tuple[int, str], set[int]] = {}
    for name, (dtype, shape) in tensors.items():
        if _BUFFER.search(name) or (re.search(r"\.(attn|attention)\.(bias|masked_bias)$", name) and len(shape) == 4):
            continue                               # rotary caches, GPT-2 / GPT-NeoX causal masks: buffers
        m = _LAYER.search(name)
        if m is None:
            _outside_layers(inv, name, dtype, shape, quant, bits)
            continue
        idx, rest = int(m.group(1)), m.group(2)
        e = _EXPERT.search("." + rest)
        if e:
            rest = ("." + rest).replace(e.group(0), ".experts.*.", 1)[1:]
        module, param = _split(rest)
        modules.setdefault(idx, {}).setdefault(module, {})[param] = (dtype, shape)
        if e:
            expert_ids.setdefault((idx, module), set()).add(int(e.group(1)))
    conv1d = model_type == "gpt2"                  # transformers.pytorch_utils.Conv1D stores [in, out]
    for idx, mods in modules.items():
        layer_total = 0
        inv.layers[idx] = {}
        for module, parts in mods.items():
            copies = len(expert_ids.get((idx, module), ())) or 1
            bias_n = _numel(parts["bias"][1]) if "bias" in parts else 0
            lin = _linear_of(module, parts, quant, bits or 4, conv1d)
            if lin is None:
                n = copies * sum(_numel(s) for p, (d, s) in parts.items()
                                 if not _QUANT_SIDE.search("." + p) and p not in _BNB_PARTS)
                for p, (d, s) in parts.items():
                    _count_dtype(inv, d, _numel(s) * copies)
                inv.layers[idx][module] = ("other", 0, 0, False, copies, True, n)
            else:
                kind, fin, fout, n, known = lin
                main = parts.get("weight") or parts.get("qweight") or parts.get("blocks") or parts.get("weight_blocks")
                assert main is not None         # _linear_of answers only for a module holding one of them
                if kind == "fused":
                    copies = main[1][0] if len(main[1]) >= 3 else 1
                    n += bias_n
                else:
                    n = copies * (n + bias_n)
                _count_dtype(inv, main[0], n)
                inv.layers[idx][module] = (kind, fin, fout, bias_n > 0, copies, known, n)
            layer_total += n
        if idx >= num_layers:
            inv.beyond_layers += layer_total       # multi-token-prediction layers transformers does not load
        else:
            inv.layer_params[idx] = layer_total
            inv.total += layer_total
    return inv


def _outside_layers(inv: Inventory, name: str, dtype: str, shape: tuple[int, ...], quant: str | None,
                    bits: int | None) -> None:
    """Count a tensor outside the decoder layers: the head, the embedding, the final norm, or the rest."""
    if _QUANT_SIDE.search(name) or _BNB_SIDE.search(name):
        return
    if _HEAD.search(name):
        part = "qweight" if name.endswith("qweight") else "weight"
        lin = _linear_of("head", {part: (dtype, shape)}, quant, bits or 4, False)
        n = lin[3] if lin else _numel(shape)
        inv.head_params += n
    else:
        n = _numel(shape)
        if _EMBED.search(name) and len(shape) == 2 and inv.embed is None:
            inv.embed = (shape[0], shape[1])
        elif _FINAL_NORM.search(name):
            inv.final_norm += n
        else:
            inv.extra += n                 # positions, embedding norms, head bias, vision tower, ...
    _count_dtype(inv, dtype, n)
    inv.total += n


_BNB_PARTS = ("absmax", "quant_map", "nested_absmax", "nested_quant_map", "quant_state", "SCB", "weight_format",
              "qzeros", "scales", "g_idx")


def _role_guess(name: str, by_name: dict[str, Linear]) -> str:
    if name in by_name:
        return by_name[name].role
    last = name.rsplit(".", 1)[-1].lower()
    for role, keys in (("qkv", ("c_attn", "query_key_value", "w_pack", "wqkv", "qkv_proj", "qkv")),
                       ("q", ("q_proj", "wq", "query", "q_a_proj", "q_b_proj")), ("k", ("k_proj", "wk", "key")),
                       ("v", ("v_proj", "wv", "value")), ("o", ("o_proj", "wo", "out_proj", "dense")),
                       ("gate_up", ("gate_up_proj", "dense_h_to_4h", "input_linear")),
                       ("gate", ("gate_proj", "w1")), ("up", ("up_proj", "w3", "c_fc", "fc1", "fc_in")),
                       ("down", ("down_proj", "w2", "dense_4h_to_h", "fc2", "fc_out", "output_linear")),
                       ("router", ("gate", "router"))):
        if last in keys:
            return role
    return "other"


# warnings of a config reading that leaves described parts out (a vision tower, an omni model's audio tower and
# talker): a checkpoint stores those parts, so its count holds them
_PARTS_IN_CHECKPOINT = ("model.warn.vision_not_counted", "model.warn.parts_not_counted")


def apply(shape: ModelShape, inv: Inventory) -> ModelShape:
    """The config.json shape, corrected by what the checkpoint really stores."""
    # the checkpoint stores the vision tower a multimodal config describes, and every other part: its count
    # includes them
    notes = [n for n in shape.notes if n.code not in _PARTS_IN_CHECKPOINT] + inv.notes
    total = inv.total
    tied = shape.tie_word_embeddings
    if inv.head_params == 0 and inv.embed is not None:
        tied = True                                # no output layer stored: the embedding serves as head
    elif inv.head_params and tied and inv.embed is not None:
        total -= inv.head_params                   # stored twice, tied at load time (Falcon, early exports)
        notes.append(msg("model.note.tied_head_stored"))
    if inv.beyond_layers:
        notes.append(msg("model.note.mtp_not_loaded", layers=len([i for i in inv.layers if i >= shape.num_layers])))
    if inv.quant:
        notes.append(msg("model.note.quantized", method=inv.quant, bits=inv.quant_bits) if inv.quant_bits
                     else msg("model.note.quantized_nobits", method=inv.quant))
    notes = list(dict.fromkeys(notes))
    changes: dict[str, Any] = dict(params_total=total, tie_word_embeddings=tied, stored_dtype=inv.stored_dtype,
                                   quant_method=inv.quant or shape.quant_method,
                                   quant_bits=inv.quant_bits or shape.quant_bits, source_kind="checkpoint",
                                   source_path=inv.path, source=inv.path, notes=tuple(notes),
                                   shape_confidence="exact")
    if inv.embed is not None:
        changes["vocab_size"] = inv.embed[0]
    ids = sorted(i for i in inv.layers if i < shape.num_layers)
    consistent = ids == list(range(shape.num_layers)) and inv.embed is not None and inv.embed[1] == shape.hidden_size
    if consistent:
        by_name = {m.name: m for m in tuple(shape.dense_linears) + tuple(shape.moe_linears)}
        dense_layers = [i for i in ids if not any(".experts" in k or k.endswith("experts") for k in inv.layers[i])]
        moe_layers = [i for i in ids if i not in dense_layers]

        def linears(idx: int) -> tuple[tuple[Linear, ...], int, bool]:
            out, other, known_all = [], 0, True
            for module, (kind, fin, fout, bias, copies, known, n) in sorted(inv.layers[idx].items()):
                if kind == "other":
                    other += n
                    continue
                known_all = known_all and known
                cfg = by_name.get(module)
                peft = kind == "linear" and (cfg.peft if cfg else True)
                out.append(Linear(module, fin, fout, bias, copies, _role_guess(module, by_name), peft))
            return tuple(out), other, known_all

        # a hybrid's layers differ in their token mixer (linear or full attention): the config's lists stay
        hybrid = bool(shape.linear_attn_layers)
        if dense_layers:
            dense, other, known = linears(dense_layers[0])
            if known and not hybrid:
                changes["dense_linears"] = dense
                changes["layer_other_params"] = other
        if moe_layers:
            moe, other_moe, known = linears(moe_layers[0])
            if known and not hybrid:
                changes["moe_linears"] = moe
                if not dense_layers:
                    changes["layer_other_params"] = other_moe
            changes["moe_layer_count"] = len(moe_layers)
            changes["first_dense_layers"] = next((i for i in ids if i in moe_layers), 0)
        changes["final_norm_params"] = inv.final_norm
        changes["extra_params"] = inv.extra
    return replace(shape, **changes)


# ---------------------------------------------------------------- a model directory

def _is_weights(name: str) -> bool:
    return name.endswith(".safetensors") and not name.startswith(("adapter_model", "consolidated", "training_args"))


def read_directory(directory: str, shape: ModelShape) -> ModelShape:
    """`shape` (from the directory's config.json) corrected by the checkpoint stored beside it, if any."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return shape
    index_name = next((n for n in ("model.safetensors.index.json", "pytorch_model.bin.index.json") if n in names), None)
    weight_map: dict[str, str] = {}
    total_size = None
    if index_name:
        weight_map, total_size = read_index(os.path.join(directory, index_name))
    if index_name and index_name.startswith("model.safetensors"):
        shards = sorted(set(weight_map.values()))
    else:
        shards = [n for n in names if _is_weights(n)]
    tensors: dict[str, tuple[str, tuple[int, ...]]] = {}
    missing: list[str] = []
    notes: list[Msg] = []
    for shard in shards:
        full = os.path.join(directory, shard)
        if not os.path.isfile(full):
            missing.append(shard)
            continue
        try:
            tensors.update(read_header(full))
        except _Unreadable as err:
            missing.append(shard)
            notes.append(msg("model.note.shard_unreadable", file=shard, reason=err.reason))
    q, bits = shape.quant_method, shape.quant_bits
    if tensors and not missing:
        inv = inventory(tensors, directory, num_layers=shape.num_layers, quant=q, bits=bits, model_type=shape.model_type)
        inv.notes.extend(notes)
        if inv.quant is None:
            inv.quant, inv.quant_bits = _quant_from_names(tensors)
        return apply(shape, inv)
    if index_name and total_size:
        return _from_index(shape, directory, index_name, weight_map, total_size, len(missing), len(shards), notes)
    if notes:
        return replace(shape, notes=tuple(shape.notes) + tuple(notes))
    return shape


def _quant_from_names(tensors: dict[str, tuple[str, tuple[int, ...]]]) -> tuple[str | None, int | None]:
    names = tensors.keys()
    if any(n.endswith(".qweight") for n in names):
        return ("gptq" if any(n.endswith(".g_idx") for n in names) else "awq"), 4
    if any(n.endswith(".absmax") for n in names):
        return "bitsandbytes", 4
    if any(n.endswith(".SCB") for n in names):
        return "bitsandbytes", 8
    if any(n.endswith("_blocks") for n in names):
        return "mxfp4", 4
    if any(n.endswith((".weight_scale_inv", ".weight_scale")) for n in names):
        return "fp8", 8
    return None, None


_WIDTH = {"bf16": 2, "fp16": 2, "fp32": 4}


def _from_index(shape: ModelShape, directory: str, index_name: str, weight_map: dict[str, str], total_size: int,
                missing: int, shards: int, notes: list[Msg]) -> ModelShape:
    """Shards absent (or LFS pointers): the index's names say whether the head is stored, and its
    total_size over the dtype's width gives the count where every weight has that dtype."""
    notes = list(shape.notes) + notes + [msg("model.note.shards_missing", missing=missing, total=shards)]
    names = list(weight_map)
    head = any(_HEAD.search(n) for n in names)
    tied = shape.tie_word_embeddings or not head
    width = _WIDTH.get(shape.torch_dtype)
    quantized = shape.quant_method is not None or any(_QUANT_SIDE.search(n) for n in names)
    # causal-mask buffers are as large as a layer; rotary inv_freq vectors are a few hundred bytes and stay
    buffers = any(re.search(r"\.(attn|attention)\.(bias|masked_bias)$|(cos|sin)_cached$", n) for n in names)
    params = None
    if width and not quantized and not buffers and index_name.startswith("model.safetensors"):
        params = total_size // width
        if head and tied:
            params -= shape.vocab_size * shape.hidden_size
            notes.append(msg("model.note.tied_head_stored"))
    if params:
        # total_size is every stored tensor's bytes: the parts a reading leaves out are in it
        notes = [n for n in notes if n.code not in _PARTS_IN_CHECKPOINT]
    path = os.path.join(directory, index_name)
    return replace(shape, tie_word_embeddings=tied, params_total=params or shape.params_total,
                   shape_confidence="exact" if params else shape.shape_confidence,
                   source_kind="checkpoint" if params else shape.source_kind, source_path=path if params else shape.source_path,
                   source=path if params else shape.source, notes=tuple(dict.fromkeys(notes)))
