"""Reading rule files: YAML with line numbers, then every key checked, into the records of planner/rules.py.

Every problem is an InputError naming the file and line. Nothing in a rule runs code: conditions are a
closed operator table over registered facts (planner/registry.py), actions a closed table of typed
functions, and note texts only substitute ``${fact}`` names checked here. build_book merges the files
(a later rule with the same id replaces the earlier one) and puts the ladder in order.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any, NoReturn, get_args

from oomdoctor.errors import InputError
from oomdoctor.facts import Framework, Msg, Text, msg
from oomdoctor.planner.registry import BOOL, FACTS, FIELD_CHOICES, FLOAT, INT, LIST, SETUP_FIELDS, STR
from oomdoctor.planner.rules import (
    ACTIONS,
    APPLICABILITY,
    CATEGORIES,
    COST_KINDS,
    COST_SIZES,
    FIELD_RANGES,
    INT_CHOICES,
    LANGS,
    OPS,
    PLACEHOLDER_RE,
    ROUNDINGS,
    Action,
    AllOf,
    AnyOf,
    Condition,
    Cost,
    Leaf,
    NotOf,
    Rule,
    RuleBook,
)
from oomdoctor.records import record
from oomdoctor.values import BadValue, as_float, as_int

SCHEMA_VERSION = 1
# Variables that decide which program or library runs, or how the shell behaves (ld.so(8), bash(1),
# python(1) ENVIRONMENT): a rule's env action may not set them in the script the user sources.
_ENV_DENIED = frozenset({"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONHOME",
                         "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONUSERBASE", "BASH_ENV", "ENV", "SHELLOPTS",
                         "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "HOME", "SHELL", "CDPATH", "GLOBIGNORE",
                         "PERL5OPT", "PERL5LIB", "RUBYOPT", "NODE_OPTIONS", "GIT_SSH_COMMAND", "EDITOR", "PAGER",
                         "TMPDIR", "HISTFILE"})
_ENV_DENIED_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_")
KEEPABLE = ("effective_batch",)
REPEAT_UNBOUNDED = 16          # `repeat: true` = while it helps, but never more than this
REPEAT_MAX = 64                # an explicit `repeat: N`: each firing is one more estimate
MAX_RULES = 1000               # the default ladder has ~25; the least-cost search grows with the count
# Each firing of a rule is one estimate and one gathering of facts (~0.3 ms); the default ladder
# may fire ~100 times in one walk. Bounding the sum of `repeat` bounds a plan's work, whatever the files say.
MAX_FIRINGS = 2000
FACTOR_MAX = 1e6               # a scale factor beyond this is a typo, and inf * anything breaks the walk
_FULL_KEYS = {"id", "slug", "title", "why", "category", "costs", "applicability", "when", "actions",
              "repeat", "order", "before", "after", "enabled", "check_saving", "skip_why", "references",
              "frameworks", "skip_frameworks"}
_REQUIRED_KEYS = ("id", "slug", "title", "why", "category", "costs", "applicability", "actions")
_POSITION_KEYS = {"id", "order", "before", "after", "enabled"}
_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_ENV_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
# Optional setup fields (default None) may be set to null by an action.
_NULLABLE = {"lora_alpha", "quant_bits", "load_dtype", "fsdp", "eval_accum"}


# ---------------------------------------------------------------- YAML with line numbers

class _Map(dict):
    line: int = 0
    key_line: dict

    def line_of(self, key: str) -> int:
        return self.key_line.get(key, self.line)


class _Seq(list):
    line: int = 0
    item_line: list


def _load_yaml(path: Path) -> Any:
    """The rule file as _Map/_Seq with line numbers. Read like every small input (oomdoctor.lined):
    size capped, a FIFO never waited on, aliases expanded within a budget, no alias cycles."""
    import yaml

    from oomdoctor.bounded import read_utf8
    from oomdoctor.lined import read_yaml

    text = read_utf8(str(path))
    root = read_yaml(text, str(path), data=False).root
    if root is None:
        raise InputError(msg("rules.empty_file"), str(path), 1)
    return _convert(root, str(path), yaml.constructor.SafeConstructor())


def _convert(root: Any, path: str, constructor: Any) -> Any:
    """_Map/_Seq/values from the composed nodes, in document order (bounded.walk): a key that is not a plain
    scalar, a key given twice, a value its tag cannot be and nesting past MAX_DEPTH fail at their line."""
    import yaml

    from oomdoctor.bounded import MAX_DEPTH, walk

    built: dict[int, Any] = {}
    root_value: Any = None
    for _, key_node, node, parent, depth in walk(root):
        key, key_line = None, 0
        if key_node is not None:
            key_line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(msg("rules.key_not_plain"), path, key_line)
            key = str(_scalar(key_node, path, constructor))
        container: Any = None if parent is None else built[id(parent)]
        if key is not None and key in container:
            raise InputError(msg("rules.duplicate_key", key=key), path, key_line)
        line = node.start_mark.line + 1
        if depth >= MAX_DEPTH:           # compose_yaml bounds depth only where aliases are
            raise InputError(msg("input.too_deep", depth=MAX_DEPTH), path, line)
        value = built.get(id(node))
        if value is None:
            value = _new(node, line) if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) \
                else _scalar(node, path, constructor)
            if not isinstance(node, yaml.ScalarNode):
                built[id(node)] = value
        if container is None:
            root_value = value
        elif key is not None:
            container[key] = value
            container.key_line[key] = key_line
        else:
            container.append(value)
            container.item_line.append(line)
    return root_value


def _new(node: Any, line: int) -> Any:
    import yaml

    out: Any = _Map() if isinstance(node, yaml.MappingNode) else _Seq()
    out.line = line
    if isinstance(out, _Map):
        out.key_line = {}
    else:
        out.item_line = []
    return out


def _scalar(node: Any, path: str, constructor: Any) -> Any:
    import yaml

    try:
        return constructor.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:   # `order: !!int soon`
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["?"])[0]
        raise InputError(msg("rules.bad_value", problem=problem), path, node.start_mark.line + 1) from None


# ---------------------------------------------------------------- validation helpers

class _Ctx:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, code: str | Msg, at: int | None, /, **values: Any) -> NoReturn:
        raise InputError(code if isinstance(code, Msg) else msg(code, **values), self.path, at)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _num(value: Any) -> float | None:
    """A finite number, also from a string (PyYAML reads 1e-4 as a string); None otherwise."""
    try:
        number = as_float(value, "")
    except BadValue:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and not any(c in value for c in ".eE"):
        return int(number)
    return number


def _typed(ctx: _Ctx, kind: str, value: Any, line: int, what: str | Msg, choices: Sequence[str] = ()) -> Any:
    if kind == BOOL:
        if not isinstance(value, bool):
            ctx.fail("rules.not_bool", line, what=what, value=_shown(value))
        return value
    if kind in (INT, FLOAT):
        # Finite and below values.MAX_ABS: `.inf`, `.nan` and a 500-digit integer stop here.
        try:
            return as_int(value, what) if kind == INT else as_float(value, what)
        except BadValue as bad:
            ctx.fail(bad.message, line)
    if kind in (STR, LIST):
        if not isinstance(value, str):
            ctx.fail("rules.not_string", line, what=what, value=_shown(value))
        if choices and value not in choices:
            ctx.fail("rules.not_a_choice", line, what=what, choices=", ".join(choices), value=value)
        return value
    raise AssertionError(f"{what}: unsupported kind {kind}")


def _ranged(ctx: _Ctx, value: Any, line: int, what: str | Msg, *, minimum: float | None = None,
            maximum: float | None = None, integer: bool = False) -> Any:
    """A number read through oomdoctor.values with its range; a failure names the rule file's line."""
    try:
        if integer:
            return as_int(value, what, minimum=minimum, maximum=maximum)   # type: ignore[arg-type]
        return as_float(value, what, minimum=minimum, maximum=maximum)
    except BadValue as bad:
        ctx.fail(bad.message, line)
        raise AssertionError from None


