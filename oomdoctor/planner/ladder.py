"""The ladder's plan: the walk in book order, freed of dead ends, made minimal, with the rungs the crash log is
evidence for added and advice when nothing fits; every rung of the book gets its state (applied, proposed,
dropped, skipped, not reached).
"""
from __future__ import annotations

from collections.abc import Sequence

from oomdoctor.facts import CrashReport, Msg, Plan, Rung, Skipped, Step, msg
from oomdoctor.planner.actions import is_evidence_rule
from oomdoctor.planner.advice import advise
from oomdoctor.planner.rules import RuleBook
from oomdoctor.planner.walk import Planner, Walk


def _crashed(crash: CrashReport | None) -> bool:
    return crash is not None and bool(crash.events)


def walk_ladder(planner: Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str] = ()) -> Walk:
    # The walk stops at its first fit (at once when the estimate fits as configured); the minimal plan
    # drops what the fit no longer needs.
    return planner.minimize(_unstuck(planner, book, skip, accept, planner.walk(book.rules, skip, accept=accept)), book)


def ladder_plan(planner: Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str] = ()) -> Plan:
    return finish(planner, book, skip, accept, walk_ladder(planner, book, skip, accept))


def finish(planner: Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str], walk: Walk) -> Plan:
    # the evidence tail adds what the crash log points to; advice says what would fit when nothing does
    walk = evidence_tail(planner, book, skip, walk)
    fits = walk.estimate.fits
    advice = () if fits else advise(planner, walk.setup, walk.estimate, book=book, skip=skip, accept=accept,
                                    proposed=walk.proposed)
    return plan_of(walk, book, fits, advice)


def _unstuck(planner: Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str], walk: Walk) -> Walk:
    """A walk that ends without a fit may have taken a rung that closed off the ones below (the 8-bit
    optimizer leaves too little of the peak in optimizer states for offloading them to qualify): walk again
    without each rung it took, the latest first, and keep the first walk that fits."""
    if walk.estimate.fits:
        return walk
    by_id = {r.id: r for r in book}
    taken = [rid for rid in dict.fromkeys(s.rule for s in walk.steps if s.changes)
             if rid in by_id and not is_evidence_rule(by_id[rid])]
    for rid in reversed(taken):
        trial = planner.walk(book.rules, tuple(skip) + (rid,), accept=accept)
        if trial.estimate.fits:
            trial.skipped = [Skipped(rid, msg("plan.skip.dead_end", fits=trial.estimate.peak_gib))
                             if k.rule == rid else k for k in trial.skipped]
            return trial
    return walk


def plan_of(walk: Walk, book: RuleBook, fits: bool, advice: tuple[Msg, ...] = ()) -> Plan:
    """The plan of a walk, with every rung of the book in ladder order and its state."""
    applied: dict[str, list[Step]] = {}
    for step in walk.steps:
        applied.setdefault(step.rule, []).append(step)
    proposed = {s.rule: s for s in walk.proposed}
    dropped: dict[str, list[tuple[Step, Msg]]] = {}
    for step, why in walk.dropped:
        dropped.setdefault(step.rule, []).append((step, why))
    skipped: dict[str, Msg] = {}
    for sk in walk.skipped:
        skipped.setdefault(sk.rule, sk.reason)
    rungs = []
    for rule in book.rules:
        rid = rule.id
        if rid in applied:
            rungs.append(Rung(rid, "applied", tuple(applied[rid])))
        elif rid in proposed:
            rungs.append(Rung(rid, "proposed", (proposed[rid],), msg("plan.rung.needs_yes", rule=rid)))
        elif rid in dropped:
            rungs.append(Rung(rid, "dropped", tuple(s for s, _ in dropped[rid]), dropped[rid][-1][1]))
        elif rid in skipped:
            rungs.append(Rung(rid, "skipped", (), skipped[rid]))
        else:
            rungs.append(Rung(rid, "not_reached", (), msg("plan.rung.not_reached")))
    return Plan(steps=tuple(walk.steps), skipped=tuple(walk.skipped), fits=fits, advice=advice, rungs=tuple(rungs))


def evidence_tail(planner: Planner, book: RuleBook, skip: Sequence[str], walk: Walk) -> Walk:
    """A walk stops at its first fit; the rungs it did not reach that the crash log is evidence for
    still apply (evidence rungs only, none may break the fit)."""
    if not walk.estimate.fits or not _crashed(planner.crash):
        return walk
    seen = ({s.rule for s in walk.steps} | {k.rule for k in walk.skipped} | {s.rule for s in walk.proposed}
            | {s.rule for s, _ in walk.dropped})
    rest = planner.walk([r for r in book.rules if r.id not in seen], skip, evidence_only=True,
                        start=(walk.setup, walk.estimate))
    return Walk(walk.steps + rest.steps, walk.skipped + rest.skipped, rest.setup, rest.estimate, walk.proposed,
                 walk.dropped)
