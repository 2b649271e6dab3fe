"""A time limit for one block of a test: a hang becomes a failure instead of a stuck run (POSIX main thread)."""
from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class Overtime(Exception):
    """The block ran past its limit."""


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    def expire(signum, frame):
        raise Overtime(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
