"""The remedy ladder: YAML rules, the ladder plan, the least-cost plan, and rule texts.

Public API::

    default_rules_dir() -> Path
    load_rules(extra_dirs=()) -> RuleBook
    make_plan(setup, shape, hw, *, crash=None, rules=None, headroom=0.10, skip=(), estimator=None) -> Plan
    least_cost_plan(...same...) -> Plan
    plan_cost(plan, rules=None) -> float
    explain(rule, lang="en") -> str
    list_rules(book, lang="en") -> str
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from oomdoctor.planner.engine import fire, holds, least_cost_plan, make_plan, plan_cost, rule_cost
from oomdoctor.planner.rules import Rule, RuleBook, Text, build_book
from oomdoctor.planner.text import explain, list_rules

__all__ = ["Rule", "RuleBook", "Text", "default_rules_dir", "explain", "fire", "holds", "least_cost_plan",
           "list_rules", "load_rules", "make_plan", "plan_cost", "rule_cost"]

_DEFAULT_BOOK: RuleBook | None = None


def default_rules_dir() -> Path:
    """The repo's rules/ in a source checkout, else the copy shipped inside the wheel."""
    root = Path(__file__).resolve().parents[2]
    # A pyproject.toml beside it tells a source checkout from some unrelated rules/ above site-packages.
    if (root / "rules").is_dir() and (root / "pyproject.toml").is_file():
        return root / "rules"
    from importlib import resources
    return Path(str(resources.files("oomdoctor") / "rules"))


def load_rules(extra_dirs: Sequence[str] = ()) -> RuleBook:
    """The default ladder, with the rules of each extra directory (or file) added or overriding by id."""
    global _DEFAULT_BOOK
    if not extra_dirs:
        # The default files do not change while the program runs; read and validate them once.
        if _DEFAULT_BOOK is None:
            _DEFAULT_BOOK = build_book([default_rules_dir()])
        return _DEFAULT_BOOK
    return build_book([default_rules_dir(), *(Path(d) for d in extra_dirs)])