def _check_keys(ctx: _Ctx, mapping: _Map, allowed: set[str] | Sequence[str], what: str | Msg) -> None:
    for key in mapping:
        if key not in allowed:
            ctx.fail("rules.unknown_key", mapping.line_of(key), key=key, what=what,
                     allowed=", ".join(sorted(allowed)))


def _need_map(ctx: _Ctx, value: Any, line: int, what: str | Msg) -> _Map:
    if not isinstance(value, _Map):
        ctx.fail("rules.not_mapping", line, what=what)
    return value


def _text(ctx: _Ctx, value: Any, line: int, what: str | Msg) -> Text:
    if isinstance(value, str):
        if not value.strip():
            ctx.fail("rules.text_empty", line, what=what)
        return Text(en=value.strip())
    if isinstance(value, _Map):
        _check_keys(ctx, value, LANGS, what)
        if "en" not in value:
            ctx.fail("rules.text_needs_en", value.line, what=what)
        for lang in value:
            if not isinstance(value[lang], str) or not value[lang].strip():
                ctx.fail("rules.text_lang_empty", value.line_of(lang), what=what, lang=lang)
        return Text(en=value["en"].strip(), zh=value["zh"].strip() if "zh" in value else None)
    ctx.fail("rules.text_shape", line, what=what)
    raise AssertionError


