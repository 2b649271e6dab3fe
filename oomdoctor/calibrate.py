"""Learn from the run itself: memory the log printed before the crash corrects the estimate.

Trainers often print memory while they train (HF/LLaMA-Factory callbacks, DeepSpeed see_memory_usage,
torchtune memory stats, nvidia-smi pasted in); the crash-log parser keeps them as MemorySamples.
The last peak measured after a completed training step is a floor for what this run needs; when it is
above the estimate's allocated peak, the gap is memory the model does not know about, and every
re-estimate of this run (the planner's too) carries it.

Public API::

    correction(estimate, crash) -> Correction | None
    corrected_estimator(base_estimator, correction) -> estimator (same signature as memory.estimate)
    measured_curve(crash) -> list[tuple[int, float]]
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from oomdoctor.facts import CrashReport, Estimate, MemorySample, Msg, msg
from oomdoctor.records import record

Estimator = Callable[..., Estimate]

# Below this the estimate and the measurement agree within the allocator's rounding; no correction.
MIN_CORRECTION_GIB = 0.05
# A sample without a step number counts as taken during training when its max allocated is this much
# above what is allocated at that moment: only a forward/backward leaves such a gap (activations freed).
# Loading and ZeRO init print max ~= allocated (DeepSpeed "After initializing ZeRO optimizer": 31.25 vs 30.5).
STEPLESS_TRANSIENT_RATIO = 1.25


@record
class Correction:
    """How much the measured run says the estimate is short, and where the measurement is."""

    delta_gib: float            # added to allocated_gib and peak_gib (0.0: the measurement is below the estimate)
    measured_gib: float         # the measured max allocated
    estimated_gib: float        # the estimate's allocated peak it was compared with
    line: int                   # line of the measurement in the log
    step: int | None            # training step the measurement followed
    label: str                  # what printed it (see_memory_usage, torchtune memory stats, logged, ...)
    message: Msg                # what the report says about it

    @property
    def applied(self) -> bool:
        return self.delta_gib > 0.0


def _after_training_began(sample: MemorySample, crash: CrashReport) -> bool:
    """Whether the sample's max allocated is the peak of at least one completed training step."""
    if sample.max_allocated_gib is None:
        return False
    if sample.step is not None:
        return sample.step >= 1          # step 0: loading or ZeRO init, not a training peak
    # No step number on the sample: trust it only when the log shows training progress and the sample
    # itself shows a step's transients (max well above what is allocated between steps).
    trained = crash.step is not None and crash.step >= 1
    return (trained and sample.allocated_gib is not None and sample.allocated_gib > 0
            and sample.max_allocated_gib >= STEPLESS_TRANSIENT_RATIO * sample.allocated_gib)


def last_step_peak(crash: CrashReport | None) -> MemorySample | None:
    """The last sample that measured a max-allocated peak after at least one training step."""
    if crash is None:
        return None
    usable = [s for s in crash.memory_samples if _after_training_began(s, crash)]
    return max(usable, key=lambda s: s.line) if usable else None


def correction(estimate: Estimate, crash: CrashReport | None) -> Correction | None:
    """Compare the last measured step peak with the estimate; None when the log measured no step peak."""
    sample = last_step_peak(crash)
    if sample is None:
        return None
    assert sample.max_allocated_gib is not None
    measured = sample.max_allocated_gib
    gap = measured - estimate.allocated_gib
    where = (msg("memory.calibrate.where_step", line=sample.line, step=sample.step) if sample.step is not None
             else msg("memory.calibrate.where_training", line=sample.line))
    if gap >= MIN_CORRECTION_GIB:
        message = msg("memory.calibrate.raised", measured=measured, where=where, estimate=estimate.allocated_gib,
                      gap=gap)
        delta = gap
    else:
        # Only the measurement's floor is certain (later steps may need more), so a lower reading
        # does not lower the estimate.
        message = msg("memory.calibrate.kept", measured=measured, where=where, estimate=estimate.allocated_gib)
        delta = 0.0
    return Correction(delta_gib=delta, measured_gib=measured, estimated_gib=estimate.allocated_gib,
                      line=sample.line, step=sample.step, label=sample.label, message=message)


def apply(estimate: Estimate, corr: Correction | None) -> Estimate:
    """`estimate` raised by the correction (unchanged when there is nothing to add)."""
    if corr is None or not corr.applied:
        return estimate
    comps = dict(estimate.components)
    # Where the gap lives is unknown; it is shown as overhead so the components still add up to the peak.
    comps["overhead"] = comps.get("overhead", 0.0) + corr.delta_gib
    details = dict(estimate.details)
    details["measured_correction_gib"] = corr.delta_gib
    return replace(estimate, components=comps, allocated_gib=estimate.allocated_gib + corr.delta_gib,
                   peak_gib=estimate.peak_gib + corr.delta_gib, details=details,
                   notes=estimate.notes + (corr.message,))


def corrected_estimator(base_estimator: Estimator, corr: Correction | None) -> Estimator:
    """An estimator like `base_estimator` whose every estimate carries the correction."""
    if corr is None or not corr.applied:
        return base_estimator

    def estimate(setup, shape, hw, *, crash=None, headroom=0.10):
        return apply(base_estimator(setup, shape, hw, crash=crash, headroom=headroom), corr)

    estimate.correction = corr  # type: ignore[attr-defined]   # views can tell a corrected estimator
    return estimate


def _sample_gib(sample: MemorySample) -> float | None:
    for value in (sample.max_allocated_gib, sample.allocated_gib, sample.max_reserved_gib, sample.reserved_gib):
        if value is not None:
            return value
    return None


def measured_curve(crash: CrashReport | None) -> list[tuple[int, float]]:
    """(x, GiB) for every sample in log order: x is the training step when every sample knows it, else the
    log line. GiB is the best figure the sample has: max allocated, allocated, max reserved, reserved."""
    if crash is None:
        return []
    samples = sorted((s for s in crash.memory_samples if _sample_gib(s) is not None), key=lambda s: s.line)
    by_step = bool(samples) and all(s.step is not None for s in samples)
    return [(int(s.step if by_step else s.line), float(_sample_gib(s))) for s in samples]  # type: ignore[arg-type]
