"""The planner: walk the remedy ladder, and search for the least-cost set of remedies.

Ladder: rules in book order; a rule is skipped when its condition is false, when it would change
nothing, or when the re-estimated peak does not drop; a rule with ``repeat`` fires again while it
helps; the walk stops as soon as the estimate fits with headroom. A rung that changes the experiment
(applicability needs-consent) is taken only with the user's yes (`accept`); without it the walk
records what the rung would save (proposed) and goes on to the rungs below. Once the walk fits, every
step the plan still fits without is dropped, the latest first (a minimal plan).
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Callable

from oomdoctor.errors import InputError
from oomdoctor.facts import (
    Change,
    CrashReport,
    Estimate,
    Hardware,
    ModelShape,
    Msg,
    Plan,
    Rung,
    Skipped,
    Step,
    Text,
    TrainingSetup,
    msg,
)
from oomdoctor.planner import registry
from oomdoctor.planner.rules import PLACEHOLDER_RE, AllOf, AnyOf, Condition, Leaf, NotOf, Rule, RuleBook, clamp_field
from oomdoctor.records import record

Estimator = Callable[..., Estimate]

SAVING_EPS_GIB = 1e-3            # a rung must save more than this to count as helping
# Cost weights: a quality change outweighs any pile of throughput costs, so the least-cost plan
# changes the experiment only when nothing else fits ("quality-changing steps last").
COST_WEIGHTS = {
    ("none", "small"): 0.05, ("none", "medium"): 0.05, ("none", "large"): 0.05,
    ("throughput", "small"): 1.0, ("throughput", "medium"): 3.0, ("throughput", "large"): 8.0,
    ("quality", "small"): 100.0, ("quality", "medium"): 200.0, ("quality", "large"): 400.0,
}
# The least-cost search stops after this many trial plans (each a walk of ~1 ms) and keeps the ladder
# if it found nothing cheaper: a work bound rather than a clock, so a plan never depends on machine load.
SEARCH_MAX_EVALS = 400
ZERO3_GPU_COUNTS = (2, 4, 8, 16, 32, 64)
# How often one walk goes back to the top of the ladder because the peak moved to another phase.
MAX_PHASE_RESTARTS = 4


def _default_estimator() -> Estimator:
    from oomdoctor.memory import estimate
    return estimate


# ---------------------------------------------------------------- conditions

def holds(cond: Condition | None, facts: Mapping[str, Any]) -> bool:
    if cond is None:
        return True
    if isinstance(cond, AllOf):
        return all(holds(c, facts) for c in cond.items)
    if isinstance(cond, AnyOf):
        return any(holds(c, facts) for c in cond.items)
    if isinstance(cond, NotOf):
        return not holds(cond.item, facts)
    return _leaf_holds(cond, facts)


def _leaf_holds(leaf: Leaf, facts: Mapping[str, Any]) -> bool:
    if leaf.fact not in facts:
        # An unknown fact fails every comparison; only "missing" and "ne" hold.
        return leaf.op in ("missing", "ne")
    value, want = facts[leaf.fact], leaf.value
    op = leaf.op
    if op == "exists":
        return True
    if op == "missing":
        return False
    if isinstance(value, tuple):                 # list facts: in = shares an element
        hit = bool(set(value) & set(want))
        return hit if op == "in" else not hit
    if op == "eq":
        return value == want
    if op == "ne":
        return value != want
    if op == "in":
        return value in want
    if op == "not_in":
        return value not in want
    return {"lt": value < want, "le": value <= want, "gt": value > want, "ge": value >= want}[op]


def _fmt(fact: str, value: Any) -> str | Msg:
    """A fact's value as a person reads it: on/off (a words code), 40%, 12.5, "full"."""
    if isinstance(value, bool):
        return msg("common.on" if value else "common.off")
    if isinstance(value, float):
        if fact.endswith("_share") or fact.endswith("fragmentation"):
            return f"{value:.0%}"
        return f"{value:.1f}" if abs(value) >= 1 or value == 0 else f"{value:.2f}"
    if isinstance(value, tuple):
        shown = [_fmt(fact, v) for v in value]
        return msg("plan.value_list", items=tuple(shown)) if shown else msg("common.none")
    return str(value)