def _placeholders(ctx: _Ctx, text: Text, line: int) -> None:
    for lang_text in (text.en, text.zh or ""):
        for name in PLACEHOLDER_RE.findall(lang_text):
            if name not in FACTS:
                ctx.fail("rules.unknown_placeholder", line, name=name)


# ---------------------------------------------------------------- conditions

def _condition(ctx: _Ctx, value: Any, line: int) -> Condition:
    node = _need_map(ctx, value, line, msg("rules.what.condition"))
    combinators = [k for k in ("all", "any", "not") if k in node]
    if not combinators:
        return _leaf(ctx, node)
    if len(node) != 1:
        ctx.fail("rules.condition_shape", node.line)
    key = combinators[0]
    inner = node[key]
    if key == "not":
        return NotOf(_condition(ctx, inner, node.line_of(key)))
    if not isinstance(inner, _Seq) or not inner:
        ctx.fail("rules.condition_needs_list", node.line_of(key), key=key)
    return (AllOf if key == "all" else AnyOf)(
        tuple(_condition(ctx, item, inner.item_line[i]) for i, item in enumerate(inner)))


def _leaf(ctx: _Ctx, node: _Map) -> Leaf:
    """`{fact, op, value}`: a registered fact, an operator of the closed table, a value of the fact's kind."""
    _check_keys(ctx, node, {"fact", "op", "value"}, msg("rules.what.condition"))
    for key in ("fact", "op"):
        if key not in node:
            ctx.fail("rules.condition_needs", node.line, key=key)
    fact, op = node["fact"], node["op"]
    if not isinstance(fact, str) or fact not in FACTS:
        ctx.fail("rules.unknown_fact", node.line_of("fact"), fact=fact)
    if not isinstance(op, str) or op not in OPS:
        ctx.fail("rules.unknown_operator", node.line_of("op"), op=op, allowed=", ".join(OPS))
    spec = FACTS[fact]
    if op in ("exists", "missing"):
        if "value" in node:
            ctx.fail("rules.operator_takes_no_value", node.line_of("value"), op=op)
        return Leaf(fact, op, None, node.line)
    if "value" not in node:
        ctx.fail("rules.operator_needs_value", node.line, op=op)
    raw, vline = node["value"], node.line_of("value")
    what = msg("rules.what.value_for", name=fact)
    if op in ("in", "not_in"):
        if not isinstance(raw, _Seq) or not raw:
            ctx.fail("rules.operator_needs_list", vline, op=op)
        kind = STR if spec.kind == LIST else spec.kind
        return Leaf(fact, op, tuple(_typed(ctx, kind, v, vline, what, spec.choices) for v in raw), node.line)
    if spec.kind == LIST:
        ctx.fail("rules.fact_is_list", node.line_of("op"), fact=fact)
    if op in ("lt", "le", "gt", "ge"):
        if spec.kind not in (INT, FLOAT):
            ctx.fail("rules.operator_needs_number", node.line_of("op"), op=op, fact=fact, kind=spec.kind)
        number = _typed(ctx, FLOAT, raw, vline, what)
        return Leaf(fact, op, int(number) if isinstance(_num(raw), int) else number, node.line)
    kind = FLOAT if spec.kind == INT and isinstance(_num(raw), float) else spec.kind
    return Leaf(fact, op, _typed(ctx, kind, raw, vline, what, spec.choices), node.line)


# ---------------------------------------------------------------- actions

def _field(ctx: _Ctx, name: Any, line: int, kinds: Sequence[str]) -> str:
    if not isinstance(name, str) or name not in SETUP_FIELDS:
        ctx.fail("rules.unknown_field", line, field=name)
    if SETUP_FIELDS[name] not in kinds:
        ctx.fail("rules.field_kind", line, field=name, kind=SETUP_FIELDS[name], kinds=" / ".join(kinds))
    return name


