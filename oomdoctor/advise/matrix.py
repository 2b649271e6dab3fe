"""The fit matrix: common cards x 1, 2, 4, 8 GPUs; fits as configured, else the least-cost plan that does.

Each cell runs the user's setup (micro-batch and accumulation as written) on n cards of one kind, with
what the card lacks assumed away (fp16 for bf16, SDPA for FlashAttention-2). A cell that does not fit gets
the planner's least-cost plan (fewest quality-changing steps) with hw.n_gpus = n, so the ZeRO-3 rung is
open for n > 1. The least-cost search is bounded by a number of trials, not by the clock, so the same
inputs always give the same matrix.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Callable

from oomdoctor.advise import timing
from oomdoctor.advise.cards import (
    HOST_RAM_PER_GPU_GIB,
    MATRIX_CARDS,
    MATRIX_COUNTS,
    adapt_to_card,
    card_hardware,
    spec_of,
)
from oomdoctor.advise.model import Cell, PlanStep
from oomdoctor.facts import Estimate, ModelShape, TrainingSetup, msg

Estimator = Callable[..., Estimate]



def _quality(costs: Sequence[str]) -> bool:
    return "quality" in costs


def fit_cell(setup: TrainingSetup, shape: ModelShape, spec, n: int, *, estimator: Estimator, rules=None,
             headroom: float = 0.10, skip: Sequence[str] = (), ladder_only: bool = False,
             tokens: float | None = None, price: float | None = None,
             host_ram_gib: float | None = None, accept: Sequence[str] = ()) -> Cell:
    from oomdoctor.planner import least_cost_plan, make_plan

    # Planned without a host limit, then flagged against the host's RAM: a renter can pick a bigger host.
    hw = card_hardware(spec, n, None)
    run, assumed = adapt_to_card(replace(setup, n_gpus=n), hw)
    est = estimator(run, shape, hw, headroom=headroom)
    steps: tuple[PlanStep, ...] = ()
    final_setup, final_est, search = run, est, "none"
    if not est.fits:
        if ladder_only:
            plan = make_plan(run, shape, hw, rules=rules, headroom=headroom, skip=skip, estimator=estimator,
                             accept=accept)
        else:
            plan = least_cost_plan(run, shape, hw, rules=rules, headroom=headroom, skip=skip, estimator=estimator,
                                   accept=accept)
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
                assumed=assumed, search=search,
                host_budget_gib=host_ram_gib if host_ram_gib else HOST_RAM_PER_GPU_GIB * n)


def build_cells(setup: TrainingSetup, shape: ModelShape, *, estimator: Estimator, cards: Sequence[str] = MATRIX_CARDS,
                counts: Sequence[int] = MATRIX_COUNTS, rules=None, headroom: float = 0.10,
                skip: Sequence[str] = (), tokens: float | None = None, prices=None,
                host_ram_gib: float | None = None, accept: Sequence[str] = ()) -> tuple[Cell, ...]:
    """Every (card, count) cell, the cheapest fitting one marked when prices are given."""
    from oomdoctor.planner import load_rules

    book = rules if rules is not None else load_rules()
    specs = [s for s in (spec_of(c) for c in cards) if s is not None]
    found: dict[tuple[str, int], Cell] = {}
    # Cards with the same capacity and features get the same plan (A100 80GB / A800, H100 / H800):
    # plan once, re-time per card.
    plans: dict[tuple, Cell] = {}
    for spec in specs:
        for n in counts:
            key = (spec.usable_gib, spec.bf16, spec.flash_attn2, n)
            price = prices.of(spec.name) if prices is not None else None
            twin = plans.get(key)
            if twin is not None:
                found[(spec.name, n)] = _retime(twin, spec, shape, tokens, price)
                continue
            cell = fit_cell(setup, shape, spec, n, estimator=estimator, rules=book, headroom=headroom, skip=skip,
                            tokens=tokens, price=price, host_ram_gib=host_ram_gib, accept=accept)
            plans[key] = cell
            found[(spec.name, n)] = cell
    return _mark_cheapest([found[(spec.name, n)] for spec in specs for n in counts])


def _retime(twin: Cell, spec, shape: ModelShape, tokens: float | None, price: float | None) -> Cell:
    st = timing.step_time(twin.final_setup, shape, spec, twin.n_gpus) if twin.final_setup is not None else None
    hours = timing.run_hours(tokens, st)
    cost = hours * price * twin.n_gpus if (hours is not None and price is not None) else None
    assumed = tuple(msg(a.code, **{**a.values, "gpu": spec.name}) for a in twin.assumed)
    return replace(twin, card=spec.name, step_s=st.step_s if st else None, hours=hours, cost=cost,
                   assumed=assumed, cheapest=False)


def _mark_cheapest(cells: list[Cell]) -> tuple[Cell, ...]:
    """The cheapest cell that fits without changing the experiment; else the cheapest that fits at all.
    A cell whose host would run out of RAM is no candidate."""
    priced = [c for c in cells if c.fits and c.cost is not None and not c.host_ram_over]
    keep = [c for c in priced if c.quality_steps == 0] or priced
    if not keep:
        return tuple(cells)
    best = min(keep, key=lambda c: (c.cost, c.hours or 0.0, c.n_gpus))
    return tuple(replace(c, cheapest=True) if c is best else c for c in cells)