def _describe(leaf: Leaf, facts: Mapping[str, Any]) -> Msg:
    label = registry.FACTS[leaf.fact].label
    if leaf.fact not in facts:
        if leaf.fact.startswith("crash.") and not facts.get("crash.present"):
            return msg("plan.cond.no_crash_log")
        return msg("plan.cond.unknown", fact=label)
    return msg("plan.cond.is", fact=label, value=_fmt(leaf.fact, facts[leaf.fact]))


def unmet(cond: Condition, facts: Mapping[str, Any]) -> Msg:
    """Why a condition is false, in words a person understands (a words code with its values)."""
    if isinstance(cond, AllOf):
        return next(unmet(c, facts) for c in cond.items if not holds(c, facts))
    if isinstance(cond, AnyOf):
        reasons = list(dict.fromkeys(unmet(c, facts) for c in cond.items))
        out = reasons[-1]
        for reason in reversed(reasons[:-1]):
            out = msg("plan.cond.both", first=reason, second=out)
        return out
    if isinstance(cond, NotOf):
        inner = cond.item
        if isinstance(inner, Leaf):
            return _describe(inner, facts)
        return msg("plan.cond.excluded")
    leaf = cond
    if leaf.op == "exists":
        return msg("plan.cond.unknown", fact=registry.FACTS[leaf.fact].label)
    if leaf.op == "missing":
        return msg("plan.cond.for_unknown", found=_describe(leaf, facts))
    if leaf.fact not in facts:
        return _describe(leaf, facts)
    if registry.FACTS[leaf.fact].kind == registry.BOOL and leaf.op in ("eq", "ne"):
        return msg("plan.cond.for_state", found=_describe(leaf, facts),
                   state=_fmt(leaf.fact, leaf.value == (leaf.op == "eq")))
    return msg("plan.cond.needs", found=_describe(leaf, facts), op=msg(f"plan.op.{leaf.op}"),
               value=_fmt(leaf.fact, leaf.value))


# ---------------------------------------------------------------- actions

@record
class Firing:
    """What one application of a rule would do to a setup."""

    setup: TrainingSetup
    changes: tuple[Change, ...]
    env: Mapping[str, str]
    notes: tuple[Text, ...]         # the rule's notes, ${facts} filled in each language


def _round(value: float, mode: str) -> float:
    if mode == "floor":
        return math.floor(value + 1e-9)
    if mode == "ceil":
        return math.ceil(value - 1e-9)
    if mode == "nearest":
        return math.floor(value + 0.5)
    if mode in ("pow2_floor", "pow2_ceil"):
        if value < 1:
            return 1
        exp = math.log2(value)
        return 2 ** (math.floor(exp + 1e-9) if mode == "pow2_floor" else math.ceil(exp - 1e-9))
    return value


def render(text: str, facts: Mapping[str, Any], lang: str = "en") -> str:
    """Fill ``${fact}`` placeholders (names were checked at load); nothing else is interpreted."""
    from oomdoctor.words import show

    return PLACEHOLDER_RE.sub(
        lambda m: show(_fmt(m.group(1), facts[m.group(1)]), lang) if m.group(1) in facts else "?", text)