def _action(ctx: _Ctx, value: Any, line: int) -> Action:
    node = _need_map(ctx, value, line, msg("rules.what.action"))
    if len(node) != 1:
        ctx.fail("rules.action_shape", node.line, allowed=", ".join(ACTIONS))
    kind, params = next(iter(node.items()))
    pline = node.line_of(kind)
    if kind not in ACTIONS:
        ctx.fail("rules.unknown_action", pline, action=kind, allowed=", ".join(ACTIONS))

    if kind in ("enable", "disable"):
        if isinstance(params, _Map):
            _check_keys(ctx, params, {"field"}, kind)
            params = params.get("field")
        return Action(kind, {"field": _field(ctx, params, pline, (BOOL,))}, pline)
    if kind == "keep":
        if not isinstance(params, str) or params not in KEEPABLE:
            ctx.fail("rules.keep_what", pline, allowed=", ".join(KEEPABLE), value=_shown(params))
        return Action(kind, {"invariant": params}, pline)
    if kind == "note":
        text = _text(ctx, params, pline, "note")
        _placeholders(ctx, text, pline)
        return Action(kind, {"text": text}, pline)

    params = _need_map(ctx, params, pline, f"'{kind}'")
    return {"env": _env_action, "set": _set_action, "scale": _scale_action}[kind](ctx, params, pline)


def _env_action(ctx: _Ctx, params: _Map, pline: int) -> Action:
    """`env: {name, value}`: a variable the user exports before the run."""
    _check_keys(ctx, params, {"name", "value"}, "env")
    name, val = params.get("name"), params.get("value")
    if not isinstance(name, str) or not _ENV_RE.fullmatch(name):
        ctx.fail("rules.env_name", params.line, value=_shown(name))
    if name in _ENV_DENIED or name.startswith(_ENV_DENIED_PREFIXES):
        # The user sources these lines into their shell: a rule must not choose what runs there.
        ctx.fail("rules.env_denied", params.line, name=name)
    vline = params.line_of("value") if "value" in params else params.line
    if not isinstance(val, (str, int, float)) or isinstance(val, bool):
        ctx.fail("rules.env_value", vline)
    # Shown as `export NAME=...` (shell-quoted), so any text is safe to paste; an escape byte or a
    # newline would still rewrite the user's terminal or split the line, so those are refused.
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in str(val)):
        ctx.fail("rules.env_value_unsafe", vline, value=_shown(val))
    return Action("env", {"name": name, "value": str(val)}, pline)


def _set_action(ctx: _Ctx, params: _Map, pline: int) -> Action:
    """`set: {field, value}` or `set: {field, from}`: a field set to a value, or to a fact."""
    _check_keys(ctx, params, {"field", "value", "from"}, "set")
    fname = _field(ctx, params.get("field"), params.line_of("field"), (INT, FLOAT, BOOL, STR))
    fkind = SETUP_FIELDS[fname]
    if ("value" in params) == ("from" in params):
        ctx.fail("rules.set_value_or_from", params.line)
    if "from" in params:
        src = params["from"]
        if not isinstance(src, str) or src not in FACTS:
            ctx.fail("rules.unknown_fact", params.line_of("from"), fact=src)
        skind = FACTS[src].kind
        if skind != fkind and not (skind in (INT, FLOAT) and fkind in (INT, FLOAT)):
            ctx.fail("rules.from_kind", params.line_of("from"), fact=src, fact_kind=skind, field=fname,
                     field_kind=fkind)
        return Action("set", {"field": fname, "from": src}, pline)
    raw = params["value"]
    vline = params.line_of("value")
    if raw is None:
        if fname not in _NULLABLE:
            ctx.fail("rules.field_not_null", vline, field=fname)
        return Action("set", {"field": fname, "value": None}, pline)
    what = msg("rules.what.value_for", name=fname)
    val = _typed(ctx, fkind, raw, vline, what, FIELD_CHOICES.get(fname, ()))
    if fname in INT_CHOICES and val not in INT_CHOICES[fname]:
        ctx.fail("rules.not_a_choice", vline, what=what, choices=", ".join(map(str, INT_CHOICES[fname])),
                 value=val)
    if fname in FIELD_RANGES:          # micro-batch 0 or -4 is refused here, with the line
        low, high = FIELD_RANGES[fname]
        val = _ranged(ctx, val, vline, what, minimum=low, maximum=high, integer=True)
    return Action("set", {"field": fname, "value": val}, pline)


