"""The crash is a measurement: what the failure message printed is a floor under the peak of the phase that crashed.

A CUDA out-of-memory error is raised at the first allocation that does not fit, part-way up to the step's peak
(PyTorch's caching allocator, c10/cuda/CUDACachingAllocator.cpp: the message reports what this process holds and
what it asked for when cudaMalloc failed). So, per GPU,

    held by PyTorch + asked  <=  the peak of that phase

and where the estimate of that phase is lower, it is raised to meet the floor; every re-estimate of the plan
carries the same raise, so each step's saving is still the model's. A host kill (the kernel's OOM killer, a
launcher's -9) says the host ran out: the machine's RAM, where the log shows it, is a floor under what the host
side of the run needed.

A message cut before its figures ("Tried to allocate 112.00 MiB. GPU") still says the card was full: the allocator
raises only after freeing its cached blocks and retrying cudaMalloc (CUDACachingAllocator.cpp, malloc's
release_cached_blocks retry), so the device held more than its capacity less what was asked. That device-wide
figure ("device") includes memory other processes may hold: it is a floor under what the card carried, read
against the estimate's peak on the device.

Public API::

    floor(estimate, crash) -> Floor | None
    apply(estimate, floor) -> Estimate
    floored_estimator(base, floor) -> estimator (same signature as memory.estimate)
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from oomdoctor.facts import CrashEvent, CrashReport, Estimate, Floor, Hardware, ModelShape, TrainingSetup, msg

Estimator = Callable[..., Estimate]

# Below this the estimate and the crash agree within the allocator's rounding: nothing is raised.
MIN_RAISE_GIB = 0.05

# GPU failures whose message prints what the process held (the others carry no figures to read).
GPU_KINDS = ("cuda_oom", "hip_oom", "npu_oom", "xpu_oom", "mps_oom", "cublas_alloc", "cudnn_alloc", "bnb_alloc")

# The estimate's moments for the phase the log names (memory/estimate.py _step_moments).
PHASE_MOMENTS = {
    "forward": ("forward",),
    "loss": ("loss", "logits backward"),
    "backward": ("logits backward", "layers backward"),
    "optimizer": ("optimizer",),
    "eval": ("eval",),
    "generate": ("eval",),
}


def _held(ev: CrashEvent) -> tuple[float, str] | None:
    """(GiB, scale) the process held at the failure: PyTorch's allocated bytes ("allocated"), or the process's
    whole in-use figure ("in_use": it includes the CUDA context and the allocator's cache)."""
    if ev.allocated_gib is not None:
        return ev.allocated_gib, "allocated"
    if ev.process_gib is not None:
        return ev.process_gib, "in_use"
    return None


def _moment(est: Estimate, phase: str | None) -> str:
    """The moment of the estimate the crash's phase names; the estimate's own peak moment when it names none."""
    names = [m for m in PHASE_MOMENTS.get(phase or "", ()) if m in est.moments]
    if names:
        return max(names, key=lambda m: est.moments[m])
    return est.peak_moment or (max(est.moments, key=lambda m: est.moments[m]) if est.moments else "")


def _phase_figure(est: Estimate, moment: str) -> float:
    """The estimate's allocated GiB at `moment` (moments carry a constant offset; allocated_gib is their max)."""
    if not est.moments or moment not in est.moments:
        return est.allocated_gib
    return est.allocated_gib - (max(est.moments.values()) - est.moments[moment])


def floor(est: Estimate, crash: CrashReport | None) -> Floor | None:
    """The floor the crash sets under the estimate (None when the log printed no figure to read)."""
    if crash is None or not crash.events:
        return None
    best: tuple[float, CrashEvent, str] | None = None
    for ev in crash.events:
        if ev.kind not in GPU_KINDS:
            continue
        held = _held(ev)
        if held is None:
            continue
        gib, scale = held
        observed = gib + (ev.tried_gib or 0.0)
        if scale == "in_use":
            # the process's in-use figure holds what the estimate adds above its tensors (context, cache)
            observed -= max(0.0, est.peak_gib - est.allocated_gib)
        if best is None or observed > best[0]:
            best = (observed, ev, scale)
    if best is None:
        best = _device_best(est, crash)
    if best is not None:
        observed, ev, scale = best
        moment = _moment(est, ev.phase)
        figure = _phase_figure(est, moment)
        named = bool([m for m in PHASE_MOMENTS.get(ev.phase or "", ()) if m in est.moments])
        raised = observed - figure if observed - figure >= MIN_RAISE_GIB else 0.0
        shown = observed + (max(0.0, est.peak_gib - est.allocated_gib) if scale in ("in_use", "device") else 0.0)
        held_gib = (ev.allocated_gib if scale == "allocated" else ev.process_gib) or 0.0
        code = "memory.floor.raised" if raised else "memory.floor.covered"
        if scale == "device":
            # a message with no size at all ("CUDA out of memory" alone) still says the card was full
            code = "memory.floor.device" if ev.tried_gib is not None else "memory.floor.device_unsized"
        message = msg(code, held=held_gib, tried=ev.tried_gib or 0.0, observed=shown, line=ev.line,
                      moment=msg("memory.moment." + moment.replace(" ", "_")) if named else msg("memory.floor.peak"),
                      estimate=figure + (shown - observed), gap=raised)
        return Floor(kind="gpu", observed_gib=observed, estimate_gib=figure, raised_gib=raised, moment=moment,
                     line=ev.line, message=message)
    host = [ev for ev in crash.events if ev.kind == "host_oom"]
    if host and crash.host_ram_gib:
        ev = host[0]
        need = est.host_ram_gib
        raised = crash.host_ram_gib - need if est.host_ram_gib > 0 and crash.host_ram_gib - need >= MIN_RAISE_GIB \
            else 0.0
        message = msg("memory.floor.host", ram=crash.host_ram_gib, estimate=need, line=ev.line)
        return Floor(kind="host", observed_gib=crash.host_ram_gib, estimate_gib=need, raised_gib=raised,
                     moment="host", line=ev.line, message=message)
    return None


def _device_best(est: Estimate, crash: CrashReport) -> tuple[float, CrashEvent, str] | None:
    """(GiB, event, "device") for a GPU failure whose message printed no held figure: the card held more than its
    capacity less what was asked (less what it printed free, where it did), on the device's scale."""
    for ev in crash.events:
        if ev.kind not in GPU_KINDS or ev.confidence != "certain":
            continue
        cap = ev.capacity_gib or est.capacity_gib
        if not cap:
            continue
        tried = ev.tried_gib or 0.0
        # a request larger than the card fails with nothing held: the card need not have been full
        in_use = max(0.0, cap - (ev.free_gib if ev.free_gib is not None else tried))
        observed = in_use + tried - max(0.0, est.peak_gib - est.allocated_gib)
        # the block asked for is allocated memory of that phase, so its size is a floor on the allocated scale
        # whatever the estimate's overhead (CUDACachingAllocator.cpp malloc: one block of the rounded size)
        return max(observed, tried), ev, "device"
    return None


def apply(est: Estimate, fl: Floor | None) -> Estimate:
    """`est` with the floor's raise added to the moment it belongs to; the peak moves there when that moment
    becomes the highest."""
    if fl is None or not fl.applied:
        return est
    details = dict(est.details)
    if fl.kind == "host":
        details["crash_floor_host_gib"] = fl.raised_gib
        return replace(est, host_ram_gib=est.host_ram_gib + fl.raised_gib, details=details)
    moments = dict(est.moments)
    if fl.moment in moments:
        top = max(moments.values())
        moments[fl.moment] += fl.raised_gib
        add = max(0.0, moments[fl.moment] - top)
    else:
        add = fl.raised_gib
    details["crash_floor_gib"] = fl.raised_gib
    if add <= 0.0:
        return replace(est, moments=moments, details=details)
    comps = dict(est.components)
    # Where the missing memory lives is not known: it is shown as overhead, so the components add up to the peak.
    comps["overhead"] = comps.get("overhead", 0.0) + add
    peak_moment = fl.moment if fl.moment in moments else est.peak_moment
    return replace(est, components=comps, allocated_gib=est.allocated_gib + add, peak_gib=est.peak_gib + add,
                   moments=moments, details=details, peak_moment=peak_moment,
                   phase="eval" if peak_moment == "eval" else est.phase, notes=est.notes + (fl.message,))


def floored_estimator(base: Estimator, fl: Floor | None) -> Estimator:
    """An estimator like `base` whose every estimate carries the floor's raise (and that names the floor, raised
    or not, as its `floor`)."""
    if fl is None:
        return base

    def estimate(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *, crash: CrashReport | None = None,
                 headroom: float = 0.10) -> Estimate:
        return apply(base(setup, shape, hw, crash=crash, headroom=headroom), fl)

    estimate.floor = fl  # type: ignore[attr-defined]
    if hasattr(base, "correction"):
        estimate.correction = base.correction  # type: ignore[attr-defined]
    return estimate
