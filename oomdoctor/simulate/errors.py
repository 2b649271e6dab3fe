"""The simulation's errors: both are InputError, so the CLI prints one line and exits 2."""
from __future__ import annotations

from oomdoctor.errors import ExitCode, InputError


class SimulateError(InputError):
    """The simulation could not run (packages missing, model code that fake tensors cannot run, ...)."""


class SimulationInterrupted(SimulateError):
    """Ctrl-C during the simulation; nothing was written."""

    exit_code = ExitCode.INTERRUPTED


class SimulateTimeout(SimulateError):
    """The trace ran past its time limit and was stopped."""