def _scale_action(ctx: _Ctx, params: _Map, pline: int) -> Action:
    """`scale: {field, factor, rounding, min, max}`: a numeric field multiplied."""
    _check_keys(ctx, params, {"field", "factor", "rounding", "min", "max"}, "scale")
    fname = _field(ctx, params.get("field"), params.line_of("field"), (INT, FLOAT))
    if fname in INT_CHOICES:
        ctx.fail("rules.scale_choices", params.line_of("field"), field=fname,
                 choices=", ".join(map(str, INT_CHOICES[fname])))
    if "factor" not in params:
        ctx.fail("rules.scale_needs_factor", params.line)
    # Above 0 (a factor of 0 or below is never a remedy) and finite: `factor: .inf` stops here.
    factor = _ranged(ctx, params["factor"], params.line_of("factor"), "factor",
                     minimum=1e-6, maximum=FACTOR_MAX)
    rounding = params.get("rounding", "floor" if SETUP_FIELDS[fname] == INT else "none")
    if not isinstance(rounding, str) or rounding not in ROUNDINGS:
        ctx.fail("rules.unknown_rounding", params.line_of("rounding"), rounding=rounding,
                 allowed=", ".join(ROUNDINGS))
    limits: tuple[int | None, int | None] = FIELD_RANGES.get(fname, (None, None))
    bounds = {b: _ranged(ctx, params[b], params.line_of(b), b, minimum=limits[0], maximum=limits[1])
              for b in ("min", "max") if b in params}
    if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
        ctx.fail("rules.min_above_max", params.line_of("min"))
    return Action("scale", {"field": fname, "factor": factor, "rounding": rounding, **bounds}, pline)


# ---------------------------------------------------------------- rules

@record(frozen=False)
class _Entry:
    """One rule entry as read, before the ladder is put in order."""

    id: str
    file: str
    line: int
    rule: Rule | None = None                 # None for a position entry
    order: float | None = None
    before: str | None = None
    after: str | None = None
    enabled: bool = True
    given: set = field(default_factory=set)  # which position keys the entry gave
    where: tuple | None = None               # (file, line) of the entry that gave the position, when moved


def _costs(ctx: _Ctx, value: Any, line: int) -> tuple[Cost, ...]:
    if not isinstance(value, _Seq) or not value:
        ctx.fail("rules.costs_list", line)
    out = []
    for i, item in enumerate(value):
        node = _need_map(ctx, item, value.item_line[i], msg("rules.what.cost"))
        _check_keys(ctx, node, {"kind", "size", "text"}, msg("rules.what.cost"))
        kind = node.get("kind")
        if not isinstance(kind, str) or kind not in COST_KINDS:
            ctx.fail("rules.cost_kind", node.line_of("kind"), allowed=", ".join(COST_KINDS), value=_shown(kind))
        size = node.get("size", "small" if kind == "none" else "medium")
        if not isinstance(size, str) or size not in COST_SIZES:
            ctx.fail("rules.cost_size", node.line_of("size"), allowed=", ".join(COST_SIZES), value=_shown(size))
        if "text" not in node:
            ctx.fail("rules.cost_text", node.line)
        out.append(Cost(kind, size, _text(ctx, node["text"], node.line_of("text"), msg("rules.what.cost_text"))))
    return tuple(out)


def _position(ctx: _Ctx, node: _Map, rid: str) -> _Entry:
    """The entry with its ladder position (one of order, before, after) and whether it is enabled."""
    entry = _Entry(id=rid, file=ctx.path, line=node.line, given={k for k in ("order", "before", "after") if k in node})
    if "order" in node:
        entry.order = _typed(ctx, FLOAT, node["order"], node.line_of("order"), "order")
    for key in ("before", "after"):
        if key in node:
            if not isinstance(node[key], str):
                ctx.fail("rules.position_names", node.line_of(key), key=key)
            setattr(entry, key, node[key])
    if len(entry.given) > 1:
        ctx.fail("rules.one_position", node.line)
    if "enabled" in node:
        entry.enabled = _typed(ctx, BOOL, node["enabled"], node.line_of("enabled"), "enabled")
    return entry


