"""The one error type the CLI turns into a one-line message and exit code 2, and the exit codes."""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from oomdoctor.facts import Msg

if TYPE_CHECKING:
    from oomdoctor.facts import Report


class ExitCode(enum.IntEnum):
    FITS = 0            # the run fits as configured
    PLAN = 1            # a plan was proposed
    BAD_INPUT = 2       # bad input or usage
    NO_FIT = 3          # no plan fits
    INTERNAL = 4        # a bug of ours
    INCOMPLETE = 5      # the crash and the config were read, but the model's shape is missing: no estimate, no plan
    INTERRUPTED = 130   # Ctrl-C, SIGTERM, SIGHUP (128 + SIGINT, as shells report it)


class InputError(Exception):
    """Bad input: a file that cannot be read or understood, or a bad flag.

    `message` is a Msg (rendered in the user's language by oomdoctor.words) or, for messages not yet
    moved into words/, an English string. render(lang) is the single line shown: ``path:line: message``.
    """

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, message: Msg | str, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def render(self, lang: str = "en") -> str:
        if isinstance(self.message, Msg):
            from oomdoctor.words import say

            text = say(self.message, lang)
        else:
            text = self.message
        if self.path is not None:
            where = f"{self.path}:{self.line}" if self.line else str(self.path)
            text = f"{where}: {text}"
        # One line whatever the input holds: a line break can only come from a quoted value or a file name
        # (a `deepspeed:` value with a newline in it), so it is shown as its control picture.
        return text.replace("\r\n", "\u2424").replace("\n", "\u2424").replace("\r", "\u240d")

    def __str__(self) -> str:
        return self.render("en")


def exit_code(report: Report) -> ExitCode:
    """What a finished run answers: it fits, a plan was proposed (or a crash diagnosed), or nothing fits."""
    if report.setup is not None and report.shape is None:
        return ExitCode.INCOMPLETE
    if report.estimate is None:
        return ExitCode.PLAN if report.crash is not None and report.crash.events else ExitCode.FITS
    if report.estimate.fits:
        # A log that shows a memory failure is never answered "fits as is": the crash is the evidence.
        crashed = report.crash is not None and bool(report.crash.events)
        return ExitCode.PLAN if crashed else ExitCode.FITS
    return ExitCode.PLAN if report.plan.fits else ExitCode.NO_FIT
