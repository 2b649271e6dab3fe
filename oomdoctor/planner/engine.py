"""The planner's two entry points: the ladder plan and the least-cost plan.

Ladder (planner/ladder.py): rules in book order, walked until the estimate fits (planner/walk.py), then made
minimal. Least cost: of the sets of rungs that fit (planner/search.py), the cheapest, each numeric step the least
change that fits (planner/fit.py); the ladder stays the explanation.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from oomdoctor.facts import CrashReport, Hardware, ModelShape, Plan, Rung, Skipped, TrainingSetup, msg
from oomdoctor.planner.advice import with_zero3 as _with_zero3  # noqa: F401  (the planner tests reach it here)
from oomdoctor.planner.book import load_default_book
from oomdoctor.planner.fit import stretch
from oomdoctor.planner.ladder import evidence_tail, finish, ladder_plan, plan_of, walk_ladder
from oomdoctor.planner.rules import RuleBook
from oomdoctor.planner.search import SEARCH_MAX_EVALS, search_sets
from oomdoctor.planner.walk import Estimator, Planner, Walk, walk_cost

_Planner = Planner      # the name the planner tests build one under


def make_plan(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *, crash: CrashReport | None = None,
              rules: RuleBook | None = None, headroom: float = 0.10, skip: Sequence[str] = (),
              estimator: Estimator | None = None, accept: Sequence[str] = ()) -> Plan:
    """Walk the ladder in book order until the estimate fits with headroom; `accept` names the rungs that
    change the experiment the user agreed to (ids, slugs, or `quality` for all of them)."""
    book = load_default_book(rules).for_framework(setup.framework)
    planner = Planner(setup, shape, hw, crash, headroom, estimator)
    return ladder_plan(planner, book, skip, accept)


def least_cost_plan(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *, crash: CrashReport | None = None,
                    rules: RuleBook | None = None, headroom: float = 0.10, skip: Sequence[str] = (),
                    estimator: Estimator | None = None, max_evals: int = SEARCH_MAX_EVALS,
                    accept: Sequence[str] = ()) -> Plan:
    """The plan every surface uses: of the sets of rungs that fit, the one of least cost (planner.costs:
    quality, then modelled step time and setup), each numeric step the least change that fits.

    Search over sets of rules: a set is walked throughput-first, quality-changing rules last, each group in
    ladder order; sets grow one rule at a time from the cheapest unexplored one, and every fitting set is
    priced (time can fall as rules are added: sharding over more cards is faster). Bounded by `max_evals`
    trial walks, a work bound rather than a clock; the ladder's own plan is always a candidate. The
    ladder stays the explanation: each rung's state and what it would save come from the ladder's walk.
    """
    book = load_default_book(rules).for_framework(setup.framework)
    planner = Planner(setup, shape, hw, crash, headroom, estimator)
    ladder_walk = walk_ladder(planner, book, skip, accept)
    ladder = finish(planner, book, skip, accept, ladder_walk)
    if planner.start.fits:
        return ladder
    best = search_sets(planner, book, skip, accept, max_evals)
    candidates = [w for w in (best, ladder_walk if ladder_walk.estimate.fits else None) if w is not None]
    if not candidates:
        return ladder
    # the ladder wins ties: its order is the one the user reads
    chosen = min(candidates, key=lambda w: (walk_cost(planner, w, book).total, w is not ladder_walk))
    chosen = stretch(planner, planner.minimize(chosen, book), book)
    walk = evidence_tail(planner, book, skip, chosen)
    plan = plan_of(walk, book, True)
    return replace(plan, rungs=_explained(plan, ladder, walk), skipped=_skips(plan, ladder),
                   cost=walk_cost(planner, walk, book).as_dict())


def _explained(plan: Plan, ladder: Plan, walk: Walk) -> tuple[Rung, ...]:
    """Every rung in ladder order: the plan's own steps as applied, the rest as the ladder's walk met them
    (what each would save, why it was skipped); a rung the ladder took that the cheaper plan does without
    is shown dropped, with why."""
    mine = {r.rule: r for r in plan.rungs}
    out = []
    budget = walk.estimate.capacity_gib * (1 - walk.estimate.headroom)
    for rung in ladder.rungs:
        own = mine.get(rung.rule)
        if own is not None and own.state in ("applied", "dropped"):
            out.append(own)
        elif rung.state == "applied":
            out.append(Rung(rung.rule, "dropped", rung.steps,
                            msg("plan.rung.costlier", peak=walk.estimate.peak_gib, budget=budget)))
        else:
            out.append(rung)
    return tuple(out)


def _skips(plan: Plan, ladder: Plan) -> tuple[Skipped, ...]:
    used = {s.rule for s in plan.steps}
    return tuple(k for k in ladder.skipped if k.rule not in used)
