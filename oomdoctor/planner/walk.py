"""One walk down the remedy ladder, and the planner state every plan shares (the cached estimates and facts).

A rule is skipped when its condition is false, when it would change nothing, or when the re-estimated peak
does not drop; a rule with ``repeat`` fires again while it helps; the walk stops as soon as the estimate fits
with headroom. A rung that changes the experiment (applicability needs-consent) is taken only with the user's
yes (`accept`); without it the walk records what the rung would save (proposed) and goes on below. Once a walk
fits, `minimize` drops every step the plan still fits without.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Callable

from oomdoctor.errors import InputError
from oomdoctor.facts import CrashReport, Estimate, Hardware, ModelShape, Msg, Skipped, Step, TrainingSetup, msg
from oomdoctor.planner import registry
from oomdoctor.planner.actions import Firing, fire, is_evidence_rule
from oomdoctor.planner.conditions import holds, unmet
from oomdoctor.planner.rules import Rule, RuleBook
from oomdoctor.records import record

if TYPE_CHECKING:
    from oomdoctor.planner.costs import Cost

Estimator = Callable[..., Estimate]


SAVING_EPS_GIB = 1e-3            # a rung must save more than this to count as helping


# How often one walk goes back to the top of the ladder because the peak moved to another phase.
MAX_PHASE_RESTARTS = 4


def _default_estimator() -> Estimator:
    from oomdoctor.memory import estimate
    return estimate


def skip_requested(rule: Rule, skip: Sequence[str]) -> bool:
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
class Walk:
    """The state of one walk down the ladder: steps taken, rules skipped, where the setup stands."""

    steps: list
    skipped: list
    setup: TrainingSetup
    estimate: Estimate
    proposed: list = field(default_factory=list)     # Steps a rung without consent would take
    dropped: list = field(default_factory=list)      # (Step, Msg): steps the minimal plan left out


@record(frozen=False)
class _Cursor:
    """Where one walk stands while it goes down the ladder."""

    setup: TrainingSetup
    estimate: Estimate
    facts: dict[str, Any]
    evidence_only: bool
    accept: tuple[str, ...]
    steps: list[Step] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    proposed: list[Step] = field(default_factory=list)
    done: set[str] = field(default_factory=set)     # rungs that fired or were proposed: not looked at again


def _peak_moved(at: _Cursor, phase_before: str, above: Sequence[Rule]) -> bool:
    """A full walk still short of a fit whose peak moved to another phase, with rungs above not taken."""
    return (not at.evidence_only and not at.estimate.fits and at.estimate.phase != phase_before
            and any(r.id not in at.done for r in above))


class Planner:
    def __init__(self, setup: TrainingSetup, shape: ModelShape, hw: Hardware, crash: CrashReport | None,
                 headroom: float, estimator: Estimator | None) -> None:
        self.setup, self.shape, self.hw, self.crash, self.headroom = setup, shape, hw, crash, headroom
        self.estimator = estimator or _default_estimator()
        self._cache: dict[tuple, Estimate | InputError] = {}
        self._facts: dict[tuple, dict[str, Any]] = {}
        start = self.estimate(setup)
        if isinstance(start, InputError):
            raise start
        self.start: Estimate = start

    @staticmethod
    def _key(setup: TrainingSetup, hw: Hardware | None = None) -> tuple:
        # Rules only touch the scalar fields, so those (and the card) identify an estimate.
        return (tuple(registry.value_of(setup, f) for f in registry.SETUP_FIELDS), setup.lora_targets, hw)

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
             start: tuple[TrainingSetup, Estimate] | None = None, accept: Sequence[str] = ()) -> Walk:
        cur_setup, cur_est = start or (self.setup, self.start)
        at = _Cursor(cur_setup, cur_est, self.facts(cur_setup, cur_est), evidence_only, tuple(accept))
        order = list(rules)
        restarts = 0
        i = -1
        while i + 1 < len(order):
            i += 1
            rule = order[i]
            if rule.id in at.done:
                continue
            if at.estimate.fits and not evidence_only:
                break
            phase_before = at.estimate.phase
            if evidence_only and not is_evidence_rule(rule):
                continue
            if skip_requested(rule, skip):
                at.skipped.append(Skipped(rule.id, msg("plan.skip.on_request")))
                continue
            self._climb(rule, at)
            if restarts < MAX_PHASE_RESTARTS and _peak_moved(at, phase_before, order[:i]):
                # The peak moved to another phase (backward -> evaluation): the rungs above that did nothing
                # for the old peak may help with the new one, so the ladder is looked at again from the top.
                restarts += 1
                retried = {r.id for r in order[:i] if r.id not in at.done}
                at.skipped = [k for k in at.skipped if k.rule not in retried]
                i = -1
        return Walk(at.steps, at.skipped, at.setup, at.estimate, at.proposed)

    def _climb(self, rule: Rule, at: _Cursor) -> None:
        """Fire one rung from where the walk stands, again while it helps (up to its `repeat`); what stops it
        the first time is why it was skipped."""
        fired = 0
        while fired < rule.repeat:
            if rule.when is not None and not holds(rule.when, at.facts):
                if fired == 0 and not at.evidence_only:     # evidence walks list only rungs tried
                    why = unmet(rule.when, at.facts)
                    at.skipped.append(Skipped(rule.id, msg("plan.skip.unmet_because", why=why, because=rule.skip_why)
                                              if rule.skip_why else msg("plan.skip.unmet", why=why)))
                return
            firing = fire(rule, at.setup, at.facts, shape=self.shape, hw=self.hw, crash=self.crash, est=at.estimate)
            judged = self._judge(rule, firing, at)
            if isinstance(judged, Msg):
                if fired == 0:
                    at.skipped.append(Skipped(rule.id, judged))
                return
            step = Step(rule=rule.id, slug=rule.slug, title=rule.title, changes=firing.changes,
                        setup=firing.setup, estimate=judged, saved_gib=at.estimate.peak_gib - judged.peak_gib,
                        costs=rule.cost_kinds, applicability=rule.applicability, why=rule.why, env=dict(firing.env),
                        notes=firing.notes)
            at.done.add(rule.id)
            if needs_yes(rule, at.accept):
                # Consent means consent: say what it would do, and walk on below it from where we stand.
                at.proposed.append(step)
                return
            at.steps.append(step)
            fired += 1
            if not firing.changes:
                return                    # advice and environment are given once
            at.setup, at.estimate = firing.setup, judged
            at.facts = self.facts(at.setup, at.estimate)
            if at.estimate.fits and not at.evidence_only:
                return

    def _judge(self, rule: Rule, firing: Firing, at: _Cursor) -> Estimate | Msg:
        """The estimate after a firing, or why the rung does not count: it changes nothing, the estimator
        refuses the setup, it saves nothing it can see, it breaks an evidence walk's fit, or it needs more
        host RAM than the machine has."""
        if not firing.changes and not firing.env and not firing.notes:
            return msg("plan.skip.no_change")
        cur_est = at.estimate
        new_est = self.estimate(firing.setup) if firing.changes else cur_est
        if isinstance(new_est, InputError):
            return msg("plan.skip.estimate_refuses", error=new_est.message)
        if firing.changes and rule.check_saving and cur_est.peak_gib - new_est.peak_gib <= SAVING_EPS_GIB:
            return msg("plan.skip.no_saving", before=cur_est.peak_gib, after=new_est.peak_gib,
                       dominant=_dominant(cur_est))
        if at.evidence_only and firing.changes and cur_est.fits and not new_est.fits:
            return msg("plan.skip.breaks_fit", peak=new_est.peak_gib,
                       budget=new_est.capacity_gib * (1 - new_est.headroom))
        host_gib = self.hw.host_ram_gib
        if host_gib is not None and new_est.host_ram_gib > host_gib > cur_est.host_ram_gib:
            return msg("plan.skip.host_ram", need=new_est.host_ram_gib, have=host_gib)
        return new_est

    def replay(self, rules: Sequence[Rule]) -> Walk | None:
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
        return Walk(steps, [], cur_setup, cur_est)

    def minimize(self, walk: Walk, book: RuleBook) -> Walk:
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
        return Walk(list(current.steps), walk.skipped, current.setup, current.estimate, walk.proposed,
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


def walk_cost(planner: Planner, walk: Walk, book: RuleBook) -> Cost:
    """The cost of a walk's steps under the one cost model (planner.costs)."""
    from oomdoctor.planner import costs

    by_id = {r.id: r for r in book}
    pairs = [(by_id[s.rule], s) for s in walk.steps if s.rule in by_id and s.changes]
    return costs.cost_of(planner.setup, walk.setup, pairs, planner.shape, planner.hw)
