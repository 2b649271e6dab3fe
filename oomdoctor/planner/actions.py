"""Rule actions: what one firing of a rule does to a setup (set, scale, enable, disable, keep, env, note).
The actions are a closed table of typed functions (planner/rules.py ACTIONS); nothing in a rule runs code.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from oomdoctor.facts import Change, CrashReport, Estimate, Hardware, ModelShape, Text, TrainingSetup
from oomdoctor.planner import registry
from oomdoctor.planner.conditions import render
from oomdoctor.planner.rules import Rule, clamp_field
from oomdoctor.records import record


@record
class Firing:
    """What one application of a rule would do to a setup."""

    setup: TrainingSetup
    changes: tuple[Change, ...]
    env: Mapping[str, str]
    notes: tuple[Text, ...]         # the rule's notes, ${facts} filled in each language


def _round(value: float, mode: str) -> float:
    if mode == "floor":
        return math.floor(value + 1e-9)
    if mode == "ceil":
        return math.ceil(value - 1e-9)
    if mode == "hundredths":        # a fraction as configs write it (gpu_memory_utilization 0.63, not 0.6299999)
        return math.floor(value * 100 + 1e-6) / 100
    if mode == "nearest":
        return math.floor(value + 0.5)
    if mode in ("pow2_floor", "pow2_ceil"):
        if value < 1:
            return 1
        exp = math.log2(value)
        return 2 ** (math.floor(exp + 1e-9) if mode == "pow2_floor" else math.ceil(exp - 1e-9))
    return value


def _set_value(p: Mapping[str, Any], facts: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the `set` applies, the value): a value copied from a fact applies only when the fact is known."""
    if "from" not in p:
        return True, p["value"]
    if p["from"] not in facts:
        return False, None
    value = facts[p["from"]]
    return True, int(round(value)) if registry.SETUP_FIELDS[p["field"]] == registry.INT else value


def _scaled(p: Mapping[str, Any], current: Any) -> int | float:
    """The field times the factor, rounded as the rule says and held between its min and max."""
    new = _round(current * p["factor"], p["rounding"])
    if "min" in p:
        new = max(new, p["min"])
    if "max" in p:
        new = min(new, p["max"])
    return int(new) if registry.SETUP_FIELDS[p["field"]] == registry.INT else float(new)


def fire(rule: Rule, setup: TrainingSetup, facts: Mapping[str, Any], *,
         shape: ModelShape | None = None, hw: Hardware | None = None,
         crash: CrashReport | None = None, est: Estimate | None = None) -> Firing:
    """Apply a rule's actions to a setup (its condition is the caller's business)."""
    values: dict[str, Any] = {}
    touched: list[str] = []
    env: dict[str, str] = {}
    note_texts: list[Text] = []

    def get(name: str) -> Any:
        return values[name] if name in values else registry.value_of(setup, name)

    def put(name: str, value: Any) -> None:
        if name not in touched:
            touched.append(name)
        values[name] = clamp_field(name, value)     # no action reaches micro-batch 0 or 10**400 steps

    for action in rule.actions:
        p = action.params
        if action.kind == "set":
            applies, value = _set_value(p, facts)
            if applies:
                put(p["field"], value)
        elif action.kind in ("enable", "disable"):
            put(p["field"], action.kind == "enable")
        elif action.kind == "scale":
            if get(p["field"]) is not None:
                put(p["field"], _scaled(p, get(p["field"])))
        elif action.kind == "keep":
            # The effective batch (samples per optimizer step) is what the experiment is about;
            # accumulation absorbs whatever micro-batch and GPU count changed.
            per_pass = get("micro_batch") * max(1, get("n_gpus"))
            put("grad_accum", max(1, int(round(setup.effective_batch / per_pass))))
        elif action.kind == "env":
            env[p["name"]] = p["value"]
        elif action.kind == "note":
            note_texts.append(p["text"])
    new_setup = registry.with_values(setup, values) if values else setup
    changes = tuple(Change(n, registry.value_of(setup, n), registry.value_of(new_setup, n)) for n in touched
                    if registry.value_of(setup, n) != registry.value_of(new_setup, n))
    notes: tuple[Text, ...] = ()
    if note_texts:
        after = registry.gather(new_setup, shape, hw, crash, est) if shape is not None and hw is not None else facts
        notes = tuple(Text(render(t.en, after, "en"), render(t.zh, after, "zh") if t.zh else None)
                      for t in note_texts)
    return Firing(new_setup if changes else setup, changes, env, notes)


def changes_setup(rule: Rule) -> bool:
    return any(a.kind in ("set", "scale", "enable", "disable", "keep") for a in rule.actions)


def is_evidence_rule(rule: Rule) -> bool:
    """Rules the estimate cannot judge (environment, launch advice, eval-time fixes): their condition
    is the evidence, so they apply whenever it holds."""
    return not rule.check_saving or not changes_setup(rule)
