"""One run's shared state, built once: the options, the language, the rule book, the calibrated estimator
and the report. The CLI builds it; the plain and JSON views render its report; the app's toggles, the guide
and the advisor re-plan or re-estimate through it, so none of them loads rules or calibrates again.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from oomdoctor.facts import Estimate, Plan, Report
from oomdoctor.pipeline import Options, Selection, calibration, plan_report, read_report, select_steps, with_gpus
from oomdoctor.records import record

if TYPE_CHECKING:
    from oomdoctor.calibrate import Correction
    from oomdoctor.planner import RuleBook

Estimator = Callable[..., Estimate]


@record
class Session:
    """What one run knows and shares. `estimator` and `correction` are None without a training config."""

    options: Options
    report: Report
    rules: RuleBook                     # the default ladder plus --rules
    lang: str = "en"
    estimator: Estimator | None = None  # the memory model, corrected by what the crash log measured
    correction: Correction | None = None    # when the log measured a peak
    read: Report | None = None          # the inputs as read, before --gpus and before any plan

    def replan(self, options: Options) -> Report:
        """The run planned again for other choices: --skip, --accept and --gpus as `options` says. The
        app's toggles, the guide's answers and the command-line flags all come here, so one set of choices
        gives one plan wherever it was made."""
        report = self.read or self.report
        if report.setup is None or report.hardware is None or self.estimator is None:
            return self.report
        setup, hw = with_gpus(report.setup, report.hardware, options.gpus)
        report = replace(report, setup=setup, hardware=hw)
        return plan_report(report, options, rules=self.rules, estimator=self.estimator)

    def with_choices(self, options: Options, report: Report | None = None) -> Session:
        """This session with other choices and their plan (given, or planned here)."""
        return replace(self, options=options, report=report if report is not None else self.replan(options))

    def select(self, plan: Plan, keep: Sequence[int]) -> Selection:
        """The setup, estimate and patch after only the plan's steps at `keep` (the app's checkboxes)."""
        return select_steps(self.report, plan, keep, cwd=self.options.cwd, estimator=self.estimator)


def open_session(opts: Options, lang: str = "en") -> Session:
    """Read the inputs, load the rules and calibrate the estimator once, then estimate and plan."""
    from oomdoctor.planner import load_rules

    # The inputs as read, before --gpus: a later choice of GPUs starts from what the files and the log said.
    read = read_report(replace(opts, gpus=None))
    report = read
    if read.setup is not None and read.hardware is not None:
        setup, hw = with_gpus(read.setup, read.hardware, opts.gpus)
        report = replace(read, setup=setup, hardware=hw)
    elif read.hardware is not None and opts.gpus:
        report = replace(read, hardware=replace(read.hardware, n_gpus=opts.gpus))
    rules = load_rules(opts.rules_dirs)
    if report.setup is None or report.shape is None or report.hardware is None:
        return Session(options=opts, report=report, rules=rules, lang=lang, read=read)
    estimator, correction = calibration(report.setup, report.shape, report.hardware, report.crash)
    report = plan_report(report, opts, rules=rules, estimator=estimator)
    return Session(options=opts, report=report, rules=rules, lang=lang, estimator=estimator, correction=correction,
                   read=read)


def session_for(report: Report, opts: Options | None = None, lang: str = "en") -> Session:
    """A session around a report built elsewhere (a test's hand-made report, a report read from JSON): the
    rules of `opts` and the estimator calibrated from the report's own crash log; nothing is planned again."""
    from oomdoctor.planner import load_rules

    opts = opts or Options()
    rules = load_rules(opts.rules_dirs)
    if report.setup is None or report.shape is None or report.hardware is None:
        return Session(options=opts, report=report, rules=rules, lang=lang)
    estimator, correction = calibration(report.setup, report.shape, report.hardware, report.crash)
    return Session(options=opts, report=report, rules=rules, lang=lang, estimator=estimator, correction=correction,
                   read=report)
