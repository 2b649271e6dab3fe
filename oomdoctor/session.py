"""One run's shared state, built once: the options, the language, the rule book, the calibrated estimator
and the report. The CLI builds it; the plain and JSON views render its report; the app's toggles, the guide
and the advisor re-plan or re-estimate through it, so none of them loads rules or calibrates again.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

from oomdoctor.facts import Estimate, Plan, Report
from oomdoctor.pipeline import Options, Selection, calibration, plan_report, read_report, select_steps
from oomdoctor.records import record

Estimator = Callable[..., Estimate]


@record
class Session:
    """What one run knows and shares. `estimator` and `correction` are None without a training config."""

    options: Options
    report: Report
    rules: Any                          # the planner's RuleBook: the default ladder plus --rules
    lang: str = "en"
    estimator: Estimator | None = None  # the memory model, corrected by what the crash log measured
    correction: Any = None              # calibrate.Correction, when the log measured a peak

    def replan(self, *, skip: Sequence[str] = (), n_gpus: int | None = None) -> Report:
        """The report planned again with rules left out (the user's --skip plus `skip`) and, when given,
        `n_gpus` GPUs like the run's: what the guide's answers change."""
        report, opts = self.report, self.options
        if report.setup is None or report.hardware is None or self.estimator is None:
            return report
        if n_gpus is not None:
            report = replace(report, setup=replace(report.setup, n_gpus=n_gpus),
                             hardware=replace(report.hardware, n_gpus=n_gpus))
            opts = replace(opts, gpus=n_gpus)
        opts = replace(opts, skip=tuple(opts.skip) + tuple(skip))
        return plan_report(report, opts, rules=self.rules, estimator=self.estimator)

    def select(self, plan: Plan, keep: Sequence[int]) -> Selection:
        """The setup, estimate and patch after only the plan's steps at `keep` (the app's checkboxes)."""
        return select_steps(self.report, plan, keep, cwd=self.options.cwd, estimator=self.estimator)


def open_session(opts: Options, lang: str = "en") -> Session:
    """Read the inputs, load the rules and calibrate the estimator once, then estimate and plan."""
    from oomdoctor.planner import load_rules

    report = read_report(opts)
    rules = load_rules(opts.rules_dirs)
    if report.setup is None or report.shape is None or report.hardware is None:
        return Session(options=opts, report=report, rules=rules, lang=lang)
    estimator, correction = calibration(report.setup, report.shape, report.hardware, report.crash)
    report = plan_report(report, opts, rules=rules, estimator=estimator)
    return Session(options=opts, report=report, rules=rules, lang=lang, estimator=estimator, correction=correction)


def session_for(report: Report, opts: Options | None = None, lang: str = "en") -> Session:
    """A session around a report built elsewhere (a test's hand-made report, a report read from JSON): the
    rules of `opts` and the estimator calibrated from the report's own crash log; nothing is planned again."""
    from oomdoctor.planner import load_rules

    opts = opts or Options()
    rules = load_rules(opts.rules_dirs)
    if report.setup is None or report.shape is None or report.hardware is None:
        return Session(options=opts, report=report, rules=rules, lang=lang)
    estimator, correction = calibration(report.setup, report.shape, report.hardware, report.crash)
    return Session(options=opts, report=report, rules=rules, lang=lang, estimator=estimator, correction=correction)
