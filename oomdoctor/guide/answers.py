"""What only the user knows (the questions and their answers), and the plan those answers ask for.

Re-planning goes through the session (the run's rule book and calibrated estimator) and the planner's
public API: rules the answers exclude are left out with --skip, and the plan's own steps are checked,
since a custom rule may change the method or the batch without saying so.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, Mapping

from oomdoctor.facts import Msg, Report, Skipped, Step, msg
from oomdoctor.words import say

# Why a rule is left out because of an answer: the Skipped reason the guide (and every view) shows.
SKIP_REASONS: Mapping[str, Msg] = {
    "method": msg("guide.skip_method"),
    "batch": msg("guide.skip_batch"),
    "speed": msg("guide.skip_speed"),
}
_METHOD_FIELDS = ("method", "quant_bits", "use_dora")


@dataclass(frozen=True)
class Answers:
    """What only the user knows. None for n_gpus means "as many as the report says"."""

    n_gpus: int | None = None
    keep_effective_batch: bool = True
    allow_method_change: bool = False
    prefer: Literal["memory", "speed"] = "memory"


@dataclass(frozen=True)
class Question:
    key: str                                  # the Answers field it sets
    kind: str                                 # "choice" | "bool"
    prompt: str
    help: str                                 # one or two sentences: why it matters, with their numbers
    default: Any
    choices: tuple[tuple[Any, str], ...] = ()  # (value, label) for "choice"


def default_answers(report: Report) -> Answers:
    """The answers the walkthrough starts from: the GPU count the report knows, everything else conservative."""
    return Answers(n_gpus=n_gpus_of(report))


def n_gpus_of(report: Report) -> int:
    if report.setup is not None and report.setup.n_gpus:
        return max(1, report.setup.n_gpus)
    if report.hardware is not None:
        return max(1, report.hardware.n_gpus)
    return 1


def method_name(method: str, lang: str) -> str:
    code = f"guide.method.{method}"
    return say(code, lang) if method in ("full", "lora", "qlora", "freeze") else method


def questions(report: Report, lang: str) -> list[Question]:
    """Only what the tool cannot know from the config and the log, each with a default from the report."""
    s = report.setup
    if s is None:
        return []
    n = n_gpus_of(report)
    gpu = report.hardware.gpu if report.hardware else "GPU"
    counts = sorted({1, 2, 4, 8, n})
    eb = s.effective_batch
    method = method_name(s.method, lang)
    return [
        Question("n_gpus", "choice", say("guide.q_gpus", lang, gpu=gpu), say("guide.q_gpus_help", lang, n=n),
                 n, tuple((c, say("guide.n_gpus_label", lang, n=c)) for c in counts)),
        Question("keep_effective_batch", "bool", say("guide.q_batch", lang, eb=eb),
                 say("guide.q_batch_help", lang, eb=eb, mb=s.micro_batch, ga=s.grad_accum, n=max(1, s.n_gpus)),
                 True),
        Question("allow_method_change", "bool", say("guide.q_method", lang, method=method),
                 say("guide.q_method_help", lang, method=method), False),
        Question("prefer", "choice", say("guide.q_prefer", lang), say("guide.q_prefer_help", lang),
                 "memory", (("memory", say("guide.prefer_memory", lang)), ("speed", say("guide.prefer_speed", lang)))),
    ]


def is_answer_skip(skipped: Skipped) -> bool:
    """A rung the user's answers left out (not one the planner passed over)."""
    return skipped.reason.code.startswith("guide.skip_")


def _is_method_change(step: Step) -> bool:
    return step.applicability == "needs-consent" or any(c.field in _METHOD_FIELDS for c in step.changes)


def _fits(report: Report) -> bool:
    return bool(report.plan.fits or (report.estimate is not None and report.estimate.fits))


def plan_with_answers(session: Any, answers: Answers) -> Report:
    """The session's report re-planned as the answers ask (the session: oomdoctor.session.Session)."""
    from oomdoctor.planner import cost_by_kind

    report, book = session.report, session.rules
    if report.setup is None or report.shape is None or report.hardware is None or report.estimate is None:
        return report
    n = max(1, answers.n_gpus or n_gpus_of(report))
    skip: dict[str, str] = {}     # rule id -> why (a key of SKIP_REASONS)
    if not answers.allow_method_change:
        skip.update({rule.id: "method" for rule in book if rule.applicability == "needs-consent"})

    def run(extra: Mapping[str, str]) -> Report:
        return session.replan(skip=tuple(extra), n_gpus=n)

    out = run(skip)
    # The rules' metadata cannot say everything (a custom rule may change the method or the batch):
    # look at what the plan really did and leave out the offending rungs until none is left.
    start = replace(report.setup, n_gpus=n)
    for _ in range(8):
        found: dict[str, str] = {}
        before = start
        for step in out.plan.steps:
            if not answers.allow_method_change and _is_method_change(step):
                found[step.rule] = "method"
            elif answers.keep_effective_batch and step.setup.effective_batch != before.effective_batch:
                found[step.rule] = "batch"
            before = step.setup
        if not found:
            break
        skip.update(found)
        out = run(skip)

    if answers.prefer == "speed" and _fits(out):
        # Accept a trial only when it is slower in nothing: less throughput cost and no more quality cost
        # (a repeated small rung may well be cheaper than one medium one, so weigh, do not count).
        def faster(trial: Report, than: Report) -> bool:
            t, c = cost_by_kind(trial.plan, book), cost_by_kind(than.plan, book)
            return _fits(trial) and t["quality"] <= c["quality"] and t["throughput"] < c["throughput"]

        slow = list(dict.fromkeys(st.rule for st in out.plan.steps if "throughput" in st.costs))
        if slow:
            trial = run({**skip, **{r: "speed" for r in slow}})
            if faster(trial, out):
                skip.update({r: "speed" for r in slow})
                out = trial
            else:
                for rule in reversed(slow):     # one at a time, the last rungs first
                    trial = run({**skip, rule: "speed"})
                    if faster(trial, out):
                        skip[rule] = "speed"
                        out = trial

    if skip:
        skipped = [Skipped(sk.rule, SKIP_REASONS[skip[sk.rule]]) if sk.rule in skip else sk
                   for sk in out.plan.skipped]
        listed = {sk.rule for sk in skipped}
        skipped += [Skipped(r, SKIP_REASONS[why]) for r, why in skip.items()
                    if r not in listed and book.get(r) is not None]
        out = replace(out, plan=replace(out.plan, skipped=tuple(skipped)))
    return out