def _repeat(ctx: _Ctx, node: _Map) -> int:
    """How many times the rule may fire: `true` is while it helps (bounded), a number up to REPEAT_MAX."""
    repeat = node.get("repeat", 1)
    if repeat is True:
        return REPEAT_UNBOUNDED
    if repeat is False:
        return 1
    return _ranged(ctx, repeat, node.line_of("repeat"), "repeat", minimum=1, maximum=REPEAT_MAX, integer=True)


def _frameworks(ctx: _Ctx, node: Any, key: str) -> tuple[str, ...]:
    """`frameworks` / `skip_frameworks`: the frameworks a rule is for, or is not for (names of facts.Framework)."""
    value = node.get(key, ())
    allowed = get_args(Framework)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v in allowed for v in value):
        ctx.fail("rules.frameworks", node.line_of(key), key=key, allowed=", ".join(allowed), value=_shown(value))
    return tuple(value)


def _entry(ctx: _Ctx, node: Any, line: int) -> _Entry:
    node = _need_map(ctx, node, line, msg("rules.what.rule"))
    _check_keys(ctx, node, _FULL_KEYS, msg("rules.what.rule"))
    rid = node.get("id")
    if not isinstance(rid, str) or not _ID_RE.fullmatch(rid):
        ctx.fail("rules.needs_id", node.line_of("id"), value=_shown(rid))
    entry = _position(ctx, node, rid)
    if set(node) <= _POSITION_KEYS:
        return entry                                  # a position entry: moves or disables a known rule
    for key in _REQUIRED_KEYS:
        if key not in node:
            ctx.fail("rules.rule_needs", node.line, id=rid, key=key)
    slug = node["slug"]
    if not isinstance(slug, str) or not _SLUG_RE.fullmatch(slug):
        ctx.fail("rules.slug_shape", node.line_of("slug"), value=_shown(slug))
    if not isinstance(node["category"], str) or node["category"] not in CATEGORIES:
        ctx.fail("rules.category", node.line_of("category"), allowed=", ".join(CATEGORIES),
                 value=_shown(node["category"]))
    if not isinstance(node["applicability"], str) or node["applicability"] not in APPLICABILITY:
        ctx.fail("rules.applicability", node.line_of("applicability"), value=_shown(node["applicability"]))
    actions = node["actions"]
    if not isinstance(actions, _Seq) or not actions:
        ctx.fail("rules.actions_list", node.line_of("actions"))
    repeat = _repeat(ctx, node)
    refs = node.get("references", ())
    if not isinstance(refs, (list, tuple)) or not all(isinstance(r, str) for r in refs):
        ctx.fail("rules.references", node.line_of("references"))
    frameworks, skip_frameworks = _frameworks(ctx, node, "frameworks"), _frameworks(ctx, node, "skip_frameworks")
    entry.rule = Rule(
        id=rid, slug=slug, frameworks=frameworks, skip_frameworks=skip_frameworks,
        title=_text(ctx, node["title"], node.line_of("title"), "title"),
        why=_text(ctx, node["why"], node.line_of("why"), "why"),
        category=node["category"],
        costs=_costs(ctx, node["costs"], node.line_of("costs")),
        applicability=node["applicability"],
        actions=tuple(_action(ctx, a, actions.item_line[i]) for i, a in enumerate(actions)),
        when=_condition(ctx, node["when"], node.line_of("when")) if "when" in node else None,
        repeat=repeat,
        check_saving=_typed(ctx, BOOL, node.get("check_saving", True), node.line_of("check_saving"), "check_saving"),
        skip_why=_text(ctx, node["skip_why"], node.line_of("skip_why"), "skip_why") if "skip_why" in node else None,
        references=tuple(refs), file=ctx.path, line=node.line)
    return entry


def read_rule_file(path: Path) -> list[_Entry]:
    """Validate one rule file; every problem is an InputError naming the file and line."""
    ctx = _Ctx(str(path))
    doc = _load_yaml(path)
    if not isinstance(doc, _Map):
        ctx.fail("rules.not_a_rule_file", getattr(doc, "line", 1))
    _check_keys(ctx, doc, {"schema_version", "rules"}, msg("rules.what.rule_file"))
    # The version is checked before anything else, so a newer file fails on the version, not a feature.
    version = doc.get("schema_version", SCHEMA_VERSION)
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        ctx.fail("rules.schema_version", doc.line_of("schema_version"), version=_shown(version),
                 supported=SCHEMA_VERSION)
    rules = doc.get("rules")
    if not isinstance(rules, _Seq):
        ctx.fail("rules.rules_not_list", doc.line_of("rules") if "rules" in doc else doc.line)
    if len(rules) > MAX_RULES:
        ctx.fail("rules.too_many", rules.item_line[MAX_RULES], limit=MAX_RULES)
    entries = [_entry(ctx, item, rules.item_line[i]) for i, item in enumerate(rules)]
    seen: dict[str, int] = {}
    for e in entries:
        if e.id in seen:
            ctx.fail("rules.id_twice", e.line, id=e.id, line=seen[e.id])
        seen[e.id] = e.line
    return entries


