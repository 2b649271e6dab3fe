"""Model shapes: the bundled catalog, a local config.json, the Hugging Face cache, or a log's parameter count.

`resolve_model` tries, in order: a local directory (or config.json file), the catalog by exact hub id,
the local HF cache, the catalog by short name, and finally `params_hint` (scale the nearest shape).
"""
from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import ModelShape

CATALOG_PATH = Path(__file__).with_name("data") / "models.yaml"

_SHAPE_FIELDS = set(ModelShape.__dataclass_fields__)
_DTYPES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
           "fp16": "fp16", "bf16": "bf16", "fp32": "fp32"}
# Name tails that do not change the architecture: chat/instruct tunes, hub format tags, release dates.
_SUFFIXES = ("instruct", "chat", "it", "hf", "base", "pt", "fp16", "bf16", "2507", "1m",
             "awq", "gptq", "int4", "int8", "4bit", "8bit", "bnb")


def _norm(name: str) -> str:
    """Comparable form of a model name: no org, no case, no separators, no -Instruct/-hf style tails."""
    base = name.strip().rstrip("/").split("/")[-1].lower()
    base = base.replace("_", "-").replace(" ", "-")
    if base.startswith("meta-"):
        base = base[len("meta-"):]
    parts = base.split("-")
    # Context-length tags (4k, 128k) name the same architecture too.
    return "".join(parts[:1] + [p for p in parts[1:] if p not in _SUFFIXES and not re.fullmatch(r"\d+k", p)])


def _strip_version(key: str) -> str:
    # "mistral7bv0.2" -> "mistral7b": last-resort match for point releases of the same shape.
    return re.sub(r"v\d+(\.\d+)?$", "", key)


@lru_cache(maxsize=1)
def _catalog() -> tuple[dict[str, "_Entry"], dict[str, str], dict[str, str]]:
    """(entries by lower-case id, short-name key -> id, version-less key -> id). Indexed once per process.

    Only ids, families and aliases are read up front (by regex, one entry per "- {" item); an entry's
    YAML is parsed when it is asked for, so the report does not pay ~25 ms for 76 entries it never uses.
    """
    text = CATALOG_PATH.read_text(encoding="utf-8")
    by_id: dict[str, _Entry] = {}
    by_key: dict[str, str] = {}
    by_loose: dict[str, str] = {}
    for chunk in re.split(r"\n- (?=\{)", text.split("\nmodels:", 1)[1])[1:]:
        mid = re.search(r"\bid: ([^,}\s]+)", chunk).group(1)
        family = re.search(r"\bfamily: ([^,}\s]+)", chunk).group(1)
        aliases = re.search(r"\baliases: \[([^\]]*)\]", chunk)
        by_id[mid.lower()] = _Entry(mid, family, chunk)
        keys = [_norm(mid), _norm(family + "-" + mid.split("-")[-1])]
        keys += [_norm(a) for a in (aliases.group(1).split(",") if aliases else ())]
        for key in keys:
            by_key.setdefault(key, mid)
            by_loose.setdefault(_strip_version(key), mid)
    return by_id, by_key, by_loose


class _Entry:
    __slots__ = ("id", "family", "_text", "_data")

    def __init__(self, mid: str, family: str, text: str) -> None:
        self.id, self.family, self._text, self._data = mid, family, text, None

    @property
    def data(self) -> dict[str, Any]:
        if self._data is None:
            import yaml

            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            self._data = yaml.load(self._text, Loader=loader)
        return self._data


def catalog_names() -> list[str]:
    """Hub ids of every bundled model, in catalog order."""
    return [e.id for e in _catalog()[0].values()]


def _from_catalog(mid: str, source: str = "catalog") -> ModelShape:
    entry = _catalog()[0][mid.lower()]
    values = {k: v for k, v in entry.data.items() if k in _SHAPE_FIELDS and k != "name"}
    return ModelShape(name=entry.id, source=source, **values)


