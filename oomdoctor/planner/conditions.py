"""Rule conditions: whether one holds over the gathered facts, why it does not (in words), and ``${fact}``
placeholders filled in a note. Conditions are `all`/`any`/`not` over `{fact, op, value}` leaves
(planner/rules.py); the operators are a closed table.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oomdoctor.facts import Msg, msg
from oomdoctor.planner import registry
from oomdoctor.planner.rules import PLACEHOLDER_RE, AllOf, AnyOf, Condition, Leaf, NotOf


def holds(cond: Condition | None, facts: Mapping[str, Any]) -> bool:
    if cond is None:
        return True
    if isinstance(cond, AllOf):
        return all(holds(c, facts) for c in cond.items)
    if isinstance(cond, AnyOf):
        return any(holds(c, facts) for c in cond.items)
    if isinstance(cond, NotOf):
        return not holds(cond.item, facts)
    return _leaf_holds(cond, facts)


def _leaf_holds(leaf: Leaf, facts: Mapping[str, Any]) -> bool:
    if leaf.fact not in facts:
        # An unknown fact fails every comparison; only "missing" and "ne" hold.
        return leaf.op in ("missing", "ne")
    value, want = facts[leaf.fact], leaf.value
    op = leaf.op
    if op == "exists":
        return True
    if op == "missing":
        return False
    if isinstance(value, tuple):                 # list facts: in = shares an element
        hit = bool(set(value) & set(want))
        return hit if op == "in" else not hit
    if op == "eq":
        return value == want
    if op == "ne":
        return value != want
    if op == "in":
        return value in want
    if op == "not_in":
        return value not in want
    return {"lt": value < want, "le": value <= want, "gt": value > want, "ge": value >= want}[op]


def _fmt(fact: str, value: Any) -> str | Msg:
    """A fact's value as a person reads it: on/off (a words code), 40%, 12.5, "full"."""
    if isinstance(value, bool):
        return msg("common.on" if value else "common.off")
    if isinstance(value, float):
        if fact.endswith("_share") or fact.endswith("fragmentation"):
            return f"{value:.0%}"
        return f"{value:.1f}" if abs(value) >= 1 or value == 0 else f"{value:.2f}"
    if isinstance(value, tuple):
        shown = [_fmt(fact, v) for v in value]
        return msg("plan.value_list", items=tuple(shown)) if shown else msg("common.none")
    return str(value)


def _describe(leaf: Leaf, facts: Mapping[str, Any]) -> Msg:
    label = registry.FACTS[leaf.fact].label
    if leaf.fact not in facts:
        if leaf.fact.startswith("crash.") and not facts.get("crash.present"):
            return msg("plan.cond.no_crash_log")
        return msg("plan.cond.unknown", fact=label)
    return msg("plan.cond.is", fact=label, value=_fmt(leaf.fact, facts[leaf.fact]))


def unmet(cond: Condition, facts: Mapping[str, Any]) -> Msg:
    """Why a condition is false, in words a person understands (a words code with its values)."""
    if isinstance(cond, AllOf):
        return next(unmet(c, facts) for c in cond.items if not holds(c, facts))
    if isinstance(cond, AnyOf):
        reasons = list(dict.fromkeys(unmet(c, facts) for c in cond.items))
        out = reasons[-1]
        for reason in reversed(reasons[:-1]):
            out = msg("plan.cond.both", first=reason, second=out)
        return out
    if isinstance(cond, NotOf):
        inner = cond.item
        if isinstance(inner, Leaf):
            return _describe(inner, facts)
        return msg("plan.cond.excluded")
    leaf = cond
    if leaf.op == "exists":
        return msg("plan.cond.unknown", fact=registry.FACTS[leaf.fact].label)
    if leaf.op == "missing":
        return msg("plan.cond.for_unknown", found=_describe(leaf, facts))
    if leaf.fact not in facts:
        return _describe(leaf, facts)
    if registry.FACTS[leaf.fact].kind == registry.BOOL and leaf.op in ("eq", "ne"):
        return msg("plan.cond.for_state", found=_describe(leaf, facts),
                   state=_fmt(leaf.fact, leaf.value == (leaf.op == "eq")))
    return msg("plan.cond.needs", found=_describe(leaf, facts), op=msg(f"plan.op.{leaf.op}"),
               value=_fmt(leaf.fact, leaf.value))


def render(text: str, facts: Mapping[str, Any], lang: str = "en") -> str:
    """Fill ``${fact}`` placeholders (names were checked at load); nothing else is interpreted."""
    from oomdoctor.words import show

    return PLACEHOLDER_RE.sub(
        lambda m: show(_fmt(m.group(1), facts[m.group(1)]), lang) if m.group(1) in facts else "?", text)
