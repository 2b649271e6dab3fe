"""Shell lines shown to the user (the plain report, the app, the guide, --export's snippet) are built
here and only here, every value through shlex.quote: a line pasted into a shell does exactly what
it says, whatever a config, a log or a rule file put into the value (`$(touch /tmp/x)` stays text).
"""
from __future__ import annotations

import shlex

from oomdoctor.lazyre import lazy_re

_ENV_NAME = lazy_re(r"[A-Za-z_][A-Za-z0-9_]*")


def quote(word: object) -> str:
    """One shell word: `train.yaml` as is, `my run.yaml` as 'my run.yaml', `$(x)` as '$(x)'."""
    return shlex.quote(str(word))


def export_line(name: str, value: object) -> str:
    """`export NAME='value'`; ValueError for a name no shell would take (rules only let valid ones in)."""
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(name)
    return f"export {name}={quote(value)}"


def command(*words: object) -> str:
    """A command line from its words, each quoted as needed."""
    return " ".join(quote(w) for w in words)
