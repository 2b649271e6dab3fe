"""The least change that fits: each length, rank or micro-batch cut of a fitting walk made as small as still fits."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import Change, Estimate, Step, Text, TrainingSetup, msg
from oomdoctor.planner.actions import is_evidence_rule
from oomdoctor.planner.registry import value_of, with_values
from oomdoctor.planner.rules import RuleBook
from oomdoctor.planner.walk import Planner, Walk

# Fields a step may change by less than its rung says, searched for the value nearest the configured one
# that still fits: the experiment's own settings first (length, rank), then the micro-batch.
LENGTH_MULTIPLE = 256        # cutoff_len candidates: multiples of 256 (the ladder's value is the floor)


RANK_MULTIPLE = 8            # LoRA rank candidates: multiples of 8


def _bounds(name: str, walk: TrainingSetup, start: TrainingSetup) -> tuple[Any, Any]:
    """(the planned value, the configured one) of a field stretch may raise. verl's token budget, when the plan
    turned use_dynamic_bsz on: up to the tokens per GPU the configured micro-batch held (memory/hybrid.py)."""
    if name != "token_budget":
        return getattr(walk, name), getattr(start, name)
    if not walk.mechanisms.dynamic_bsz or start.mechanisms.dynamic_bsz:
        return None, None
    sp = max(1, int(start.seq_parallel or 1))
    return value_of(walk, name), start.micro_batch * start.seq_len // sp


def _candidates(field_name: str, start: TrainingSetup, low: int, high: int) -> list[int]:
    """Values strictly between the planned `low` and the configured `high`, ascending."""
    if field_name == "token_budget":     # whole samples (verl asserts the budget holds the longest one)
        return [v for v in range(low + 1, high) if v % max(1, start.seq_len) == 0]
    if field_name == "seq_len":
        return [v for v in range(low + 1, high) if v % LENGTH_MULTIPLE == 0]
    if field_name == "lora_rank":
        return [v for v in range(low + 1, high) if v % RANK_MULTIPLE == 0]
    per_pass = max(1, start.n_gpus)
    return [m for m in range(low + 1, high) if start.effective_batch % (m * per_pass) == 0]


def _with_value(setup: TrainingSetup, field_name: str, value: int, effective: int) -> TrainingSetup:
    if field_name == "micro_batch":
        return setup.with_changes(micro_batch=value,
                                  grad_accum=max(1, int(round(effective / (value * max(1, setup.n_gpus))))))
    if field_name == "token_budget":
        return with_values(setup, {field_name: value})
    return setup.with_changes(**{field_name: value})


def stretch(planner: Planner, walk: Walk, book: RuleBook) -> Walk:
    """Each length, rank or micro-batch cut of a fitting walk made as small as still fits: the longest
    cutoff_len (a multiple of 256, not below the rung's value), the highest LoRA rank, the largest
    micro-batch that divides the effective batch (accumulation keeps it). The estimator is fast, so each is a
    binary search over the candidates, with the rest of the plan as it is."""
    if not walk.estimate.fits:
        return walk
    by_id = {r.id: r for r in book}
    # a value an evidence rung set (the log, not the estimate, asked for it) is the rung's to keep
    held = {c.field for s in walk.steps if s.rule in by_id and is_evidence_rule(by_id[s.rule]) for c in s.changes}
    for name in ("seq_len", "lora_rank", "micro_batch", "token_budget"):
        if name in held:
            continue
        low, high = _bounds(name, walk.setup, planner.setup)
        if not isinstance(low, int) or not isinstance(high, int) or low >= high:
            continue
        values = _candidates(name, walk.setup, low, high)
        effective = walk.setup.effective_batch
        lo, hi, found = 0, len(values) - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            est = planner.estimate(_with_value(walk.setup, name, values[mid], effective))
            if isinstance(est, Estimate) and est.fits:
                found, lo = values[mid], mid + 1
            else:
                hi = mid - 1
        if found is not None:
            walk = _rewrite(planner, walk, book, name, found)
    return walk


def _rewrite(planner: Planner, walk: Walk, book: RuleBook, name: str, value: int) -> Walk:
    """The walk with field `name` set to `value` by its first step that changes it (the later ones no longer
    touch it), every setup and estimate after it recomputed, and that step's title saying the value."""

    coupled = {name, "grad_accum"} if name == "micro_batch" else {name}
    effective = walk.setup.effective_batch
    cur_setup, cur_est = planner.setup, planner.start
    steps: list[Step] = []
    first = True
    for step in walk.steps:
        touches = any(c.field == name for c in step.changes)
        wanted = {c.field: c.after for c in step.changes if c.field not in coupled}
        if touches and first:
            target = _with_value(cur_setup, name, value, effective)
            wanted.update({f: value_of(target, f) for f in coupled})
        new_setup = with_values(cur_setup, wanted) if wanted else cur_setup
        changes = tuple(Change(f, value_of(cur_setup, f), value_of(new_setup, f)) for f in
                        [c.field for c in step.changes] + sorted(coupled - {c.field for c in step.changes})
                        if f in wanted and value_of(cur_setup, f) != value_of(new_setup, f))
        if not changes and not step.env and not step.notes:
            continue            # a later cut of the same field: the first one now goes the whole way
        new_est = planner.estimate(new_setup) if changes else cur_est
        if isinstance(new_est, InputError):
            return walk
        title, notes = step.title, step.notes
        if touches and first:
            first = False
            title, note = _fit_texts(name, planner.setup, new_setup)
            notes = tuple(notes) + ((note,) if note is not None else ())
        steps.append(replace(step, title=title, changes=changes, setup=new_setup, estimate=new_est,
                             saved_gib=cur_est.peak_gib - new_est.peak_gib, notes=notes))
        cur_setup, cur_est = new_setup, new_est
    if not cur_est.fits:
        return walk
    return Walk(steps, walk.skipped, cur_setup, cur_est, walk.proposed, walk.dropped)


def _fit_texts(name: str, start: TrainingSetup, after: TrainingSetup) -> tuple[Text, Text | None]:
    """The title of a step whose value was searched, and for a length cut what it keeps of each sample."""
    from oomdoctor.words import show

    def both(code: str, **values: Any) -> Text:
        m = msg(code, **values)
        return Text(show(m, "en"), show(m, "zh"))

    if name == "seq_len":
        return (both("plan.fit.seq_len", tokens=after.seq_len, floor=after.seq_len),
                both("plan.fit.seq_len_keeps", tokens=after.seq_len, before=start.seq_len,
                     share=after.seq_len / max(1, start.seq_len)))
    if name == "lora_rank":
        return both("plan.fit.lora_rank", rank=after.lora_rank), None
    if name == "token_budget":
        return both("plan.fit.token_budget", tokens=value_of(after, name)), None
    return both("plan.fit.micro_batch", mb=after.micro_batch, accum=after.grad_accum,
                eb=after.effective_batch), None