def fire(rule: Rule, setup: TrainingSetup, facts: Mapping[str, Any], *,
         shape: ModelShape | None = None, hw: Hardware | None = None,
         crash: CrashReport | None = None, est: Estimate | None = None) -> Firing:
    """Apply a rule's actions to a setup (its condition is the caller's business)."""
    values: dict[str, Any] = {}
    touched: list[str] = []
    env: dict[str, str] = {}
    note_texts = []

    def get(name: str) -> Any:
        return values[name] if name in values else getattr(setup, name)

    def put(name: str, value: Any) -> None:
        if name not in touched:
            touched.append(name)
        values[name] = clamp_field(name, value)     # no action reaches micro-batch 0 or 10**400 steps

    for action in rule.actions:
        p = action.params
        if action.kind == "set":
            if "from" in p:
                if p["from"] not in facts:
                    continue
                value = facts[p["from"]]
                if registry.SETUP_FIELDS[p["field"]] == registry.INT:
                    value = int(round(value))
            else:
                value = p["value"]
            put(p["field"], value)
        elif action.kind in ("enable", "disable"):
            put(p["field"], action.kind == "enable")
        elif action.kind == "scale":
            current = get(p["field"])
            if current is None:
                continue
            new = _round(current * p["factor"], p["rounding"])
            if "min" in p:
                new = max(new, p["min"])
            if "max" in p:
                new = min(new, p["max"])
            put(p["field"], int(new) if registry.SETUP_FIELDS[p["field"]] == registry.INT else float(new))
        elif action.kind == "keep":
            # The effective batch (samples per optimizer step) is what the experiment is about;
            # accumulation absorbs whatever micro-batch and GPU count changed.
            target = setup.effective_batch
            per_pass = get("micro_batch") * max(1, get("n_gpus"))
            put("grad_accum", max(1, int(round(target / per_pass))))
        elif action.kind == "env":
            env[p["name"]] = p["value"]
        elif action.kind == "note":
            note_texts.append(p["text"])
    new_setup = setup.with_changes(**values) if values else setup
    changes = tuple(Change(n, getattr(setup, n), getattr(new_setup, n)) for n in touched
                    if getattr(setup, n) != getattr(new_setup, n))
    notes: tuple[Text, ...] = ()
    if note_texts:
        after = registry.gather(new_setup, shape, hw, crash, est) if shape is not None and hw is not None else facts
        notes = tuple(Text(render(t.en, after, "en"), render(t.zh, after, "zh") if t.zh else None)
                      for t in note_texts)
    return Firing(new_setup if changes else setup, changes, env, notes)


def changes_setup(rule: Rule) -> bool:
    return any(a.kind in ("set", "scale", "enable", "disable", "keep") for a in rule.actions)


def is_evidence_rule(rule: Rule) -> bool:
    """Rules the estimate cannot judge (environment, launch advice, eval-time fixes): their condition
    is the evidence, so they apply whenever it holds."""
    return not rule.check_saving or not changes_setup(rule)


# ---------------------------------------------------------------- the walk

def _skip_requested(rule: Rule, skip: Sequence[str]) -> bool:
    names = {rule.id.lower(), rule.slug, rule.category, rule.applicability, *rule.cost_kinds}
    return any(s.lower() in names or s == rule.id for s in skip)


# Words of --accept that give consent to every rung that changes the experiment.
ACCEPT_ALL = ("quality", "all")


def needs_yes(rule: Rule, accept: Sequence[str]) -> bool:
    """The rung changes the experiment and the user did not agree to it (by id, slug, `quality` or `all`)."""
    if rule.applicability != "needs-consent":
        return False
    names = {rule.id.lower(), rule.slug.lower(), *ACCEPT_ALL}
    return not any(a.strip().lower() in names for a in accept)


@record(frozen=False)
class _Walk:
    """The state of one walk down the ladder: steps taken, rules skipped, where the setup stands."""

    steps: list
    skipped: list
    setup: TrainingSetup
    estimate: Estimate
    proposed: list = field(default_factory=list)     # Steps a rung without consent would take
    dropped: list = field(default_factory=list)      # (Step, Msg): steps the minimal plan left out


