"""--simulate: an exact dry run of the user's own model code on fake tensors.

Builds the model from its config on the `meta` device, moves it to fake tensors, applies the method the way
the framework does and runs real training steps while counting live tensor bytes. torch, transformers and
peft are optional (`pip install 'oomdoctor[simulate]'`) and imported only when a simulation runs.

Public API:
    available() -> Msg | None
    trace_step(setup, shape, *, steps=2, progress=None, hf_config=None) -> TraceResult
    format_result(result, estimate=None, lang="en") -> str
    to_dict(result, estimate=None, lang="en") -> dict      (--simulate --json)

Progress lines, errors, notes and limits are words codes (words/simulate.py): whoever shows them says them
in the user's language.
"""
from __future__ import annotations

from typing import Callable

from oomdoctor.facts import ModelShape, Msg, TrainingSetup, msg
from oomdoctor.simulate.errors import SimulateError, SimulateTimeout, SimulationInterrupted
from oomdoctor.simulate.result import CATEGORIES, PHASES, PhasePeak, TraceResult, format_result, to_dict

INSTALL_HINT = "pip install 'oomdoctor[simulate]'"
_PACKAGES = ("torch", "transformers", "peft")


def available() -> Msg | None:
    """None when torch, transformers and peft import; else one line saying what to install."""
    import importlib
    import logging

    missing = []
    # transformers without torch logs "PyTorch was not found" at import: the one line below says it instead
    logging.disable(logging.WARNING)
    try:
        for name in _PACKAGES:
            try:
                importlib.import_module(name)
            except Exception:   # a broken install (ABI mismatch, missing libs) counts as missing too
                missing.append(name)
    finally:
        logging.disable(logging.NOTSET)
    if not missing:
        return None
    return msg("simulate.missing", missing=tuple(missing), hint=INSTALL_HINT)


def trace_step(setup: TrainingSetup, shape: ModelShape, *, steps: int = 2,
               progress: Callable[[Msg], None] | None = None, hf_config: dict | None = None,
               time_limit_s: float | None = None, fused_loss: bool = False) -> TraceResult:
    """Run `steps` training steps of the model on fake tensors and return the live-bytes peaks.

    `fused_loss`: when the setup asks for a fused loss, trace Liger's fused linear cross-entropy instead of the
    model's own loss. `time_limit_s`: stop with SimulateTimeout past that many seconds (progress says every
    10 s that the trace is still running).

    Raises SimulateError (one line) when the packages are missing or the model code cannot run on fake
    tensors, SimulateTimeout past the time limit, and SimulationInterrupted on Ctrl-C.
    """
    if steps < 1:
        raise ValueError("steps must be at least 1")
    try:
        problem = available()
        if problem:
            raise SimulateError(problem)
        if progress is not None:
            progress(msg("simulate.progress.loading"))
        import logging
        import warnings

        from oomdoctor.simulate import tracer

        # transformers/peft deprecation chatter and torch's own tracebacks of failed fake kernels would bury
        # the progress lines; failures reach the user as one SimulateError line instead
        fake_log = logging.getLogger("torch._subclasses.fake_tensor")
        level = fake_log.level
        fake_log.setLevel(logging.CRITICAL)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return tracer.run(setup, shape, steps=steps, progress=progress, hf_config=hf_config,
                                  time_limit_s=time_limit_s, fused_loss=fused_loss)
        finally:
            fake_log.setLevel(level)
    except SimulateError:
        raise
    except KeyboardInterrupt:
        raise SimulationInterrupted(msg("simulate.interrupted")) from None
    except (RuntimeError, ValueError, TypeError, NotImplementedError, AttributeError, KeyError, ImportError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise SimulateError(msg("simulate.failed", error=type(err).__name__, first=first[:300])) from None


__all__ = ["available", "trace_step", "format_result", "to_dict", "TraceResult", "PhasePeak", "CATEGORIES", "PHASES",
           "SimulateError", "SimulateTimeout", "SimulationInterrupted", "INSTALL_HINT"]
