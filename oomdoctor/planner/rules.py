"""The data model of a rule: its costs, its condition tree, its typed actions, the rule and the book.

planner/validate.py reads rule files into these records. A rule file holds ``schema_version: 1`` and a
``rules:`` list. A rule entry is either a full rule (id, slug, title, why, category, costs, applicability,
actions, optional when/repeat/...) or a *position entry* that only moves or disables a rule loaded earlier
(keys id, order, before, after, enabled). Ladder position: ``order`` (a number; the default rules use 10,
20, ...), or ``before:``/``after:`` another rule's id or slug. A later full rule with the same id replaces
the earlier one and keeps its position unless it gives its own.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Union

from oomdoctor.facts import Text
from oomdoctor.records import record

LANGS = ("en", "zh")
CATEGORIES = ("activations", "model states", "logits", "runtime", "host")
APPLICABILITY = ("safe", "needs-consent")
COST_KINDS = ("throughput", "quality", "none")
COST_SIZES = ("small", "medium", "large")
OPS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "exists", "missing")
ROUNDINGS = ("floor", "ceil", "nearest", "pow2_floor", "pow2_ceil", "hundredths", "none")
ACTIONS = ("set", "scale", "enable", "disable", "env", "note", "keep")
# The values a numeric setup field can take in a real run. Rule actions are clamped into them (a
# `scale` that would reach micro-batch 0, a `keep` that would need 10**9 accumulation steps), and a
# `set` outside them is refused when the rule file loads, so no plan or patch holds an impossible value.
FIELD_RANGES: Mapping[str, tuple[int, int]] = {
    "micro_batch": (1, 1 << 16), "grad_accum": (1, 1 << 16), "eval_batch": (1, 1 << 16),
    "eval_accum": (1, 1 << 16), "seq_len": (1, 1 << 24), "lora_rank": (1, 1 << 16), "lora_alpha": (1, 1 << 20),
    "n_gpus": (1, 1 << 16), "seq_parallel": (1, 1 << 16), "zero_stage": (0, 3), "quant_bits": (4, 8),
    "freeze_trainable_layers": (-(1 << 16), 1 << 16),
}
# Fields that take only a few numbers with gaps between them: set to one of them, never scaled.
INT_CHOICES: Mapping[str, tuple[int, ...]] = {"quant_bits": (4, 8)}

PLACEHOLDER_RE = re.compile(r"\$\{([A-Za-z0-9_.]+)\}")


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

    items: tuple[Condition, ...]


@record
class AnyOf:
    """A condition that holds when some item holds."""

    items: tuple[Condition, ...]


@record
class NotOf:
    """A condition that holds when its item does not."""

    item: Condition


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
    frameworks: tuple[str, ...] = ()  # only for setups of these frameworks (empty: every framework)
    skip_frameworks: tuple[str, ...] = ()   # never for setups of these (their own keys do the job another way)
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

    def for_framework(self, framework: str) -> RuleBook:
        """The ladder of a setup of `framework`: a rung for other frameworks is not on it at all (not walked,
        not listed as skipped)."""
        rules = tuple(r for r in self.rules if (not r.frameworks or framework in r.frameworks)
                      and framework not in r.skip_frameworks)
        return self if len(rules) == len(self.rules) else RuleBook(rules, self.sources)


def clamp_field(name: str, value: Any) -> Any:
    """`value` moved into the range a real run can have for the setup field `name` (None stays None)."""
    bounds = FIELD_RANGES.get(name)
    if bounds is None or value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    low, high = bounds
    return min(max(value, low), high)