class _Planner:
    def __init__(self, setup: TrainingSetup, shape: ModelShape, hw: Hardware, crash: CrashReport | None,
                 headroom: float, estimator: Estimator | None) -> None:
        self.setup, self.shape, self.hw, self.crash, self.headroom = setup, shape, hw, crash, headroom
        self.estimator = estimator or _default_estimator()
        self._cache: dict[tuple, Estimate | InputError] = {}
        self._facts: dict[tuple, dict[str, Any]] = {}
        self.start = self.estimate(setup)
        if isinstance(self.start, InputError):
            raise self.start

    @staticmethod
    def _key(setup: TrainingSetup, hw: Hardware | None = None) -> tuple:
        # Rules only touch the scalar fields, so those (and the card) identify an estimate.
        return (tuple(getattr(setup, f) for f in registry.SETUP_FIELDS), setup.lora_targets, hw)

    def estimate(self, setup: TrainingSetup, hw: Hardware | None = None) -> Estimate | InputError:
        key = self._key(setup, hw)
        if key in self._cache:
            return self._cache[key]
        try:
            result: Estimate | InputError = self.estimator(setup, self.shape, hw or self.hw, crash=self.crash,
                                                           headroom=self.headroom)
        except InputError as exc:    # the estimator refuses this combination; the rung is skipped
            result = exc
        self._cache[key] = result
        return result

    def facts(self, setup: TrainingSetup, est: Estimate) -> dict[str, Any]:
        # The least-cost search walks the same prefixes many times: the facts of a setup (and its
        # estimate, which the setup determines) are gathered once. Callers never mutate them.
        key = (self._key(setup), id(est))
        found = self._facts.get(key)
        if found is None:
            found = self._facts[key] = registry.gather(setup, self.shape, self.hw, self.crash, est)
        return found

    def walk(self, rules: Sequence[Rule], skip: Sequence[str] = (), *, evidence_only: bool = False,
             start: tuple[TrainingSetup, Estimate] | None = None, accept: Sequence[str] = ()) -> _Walk:
        cur_setup, cur_est = start or (self.setup, self.start)
        steps: list[Step] = []
        skipped: list[Skipped] = []
        proposed: list[Step] = []
        facts = self.facts(cur_setup, cur_est)
        order = list(rules)
        done: set[str] = set()          # rungs that fired or were proposed: not looked at again
        restarts = 0
        i = -1
        while i + 1 < len(order):
            i += 1
            rule = order[i]
            if rule.id in done:
                continue
            if cur_est.fits and not evidence_only:
                break
            phase_before = cur_est.phase
            if evidence_only and not is_evidence_rule(rule):
                continue
            if _skip_requested(rule, skip):
                skipped.append(Skipped(rule.id, msg("plan.skip.on_request")))
                continue
            fired = 0
            while fired < rule.repeat:
                if not holds(rule.when, facts):
                    if fired == 0 and not evidence_only:     # evidence walks list only rungs tried
                        why = unmet(rule.when, facts)
                        skipped.append(Skipped(rule.id, msg("plan.skip.unmet_because", why=why, because=rule.skip_why)
                                               if rule.skip_why else msg("plan.skip.unmet", why=why)))
                    break
                firing = fire(rule, cur_setup, facts, shape=self.shape, hw=self.hw, crash=self.crash, est=cur_est)
                if not firing.changes and not firing.env and not firing.notes:
                    if fired == 0:
                        skipped.append(Skipped(rule.id, msg("plan.skip.no_change")))
                    break
                new_est = self.estimate(firing.setup) if firing.changes else cur_est
                if isinstance(new_est, InputError):
                    if fired == 0:
                        skipped.append(Skipped(rule.id, msg("plan.skip.estimate_refuses", error=new_est.message)))
                    break
                saved = cur_est.peak_gib - new_est.peak_gib
                if firing.changes and rule.check_saving and saved <= SAVING_EPS_GIB:
                    if fired == 0:
                        skipped.append(Skipped(rule.id, msg("plan.skip.no_saving", before=cur_est.peak_gib,
                                                            after=new_est.peak_gib, dominant=_dominant(cur_est))))
                    break
                if evidence_only and firing.changes and cur_est.fits and not new_est.fits:
                    if fired == 0:
                        skipped.append(Skipped(rule.id, msg(
                            "plan.skip.breaks_fit", peak=new_est.peak_gib,
                            budget=new_est.capacity_gib * (1 - new_est.headroom))))
                    break
                host_gib = self.hw.host_ram_gib
                if host_gib is not None and new_est.host_ram_gib > host_gib > cur_est.host_ram_gib:
                    if fired == 0:
                        skipped.append(Skipped(rule.id, msg("plan.skip.host_ram", need=new_est.host_ram_gib,
                                                            have=host_gib)))
                    break
                step = Step(rule=rule.id, slug=rule.slug, title=rule.title, changes=firing.changes,
                            setup=firing.setup, estimate=new_est, saved_gib=saved, costs=rule.cost_kinds,
                            applicability=rule.applicability, why=rule.why, env=dict(firing.env),
                            notes=firing.notes)
                if needs_yes(rule, accept):
                    # Consent means consent: say what it would do, and walk on below it from where we stand.
                    proposed.append(step)
                    done.add(rule.id)
                    break
                steps.append(step)
                done.add(rule.id)
                fired += 1
                if firing.changes:
                    cur_setup, cur_est = firing.setup, new_est
                    facts = self.facts(cur_setup, cur_est)
                else:
                    break                    # advice and environment are given once
                if cur_est.fits and not evidence_only:
                    break
            if (not evidence_only and not cur_est.fits and cur_est.phase != phase_before
                    and restarts < MAX_PHASE_RESTARTS and any(r.id not in done for r in order[:i])):
                # The peak moved to another phase (backward -> evaluation): the rungs above that did nothing
                # for the old peak may help with the new one, so the ladder is looked at again from the top.
                restarts += 1
                retried = {r.id for r in order[:i] if r.id not in done}
                skipped = [k for k in skipped if k.rule not in retried]
                i = -1
        return _Walk(steps, skipped, cur_setup, cur_est, proposed)

    def replay(self, rules: Sequence[Rule]) -> _Walk | None:
        """Fire `rules` in this order from the start, one firing each (a rule twice fires twice), re-estimating
        after each; None when one of them no longer applies or changes nothing, or the estimate refuses."""
        cur_setup, cur_est = self.setup, self.start
        steps: list[Step] = []
        for rule in rules:
            facts = self.facts(cur_setup, cur_est)
            if not holds(rule.when, facts):
                return None
            firing = fire(rule, cur_setup, facts, shape=self.shape, hw=self.hw, crash=self.crash, est=cur_est)
            if not firing.changes and not firing.env and not firing.notes:
                return None
            new_est = self.estimate(firing.setup) if firing.changes else cur_est
            if isinstance(new_est, InputError):
                return None
            host_gib = self.hw.host_ram_gib
            if host_gib is not None and new_est.host_ram_gib > host_gib > cur_est.host_ram_gib:
                return None
            steps.append(Step(rule=rule.id, slug=rule.slug, title=rule.title, changes=firing.changes,
                              setup=firing.setup, estimate=new_est, saved_gib=cur_est.peak_gib - new_est.peak_gib,
                              costs=rule.cost_kinds, applicability=rule.applicability, why=rule.why,
                              env=dict(firing.env), notes=firing.notes))
            if firing.changes:
                cur_setup, cur_est = firing.setup, new_est
        return _Walk(steps, [], cur_setup, cur_est)

    def minimize(self, walk: _Walk, book: RuleBook) -> _Walk:
        """Once a walk fits, drop every step the plan still fits without and costs no less with (planner.costs),
        the costliest first (an offload before the sharding it overlaps, a quality step before a free one):
        a rung the walk took
        early may be made unnecessary by one it took later (cutoff_len cut, then everything offloaded).
        Steps the crash log is evidence for stay: the estimate cannot judge them."""
        if not walk.estimate.fits or len(walk.steps) < 2:
            return walk
        by_id = {r.id: r for r in book}
        current = walk
        dropped: list[tuple[Step, Msg]] = []
        while len(current.steps) > 1:
            now = walk_cost(self, current, book).total
            options = []
            for i, step in enumerate(current.steps):
                rule = by_id.get(step.rule)
                if rule is None or is_evidence_rule(rule) or not step.changes:
                    continue
                trial = self.replay([by_id[s.rule] for j, s in enumerate(current.steps) if j != i and s.rule in by_id])
                if trial is None or not trial.estimate.fits:
                    continue
                # the cheapest plan left is the one without the costliest step; the latest first on a tie.
                # A step whose removal costs more (sharding over cards at hand is faster) stays.
                cost = walk_cost(self, trial, book).total
                if cost <= now + 1e-9:
                    options.append((cost, -i, step, trial))
            if not options:
                break
            _, _, step, trial = min(options, key=lambda o: (o[0], o[1]))
            dropped.append((step, msg("plan.rung.dropped", peak=trial.estimate.peak_gib,
                                      budget=trial.estimate.capacity_gib * (1 - trial.estimate.headroom))))
            current = trial
        if not dropped:
            return walk
        return _Walk(list(current.steps), walk.skipped, current.setup, current.estimate, walk.proposed,
                     list(reversed(dropped)))


