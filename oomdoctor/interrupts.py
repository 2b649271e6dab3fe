"""SIGTERM and SIGHUP handled like Ctrl-C: the main thread gets a KeyboardInterrupt, so what a run
started is undone on the way out (`with` blocks close the log and remove its temporary copy, the
scan kills the grep processes it started) and the CLI exits 130 with one line.

Without this a `kill` or a closed SSH session would end the process at once, leaving a spooled log
of up to SPOOL_MAX_BYTES in the temporary folder and grep children reading a multi-GB file.
"""
from __future__ import annotations

import signal
import threading

SIGNALS = ("SIGTERM", "SIGHUP")


def _raise(signum, frame) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def install() -> dict:
    """Route SIGTERM and SIGHUP to KeyboardInterrupt (main thread only; where the platform has them).
    Returns the handlers it replaced, for restore()."""
    previous: dict = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for name in SIGNALS:
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                previous[sig] = signal.signal(sig, _raise)
            except (OSError, ValueError):
                pass
    return previous


def restore(previous: dict) -> None:
    """Put back what install() replaced (a caller that runs oomdoctor in-process keeps its own handlers)."""
    for sig, handler in previous.items():
        try:
            signal.signal(sig, handler)
        except (OSError, ValueError, TypeError):
            pass
