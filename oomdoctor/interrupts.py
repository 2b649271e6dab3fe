"""SIGTERM and SIGHUP handled like Ctrl-C: the main thread gets a KeyboardInterrupt, so what a run
started is undone on the way out (`with` blocks close the log and remove its temporary copy, the
scan kills the grep processes it started, a patch's temporaries and backups are removed) and the CLI
exits 130 with one line.

Without this a `kill` or a closed SSH session would end the process at once, leaving a spooled log
of up to SPOOL_MAX_BYTES in the temporary folder, grep children reading a multi-GB file, or half of a
patch's files written.

`deferred()` holds a signal back while a few steps must happen together (renaming a patch's files into
place, creating a temporary and noting its name): the interrupt is raised when the block ends.
The CLI runs inside `handled()`; library callers keep their own handlers.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = ("SIGTERM", "SIGHUP")

_pending: list[int] = []
_depth = 0


def _raise(signum: int, frame: Any) -> None:
    if _depth:                          # inside deferred(): raised when the block ends
        _pending.append(signum)
        return
    raise KeyboardInterrupt(signal.Signals(signum).name)


def install() -> dict:
    """Route SIGTERM and SIGHUP (and Ctrl-C, so it can be deferred too) to KeyboardInterrupt, main
    thread only, where the platform has them. Returns the handlers it replaced, for restore()."""
    previous: dict = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for name in ("SIGINT",) + SIGNALS:
        sig = getattr(signal, name, None)
        # A signal the parent set to be ignored (nohup's SIGHUP) stays ignored.
        if sig is None or signal.getsignal(sig) is signal.SIG_IGN:
            continue
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
    _pending.clear()


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """install() for the length of the block, restore() after it."""
    previous = install()
    try:
        yield
    finally:
        restore(previous)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Run the block whole: a SIGINT/SIGTERM/SIGHUP arriving inside it is raised as KeyboardInterrupt
    when the block ends, whether it finished or failed (the user asked to stop either way)."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending:
            name = signal.Signals(_pending[0]).name
            _pending.clear()
            raise KeyboardInterrupt(name)
