"""Crash-log stage: read whatever a training run printed and extract every memory failure and its context.

Public API: parse_log(path) -> oomdoctor.facts.CrashReport.
An empty or binary file raises InputError ("the log is empty" / "is a binary file, not a text log");
a text log without any memory failure returns a CrashReport with no events.
"""
from oomdoctor.crashlog.parse import diagnose, parse_log

__all__ = ["parse_log", "diagnose"]
