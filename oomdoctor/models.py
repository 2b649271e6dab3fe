"""Model shapes: a local checkpoint, a local config.json, the Hugging Face cache, the bundled catalog, or a
log's parameter count.

`resolve_model` tries, in order: a local directory or config.json (its checkpoint headers when the weights
are there), the local Hugging Face / ModelScope cache, the catalog by exact hub id, the catalog by short
name, by family and size, and finally `params_hint` (scale the nearest shape). What is local wins: a
variant with a resized vocabulary is counted as it is stored, not as the catalog's base model.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import ModelShape, Msg, msg

CATALOG_PATH = Path(__file__).with_name("data") / "models.yaml"

# Name tails that do not change the architecture: chat/instruct tunes, hub format tags, quantized exports,
# release dates, code/math continued pre-training of the same shape.
_SUFFIXES = ("instruct", "chat", "it", "hf", "base", "pt", "fp16", "bf16", "fp8", "2507", "2407", "0414", "1m",
             "awq", "gptq", "int4", "int8", "4bit", "8bit", "bnb", "thinking", "sft", "dpo", "coder", "math")
_SIZE = re.compile(r"^(?:\d+x)?\d+(?:\.\d+)?[bm]$")


def _tokens(name: str) -> list[str]:
    base = name.strip().rstrip("/").split("/")[-1].lower()
    base = re.sub(r"(\d)_(\d)", r"\1.\2", base)         # Qwen-1_8B, internlm2_5: "_" between digits is a point
    base = base.replace("_", "-").replace(" ", "-")
    if base.startswith("meta-"):
        base = base[len("meta-"):]
    return [t for t in base.split("-") if t]


def _norm(name: str) -> str:
    """Comparable form of a model name: no org, no case, no separators, no -Instruct/-hf style tails."""
    parts = _tokens(name)
    # Context-length tags (4k, 128k) name the same architecture too.
    return "".join(parts[:1] + [p for p in parts[1:] if p not in _SUFFIXES and not re.fullmatch(r"\d+k", p)])


def _strip_version(key: str) -> str:
    # "mistral7bv0.2" -> "mistral7b": last-resort match for point releases of the same shape.
    return re.sub(r"v\d+(\.\d+)?$", "", key)


class _Entry:
    __slots__ = ("id", "family", "_text", "_data")

    def __init__(self, mid: str, family: str, text: str) -> None:
        self.id, self.family, self._text = mid, family, text
        self._data: dict[str, Any] | None = None

    @property
    def data(self) -> dict[str, Any]:
        if self._data is None:
            import yaml

            from oomdoctor.bounded import yaml_loader

            data: dict[str, Any] = yaml.load(self._text, Loader=yaml_loader())
            self._data = data
            return data
        return self._data


def _field(pattern: str, chunk: str) -> str:
    """A field every catalog entry has (its id, its family); a bundled entry without one is a packaging error."""
    found = re.search(pattern, chunk)
    if found is None:
        raise ValueError(f"catalog entry without {pattern!r}: {chunk[:60]!r}")
    return found.group(1)


@lru_cache(maxsize=1)
def _catalog() -> tuple[dict[str, _Entry], dict[str, str], dict[str, str], dict[tuple[str, str], str]]:
    """(entries by lower-case id, short-name key -> id, version-less key -> id, (family, size) -> id).

    Only ids, families and aliases are read up front (by regex, one entry per "- {" item); an entry's
    YAML is parsed when it is asked for, so the report does not pay for ~100 entries it never uses.
    """
    text = CATALOG_PATH.read_text(encoding="utf-8")
    by_id: dict[str, _Entry] = {}
    by_key: dict[str, str] = {}
    by_loose: dict[str, str] = {}
    by_size: dict[tuple[str, str], str] = {}
    for chunk in re.split(r"\n- (?=\{)", text.split("\nmodels:", 1)[1])[1:]:
        mid = _field(r"\bid: ([^,}\s]+)", chunk)
        family = _field(r"\bfamily: ([^,}\s]+)", chunk)
        aliases = re.search(r"\baliases: \[([^\]]*)\]", chunk)
        by_id[mid.lower()] = _Entry(mid, family, chunk)
        keys = [_norm(mid), _norm(family + "-" + mid.split("-")[-1])]
        keys += [_norm(a) for a in (aliases.group(1).split(",") if aliases else ())]
        for key in keys:
            by_key.setdefault(key, mid)
            by_loose.setdefault(_strip_version(key), mid)
        sizes = [t for t in _tokens(mid) if _SIZE.match(t)]
        if sizes:
            by_size.setdefault((family.replace("-", ""), sizes[0]), mid)
    return by_id, by_key, by_loose, by_size


def catalog_names() -> list[str]:
    """Hub ids of every bundled model, in catalog order."""
    return [e.id for e in _catalog()[0].values()]


def _from_catalog(mid: str, asked: str | None = None) -> ModelShape:
    from oomdoctor.archs import shape_from_config

    entry = _catalog()[0][mid.lower()]
    data = entry.data
    shape = shape_from_config(dict(data["config"]), entry.id, None, source_kind="catalog", tolerate_unplaced=True)
    source = "catalog" if asked is None else f"catalog ({entry.id} for {asked})"
    notes = shape.notes
    if data.get("params_total"):                # the entry's count is the whole checkpoint's, vision tower included
        notes = tuple(n for n in notes if n.code not in _DESCRIBED_LEFT_OUT)
    if shape.shape_confidence == "guessed":       # the total is the entry's count; the layers are a guess
        notes = (msg("model.warn.catalog_structure", model_type=shape.model_type),) + notes
    return replace(shape, params_total=data.get("params_total"), source=source, source_kind="catalog",
                   source_path=None, notes=notes)


def _catalog_id(name: str, *, loose: bool) -> str | None:
    by_id, by_key, by_loose, by_size = _catalog()
    if name.lower() in by_id:
        return by_id[name.lower()].id
    if not loose:
        return None
    key = _norm(name)
    found = by_key.get(key) or by_loose.get(_strip_version(key))
    if found:
        return found
    # Family and size: "Qwen2.5-7B-Instruct-abliterated" is a Qwen2.5 7B. The longest family named wins
    # ("deepseek-r1-distill" over "qwen"), so a distill is not taken for its base family.
    tokens = _tokens(name)
    sizes = [t for t in tokens if _SIZE.match(t)]
    if not sizes:
        return None
    joined = "".join(t for t in tokens if not _SIZE.match(t)).replace(".", "")
    best: tuple[int, str] | None = None
    for (family, size), mid in by_size.items():
        if size in sizes and family.replace(".", "") in joined:
            if best is None or len(family) > best[0]:
                best = (len(family), mid)
    return best[1] if best else None


# ---------------------------------------------------------------- local files

def _load_config(path: str) -> tuple[dict[str, Any], str]:
    from oomdoctor.bounded import load_json, read_bytes

    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", "replace")
    # transformers writes config.json with Python's json.dumps, which spells float("inf") Infinity (Nemotron-H's
    # time_step_limit (0.0, inf), configuration_nemotron_h.py): a constant where no size is read is no error
    cfg = load_json(text, path, constants=True)
    if not isinstance(cfg, dict):
        raise InputError(msg("model.config.not_object"), path)
    return cfg, text


def read_config_json(path: str, name: str, *, exact: bool = True) -> ModelShape:
    """The shape a config.json file describes (bad JSON or values: an InputError naming the file and line).

    A model_type without a reading of its own is read from its features (a guess, with its warning); where
    transformers knows the type, its own count on the meta device makes the total exact (`exact=False`:
    leave that to the caller, which may have a checkpoint to count instead)."""
    from oomdoctor.archs import shape_from_config

    cfg, text = _load_config(path)
    try:
        shape = shape_from_config(cfg, name, path, text=text, tolerate_unplaced=True)
    except InputError as err:
        raise _refusal_as_true_here(err, cfg, os.path.dirname(path)) from None
    if shape.shape_confidence == "guessed":
        shape = _exact_or_warned(shape, cfg, os.path.dirname(path) if exact else None, try_meta=exact)
    elif exact and any(n.code in _LEFT_OUT for n in shape.notes):
        shape = _whole_class_count(shape, cfg, os.path.dirname(path))
    return shape


def _refusal_as_true_here(err: InputError, cfg: dict[str, Any], directory: str) -> InputError:
    """A refusal where transformers is importable and counts the type: the refusal then says what transformers
    counted, and that the layer sizes the estimate needs are still unread (with or without a checkpoint: this
    refusal comes before it), so the user is not sent to find what this machine already has."""
    from oomdoctor import metacount

    refusal = err.message
    if not (isinstance(refusal, Msg) and refusal.code.startswith("model.refuse.")):
        return err
    count = metacount.meta_count(cfg, directory)
    if not count.params:
        return err              # transformers absent, or it does not know the type: the refusal stands as written
    values = refusal.values
    return InputError(msg("model.refuse.known_unread", model_type=values.get("model_type", "?"), version=count.version,
                          cls=count.cls, params=count.params,
                          why=values.get("why") or msg("model.refuse.why_unplaced")), err.path, err.line)


# warnings of a reading that counts the language model but leaves a part out (a vision tower of a kind it cannot
# count, or one named instead of described; an omni model's audio tower and talker, a speech model's tokenizers)
_LEFT_OUT = ("model.warn.vision_not_counted", "model.warn.vision_tower_by_name", "model.warn.parts_not_counted")
# of those, the parts the config describes: a checkpoint, or a count of the whole, holds them
_DESCRIBED_LEFT_OUT = ("model.warn.vision_not_counted", "model.warn.parts_not_counted")


def _whole_class_count(shape: ModelShape, cfg: dict[str, Any], directory: str) -> ModelShape:
    """A reading of the type's own that leaves a part out: transformers' count of the whole class, where it knows
    the class the config names, replaces the total and drops the warning; else the shape keeps it."""
    from oomdoctor import metacount

    count = metacount.meta_count(cfg, directory)
    if not count.params:
        return shape
    note = msg("model.note.meta_count", version=count.version, cls=count.cls)
    kept = tuple(n for n in shape.notes if n.code not in _LEFT_OUT)
    return replace(shape, params_total=count.params, shape_confidence="exact", notes=(note,) + kept)


def _unplaced(shape: ModelShape) -> Msg | None:
    for a in shape.assumptions:
        if a.code == "model.assume.unplaced":
            return dict(a.values)["why"]
    return None


def _exact_or_warned(shape: ModelShape, cfg: dict[str, Any], directory: str | None, *, try_meta: bool) -> ModelShape:
    """A guessed shape: counted by transformers where it can, else kept with its warning lines; a guess that
    could not place its experts or state-space layers refuses (the InputError of that one line)."""
    from oomdoctor import metacount

    if not try_meta:
        return shape
    count = metacount.meta_count(cfg, directory)
    if count.params:
        note = msg("model.note.meta_count", version=count.version, cls=count.cls)
        # transformers builds the whole class, vision tower and every other part included
        kept = tuple(n for n in shape.notes if n.code not in _DESCRIBED_LEFT_OUT)
        return replace(shape, params_total=count.params, shape_confidence="exact", notes=(note,) + kept)
    why = _unplaced(shape)
    if why is not None:
        raise InputError(why, shape.source_path)
    how = "model.warn.how_exact_remote" if count.unknown else "model.warn.how_exact"
    warns = [msg("model.warn.guessed", model_type=shape.model_type, assumed=_joined(shape.assumptions)),
             msg(how, model_type=shape.model_type)]
    if count.error == "timeout":
        warns.append(msg("model.warn.meta_timeout", seconds=count.seconds))
    elif count.error and count.error != "unavailable":
        warns.append(msg("model.warn.meta_failed", reason=count.error))
    if shape.unread_keys:
        warns.append(msg("model.note.unread_keys", keys=", ".join(shape.unread_keys)))
    return replace(shape, notes=tuple(warns) + shape.notes)


def _joined(items: tuple[Msg, ...]) -> Msg | str:
    if not items:
        return "-"
    joined: Msg = items[-1]
    for item in reversed(items[:-1]):
        joined = msg("model.assume.join", a=item, b=joined)
    return joined


def read_model_dir(directory: str, name: str) -> ModelShape:
    """A local model directory: config.json, corrected by its checkpoint's tensor headers when present; a
    guessed shape the checkpoint cannot count is counted by transformers where it can (else warned)."""
    from oomdoctor.checkpoint import read_directory

    path = os.path.join(directory, "config.json")
    shape = read_directory(directory, read_config_json(path, name, exact=False))
    if shape.shape_confidence == "guessed" and shape.llama_style_guess:
        cfg, _ = _load_config(path)
        shape = _exact_or_warned(shape, cfg, directory, try_meta=True)
    elif shape.shape_confidence == "derived" and any(n.code in _LEFT_OUT for n in shape.notes):
        cfg, _ = _load_config(path)             # no checkpoint counted the part the reading leaves out
        shape = _whole_class_count(shape, cfg, directory)
    return shape


def shape_warnings(shape: ModelShape) -> tuple[Msg, ...]:
    """The loud lines of a guessed shape (what was assumed, how to make it exact), for every surface."""
    return tuple(n for n in shape.notes if n.code.startswith("model.warn.") or n.code == "model.note.unread_keys")


def _cache_roots() -> list[tuple[Path, str]]:
    """(cache root, layout) in the order huggingface_hub and ModelScope look them up."""
    env = os.environ
    roots: list[tuple[Path, str]] = []
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(var):
            roots.append((Path(os.path.expanduser(env[var])), "hf"))
    if env.get("HF_HOME"):
        roots.append((Path(os.path.expanduser(env["HF_HOME"])) / "hub", "hf"))
    if env.get("TRANSFORMERS_CACHE"):
        roots.append((Path(os.path.expanduser(env["TRANSFORMERS_CACHE"])), "hf"))
    xdg = Path(os.path.expanduser(env.get("XDG_CACHE_HOME") or "~/.cache"))
    roots.append((xdg / "huggingface" / "hub", "hf"))
    if env.get("MODELSCOPE_CACHE"):
        roots.append((Path(os.path.expanduser(env["MODELSCOPE_CACHE"])) / "hub", "ms"))
    roots.append((xdg / "modelscope" / "hub", "ms"))
    seen: set[str] = set()
    unique = []
    for root, kind in roots:
        if str(root) not in seen:
            seen.add(str(root))
            unique.append((root, kind))
    return unique


def _snapshot_dirs(root: Path, kind: str, hub_id: str) -> list[Path]:
    org, _, model = hub_id.partition("/")
    if kind == "ms":
        return [root / org / model, root / "models" / org / model]
    repo = root / f"models--{org}--{model}"
    dirs = []
    ref = repo / "refs" / "main"
    if _is_file(ref):
        rev = ref.read_text(encoding="utf-8", errors="replace").strip()
        if re.fullmatch(r"[0-9a-fA-F]{6,64}", rev):       # a ref is a commit hash; never a path to follow
            dirs.append(repo / "snapshots" / rev)
    snaps = repo / "snapshots"
    if _is_dir(snaps):
        dirs += sorted(p for p in snaps.iterdir() if _is_dir(p))
    return dirs


def _from_cache(hub_id: str) -> tuple[ModelShape | None, list[Msg]]:
    """The model's snapshot in a local cache, if one has a config.json; unreadable caches are notes."""
    notes: list[Msg] = []
    if hub_id.count("/") != 1 or ".." in hub_id:
        return None, notes
    for root, kind in _cache_roots():
        try:
            if not _is_dir(root):
                continue
            for snap in _snapshot_dirs(root, kind, hub_id):
                if _is_file(snap / "config.json"):
                    shape = read_model_dir(str(snap), hub_id)
                    where = "hf-cache" if kind == "hf" else "modelscope-cache"
                    return replace(shape, source=f"{where} {shape.source_path}", notes=tuple(notes) + shape.notes), notes
        except PermissionError as err:
            notes.append(msg("model.note.cache_unreadable", path=str(root), reason=err.strerror or "permission denied"))
        except OSError as err:
            notes.append(msg("model.note.cache_unreadable", path=str(root), reason=err.strerror or str(err)))
    return None, notes