def _catalog_id(name: str, *, loose: bool) -> str | None:
    by_id, by_key, by_loose = _catalog()
    if name.lower() in by_id:
        return by_id[name.lower()].id
    if not loose:
        return None
    key = _norm(name)
    return by_key.get(key) or by_loose.get(_strip_version(key))


# ---------------------------------------------------------------- config.json

def _int(cfg: dict, *names: str, default: int | None = None) -> int | None:
    for n in names:
        v = cfg.get(n)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v)
    return default


def shape_from_config(cfg: dict[str, Any], name: str, source: str) -> ModelShape:
    """Map an HF config.json mapping (Llama-style, ChatGLM, Falcon, MoE, multimodal text_config) to a ModelShape."""
    top = cfg
    if isinstance(cfg.get("text_config"), dict) and "hidden_size" in cfg["text_config"]:
        cfg = {**cfg["text_config"], **{k: v for k, v in cfg.items() if k in ("torch_dtype", "dtype")}}
    hidden = _int(cfg, "hidden_size", "n_embd", "d_model")
    layers = _int(cfg, "num_hidden_layers", "num_layers", "n_layer", "n_layers")
    heads = _int(cfg, "num_attention_heads", "n_head", "num_heads")
    vocab = _int(cfg, "vocab_size", "padded_vocab_size")
    if not (hidden and layers and heads and vocab):
        raise InputError("config.json lacks hidden_size / num_hidden_layers / num_attention_heads / vocab_size", source)
    model_type = str(cfg.get("model_type") or top.get("model_type") or "llama")
    kv = _int(cfg, "num_key_value_heads", "multi_query_group_num", "num_kv_heads")
    if kv is None:
        if cfg.get("multi_query") is True:
            kv = 1
        elif cfg.get("new_decoder_architecture"):
            kv = _int(cfg, "num_kv_heads", default=heads)
        else:
            kv = heads
    gated = model_type not in ("falcon", "gpt2", "gpt_neox", "gptj", "opt", "bloom", "phi", "starcoder2")
    inter = _int(cfg, "intermediate_size", "ffn_hidden_size", "n_inner")
    if inter is None:
        inter = 4 * hidden
    head_dim = _int(cfg, "head_dim", "kv_channels")
    if head_dim == hidden // heads:
        head_dim = None if "head_dim" not in cfg and "kv_channels" not in cfg else head_dim
    dtype = _DTYPES.get(str(cfg.get("torch_dtype") or cfg.get("dtype") or "float32").replace("torch.", ""), "fp32")
    experts = _int(cfg, "num_experts", "num_local_experts", "n_routed_experts", default=0) or 0
    moe_inter = _int(cfg, "moe_intermediate_size", "expert_intermediate_size") if experts else None
    if experts and moe_inter is None:
        moe_inter = inter     # Mixtral: every expert is a full-size MLP
    shared = _int(cfg, "n_shared_experts", default=0) or 0
    shared_inter = moe_inter if shared else None
    if experts and not shared and (_int(cfg, "shared_expert_intermediate_size", default=0) or 0) > 0:
        shared, shared_inter = 1, _int(cfg, "shared_expert_intermediate_size")
    return ModelShape(
        name=name, model_type=model_type, hidden_size=hidden, intermediate_size=inter, num_layers=layers,
        num_heads=heads, num_kv_heads=kv, head_dim=head_dim, vocab_size=vocab,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", top.get("tie_word_embeddings", False))),
        attention_bias=bool(cfg.get("attention_bias") or cfg.get("add_qkv_bias") or model_type in ("qwen2", "qwen2_moe")),
        mlp_bias=bool(cfg.get("mlp_bias", False)), gated_mlp=gated, torch_dtype=dtype,
        num_experts=experts, experts_per_token=_int(cfg, "num_experts_per_tok", default=0) if experts else 0,
        moe_intermediate_size=moe_inter, shared_experts=shared, shared_expert_intermediate_size=shared_inter,
        first_dense_layers=_int(cfg, "first_k_dense_replace", default=0) if experts else 0,
        source=source)


