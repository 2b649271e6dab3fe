"""The rules' own cost weights: a plan's cost as the sum of its steps' rule costs (kind and size), split by kind.

The least-cost search prices plans with planner/costs.py; these weights let a caller compare two plans by what
their rules say they cost (the guide's "cheaper in quality, then in throughput" choice uses cost_by_kind).
"""
from __future__ import annotations

from oomdoctor.facts import Plan
from oomdoctor.planner.book import load_default_book
from oomdoctor.planner.rules import Rule, RuleBook

# Cost weights: a quality change outweighs any pile of throughput costs, so the least-cost plan
# changes the experiment only when nothing else fits ("quality-changing steps last").
COST_WEIGHTS = {
    ("none", "small"): 0.05, ("none", "medium"): 0.05, ("none", "large"): 0.05,
    ("throughput", "small"): 1.0, ("throughput", "medium"): 3.0, ("throughput", "large"): 8.0,
    ("quality", "small"): 100.0, ("quality", "medium"): 200.0, ("quality", "large"): 400.0,
}


def rule_cost(rule: Rule) -> float:
    return sum(COST_WEIGHTS[(c.kind, c.size)] for c in rule.costs)


def plan_cost(plan: Plan, rules: RuleBook | None = None) -> float:
    """The weighted cost of a plan's steps (a repeated rung counts each time it fires)."""
    book = load_default_book(rules)
    total = 0.0
    for step in plan.steps:
        rule = book.get(step.rule)
        total += rule_cost(rule) if rule is not None else sum(
            COST_WEIGHTS[(k, "medium")] for k in step.costs)
    return total


def cost_by_kind(plan: Plan, rules: RuleBook | None = None) -> dict[str, float]:
    """The plan's weighted cost split by kind (quality, throughput, none), weighed as plan_cost weighs it."""
    book = load_default_book(rules)
    out = {kind: 0.0 for kind in ("quality", "throughput", "none")}
    for step in plan.steps:
        rule = book.get(step.rule)
        kinds = [(c.kind, c.size) for c in rule.costs] if rule is not None else [(k, "medium") for k in step.costs]
        for kind, size in kinds:
            out[kind] = out.get(kind, 0.0) + COST_WEIGHTS[(kind, size)]
    return out