def _dominant(est: Estimate) -> Msg | str:
    """Which part of the memory sets the peak, so a skipped rung makes sense to a novice."""
    if not est.components:
        return ""
    name, gib = max(est.components.items(), key=lambda kv: kv[1])
    component = msg(f"memory.component_long.{name}")
    if est.phase and est.phase != "train":
        return msg("plan.dominant_at", phase=est.phase, component=component, gib=gib)
    return msg("plan.dominant", component=component, gib=gib)


def _crashed(crash: CrashReport | None) -> bool:
    return crash is not None and bool(crash.events)


def load_default_book(rules: RuleBook | None) -> RuleBook:
    if rules is not None:
        return rules
    from oomdoctor.planner.book import load_rules
    return load_rules()


def make_plan(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *, crash: CrashReport | None = None,
              rules: RuleBook | None = None, headroom: float = 0.10, skip: Sequence[str] = (),
              estimator: Estimator | None = None, accept: Sequence[str] = ()) -> Plan:
    """Walk the ladder in book order until the estimate fits with headroom; `accept` names the rungs that
    change the experiment the user agreed to (ids, slugs, or `quality` for all of them)."""
    book = load_default_book(rules)
    planner = _Planner(setup, shape, hw, crash, headroom, estimator)
    return _ladder(planner, book, skip, accept)


