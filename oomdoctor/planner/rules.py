"""Rule files: the data model of a rule, and the strict loader that validates rule YAML.

A rule file holds ``schema_version: 1`` and a ``rules:`` list. A rule entry is either a full rule
(id, slug, title, why, category, costs, applicability, actions, optional when/repeat/...) or a
*position entry* that only moves or disables a rule loaded earlier (keys id, order, before, after,
enabled). Ladder position: ``order`` (a number; the default rules use 10, 20, ...), or
``before:``/``after:`` another rule's id or slug. A later full rule with the same id replaces the
earlier one and keeps its position unless it gives its own.

Nothing in a rule runs code: conditions are a closed operator table over registered facts, actions
a closed table of typed functions, and note texts only substitute ``${fact}`` names checked here.
"""
from __future__ import annotations

import re
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence, Union

from oomdoctor.errors import InputError
from oomdoctor.facts import Text
from oomdoctor.planner.registry import BOOL, FACTS, FIELD_CHOICES, FLOAT, INT, LIST, SETUP_FIELDS, STR
from oomdoctor.records import record

SCHEMA_VERSION = 1
LANGS = ("en", "zh")
CATEGORIES = ("activations", "model states", "logits", "runtime", "host")
APPLICABILITY = ("safe", "needs-consent")
COST_KINDS = ("throughput", "quality", "none")
COST_SIZES = ("small", "medium", "large")
OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "exists", "missing")
ROUNDINGS = ("floor", "ceil", "nearest", "pow2_floor", "pow2_ceil", "none")
ACTIONS = ("set", "scale", "enable", "disable", "env", "note", "keep")
KEEPABLE = ("effective_batch",)
REPEAT_UNBOUNDED = 16          # `repeat: true` = while it helps, but never more than this

_FULL_KEYS = {"id", "slug", "title", "why", "category", "costs", "applicability", "when", "actions",
              "repeat", "order", "before", "after", "enabled", "check_saving", "skip_why", "references"}
_REQUIRED_KEYS = ("id", "slug", "title", "why", "category", "costs", "applicability", "actions")
_POSITION_KEYS = {"id", "order", "before", "after", "enabled"}
_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_ENV_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
PLACEHOLDER_RE = re.compile(r"\$\{([A-Za-z0-9_.]+)\}")
# Optional setup fields (default None) may be set to null by an action.
_NULLABLE = {"lora_alpha", "quant_bits", "load_dtype", "fsdp", "eval_accum"}


# ---------------------------------------------------------------- data model

@record
class Cost:
    """What a rule costs: throughput or quality, and how much."""

    kind: str                 # throughput | quality | none
    size: str                 # small | medium | large
    text: Text


@record
class Leaf:
    """A condition on one fact: `{fact, op, value}`."""

    fact: str
    op: str
    value: Any = None
    line: int | None = None


@record
class AllOf:
    """A condition that holds when every item holds."""

    items: tuple["Condition", ...]


@record
class AnyOf:
    """A condition that holds when some item holds."""

    items: tuple["Condition", ...]


@record
class NotOf:
    """A condition that holds when its item does not."""

    item: "Condition"


Condition = Union[Leaf, AllOf, AnyOf, NotOf]


@record
class Action:
    """One typed change a rule makes (set, scale, enable, ...)."""

    kind: str                         # one of ACTIONS
    params: Mapping[str, Any]
    line: int | None = None


