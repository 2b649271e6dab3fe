"""Learning from the run: memory the log printed before the crash corrects the estimate."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oomdoctor import advise, calibrate
from oomdoctor.facts import CrashEvent, CrashReport, MemorySample
from oomdoctor.memory import estimate
from oomdoctor.pipeline import Options, build_report
from oomdoctor.planner import make_plan
from oomdoctor.words import say

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "advise"
LOG = str(DATA / "lora_a100_40g.log")
CONFIG = str(DATA / "lora_a100_40g.yaml")


def crash_with(*samples: MemorySample, step: int | None = 30) -> CrashReport:
    return CrashReport(file="run.log", events=(CrashEvent(kind="cuda_oom", line=99, capacity_gib=79.15),),
                       step=step, memory_samples=samples)


@pytest.fixture(scope="module")
def lora():
    report = build_report(Options(files=(CONFIG,), gpu="A100-40GB"))
    return report.setup, report.shape, report.hardware, report.estimate


# ---------------------------------------------------------------- hand-made crash reports

def test_a_measured_step_peak_above_the_estimate_raises_it_by_the_gap(lora):
    est = lora[3]
    crash = crash_with(MemorySample(line=40, allocated_gib=13.0, max_allocated_gib=est.allocated_gib + 4.0, step=12))
    corr = calibrate.correction(est, crash)
    assert corr.applied and corr.delta_gib == pytest.approx(4.0)
    assert corr.line == 40 and corr.step == 12
    assert "raised by 4.00 GiB" in say(corr.message) and "line 40" in say(corr.message)


def test_the_last_step_sample_wins_over_earlier_ones(lora):
    est = lora[3]
    crash = crash_with(MemorySample(line=50, max_allocated_gib=est.allocated_gib + 2.0, step=20),
                       MemorySample(line=30, max_allocated_gib=est.allocated_gib + 9.0, step=10))
    assert calibrate.correction(est, crash).delta_gib == pytest.approx(2.0)


def test_a_sample_before_training_began_never_corrects(lora):
    est = lora[3]
    before = MemorySample(line=5, allocated_gib=est.allocated_gib + 5, max_allocated_gib=est.allocated_gib + 6, step=0)
    stepless_load = MemorySample(line=6, allocated_gib=est.allocated_gib + 5, max_allocated_gib=est.allocated_gib + 5.5)
    assert calibrate.correction(est, crash_with(before, stepless_load)) is None


def test_a_stepless_sample_counts_only_with_training_progress_and_a_steps_transients(lora):
    est = lora[3]
    sample = MemorySample(line=20, allocated_gib=10.0, max_allocated_gib=est.allocated_gib + 3.0)
    assert calibrate.correction(est, crash_with(sample, step=25)).delta_gib == pytest.approx(3.0)
    assert calibrate.correction(est, crash_with(sample, step=None)) is None


def test_a_measurement_below_the_estimate_keeps_the_estimate(lora):
    est = lora[3]
    corr = calibrate.correction(est, crash_with(MemorySample(line=9, max_allocated_gib=est.allocated_gib - 3, step=4)))
    assert corr is not None and not corr.applied and corr.delta_gib == 0.0
    assert "kept" in say(corr.message)
    assert calibrate.corrected_estimator(estimate, corr) is estimate


def test_reserved_only_samples_do_not_correct_but_show_in_the_curve(lora):
    est = lora[3]
    smi = MemorySample(line=7, reserved_gib=est.peak_gib + 10, label="nvidia-smi", step=3)
    crash = crash_with(smi)
    assert calibrate.correction(est, crash) is None
    assert calibrate.measured_curve(crash) == [(3, est.peak_gib + 10)]


def test_no_crash_or_no_samples_means_no_correction(lora):
    est = lora[3]
    assert calibrate.correction(est, None) is None
    assert calibrate.correction(est, crash_with()) is None
    assert calibrate.measured_curve(None) == []


def test_the_curve_uses_steps_when_every_sample_has_one_else_lines():
    by_step = crash_with(MemorySample(line=30, max_allocated_gib=5.0, step=2),
                         MemorySample(line=10, allocated_gib=4.0, step=1))
    assert calibrate.measured_curve(by_step) == [(1, 4.0), (2, 5.0)]
    mixed = crash_with(MemorySample(line=30, max_allocated_gib=5.0, step=2), MemorySample(line=10, allocated_gib=4.0))
    assert calibrate.measured_curve(mixed) == [(10, 4.0), (30, 5.0)]


def test_the_corrected_estimator_adds_the_gap_to_allocated_and_peak(lora):
    setup, shape, hw, est = lora
    corr = calibrate.correction(est, crash_with(MemorySample(line=40, max_allocated_gib=est.allocated_gib + 4.0, step=3)))
    fixed = calibrate.corrected_estimator(estimate, corr)
    bigger = replace(setup, micro_batch=8)
    base, raised = estimate(bigger, shape, hw), fixed(bigger, shape, hw, headroom=0.1)
    assert raised.allocated_gib == pytest.approx(base.allocated_gib + 4.0)
    assert raised.peak_gib == pytest.approx(base.peak_gib + 4.0)
    assert sum(raised.components.values()) == pytest.approx(sum(base.components.values()) + 4.0)
    assert corr.message in raised.notes


def test_the_planner_re_estimates_carry_the_correction(lora):
    setup, shape, hw, est = lora
    corr = calibrate.correction(est, crash_with(MemorySample(line=40, max_allocated_gib=est.allocated_gib + 9.0, step=3)))
    fixed = calibrate.corrected_estimator(estimate, corr)
    plan = make_plan(setup, shape, hw, estimator=fixed)
    assert plan.steps, "the correction pushes the run over the card, so the planner has work"
    for step in plan.steps:
        assert step.estimate.details["measured_correction_gib"] == pytest.approx(9.0)
        plain = estimate(step.setup, shape, hw)
        assert step.estimate.peak_gib == pytest.approx(plain.peak_gib + 9.0)


# ---------------------------------------------------------------- a real log

@pytest.fixture(scope="module")
def from_log():
    return build_report(Options(files=(CONFIG, LOG)))


def test_the_log_fixture_has_memory_lines_before_the_crash(from_log):
    crash = from_log.crash
    assert crash.events and crash.step == 27
    assert [round(s.max_allocated_gib, 2) for s in crash.memory_samples] == [13.05, 31.88, 33.61]


def _uncorrected(report):
    return estimate(report.setup, report.shape, report.hardware, crash=report.crash)


def test_the_pipeline_estimate_carries_the_measured_correction(from_log):
    raw = _uncorrected(from_log)
    # the step peak the log measured (33.61) is raised further by the crash itself: in the backward pass PyTorch
    # held 35.71 GiB and asked for 1.95 more, a floor under that phase's peak (memory/crashfloor.py)
    assert from_log.estimate.allocated_gib == pytest.approx(35.71 + 1.95)
    assert from_log.estimate.peak_gib > raw.peak_gib
    assert any("raised by" in say(note) for note in from_log.estimate.notes)
    assert from_log.finding.floor.applied and from_log.finding.floor.moment.endswith("backward")


def test_the_last_measured_step_peak_of_the_log_corrects_the_estimate(from_log):
    raw = _uncorrected(from_log)
    corr = calibrate.correction(raw, from_log.crash)
    assert corr.applied and corr.line == 32 and corr.measured_gib == 33.61
    assert corr.delta_gib == pytest.approx(33.61 - raw.allocated_gib)
    # the measurement taken before training (line 17) plays no part
    assert "line 32" in say(corr.message)


def test_a_log_with_memory_lines_changes_the_advised_estimate_and_says_so(from_log):
    plain = advise.build(replace(from_log, crash=replace(from_log.crash, memory_samples=())))
    learned = advise.build(from_log)
    raw = _uncorrected(from_log)
    delta = 33.61 - raw.allocated_gib
    single_plain = next(r for r in plain.strategies if r.key == "single")
    single_learned = next(r for r in learned.strategies if r.key == "single")
    assert single_learned.peak_gib == pytest.approx(single_plain.peak_gib + delta)
    assert single_learned.peak_gib == pytest.approx(raw.peak_gib + delta)
    # the report's estimate also carries the crash's own floor (held + asked in the backward pass), above this
    assert single_learned.peak_gib <= from_log.estimate.peak_gib + 1e-6
    assert plain.calibration is None and "raised by" in say(learned.calibration)
    text = advise.render_plain(learned)
    assert "Measured:" in text and f"{delta:.2f} GiB" in text
    assert [x for x, _ in learned.measured] == [17, 29, 32]
    cell_plain = plain.cell("A100 80GB SXM", 1)
    cell_learned = learned.cell("A100 80GB SXM", 1)
    assert cell_learned.peak_gib == pytest.approx(cell_plain.peak_gib + delta)


def test_the_same_run_on_a_card_without_the_log_is_not_corrected():
    report = build_report(Options(files=(CONFIG,), gpu="A100-40GB"))
    matrix = advise.build(report)
    assert matrix.calibration is None and matrix.calibration_gib == 0.0
    assert "Measured:" not in advise.render_plain(matrix)
