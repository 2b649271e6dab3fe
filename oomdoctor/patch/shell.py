"""The changes that are not config values: environment variables and launch-command advice."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..shellsafe import export_line


def shell_snippet(env: Mapping[str, str], notes: Sequence[str], lang: str = "en") -> str:
    """A POSIX sh snippet to source before the launch: one export per variable, advice as comments.

    Empty string when there is nothing to say.
    """
    if not env and not notes:
        return ""
    from ..facts import msg
    from ..words import say

    lines = [say(msg("write.snippet_header"), lang)]
    for name, value in env.items():
        lines.append(export_line(name, value))
    if notes:
        lines.append(say(msg("write.snippet_launch"), lang))
        for note in notes:
            # Each advice line stays a comment even when the note spans several lines.
            for part in str(note).splitlines() or [""]:
                lines.append(("#   " + part).rstrip())
    return "\n".join(lines) + "\n"