def _read_config_json(path: Path, name: str, source: str) -> ModelShape:
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read model config: {err}", str(path)) from None
    except json.JSONDecodeError as err:
        raise InputError(f"model config.json is not valid JSON: {err.msg}", str(path), err.lineno) from None
    if not isinstance(cfg, dict):
        raise InputError("model config.json is not a JSON object", str(path))
    return shape_from_config(cfg, name, source)


def _hf_cache_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("HF_HUB_CACHE"):
        dirs.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HF_HOME"):
        dirs.append(Path(os.environ["HF_HOME"]) / "hub")
    if os.environ.get("TRANSFORMERS_CACHE"):
        dirs.append(Path(os.environ["TRANSFORMERS_CACHE"]))
    dirs.append(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface" / "hub")
    return dirs


def _from_hf_cache(hub_id: str) -> ModelShape | None:
    if hub_id.count("/") != 1:
        return None
    folder = "models--" + hub_id.replace("/", "--")
    for cache in _hf_cache_dirs():
        repo = cache / folder
        if not repo.is_dir():
            continue
        # Prefer the snapshot refs/main points at; any snapshot has the same architecture otherwise.
        ref = repo / "refs" / "main"
        candidates = []
        if ref.is_file():
            candidates.append(repo / "snapshots" / ref.read_text().strip() / "config.json")
        candidates += [Path(p) for p in sorted(glob.glob(str(repo / "snapshots" / "*" / "config.json")))]
        for cfg in candidates:
            if cfg.is_file():
                return _read_config_json(cfg, hub_id, f"hf-cache {cfg}")
    return None


def _scaled_from_params(name: str, params: int) -> ModelShape:
    """The dense catalog shape nearest in size, with its layer count scaled to match `params`."""
    import math

    by_id = _catalog()[0]
    hint_key = _norm(name) if name else ""
    dense = [e.data for e in by_id.values() if "moe" not in e.family and not e.data.get("num_experts")]
    # Same family first (a name like "my-llama3-8b-sft" still says llama3), then anything.
    family = [e for e in dense if e["family"].replace(".", "").replace("-", "") in hint_key.replace(".", "")]
    pool = family or dense
    best = min(pool, key=lambda e: abs(math.log(e["params_total"] / params)))
    base = _from_catalog(best["id"])
    h, v = base.hidden_size, base.vocab_size
    embed = v * h * (1 if base.tie_word_embeddings else 2)
    per_layer = max(1, (best["params_total"] - embed) // base.num_layers)
    layers = max(1, round((params - embed) / per_layer))
    return replace(base, name=name or best["id"], num_layers=layers, params_total=params,
                   source=f"log: {params:,} params; shape of {best['id']} scaled to {layers} layers")


def resolve_model(name_or_path: str, *, params_hint: int | None = None) -> ModelShape:
    """Find the shape of a model given as hub id, short name, local directory or config.json path."""
    name = (name_or_path or "").strip()
    tried: list[str] = []
    if name:
        p = Path(os.path.expanduser(name))
        if p.is_file() and p.name.endswith(".json"):
            return _read_config_json(p, name, str(p))
        if p.is_dir():
            if (p / "config.json").is_file():
                return _read_config_json(p / "config.json", name, str(p / "config.json"))
            tried.append(f"directory {name} (no config.json in it)")
        mid = _catalog_id(name, loose=False)
        if mid:
            return _from_catalog(mid)
        tried.append("the bundled catalog")
        cached = _from_hf_cache(name)
        if cached:
            return cached
        if name.count("/") == 1:
            tried.append("the Hugging Face cache (" + ", ".join(str(d) for d in _hf_cache_dirs()) + ")")
        mid = _catalog_id(name, loose=True)
        if mid:
            return _from_catalog(mid, source=f"catalog ({mid} for {name})")
    if params_hint:
        return _scaled_from_params(name, int(params_hint))
    what = f"unknown model {name!r}" if name else "no model named"
    raise InputError(f"{what}: tried {', '.join(tried) or 'nothing'}; pass --model PATH to a directory "
                     "or config.json with the model's architecture")