def _ladder_walk(planner: _Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str] = ()) -> _Walk:
    # The walk stops at its first fit (at once when the estimate fits as configured); the minimal plan
    # drops what the fit no longer needs.
    return planner.minimize(_unstuck(planner, book, skip, accept, planner.walk(book.rules, skip, accept=accept)), book)


def _ladder(planner: _Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str] = ()) -> Plan:
    return _finish(planner, book, skip, accept, _ladder_walk(planner, book, skip, accept))


def _finish(planner: _Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str], walk: _Walk) -> Plan:
    # the evidence tail adds what the crash log points to; advice says what would fit when nothing does
    walk = _evidence_tail(planner, book, skip, walk)
    fits = walk.estimate.fits
    advice = () if fits else advise(planner, walk.setup, walk.estimate, book=book, skip=skip, accept=accept,
                                    proposed=walk.proposed)
    return _plan_of(walk, book, fits, advice)


def _unstuck(planner: _Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str], walk: _Walk) -> _Walk:
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


def _plan_of(walk: _Walk, book: RuleBook, fits: bool, advice: tuple[Msg, ...] = ()) -> Plan:
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


def _evidence_tail(planner: _Planner, book: RuleBook, skip: Sequence[str], walk: _Walk) -> _Walk:
    """A walk stops at its first fit; the rungs it did not reach that the crash log is evidence for
    still apply (evidence rungs only, none may break the fit)."""
    if not walk.estimate.fits or not _crashed(planner.crash):
        return walk
    seen = ({s.rule for s in walk.steps} | {k.rule for k in walk.skipped} | {s.rule for s in walk.proposed}
            | {s.rule for s, _ in walk.dropped})
    rest = planner.walk([r for r in book.rules if r.id not in seen], skip, evidence_only=True,
                        start=(walk.setup, walk.estimate))
    return _Walk(walk.steps + rest.steps, walk.skipped + rest.skipped, rest.setup, rest.estimate, walk.proposed,
                 walk.dropped)


# ---------------------------------------------------------------- cost and the least-cost plan

def rule_cost(rule: Rule) -> float:
    return sum(COST_WEIGHTS[(c.kind, c.size)] for c in rule.costs)


def plan_cost(plan: Plan, rules: RuleBook | None = None) -> float:
    """The weighted cost of a plan's steps (a repeated rung counts each time it fires)."""
    book = load_default_book(rules)
    total = 0.0
    for step in plan.steps:
        rule = book.get(step.rule)
        total += rule_cost(rule) if rule is not None else sum(
            COST_WEIGHTS[(k, "medium")] for k in step.costs)
    return total


