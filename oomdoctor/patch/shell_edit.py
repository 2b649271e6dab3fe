"""Edit `--flag value` arguments of a training command line inside a shell script, in place.

Only the value's characters change; quoting of other arguments, line continuations and comments stay.
"""
from __future__ import annotations

import re
import shlex
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import msg


def _flag_re(name: str) -> re.Pattern[str]:
    # --name value | --name=value ; the value is one shell word (quoted or bare).
    return re.compile(r"(?P<flag>--" + re.escape(name) + r")(?P<sep>=|[ \t]+)(?P<value>\"[^\"]*\"|'[^']*'|[^\s\\;|&]+)")


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return shlex.quote(str(value))


def set_shell_flag(text: str, key_path: tuple[str, ...], value: Any, *, after_key: str | None = None,
                   path: str = "") -> str:
    if len(key_path) != 1:
        raise InputError(msg("write.shell_nested", key=".".join(key_path)), path)
    name = key_path[0]
    word = _word(value)
    found = _flag_re(name).search(text)
    if found:
        return text[:found.start("value")] + word + text[found.end("value"):]
    # Absent: add it right after a related flag, else after the last flag of the command.
    anchor = _flag_re(after_key).search(text) if after_key else None
    if anchor is None:
        flags = list(re.finditer(r"--[A-Za-z_][\w-]*(?:=|[ \t]+)(?:\"[^\"]*\"|'[^']*'|[^\s\\;|&]+)", text))
        if not flags:
            raise InputError(msg("write.shell_no_flags", name=name), path)
        anchor = flags[-1]
    at = anchor.end()
    return text[:at] + f" --{name} {word}" + text[at:]