def _scaled_from_params(name: str, params: int) -> ModelShape:
    """The dense catalog shape nearest in size, with its layer count scaled to match `params`."""
    from oomdoctor.memory.params import count_params

    by_id = _catalog()[0]
    hint_key = _norm(name) if name else ""
    dense = [e for e in by_id.values() if "moe" not in e.family and e.data.get("params_total")
             and not any(k in e.data["config"] for k in ("num_experts", "num_local_experts", "n_routed_experts"))]
    # Same family first (a name like "my-llama3-8b-sft" still says llama3), then anything.
    family = [e for e in dense if e.family.replace(".", "").replace("-", "") in hint_key.replace(".", "")]
    pool = family or dense
    best = min(pool, key=lambda e: abs(math.log(e.data["params_total"] / params)))
    base = _from_catalog(best.id)
    counts = count_params(replace(base, params_total=None))
    outside = counts.embeddings + counts.lm_head
    per_layer = max(1, (counts.total - outside) // base.num_layers)
    layers = max(1, round((params - outside) / per_layer))
    source = f"log: {params:,} params; shape of {best.id} scaled to {layers} layers"
    return replace(base, name=name or best.id, num_layers=layers, params_total=params, source=source,
                   source_kind="log", source_path=None, moe_layer_count=None, shape_confidence="guessed",
                   linear_attn_layers=round(base.linear_attn_layers * layers / base.num_layers),
                   notes=base.notes + (msg("model.source.log", params=params, id=best.id, layers=layers),))


def _is_file(path: Path) -> bool:
    """Path.is_file, False where the name cannot be a file here (too long, a NUL byte) instead of raising."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def resolve_model(name_or_path: str, *, params_hint: int | None = None) -> ModelShape:
    """Find the shape of a model given as hub id, short name, local directory or config.json path."""
    name = (name_or_path or "").strip()
    tried: list[Msg] = []
    notes: list[Msg] = []
    if name:
        p = Path(os.path.expanduser(name))
        if _is_file(p) and p.name.endswith(".json"):
            return read_config_json(str(p), name)
        if _is_dir(p):
            if _is_file(p / "config.json"):
                return read_model_dir(str(p), name)
            tried.append(msg("model.tried.directory", path=name))
        cached, notes = _from_cache(name)
        if cached is not None:
            return _with_catalog_check(cached, name)
        mid = _catalog_id(name, loose=False)
        if mid:
            return _add_notes(_from_catalog(mid), notes)
        tried.append(msg("model.tried.catalog"))
        if name.count("/") == 1:
            tried.append(msg("model.tried.hf_cache", dirs=", ".join(str(r) for r, k in _cache_roots() if k == "hf")))
        mid = _catalog_id(name, loose=True)
        if mid:
            return _add_notes(_from_catalog(mid, asked=name), notes)
    if params_hint:
        return _add_notes(_scaled_from_params(name, int(params_hint)), notes)
    from oomdoctor.words import say

    listed = "; ".join(say(t) for t in tried) or say("model.tried.nothing")
    if name:
        raise InputError(msg("model.unknown", name=name, tried=listed))
    raise InputError(msg("model.none_named", tried=listed))


def _add_notes(shape: ModelShape, notes: list[Msg]) -> ModelShape:
    return replace(shape, notes=tuple(notes) + shape.notes) if notes else shape


def _with_catalog_check(shape: ModelShape, name: str) -> ModelShape:
    """A cached snapshot wins over the catalog; say so when its vocabulary differs from the catalog's."""
    mid = _catalog_id(name, loose=True)
    if not mid:
        return shape
    entry = _catalog()[0][mid.lower()].data["config"]
    catalog_vocab = (entry.get("text_config") or entry).get("vocab_size") or entry.get("padded_vocab_size")
    if isinstance(catalog_vocab, int) and catalog_vocab != shape.vocab_size:
        return _add_notes(shape, [msg("model.note.vocab_differs", local=shape.vocab_size, id=mid, catalog=catalog_vocab)])
    return shape


def source_msg(shape: ModelShape) -> Msg:
    """Where the shape came from, as words: checkpoint / config.json (with the path), catalog, or log."""
    if shape.source_kind == "checkpoint":
        path = shape.source_path or shape.source
        code = "model.source.index" if path.endswith(".index.json") else "model.source.checkpoint"
        return msg(code, path=path)
    if shape.source_kind == "config.json":
        return msg("model.source.config", path=shape.source_path or shape.source)
    if shape.source_kind == "log":
        found = [n for n in shape.notes if n.code == "model.source.log"]
        if found:
            return found[0]
    asked = re.match(r"catalog \((.+) for (.+)\)$", shape.source)
    if asked:
        return msg("model.source.catalog_for", id=asked.group(1), name=asked.group(2))
    return msg("model.source.catalog", id=shape.name)


def shape_notes(shape: ModelShape) -> tuple[Msg, ...]:
    """The notes a report shows under the model line (the source itself is shown on the line); the warning
    lines of a guessed shape come first."""
    warns = shape_warnings(shape)
    return warns + tuple(n for n in shape.notes if n.code != "model.source.log" and n not in warns)


def confidence_msg(shape: ModelShape) -> Msg:
    return msg(f"model.confidence.{shape.shape_confidence}")
