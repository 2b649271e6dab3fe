"""SIGTERM and SIGHUP behave like Ctrl-C: each raises KeyboardInterrupt in the main thread, so every
`finally` and `except BaseException` that cleans up (temporary files, a half-made patch) runs for them
too, and the CLI exits 130 with one line.

`deferred()` holds a signal back while a few steps must happen together (renaming a patch's files into
place, creating a temporary and noting its name): the interrupt is raised when the block ends.
Nothing here is needed by the library API; the CLI runs inside `handled()`.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

_pending: list[int] = []
_depth = 0
_installed = False


def _handler(signum: int, frame: Any) -> None:
    if _depth:
        _pending.append(signum)
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP go through one handler (main thread only;
    elsewhere a no-op); the previous handlers come back after it (tests call the CLI in-process)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        # A signal the parent set to be ignored (nohup's SIGHUP) stays ignored.
        if sig is not None and signal.getsignal(sig) is not signal.SIG_IGN:
            previous[sig] = signal.signal(sig, _handler)
    _installed = True
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        _installed = False
        _pending.clear()


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
            _pending.clear()
            raise KeyboardInterrupt