def cost_by_kind(plan: Plan, rules: RuleBook | None = None) -> dict[str, float]:
    """The plan's weighted cost split by kind (quality, throughput, none), weighed as plan_cost weighs it."""
    book = load_default_book(rules)
    out = {kind: 0.0 for kind in ("quality", "throughput", "none")}
    for step in plan.steps:
        rule = book.get(step.rule)
        kinds = [(c.kind, c.size) for c in rule.costs] if rule is not None else [(k, "medium") for k in step.costs]
        for kind, size in kinds:
            out[kind] = out.get(kind, 0.0) + COST_WEIGHTS[(kind, size)]
    return out


@record(frozen=False)
class _Trial:
    """One candidate set of fired rules in the least-cost search, with its walk and cost."""

    walk: _Walk
    fired: frozenset
    cost: Any                       # costs.Cost

    @property
    def fits(self) -> bool:
        return self.walk.estimate.fits


def walk_cost(planner: _Planner, walk: _Walk, book: RuleBook):
    """The cost of a walk's steps under the one cost model (planner.costs)."""
    from oomdoctor.planner import costs

    by_id = {r.id: r for r in book}
    pairs = [(by_id[s.rule], s) for s in walk.steps if s.rule in by_id and s.changes]
    return costs.cost_of(planner.setup, walk.setup, pairs, planner.shape, planner.hw)


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
    book = load_default_book(rules)
    planner = _Planner(setup, shape, hw, crash, headroom, estimator)
    ladder_walk = _ladder_walk(planner, book, skip, accept)
    ladder = _finish(planner, book, skip, accept, ladder_walk)
    if planner.start.fits:
        return ladder
    best = _search(planner, book, skip, accept, max_evals)
    candidates = [w for w in (best, ladder_walk if ladder_walk.estimate.fits else None) if w is not None]
    if not candidates:
        return ladder
    # the ladder wins ties: its order is the one the user reads
    chosen = min(candidates, key=lambda w: (walk_cost(planner, w, book).total, w is not ladder_walk))
    chosen = stretch(planner, planner.minimize(chosen, book), book)
    walk = _evidence_tail(planner, book, skip, chosen)
    plan = _plan_of(walk, book, True)
    return replace(plan, rungs=_explained(plan, ladder, walk), skipped=_skips(plan, ladder),
                   cost=walk_cost(planner, walk, book).as_dict())


def _search(planner: _Planner, book: RuleBook, skip: Sequence[str], accept: Sequence[str],
            max_evals: int) -> _Walk | None:
    from oomdoctor.planner import costs

    # A rung that changes the experiment without the user's yes is never part of a plan, cheap or not.
    usable = [r for r in book if not _skip_requested(r, skip) and not needs_yes(r, accept)]
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


def _explained(plan: Plan, ladder: Plan, walk: _Walk) -> tuple[Rung, ...]:
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


# ---------------------------------------------------------------- the least change that fits

# Fields a step may change by less than its rung says, searched for the value nearest the configured one
# that still fits: the experiment's own settings first (length, rank), then the micro-batch.
LENGTH_MULTIPLE = 256        # cutoff_len candidates: multiples of 256 (the ladder's value is the floor)
RANK_MULTIPLE = 8            # LoRA rank candidates: multiples of 8


def _candidates(field_name: str, start: TrainingSetup, low: int, high: int) -> list[int]:
    """Values strictly between the planned `low` and the configured `high`, ascending."""
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
    return setup.with_changes(**{field_name: value})


def stretch(planner: _Planner, walk: _Walk, book: RuleBook) -> _Walk:
    """Each length, rank or micro-batch cut of a fitting walk made as small as still fits: the longest
    cutoff_len (a multiple of 256, not below the rung's value), the highest LoRA rank, the largest
    micro-batch that divides the effective batch (accumulation keeps it). The estimator is fast, so each is a
    binary search over the candidates, with the rest of the plan as it is."""
    if not walk.estimate.fits:
        return walk
    by_id = {r.id: r for r in book}
    # a value an evidence rung set (the log, not the estimate, asked for it) is the rung's to keep
    held = {c.field for s in walk.steps if s.rule in by_id and is_evidence_rule(by_id[s.rule]) for c in s.changes}
    for name in ("seq_len", "lora_rank", "micro_batch"):
        if name in held:
            continue
        low, high = getattr(walk.setup, name), getattr(planner.setup, name)
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


