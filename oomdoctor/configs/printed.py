"""What a run printed about its own configuration, as a thread pastes it: a mapping printed as Python or JSON (lit-gpt's
`fabric.print(hparams)`, litgpt's `pprint(locals())` of setup(), a training script's `print(json.dumps(args))`), often
under a title line and cut where the paste stopped. Read as the mapping it was, the cut entry dropped; each reader
then reads it as the file it would have been.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from oomdoctor.configs._doc import Doc
from oomdoctor.configs._literal import REFUSED, Walk, literal
from oomdoctor.facts import msg

_OBJECT_REPR = re.compile(r"<[A-Za-z_][\w.]* object at 0x[0-9a-fA-F]+>")     # object.__repr__: no value to read
_JSON_WORDS = {"true": True, "false": False, "null": None}
_OPEN, _CLOSE = "{[(", "}])"


def printed_mapping(text: str, start_line: int = 1) -> tuple[dict[str, Any], int, bool] | None:
    """(the mapping, its first line, whether the paste cut it) of the first line at or after `start_line` that
    opens a printed mapping (`{` first on the line); None when there is none, or it does not read as one."""
    lines = text.split("\n")
    for i in range(max(0, start_line - 1), len(lines)):
        if lines[i].lstrip().startswith("{"):
            body = "\n".join(lines[i:])
            found = _literal(body[body.index("{"):])
            if found is not None and isinstance(found[0], dict) and found[0] and \
                    all(isinstance(k, str) for k in found[0]):
                return found[0], i + 1, found[1]
    return None


def mapping_doc(path: str, text: str, data: dict[str, Any], first: int, cut: bool) -> Doc:
    """The printed mapping as a Doc, each top-level key at the line it was printed on."""
    lines: dict[str, int] = {}
    rows = text.split("\n")
    for key in data:
        quoted = re.compile(r"""(['"])""" + re.escape(key) + r"\1\s*:")
        at = next((n for n in range(first - 1, len(rows)) if quoted.search(rows[n])), None)
        if at is not None:
            lines[key] = at + 1
    notes = [msg("config.printed", where=f"{path}:{first}")]
    if cut:
        notes.append(msg("config.printed_cut", where=path))
    return Doc(path, data, lines, "json", notes=notes)


def _literal(text: str) -> tuple[Any, bool] | None:
    """The Python or JSON literal `text` opens with, closed where a paste cut it (the last whole entry kept);
    (value, cut)."""
    closed, cut = _close(_OBJECT_REPR.sub("None", text))
    if closed is None:
        return None
    try:
        tree = ast.parse(closed, mode="eval")
    except (SyntaxError, ValueError):
        return None
    value = _value(tree.body)
    return (value, cut) if value is not REFUSED else None


def _close(text: str) -> tuple[str | None, bool]:
    """The literal up to where its brackets close; when the text ends first (a cut), up to its last comma at which
    every string was closed, with the brackets still open closed after it."""
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    safe: tuple[int, list[str]] | None = None
    for i, ch in enumerate(text):
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            elif ch == "\n":
                break                       # a printed string never holds a line end: the paste was cut inside it
            continue
        if ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            stack.append(_CLOSE[_OPEN.index(ch)])
        elif ch in _CLOSE:
            if not stack or stack.pop() != ch:
                return None, False
            if not stack:
                return text[:i + 1], False
        elif ch == "," and stack:
            safe = (i, list(stack))
    if safe is None:
        return None, False
    at, open_ = safe
    return text[:at] + "".join(reversed(open_)), True


def _value(node: ast.AST) -> Any:
    """A printed value (a JSON dump or a Python repr) as data: a word it does not know, or a call other than the
    two below, reads as None."""
    return literal(node, names=lambda name: _JSON_WORDS.get(name), call=_repr_call, lenient=True)


def _repr_call(node: ast.Call, part: Walk) -> Any:
    # A value's repr: `PosixPath('x')` is its one argument, `TrainArgs(a=1, …)` (a dataclass) its fields.
    if node.keywords and not node.args:
        return {kw.arg: part(kw.value) for kw in node.keywords if kw.arg}
    if len(node.args) == 1 and not node.keywords:
        return part(node.args[0])
    return None


# DeepSpeed prints the config it runs with (deepspeed/runtime/config.py DeepSpeedConfig.print): one attribute a line,
# `  {name} {dots} {value}` with the dots padding the name to 29 columns (none past that), under its logger's
# `[timestamp] [INFO] [config.py:N:print]` prefix; `zero_config` a JSON dump over the lines below (2021) or a
# pydantic repr of `name=value` words (later releases). The print ends with the user's own config as JSON
# (DeepSpeedConfig.print_user_config: `  json = {json.dumps(self._param_dict, indent=4)}`, runtime/config.py:990 at
# 38327e07f), which, where the paste holds it, is the file itself: it is read over the attribute lines.
_DS_LOGGER = re.compile(r"^.*\[config\.py:\d+:print(?:_user_config)?\]")
_DS_LINE = re.compile(r"^\s{1,4}([a-z_][a-z0-9_]*)\s+(?:\.+\s+|=\s+)?(\S.*?)?\s*$")
_DS_KEYS = {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "world_size",
            "zero_config", "zero_optimization_stage", "zero_enabled", "fp16_enabled", "bfloat16_enabled", "json"}


def deepspeed_printed(text: str) -> tuple[dict[str, Any], int | None, int, bool] | None:
    """(the DeepSpeed config DeepSpeed printed, rebuilt as its JSON; the world size it printed; the first line;
    whether the paste cut it), or None when the text holds no such print (three of its attributes at least)."""
    rows = text.split("\n")
    values: dict[str, Any] = {}
    first = None
    cut = False
    i = 0
    while i < len(rows):
        row = rows[i]
        logged = _DS_LOGGER.match(row)
        m = _DS_LINE.match(row[logged.end():] if logged else "")
        if m is None or m.group(1) not in _DS_KEYS:
            i += 1
            continue
        name, raw = m.group(1), (m.group(2) or "").strip()
        first = first or i + 1
        if name in ("zero_config", "json") and raw.startswith("{"):
            found = _literal("\n".join([raw] + rows[i + 1:]))
            if found is not None and isinstance(found[0], dict):
                values[name], cut = found[0], found[1]
        elif name == "zero_config":
            values[name] = {k: _scalar(v) for k, v in re.findall(r"(\w+)=(\S+)", raw)}
        else:
            values[name] = _scalar(raw)
        i += 1
    if first is None or len(values) < 3:
        return None
    user = values.get("json")
    ds: dict[str, Any] = dict(user) if isinstance(user, dict) else {}
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        if isinstance(values.get(key), int):
            ds.setdefault(key, values[key])
    zero = dict(values["zero_config"]) if isinstance(values.get("zero_config"), dict) else {}
    if isinstance(values.get("zero_optimization_stage"), int):
        zero.setdefault("stage", values["zero_optimization_stage"])
    if zero:
        ds.setdefault("zero_optimization", zero)
    for key, section in (("fp16_enabled", "fp16"), ("bfloat16_enabled", "bf16")):
        if isinstance(values.get(key), bool):
            ds.setdefault(section, {"enabled": values[key]})
    world = values.get("world_size")
    world = world if isinstance(world, int) and world > 0 else None
    micro, total = ds.get("train_micro_batch_size_per_gpu"), ds.get("train_batch_size")
    if "gradient_accumulation_steps" not in ds and world and isinstance(micro, int) and isinstance(total, int) and \
            micro > 0 and total % (micro * world) == 0:
        # train_batch_size = micro-batch x accumulation x world size (runtime/config.py _configure_train_batch_size)
        ds["gradient_accumulation_steps"] = total // (micro * world)
    return ds, world, first, cut


def _scalar(raw: str) -> Any:
    low = raw.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null", ""):
        return None
    try:
        return int(raw)
    except ValueError:
        try:
            return float(raw)
        except ValueError:
            return raw.strip()
