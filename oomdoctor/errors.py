"""The one error type the CLI turns into a one-line message and exit code 2."""
from __future__ import annotations


class InputError(Exception):
    """Bad input: a file that cannot be read or understood, or a bad flag.

    str(err) is the single line shown to the user: ``path:line: message``.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


class ExitCode:
    FITS = 0          # the run fits as configured
    PLAN = 1          # a plan was proposed
    BAD_INPUT = 2     # bad input or usage
    NO_FIT = 3        # no plan fits