def _rewrite(planner: _Planner, walk: _Walk, book: RuleBook, name: str, value: int) -> _Walk:
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
            wanted.update({f: getattr(target, f) for f in coupled})
        new_setup = cur_setup.with_changes(**wanted) if wanted else cur_setup
        changes = tuple(Change(f, getattr(cur_setup, f), getattr(new_setup, f)) for f in
                        [c.field for c in step.changes] + sorted(coupled - {c.field for c in step.changes})
                        if f in wanted and getattr(cur_setup, f) != getattr(new_setup, f))
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
    return _Walk(steps, walk.skipped, cur_setup, cur_est, walk.proposed, walk.dropped)


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
    return both("plan.fit.micro_batch", mb=after.micro_batch, accum=after.grad_accum,
                eb=after.effective_batch), None


# ---------------------------------------------------------------- advice when nothing fits

def _catalog_cards() -> list[Hardware]:
    """Every card of the GPU catalog, as Hardware."""
    from oomdoctor import gpus

    return [Hardware(gpu=spec.name, gpu_gib=spec.usable_gib, bf16=spec.bf16, flash_attn2=spec.flash_attn2,
                     source="flag") for spec in gpus.catalog()]


def _with_zero3(setup: TrainingSetup, n: int) -> TrainingSetup:
    per_pass = setup.micro_batch * n
    accum = max(1, int(round(setup.effective_batch / per_pass)))
    return setup.with_changes(zero_stage=3, n_gpus=n, grad_accum=accum)


def advise(planner: _Planner, final_setup: TrainingSetup, final_est: Estimate, *, book: RuleBook | None = None,
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
        walk = _search(planner, book, skip, tuple(accept) + ids, SEARCH_MAX_EVALS) or planner.walk(
            book.rules, skip, accept=tuple(accept) + ids)
        walk = stretch(planner, planner.minimize(walk, book), book)
        if walk.estimate.fits:
            taken = tuple(dict.fromkeys(s.rule for s in walk.steps if s.rule in ids))
            if taken:
                titles = tuple(dict.fromkeys(s.title for s in walk.steps if s.rule in taken))
                out.append(msg("plan.advice.with_yes", rules=",".join(taken), peak=walk.estimate.peak_gib,
                               titles=titles))

    def gpus_needed(setup: TrainingSetup) -> tuple[int, float] | None:
        for n in ZERO3_GPU_COUNTS:
            est = planner.estimate(_with_zero3(setup, n), replace(hw, n_gpus=max(n, hw.n_gpus)))
            if isinstance(est, Estimate) and est.fits:
                return n, est.peak_gib
        return None

    original = gpus_needed(planner.setup)
    if original:
        out.append(msg("plan.advice.zero3_as_is", n=original[0], peak=original[1]))
    if final_setup != planner.setup:
        planned = gpus_needed(final_setup)
        if planned and (not original or planned[0] < original[0]):
            out.append(msg("plan.advice.zero3_planned", n=planned[0], peak=planned[1]))
    need_gib = final_est.peak_gib / (1 - headroom) + hw.other_procs_gib
    fitting = []
    for card in _catalog_cards():
        if card.gpu_gib <= hw.gpu_gib:
            continue
        est = planner.estimate(final_setup, replace(card, n_gpus=hw.n_gpus))
        if isinstance(est, Estimate) and est.fits:
            fitting.append((card.gpu_gib, card.gpu, est.peak_gib))
    if fitting:
        gib, name, peak = min(fitting)
        out.append(msg("plan.advice.card", card=name, gib=gib, peak=peak))
    else:
        out.append(msg("plan.advice.card_size", gib=math.ceil(need_gib)))
    return tuple(out)
