"""The remedy ladder: YAML rules, the ladder plan, the least-cost plan, and rule texts.

Public API::

    default_rules_dir() -> Path
    load_rules(extra_dirs=()) -> RuleBook
    make_plan(setup, shape, hw, *, crash=None, rules=None, headroom=0.10, skip=(), estimator=None) -> Plan
    least_cost_plan(...same...) -> Plan
    plan_cost(plan, rules=None) -> float
    cost_by_kind(plan, rules=None) -> dict[str, float]     # weighted cost per kind: quality, throughput, none
    explain(book, name, lang="en") -> str
    list_rules(book, lang="en") -> str
    rules_json(book, lang="en") -> list[dict]
"""
from __future__ import annotations

from oomdoctor.planner.actions import fire
from oomdoctor.planner.book import default_rules_dir, load_rules
from oomdoctor.planner.conditions import holds
from oomdoctor.planner.engine import least_cost_plan, make_plan
from oomdoctor.planner.rules import Rule, RuleBook, Text
from oomdoctor.planner.text import explain, list_rules, rules_json
from oomdoctor.planner.validate import build_book
from oomdoctor.planner.weights import COST_WEIGHTS, cost_by_kind, plan_cost, rule_cost

__all__ = ["COST_WEIGHTS", "Rule", "RuleBook", "Text", "build_book", "cost_by_kind", "default_rules_dir",
           "explain", "fire", "holds", "least_cost_plan", "list_rules", "load_rules", "make_plan", "plan_cost",
           "rule_cost", "rules_json"]
