"""The fit matrix: common cards x 1, 2, 4, 8 GPUs; fits as configured, else the least-cost plan that does.

Each cell runs the user's setup (micro-batch and accumulation as written) on n cards of one kind, with
what the card lacks assumed away (fp16 for bf16, SDPA for FlashAttention-2). A cell that does not fit gets
the planner's least-cost plan (fewest quality-changing steps) with hw.n_gpus = n, so the ZeRO-3 rung is
open for n > 1. The least-cost search is bounded per call; the whole matrix is bounded by MATRIX_BUDGET_S,
after which the remaining cells take the ladder plan (faster, may cost more) and say so.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Sequence

from oomdoctor.advise import timing
from oomdoctor.advise.cards import MATRIX_CARDS, MATRIX_COUNTS, adapt_to_card, card_hardware, spec_of
from oomdoctor.advise.model import Cell, PlanStep
from oomdoctor.facts import Estimate, ModelShape, TrainingSetup

Estimator = Callable[..., Estimate]

MATRIX_BUDGET_S = 0.9
# Each least-cost search may take planner.engine.SEARCH_BUDGET_S (0.15 s); after MATRIX_BUDGET_S the
# remaining cells take the ladder (~15 ms each) or a plan another card found; cells left with no fit
# get the search again until MATRIX_HARD_BUDGET_S, so a matrix stays under about 1.7 s.
MATRIX_HARD_BUDGET_S = 1.5


def _quality(costs: Sequence[str]) -> bool:
    return "quality" in costs


def fit_cell(setup: TrainingSetup, shape: ModelShape, spec, n: int, *, estimator: Estimator, rules=None,
             headroom: float = 0.10, skip: Sequence[str] = (), ladder_only: bool = False,
             tokens: float | None = None, price: float | None = None,
             host_ram_gib: float | None = None) -> Cell:
    from oomdoctor.planner import least_cost_plan, make_plan

    hw = card_hardware(spec, n, host_ram_gib)
    run, assumed = adapt_to_card(replace(setup, n_gpus=n), hw)
    est = estimator(run, shape, hw, headroom=headroom)
    steps: tuple[PlanStep, ...] = ()
    final_setup, final_est, search = run, est, "none"
    if not est.fits:
        planner = make_plan if ladder_only else least_cost_plan
        plan = planner(run, shape, hw, rules=rules, headroom=headroom, skip=skip, estimator=estimator)
        search = "ladder" if ladder_only else "least-cost"
        if plan.fits:
            steps = tuple(PlanStep(rule=s.rule, slug=s.slug, title=s.title, costs=tuple(s.costs))
                          for s in plan.steps if s.changes)
            final_setup = plan.final_setup(run)
            final_est = plan.final_estimate(est)
    fits = final_est.fits
    st = timing.step_time(final_setup, shape, spec, n) if fits else None
    hours = timing.run_hours(tokens, st)
    cost = hours * price * n if (hours is not None and price is not None) else None
    return Cell(card=spec.name, n_gpus=n, fits_as_configured=est.fits, peak_gib=est.peak_gib,
                capacity_gib=hw.usable_gib, steps=steps, fits=fits, final_peak_gib=final_est.peak_gib,
                final_setup=final_setup if fits else None,
                quality_steps=sum(1 for s in steps if _quality(s.costs)),
                host_ram_gib=final_est.host_ram_gib, step_s=st.step_s if st else None, hours=hours, cost=cost,
                assumed=assumed, search=search)


def build_cells(setup: TrainingSetup, shape: ModelShape, *, estimator: Estimator, cards: Sequence[str] = MATRIX_CARDS,
                counts: Sequence[int] = MATRIX_COUNTS, rules=None, headroom: float = 0.10,
                skip: Sequence[str] = (), tokens: float | None = None, prices=None,
                budget_s: float = MATRIX_BUDGET_S, hard_budget_s: float = MATRIX_HARD_BUDGET_S,
                ) -> tuple[Cell, ...]:
    """Every (card, count) cell, the cheapest fitting one marked when prices are given."""
    from oomdoctor.planner import load_rules

    book = rules if rules is not None else load_rules()
    deadline = time.perf_counter() + budget_s
    specs = [s for s in (spec_of(c) for c in cards) if s is not None]
    found: dict[tuple[str, int], Cell] = {}
    # Cards with the same capacity and features get the same plan (A100 80GB / A800, H100 / H800):
    # plan once, re-time per card.
    plans: dict[tuple, Cell] = {}
    # Big cards first: their searches end quickly (few rungs needed) and they are what people rent for
    # big runs; if the budget runs out it is the small cards, which need many rungs, that get the ladder.
    order = sorted(((spec, n) for spec in specs for n in counts), key=lambda sn: (-sn[0].usable_gib, -sn[1]))
    for spec, n in order:
        key = (spec.usable_gib, spec.bf16, spec.flash_attn2, n)
        price = prices.of(spec.name) if prices is not None else None
        twin = plans.get(key)
        if twin is not None:
            found[(spec.name, n)] = _retime(twin, spec, shape, tokens, price)
            continue
        cell = fit_cell(setup, shape, spec, n, estimator=estimator, rules=book, headroom=headroom, skip=skip,
                        ladder_only=time.perf_counter() > deadline, tokens=tokens, price=price)
        plans[key] = cell
        found[(spec.name, n)] = cell
    by_name = {spec.name: spec for spec in specs}
    for where, cell in list(found.items()):
        if cell.search == "ladder":
            found[where] = _borrow(cell, by_name[cell.card], found.values(), shape, estimator, headroom, tokens,
                                   prices.of(cell.card) if prices is not None else None)
    hard_deadline = deadline - budget_s + max(budget_s, hard_budget_s)
    for where, cell in sorted(found.items(), key=lambda kv: (-kv[1].capacity_gib, -kv[1].n_gpus)):
        if cell.search == "ladder" and not cell.fits and time.perf_counter() < hard_deadline:
            spec = by_name[cell.card]
            found[where] = fit_cell(setup, shape, spec, cell.n_gpus, estimator=estimator, rules=book,
                                    headroom=headroom, skip=skip, tokens=tokens,
                                    price=prices.of(spec.name) if prices is not None else None)
    return _mark_cheapest([found[(spec.name, n)] for spec in specs for n in counts])


def _rank(cell: Cell) -> tuple[int, int, int]:
    return (0 if cell.fits else 1, cell.quality_steps, len(cell.steps))


def _borrow(cell: Cell, spec, others, shape: ModelShape, estimator: Estimator, headroom: float,
            tokens: float | None, price: float | None) -> Cell:
    """A cell that only got the ladder (time budget) tries the least-cost plans other cards with the same
    count found; one that re-estimates under this card's capacity and changes less replaces the ladder's."""
    hw = card_hardware(spec, cell.n_gpus)
    best = cell
    for other in others:
        if other.search != "least-cost" or other.n_gpus != cell.n_gpus or other.final_setup is None:
            continue
        trial = replace(other, card=spec.name, search="borrowed")
        if _rank(trial) >= _rank(best):
            continue
        run, assumed = adapt_to_card(other.final_setup, hw)
        est = estimator(run, shape, hw, headroom=headroom)
        if est.fits:
            best = replace(trial, fits_as_configured=cell.fits_as_configured, peak_gib=cell.peak_gib,
                           capacity_gib=hw.usable_gib, final_peak_gib=est.peak_gib, final_setup=run,
                           host_ram_gib=est.host_ram_gib, assumed=cell.assumed or assumed)
    if best is cell:
        return cell
    st = timing.step_time(best.final_setup, shape, spec, best.n_gpus)
    hours = timing.run_hours(tokens, st)
    cost = hours * price * best.n_gpus if (hours is not None and price is not None) else None
    return replace(best, step_s=st.step_s if st else None, hours=hours, cost=cost, cheapest=False)


def _retime(twin: Cell, spec, shape: ModelShape, tokens: float | None, price: float | None) -> Cell:
    st = timing.step_time(twin.final_setup, shape, spec, twin.n_gpus) if twin.final_setup is not None else None
    hours = timing.run_hours(tokens, st)
    cost = hours * price * twin.n_gpus if (hours is not None and price is not None) else None
    assumed = tuple(a.replace(twin.card, spec.name) for a in twin.assumed)
    return replace(twin, card=spec.name, step_s=st.step_s if st else None, hours=hours, cost=cost,
                   assumed=assumed, cheapest=False)


def _mark_cheapest(cells: list[Cell]) -> tuple[Cell, ...]:
    """The cheapest cell that fits without changing the experiment; else the cheapest that fits at all."""
    priced = [c for c in cells if c.fits and c.cost is not None]
    keep = [c for c in priced if c.quality_steps == 0] or priced
    if not keep:
        return tuple(cells)
    best = min(keep, key=lambda c: (c.cost, c.hours or 0.0, c.n_gpus))
    return tuple(replace(c, cheapest=True) if c is best else c for c in cells)