@record
class Rule:
    """One validated rung of the ladder, as a rule file describes it."""

    id: str
    slug: str
    title: Text
    why: Text
    category: str
    costs: tuple[Cost, ...]
    applicability: str
    actions: tuple[Action, ...]
    when: Condition | None = None
    repeat: int = 1                   # how many times it may fire in one plan (while it helps)
    check_saving: bool = True         # False: apply even when the estimate cannot see the saving
    skip_why: Text | None = None      # said when the condition is false
    references: tuple[str, ...] = ()
    file: str = ""
    line: int | None = None
    position: int = 0                 # 1-based ladder position, set when the book is built

    @property
    def cost_kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.kind for c in self.costs))

    @property
    def changes_quality(self) -> bool:
        return any(c.kind == "quality" for c in self.costs)

    def text(self, field_name: str, lang: str = "en") -> str:
        """``title``, ``why``, ``skip_why`` or ``costs`` (the cost explanations joined) in a language."""
        if field_name == "costs":
            return " ".join(c.text.get(lang) for c in self.costs)
        if field_name in ("title", "why", "skip_why"):
            value = getattr(self, field_name)
            return value.get(lang) if value is not None else ""
        raise KeyError(f"rule {self.id} has no text field {field_name!r}")

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@record
class RuleBook:
    """The rules in ladder order."""

    rules: tuple[Rule, ...] = ()
    sources: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, index: int) -> Rule:
        return self.rules[index]

    def get(self, name: str) -> Rule | None:
        """A rule by id (any case) or slug."""
        for rule in self.rules:
            if rule.id.lower() == name.lower() or rule.slug == name:
                return rule
        return None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.rules)


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
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read rule file: {exc}", str(path)) from None
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"YAML syntax error: {problem}", str(path), mark.line + 1 if mark else None) from None
    if root is None:
        raise InputError("empty rule file (expected 'rules:')", str(path), 1)
    constructor = yaml.constructor.SafeConstructor()
    return _convert(root, str(path), constructor)


def _convert(node: Any, path: str, constructor: Any) -> Any:
    import yaml

    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out = _Map()
        out.line, out.key_line = line, {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError("a key must be a plain word", path, key_node.start_mark.line + 1)
            key = str(constructor.construct_object(key_node))
            if key in out:
                raise InputError(f"duplicate key '{key}'", path, key_node.start_mark.line + 1)
            out[key] = _convert(value_node, path, constructor)
            out.key_line[key] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = _Seq(_convert(n, path, constructor) for n in node.value)
        seq.line, seq.item_line = line, [n.start_mark.line + 1 for n in node.value]
        return seq
    try:
        return constructor.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        raise InputError(f"bad value: {exc}", path, line) from None


# ---------------------------------------------------------------- validation helpers

class _Ctx:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, message: str, line: int | None) -> None:
        raise InputError(message, self.path, line)


