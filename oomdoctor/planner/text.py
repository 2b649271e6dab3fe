"""``--list-rules`` and ``--explain RULE``, as text (English or Simplified Chinese) and as JSON."""
from __future__ import annotations

from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import msg
from oomdoctor.planner.rules import AllOf, AnyOf, Condition, Leaf, NotOf, Rule, RuleBook
from oomdoctor.words import say

# Conditions are shown in the rule file's own terms (fact names, operators), the same in every language.
_OPS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "in": "in", "not_in": "not_in",
        "exists": "exists", "missing": "missing"}


def _value(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def condition_text(cond: Condition | None) -> str:
    """The condition in the rule file's own terms (fact names, operators), the same in every language."""
    if cond is None:
        return "-"
    if isinstance(cond, AllOf):
        return "all(" + ", ".join(condition_text(c) for c in cond.items) + ")"
    if isinstance(cond, AnyOf):
        return "any(" + ", ".join(condition_text(c) for c in cond.items) + ")"
    if isinstance(cond, NotOf):
        return "not(" + condition_text(cond.item) + ")"
    assert isinstance(cond, Leaf)
    if cond.op in ("exists", "missing"):
        return f"{cond.fact} {_OPS[cond.op]}"
    return f"{cond.fact} {_OPS[cond.op]} {_value(cond.value)}"


def action_text(rule: Rule, lang: str = "en") -> list[str]:
    """Each action as the rule file's syntax reads (`micro_batch x 0.5 (floor, min 1)`); notes in `lang`."""
    out = []
    for action in rule.actions:
        p = action.params
        if action.kind == "set":
            src = p["from"] if "from" in p else _value(p["value"])
            out.append(f"{p['field']} = {src}")
        elif action.kind == "scale":
            bounds = "".join(f", {b} {p[b]:g}" for b in ("min", "max") if b in p)
            out.append(f"{p['field']} x {p['factor']:g} ({p['rounding']}{bounds})")
        elif action.kind in ("enable", "disable"):
            out.append(f"{p['field']} = {'true' if action.kind == 'enable' else 'false'}")
        elif action.kind == "keep":
            out.append(say("plan.rules.keep_batch", lang))
        elif action.kind == "env":
            from oomdoctor.shellsafe import export_line

            out.append(export_line(p["name"], p["value"]))
        elif action.kind == "note":
            out.append(say(p["text"], lang))
    return out


def find_rule(book: RuleBook, name: str) -> Rule:
    """A rule by id or slug; an unknown name is an InputError."""
    found = book.get(str(name))
    if found is None:
        raise InputError(msg("plan.rules.no_such_rule", name=name))
    return found


def explain(book: RuleBook | Rule, name: str | None = None, lang: str = "en") -> str:
    """Everything about one rule, for ``--explain RULE``: ``explain(book, "OOM007", "zh")`` or ``explain(rule)``."""
    rule = book if isinstance(book, Rule) else find_rule(book, str(name))

    def label(key: str) -> str:
        return say(f"plan.rules.{key}", lang)

    lines = [f"{rule.id} {rule.slug}: {say(rule.title, lang)}",
             f"  {label('category')}: {say(f'plan.category.{rule.category}', lang)}    "
             f"{label('applicability')}: {say(f'plan.applicability.{rule.applicability}', lang)}"
             f"    {label('position')}: {rule.position}",
             f"  {label('why')}: {say(rule.why, lang)}",
             f"  {label('costs')}:"]
    for cost in rule.costs:
        size = "" if cost.kind == "none" else f" ({say(f'plan.cost_size.{cost.size}', lang)})"
        lines.append(f"    - {say(f'plan.cost.{cost.kind}', lang)}{size}: {say(cost.text, lang)}")
    if rule.frameworks:
        lines.append(f"  {label('frameworks')}: {', '.join(rule.frameworks)}")
    if rule.skip_frameworks:
        lines.append(f"  {label('skip_frameworks')}: {', '.join(rule.skip_frameworks)}")
    lines.append(f"  {label('when')}: {condition_text(rule.when) if rule.when else label('always')}")
    if rule.skip_why:
        lines.append(f"  {label('skip_why')}: {say(rule.skip_why, lang)}")
    lines.append(f"  {label('actions')}:")
    lines.extend(f"    - {a}" for a in action_text(rule, lang))
    if rule.repeat > 1:
        lines.append(f"  {label('repeat')}: {say('plan.rules.repeat_n', lang, n=rule.repeat)}")
    if not rule.check_saving:
        lines.append(f"  {label('no_saving_check')}")
    for ref in rule.references:
        lines.append(f"  -> {ref}")
    lines.append(f"  {label('source')}: {rule.where}")
    return "\n".join(lines)


def list_rules(book: RuleBook, lang: str = "en") -> str:
    """One line per rule in ladder order, for ``--list-rules``."""
    width = max((len(r.slug) for r in book), default=0)
    lines = [say("plan.rules.header", lang)]
    for rule in book:
        costs = ",".join(say(f"plan.cost.{k}", lang) for k in rule.cost_kinds)
        consent = " *" if rule.applicability == "needs-consent" else ""
        scope = "".join(f"; {say(f'plan.rules.{k}', lang)} {', '.join(v)}"
                        for k, v in (("frameworks", rule.frameworks), ("skip_frameworks", rule.skip_frameworks)) if v)
        lines.append(f"{rule.position:3d}. {rule.id:<7} {rule.slug:<{width}}  {say(rule.title, lang)}"
                     f"  [{say(f'plan.category.{rule.category}', lang)}; {costs}{scope}]{consent}")
    lines.append(say("plan.rules.consent_mark", lang))
    return "\n".join(lines)


def rule_json(rule: Rule, lang: str = "en") -> dict[str, Any]:
    """One rule for ``--list-rules --json`` / ``--explain RULE --json``: stable names, texts in `lang`."""
    return {
        "id": rule.id, "slug": rule.slug, "position": rule.position, "category": rule.category,
        "applicability": rule.applicability, "title": say(rule.title, lang), "why": say(rule.why, lang),
        "costs": [{"kind": c.kind, "size": c.size, "text": say(c.text, lang)} for c in rule.costs],
        "when": condition_text(rule.when) if rule.when else None,
        "skip_why": say(rule.skip_why, lang) if rule.skip_why else None,
        "actions": action_text(rule, lang), "repeat": rule.repeat, "check_saving": rule.check_saving,
        "references": list(rule.references), "file": rule.file, "line": rule.line,
        "frameworks": list(rule.frameworks), "skip_frameworks": list(rule.skip_frameworks),
    }


def rules_json(book: RuleBook, lang: str = "en") -> list[dict[str, Any]]:
    return [rule_json(rule, lang) for rule in book]
