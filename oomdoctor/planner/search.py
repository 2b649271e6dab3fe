"""The least-cost search over sets of rungs: which rules to fire, priced by the one cost model (planner.costs)."""
from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oomdoctor.planner.actions import is_evidence_rule
from oomdoctor.planner.conditions import holds
from oomdoctor.planner.fit import stretch
from oomdoctor.planner.rules import RuleBook
from oomdoctor.planner.walk import Planner, Walk, needs_yes, skip_requested, walk_cost
from oomdoctor.records import record

if TYPE_CHECKING:
    from oomdoctor.planner.costs import Cost

# The least-cost search stops after this many trial plans (each a walk of ~1 ms) and keeps the ladder
# if it found nothing cheaper: a work bound rather than a clock, so a plan never depends on machine load.
SEARCH_MAX_EVALS = 400


@record(frozen=False)
class _Trial:
    """One candidate set of fired rules in the least-cost search, with its walk and cost."""

    walk: Walk
    fired: frozenset
    cost: Cost

    @property
    def fits(self) -> bool:
        return self.walk.estimate.fits


def search_sets(planner: Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str],
            max_evals: int) -> Walk | None:
    from oomdoctor.planner import costs

    # A rung that changes the experiment without the user's yes is never part of a plan, cheap or not.
    usable = [r for r in book if not skip_requested(r, skip) and not needs_yes(r, accept)]
    canonical = sorted(usable, key=lambda r: (r.changes_quality, r.position))
    evidence = frozenset(r.id for r in usable if is_evidence_rule(r))
    cache: dict[frozenset, _Trial] = {}

    def trial(chosen: frozenset) -> _Trial:
        if chosen not in cache:
            walk = planner.walk([r for r in canonical if r.id in chosen], accept=accept)
            cache[chosen] = _Trial(walk, frozenset(s.rule for s in walk.steps), walk_cost(planner, walk, book))
        return cache[chosen]

    # The most time a set can still win back by growing: sharding over every card at hand, at best linear.
    faster = 100.0 * (1.0 / max(1, planner.hw.n_gpus, planner.setup.n_gpus) - 1.0) - costs.SETUP_COST["launcher"]
    first = trial(evidence)
    heap: list[tuple[float, int, frozenset]] = [(first.cost.total, 0, evidence)]
    seen = {first.fired}
    counter = 1
    best: _Trial | None = None
    while heap and len(cache) < max_evals:
        _, _, chosen = heapq.heappop(heap)
        current = cache[chosen]
        if current.fits:
            # priced as it will be planned: each cut the least that fits
            stretched = stretch(planner, current.walk, book)
            priced = _Trial(stretched, current.fired, walk_cost(planner, stretched, book))
            if best is None or priced.cost.total < best.cost.total - 1e-9:
                best = priced
            continue                # a set that fits stops its walk: a bigger one adds nothing after it
        floor = current.cost.quality + current.cost.setup_cost + faster
        if best is not None and floor >= best.cost.total:
            continue
        facts = planner.facts(current.walk.setup, current.walk.estimate)
        for rule in canonical:
            if rule.id in chosen or not holds(rule.when, facts):
                continue
            grown = chosen | {rule.id}
            if grown in cache:
                continue
            result = trial(grown)
            if rule.id not in result.fired or result.fired in seen:
                continue
            seen.add(result.fired)
            heapq.heappush(heap, (result.cost.total, counter, grown))
            counter += 1
    return best.walk if best is not None else None
