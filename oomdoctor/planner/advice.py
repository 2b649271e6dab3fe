"""Advice when nothing fits: the user's yes to the proposed rungs, more GPUs with ZeRO-3, or a bigger card."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from oomdoctor.facts import Estimate, Hardware, Msg, Step, TrainingSetup, msg
from oomdoctor.planner.fit import stretch
from oomdoctor.planner.rules import RuleBook
from oomdoctor.planner.search import SEARCH_MAX_EVALS, search_sets
from oomdoctor.planner.walk import Planner

ZERO3_GPU_COUNTS = (2, 4, 8, 16, 32, 64)


def _catalog_cards() -> list[Hardware]:
    """Every card of the GPU catalog, as Hardware."""
    from oomdoctor import gpus

    return [Hardware(gpu=spec.name, gpu_gib=spec.usable_gib, bf16=spec.bf16, flash_attn2=spec.flash_attn2,
                     source="flag") for spec in gpus.catalog()]


def with_zero3(setup: TrainingSetup, n: int) -> TrainingSetup:
    per_pass = setup.micro_batch * n
    accum = max(1, int(round(setup.effective_batch / per_pass)))
    return setup.with_changes(zero_stage=3, n_gpus=n, grad_accum=accum)


def _spread(setup: TrainingSetup, n: int) -> TrainingSetup:
    """The setup over `n` GPUs, sharded the way its framework shards: verl's FSDP workers already shard over every
    GPU of the run (fsdp_workers.py), so a verl run only gets more GPUs (trainer.nnodes × n_gpus_per_node)."""
    if setup.framework == "verl":
        per_pass = setup.micro_batch * n
        return setup.with_changes(n_gpus=n, grad_accum=max(1, int(round(setup.effective_batch / per_pass))))
    return with_zero3(setup, n)


def advise(planner: Planner, final_setup: TrainingSetup, final_est: Estimate, *, book: RuleBook | None = None,
           skip: Sequence[str] = (), accept: Sequence[str] = (), proposed: Sequence[Step] = ()) -> tuple[Msg, ...]:
    """What would fit when the plan does not: the user's yes to the proposed rungs, more GPUs with ZeRO-3,
    or a bigger card."""
    hw, headroom = planner.hw, planner.headroom
    budget = final_est.capacity_gib * (1 - headroom)
    card: Msg | str = hw.gpu if hw.gpu not in ("", "unknown") else msg("report.card_size_bare", gib=hw.gpu_gib)
    out = [msg("plan.advice.still_needs", peak=final_est.peak_gib, gpu=card, budget=budget, headroom=headroom)]
    if book is not None and proposed:
        # With a yes to what was proposed: the same walk, those rungs allowed, made minimal.
        ids = tuple(dict.fromkeys(s.rule for s in proposed))
        # the plan the search would make with that yes, each cut the least that fits
        walk = search_sets(planner, book, skip, tuple(accept) + ids, SEARCH_MAX_EVALS) or planner.walk(
            book.rules, skip, accept=tuple(accept) + ids)
        walk = stretch(planner, planner.minimize(walk, book), book)
        if walk.estimate.fits:
            taken = tuple(dict.fromkeys(s.rule for s in walk.steps if s.rule in ids))
            if taken:
                titles = tuple(dict.fromkeys(s.title for s in walk.steps if s.rule in taken))
                out.append(msg("plan.advice.with_yes", rules=",".join(taken), peak=walk.estimate.peak_gib,
                               titles=titles))

    def gpus_needed(setup: TrainingSetup) -> tuple[int, float] | None:
        if setup.megatron:
            return None         # Megatron-Core shards by its own parallel sizes; DeepSpeed does not wrap it
        for n in ZERO3_GPU_COUNTS:
            est = planner.estimate(_spread(setup, n), replace(hw, n_gpus=max(n, hw.n_gpus)))
            if isinstance(est, Estimate) and est.fits:
                return n, est.peak_gib
        return None

    verl = "verl_" if planner.setup.framework == "verl" else "zero3_"
    original = gpus_needed(planner.setup)
    if original:
        out.append(msg(f"plan.advice.{verl}as_is", n=original[0], peak=original[1]))
    if final_setup != planner.setup:
        planned = gpus_needed(final_setup)
        if planned and (not original or planned[0] < original[0]):
            out.append(msg(f"plan.advice.{verl}planned", n=planned[0], peak=planned[1]))
    need_gib = final_est.peak_gib / (1 - headroom) + hw.other_procs_gib
    fitting = []
    for bigger in _catalog_cards():
        if bigger.gpu_gib <= hw.gpu_gib:
            continue
        est = planner.estimate(final_setup, replace(bigger, n_gpus=hw.n_gpus))
        if isinstance(est, Estimate) and est.fits:
            fitting.append((bigger.gpu_gib, bigger.gpu, est.peak_gib))
    if fitting:
        gib, name, peak = min(fitting)
        out.append(msg("plan.advice.card", card=name, gib=gib, peak=peak))
    else:
        out.append(msg("plan.advice.card_size", gib=math.ceil(need_gib)))
    return tuple(out)