def _rule_files(where: Path) -> list[Path]:
    if where.is_dir():
        # Only regular files: a FIFO or a device named *.yaml in the folder is never opened.
        return sorted(p for p in where.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
    if not where.exists():
        raise InputError(msg("rules.dir_not_found"), str(where))
    return [where]      # named on its own (--rules FILE): read within the size cap, whatever it is


def build_book(sources: Sequence[Path]) -> RuleBook:
    """Merge rule files (later sources override earlier ones by id) and put the ladder in order."""
    slots: dict[str, _Entry] = {}            # id -> merged entry, in first-seen order
    for source in sources:
        for path in _rule_files(source):
            for entry in read_rule_file(path):
                old = slots.get(entry.id)
                if entry.rule is None:
                    if old is None:
                        raise InputError(msg("rules.nothing_to_move", id=entry.id, keys=", ".join(_REQUIRED_KEYS)),
                                         entry.file, entry.line)
                    if entry.given:
                        _move(old, entry)
                    old.enabled = entry.enabled
                    continue
                if old is not None:
                    if not entry.given:                      # a replacement keeps its place
                        _move(entry, old)
                    slots.pop(entry.id)
                slots[entry.id] = entry
    live = [e for e in slots.values() if e.enabled]
    if len(live) > MAX_RULES:
        extra = live[MAX_RULES]
        raise InputError(msg("rules.too_many", limit=MAX_RULES), extra.file, extra.line)
    firings = 0
    for entry in live:
        assert entry.rule is not None
        firings += entry.rule.repeat
        if firings > MAX_FIRINGS:
            raise InputError(msg("rules.too_many_firings", limit=MAX_FIRINGS), entry.file, entry.line)
    ordered = _order(live)
    slugs: dict[str, str] = {}
    rules = []
    for pos, entry in enumerate(ordered, 1):
        rule = entry.rule
        assert rule is not None
        if rule.slug in slugs:
            raise InputError(msg("rules.slug_taken", slug=rule.slug, other=slugs[rule.slug]), rule.file, rule.line)
        slugs[rule.slug] = rule.id
        rules.append(replace(rule, position=pos))
    return RuleBook(tuple(rules), tuple(str(s) for s in sources))


def _move(target: _Entry, source: _Entry) -> None:
    target.order, target.before, target.after = source.order, source.before, source.after
    target.given = set(source.given)
    # A bad before/after is reported where it was written: the user's file, not the bundled rule's.
    target.where = source.where or (source.file, source.line)


def _order(entries: list[_Entry]) -> list[_Entry]:
    """Numbered rules by order (ties and unnumbered ones in load order, unnumbered last), then
    before/after rules placed next to the rule they name."""
    anchored = [e for e in entries if e.before or e.after]
    numbered = [e for e in entries if not (e.before or e.after)]
    tail = max((e.order for e in numbered if e.order is not None), default=0.0)
    keyed = sorted(enumerate(numbered), key=lambda ie: (ie[1].order if ie[1].order is not None else tail + 1, ie[0]))
    ladder = [e for _, e in keyed]
    pending = list(anchored)
    while pending:
        progressed = False
        for entry in list(pending):
            name = entry.before or entry.after or ""
            idx = next((i for i, e in enumerate(ladder)
                        if e.id.lower() == name.lower() or (e.rule and e.rule.slug == name)), None)
            if idx is None:
                continue
            ladder.insert(idx if entry.before else idx + 1, entry)
            pending.remove(entry)
            progressed = True
        if not progressed:
            bad = pending[0]
            name = bad.before or bad.after or ""
            known = {e.id for e in entries} | {e.rule.slug for e in entries if e.rule}
            code = "rules.anchor_unknown" if name not in known else "rules.anchor_cycle"
            raise InputError(msg(code, id=bad.id, name=name), *(bad.where or (bad.file, bad.line)))
    return ladder