def _num(value: Any) -> float | None:
    """A number, also from a string: PyYAML reads 1e-4 as a string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return None
    return None


def _typed(ctx: _Ctx, kind: str, value: Any, line: int, what: str, choices: Sequence[str] = ()) -> Any:
    if kind == BOOL:
        if not isinstance(value, bool):
            ctx.fail(f"{what} must be true or false, not {value!r}", line)
        return value
    if kind in (INT, FLOAT):
        number = _num(value)
        if number is None:
            ctx.fail(f"{what} must be a number, not {value!r}", line)
        if kind == INT and isinstance(number, float) and not number.is_integer():
            ctx.fail(f"{what} must be a whole number, not {value!r}", line)
        return int(number) if kind == INT else float(number)
    if kind in (STR, LIST):
        if not isinstance(value, str):
            ctx.fail(f"{what} must be a string, not {value!r}", line)
        if choices and value not in choices:
            ctx.fail(f"{what} must be one of {', '.join(choices)}; got '{value}'", line)
        return value
    ctx.fail(f"{what}: unsupported kind {kind}", line)
    return None


def _check_keys(ctx: _Ctx, mapping: _Map, allowed: set[str] | Sequence[str], what: str) -> None:
    for key in mapping:
        if key not in allowed:
            ctx.fail(f"unknown key '{key}' in {what} (allowed: {', '.join(sorted(allowed))})",
                     mapping.line_of(key))


def _need_map(ctx: _Ctx, value: Any, line: int, what: str) -> _Map:
    if not isinstance(value, _Map):
        ctx.fail(f"{what} must be a mapping", line)
    return value


def _text(ctx: _Ctx, value: Any, line: int, what: str) -> Text:
    if isinstance(value, str):
        if not value.strip():
            ctx.fail(f"{what} is empty", line)
        return Text(en=value.strip())
    if isinstance(value, _Map):
        _check_keys(ctx, value, LANGS, what)
        if "en" not in value:
            ctx.fail(f"{what} needs an 'en' text", value.line)
        for lang in value:
            if not isinstance(value[lang], str) or not value[lang].strip():
                ctx.fail(f"{what}.{lang} must be a non-empty string", value.line_of(lang))
        return Text(en=value["en"].strip(), zh=value["zh"].strip() if "zh" in value else None)
    ctx.fail(f"{what} must be a string or a mapping {{en: ..., zh: ...}}", line)
    raise AssertionError


def _placeholders(ctx: _Ctx, text: Text, line: int) -> None:
    for lang_text in (text.en, text.zh or ""):
        for name in PLACEHOLDER_RE.findall(lang_text):
            if name not in FACTS:
                ctx.fail(f"unknown fact '${{{name}}}' in note text", line)


# ---------------------------------------------------------------- conditions

def _condition(ctx: _Ctx, value: Any, line: int) -> Condition:
    node = _need_map(ctx, value, line, "a condition")
    combinators = [k for k in ("all", "any", "not") if k in node]
    if combinators:
        if len(node) != 1:
            ctx.fail("a condition is one of all / any / not, or a {fact, op, value} leaf", node.line)
        key = combinators[0]
        inner = node[key]
        if key == "not":
            return NotOf(_condition(ctx, inner, node.line_of(key)))
        if not isinstance(inner, _Seq) or not inner:
            ctx.fail(f"'{key}' needs a non-empty list of conditions", node.line_of(key))
        return (AllOf if key == "all" else AnyOf)(
            tuple(_condition(ctx, item, inner.item_line[i]) for i, item in enumerate(inner)))
    _check_keys(ctx, node, {"fact", "op", "value"}, "a condition")
    for key in ("fact", "op"):
        if key not in node:
            ctx.fail(f"condition needs '{key}'", node.line)
    fact, op = node["fact"], node["op"]
    if fact not in FACTS:
        ctx.fail(f"unknown fact '{fact}'", node.line_of("fact"))
    if op not in OPS:
        ctx.fail(f"unknown operator '{op}' (allowed: {', '.join(OPS)})", node.line_of("op"))
    spec = FACTS[fact]
    if op in ("exists", "missing"):
        if "value" in node:
            ctx.fail(f"operator '{op}' takes no value", node.line_of("value"))
        return Leaf(fact, op, None, node.line)
    if "value" not in node:
        ctx.fail(f"operator '{op}' needs a value", node.line)
    raw, vline = node["value"], node.line_of("value")
    what = f"value for {fact}"
    if op in ("in", "not_in"):
        if not isinstance(raw, _Seq) or not raw:
            ctx.fail(f"operator '{op}' needs a non-empty list", vline)
        kind = STR if spec.kind == LIST else spec.kind
        return Leaf(fact, op, tuple(_typed(ctx, kind, v, vline, what, spec.choices) for v in raw), node.line)
    if spec.kind == LIST:
        ctx.fail(f"fact '{fact}' is a list: use in, not_in, exists or missing", node.line_of("op"))
    if op in ("lt", "le", "gt", "ge"):
        if spec.kind not in (INT, FLOAT):
            ctx.fail(f"operator '{op}' needs a numeric fact; '{fact}' is {spec.kind}", node.line_of("op"))
        number = _typed(ctx, FLOAT, raw, vline, what)
        return Leaf(fact, op, int(number) if isinstance(_num(raw), int) else number, node.line)
    kind = FLOAT if spec.kind == INT and isinstance(_num(raw), float) else spec.kind
    return Leaf(fact, op, _typed(ctx, kind, raw, vline, what, spec.choices), node.line)


# ---------------------------------------------------------------- actions

def _field(ctx: _Ctx, name: Any, line: int, kinds: Sequence[str]) -> str:
    if name not in SETUP_FIELDS:
        ctx.fail(f"unknown setup field '{name}'", line)
    if SETUP_FIELDS[name] not in kinds:
        ctx.fail(f"field '{name}' is {SETUP_FIELDS[name]}, this action needs {' or '.join(kinds)}", line)
    return name


def _action(ctx: _Ctx, value: Any, line: int) -> Action:
    node = _need_map(ctx, value, line, "an action")
    if len(node) != 1:
        ctx.fail(f"an action is a mapping with one key ({', '.join(ACTIONS)})", node.line)
    kind, params = next(iter(node.items()))
    pline = node.line_of(kind)
    if kind not in ACTIONS:
        ctx.fail(f"unknown action '{kind}' (allowed: {', '.join(ACTIONS)})", pline)

    if kind in ("enable", "disable"):
        if isinstance(params, _Map):
            _check_keys(ctx, params, {"field"}, kind)
            params = params.get("field")
        return Action(kind, {"field": _field(ctx, params, pline, (BOOL,))}, pline)
    if kind == "keep":
        if params not in KEEPABLE:
            ctx.fail(f"keep: can only keep {', '.join(KEEPABLE)}; got {params!r}", pline)
        return Action(kind, {"invariant": params}, pline)
    if kind == "note":
        text = _text(ctx, params, pline, "note")
        _placeholders(ctx, text, pline)
        return Action(kind, {"text": text}, pline)

    params = _need_map(ctx, params, pline, f"'{kind}'")
    if kind == "env":
        _check_keys(ctx, params, {"name", "value"}, "env")
        name, val = params.get("name"), params.get("value")
        if not isinstance(name, str) or not _ENV_RE.match(name):
            ctx.fail(f"env name must be an UPPER_CASE variable name; got {name!r}", params.line)
        if not isinstance(val, (str, int, float)) or isinstance(val, bool):
            ctx.fail("env value must be a string", params.line_of("value") if "value" in params else params.line)
        return Action(kind, {"name": name, "value": str(val)}, pline)
    if kind == "set":
        _check_keys(ctx, params, {"field", "value", "from"}, "set")
        fname = _field(ctx, params.get("field"), params.line_of("field"), (INT, FLOAT, BOOL, STR))
        fkind = SETUP_FIELDS[fname]
        if ("value" in params) == ("from" in params):
            ctx.fail("set needs exactly one of 'value' or 'from'", params.line)
        if "from" in params:
            src = params["from"]
            if src not in FACTS:
                ctx.fail(f"unknown fact '{src}'", params.line_of("from"))
            skind = FACTS[src].kind
            if skind != fkind and not (skind in (INT, FLOAT) and fkind in (INT, FLOAT)):
                ctx.fail(f"fact '{src}' is {skind}; field '{fname}' is {fkind}", params.line_of("from"))
            return Action(kind, {"field": fname, "from": src}, pline)
        raw = params["value"]
        if raw is None:
            if fname not in _NULLABLE:
                ctx.fail(f"field '{fname}' cannot be null", params.line_of("value"))
            return Action(kind, {"field": fname, "value": None}, pline)
        val = _typed(ctx, fkind, raw, params.line_of("value"), f"value for {fname}", FIELD_CHOICES.get(fname, ()))
        return Action(kind, {"field": fname, "value": val}, pline)
    # scale
    _check_keys(ctx, params, {"field", "factor", "rounding", "min", "max"}, "scale")
    fname = _field(ctx, params.get("field"), params.line_of("field"), (INT, FLOAT))
    if "factor" not in params:
        ctx.fail("scale needs 'factor'", params.line)
    factor = _typed(ctx, FLOAT, params["factor"], params.line_of("factor"), "factor")
    if factor <= 0:
        ctx.fail("factor must be above 0", params.line_of("factor"))
    rounding = params.get("rounding", "floor" if SETUP_FIELDS[fname] == INT else "none")
    if rounding not in ROUNDINGS:
        ctx.fail(f"unknown rounding '{rounding}' (allowed: {', '.join(ROUNDINGS)})", params.line_of("rounding"))
    bounds = {b: _typed(ctx, FLOAT, params[b], params.line_of(b), b) for b in ("min", "max") if b in params}
    if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
        ctx.fail("min is above max", params.line_of("min"))
    return Action(kind, {"field": fname, "factor": factor, "rounding": rounding, **bounds}, pline)


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


def _costs(ctx: _Ctx, value: Any, line: int) -> tuple[Cost, ...]:
    if not isinstance(value, _Seq) or not value:
        ctx.fail("costs must be a non-empty list", line)
    out = []
    for i, item in enumerate(value):
        node = _need_map(ctx, item, value.item_line[i], "a cost")
        _check_keys(ctx, node, {"kind", "size", "text"}, "a cost")
        kind = node.get("kind")
        if kind not in COST_KINDS:
            ctx.fail(f"cost kind must be one of {', '.join(COST_KINDS)}; got {kind!r}", node.line_of("kind"))
        size = node.get("size", "small" if kind == "none" else "medium")
        if size not in COST_SIZES:
            ctx.fail(f"cost size must be one of {', '.join(COST_SIZES)}; got {size!r}", node.line_of("size"))
        if "text" not in node:
            ctx.fail("a cost needs a 'text' explaining it", node.line)
        out.append(Cost(kind, size, _text(ctx, node["text"], node.line_of("text"), "cost text")))
    return tuple(out)


def _entry(ctx: _Ctx, node: Any, line: int) -> _Entry:
    node = _need_map(ctx, node, line, "a rule")
    _check_keys(ctx, node, _FULL_KEYS, "a rule")
    rid = node.get("id")
    if not isinstance(rid, str) or not _ID_RE.match(rid):
        ctx.fail(f"rule needs an 'id' (letters, digits, - or _); got {rid!r}", node.line_of("id"))
    entry = _Entry(id=rid, file=ctx.path, line=node.line, given={k for k in ("order", "before", "after") if k in node})
    if "order" in node:
        entry.order = _typed(ctx, FLOAT, node["order"], node.line_of("order"), "order")
    for key in ("before", "after"):
        if key in node:
            if not isinstance(node[key], str):
                ctx.fail(f"'{key}' must name a rule id or slug", node.line_of(key))
            setattr(entry, key, node[key])
    if len(entry.given) > 1:
        ctx.fail("give only one of order, before, after", node.line)
    if "enabled" in node:
        entry.enabled = _typed(ctx, BOOL, node["enabled"], node.line_of("enabled"), "enabled")
    if set(node) <= _POSITION_KEYS:
        return entry                                  # a position entry: moves or disables a known rule
    for key in _REQUIRED_KEYS:
        if key not in node:
            ctx.fail(f"rule {rid} needs '{key}'", node.line)
    slug = node["slug"]
    if not isinstance(slug, str) or not _SLUG_RE.match(slug):
        ctx.fail(f"slug must be kebab-case; got {slug!r}", node.line_of("slug"))
    if node["category"] not in CATEGORIES:
        ctx.fail(f"category must be one of {', '.join(CATEGORIES)}; got {node['category']!r}", node.line_of("category"))
    if node["applicability"] not in APPLICABILITY:
        ctx.fail(f"applicability must be safe or needs-consent; got {node['applicability']!r}",
                 node.line_of("applicability"))
    actions = node["actions"]
    if not isinstance(actions, _Seq) or not actions:
        ctx.fail("actions must be a non-empty list", node.line_of("actions"))
    repeat = node.get("repeat", 1)
    if repeat is True:
        repeat = REPEAT_UNBOUNDED
    elif repeat is False:
        repeat = 1
    else:
        repeat = _typed(ctx, INT, repeat, node.line_of("repeat"), "repeat")
        if repeat < 1:
            ctx.fail("repeat must be at least 1", node.line_of("repeat"))
    refs = node.get("references", ())
    if not isinstance(refs, (list, tuple)) or not all(isinstance(r, str) for r in refs):
        ctx.fail("references must be a list of strings", node.line_of("references"))
    entry.rule = Rule(
        id=rid, slug=slug,
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
        ctx.fail("a rule file is a mapping with 'rules:'", getattr(doc, "line", 1))
    _check_keys(ctx, doc, {"schema_version", "rules"}, "a rule file")
    # The version is checked before anything else, so a newer file fails on the version, not a feature.
    if "schema_version" in doc and doc["schema_version"] != SCHEMA_VERSION:
        ctx.fail(f"schema_version {doc['schema_version']!r} is not supported (this oomdoctor reads {SCHEMA_VERSION})",
                 doc.line_of("schema_version"))
    rules = doc.get("rules")
    if not isinstance(rules, _Seq):
        ctx.fail("'rules' must be a list", doc.line_of("rules") if "rules" in doc else doc.line)
    entries = [_entry(ctx, item, rules.item_line[i]) for i, item in enumerate(rules)]
    seen: dict[str, int] = {}
    for e in entries:
        if e.id in seen:
            ctx.fail(f"rule id {e.id} appears twice in this file (first at line {seen[e.id]})", e.line)
        seen[e.id] = e.line
    return entries


def _rule_files(where: Path) -> list[Path]:
    if where.is_file():
        return [where]
    if not where.is_dir():
        raise InputError("rules directory not found", str(where))
    return sorted(p for p in where.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def build_book(sources: Sequence[Path]) -> RuleBook:
    """Merge rule files (later sources override earlier ones by id) and put the ladder in order."""
    slots: dict[str, _Entry] = {}            # id -> merged entry, in first-seen order
    for source in sources:
        for path in _rule_files(source):
            for entry in read_rule_file(path):
                old = slots.get(entry.id)
                if entry.rule is None:
                    if old is None:
                        raise InputError(f"no rule {entry.id} to move or disable; a new rule needs "
                                         f"{', '.join(_REQUIRED_KEYS)}", entry.file, entry.line)
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
    ordered = _order(live)
    slugs: dict[str, str] = {}
    rules = []
    for pos, entry in enumerate(ordered, 1):
        rule = entry.rule
        assert rule is not None
        if rule.slug in slugs:
            raise InputError(f"slug '{rule.slug}' is used by rule {slugs[rule.slug]} too", rule.file, rule.line)
        slugs[rule.slug] = rule.id
        rules.append(replace(rule, position=pos))
    return RuleBook(tuple(rules), tuple(str(s) for s in sources))


def _move(target: _Entry, source: _Entry) -> None:
    target.order, target.before, target.after = source.order, source.before, source.after
    target.given = set(source.given)


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
            name = entry.before or entry.after
            idx = next((i for i, e in enumerate(ladder)
                        if e.id.lower() == name.lower() or (e.rule and e.rule.slug == name)), None)
            if idx is None:
                continue
            ladder.insert(idx if entry.before else idx + 1, entry)
            pending.remove(entry)
            progressed = True
        if not progressed:
            bad = pending[0]
            name = bad.before or bad.after
            known = {e.id for e in entries} | {e.rule.slug for e in entries if e.rule}
            why = "is not a loaded rule" if name not in known else "forms a cycle of before/after"
            raise InputError(f"rule {bad.id}: '{name}' {why}", bad.file, bad.line)
    return ladder
