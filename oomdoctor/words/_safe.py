"""Text from an input made safe to show on a terminal.

A crash log, a config, a rules file or a file name may hold escape sequences: an OSC that sets the
window title or plants a hyperlink, `ESC c` that resets the terminal, an 8-bit CSI (0x9B), a bare CR
that writes over the line. On a terminal they act instead of being seen (ECMA-48 defines C0, C1 and
their sequences). Every control character but tab and newline is shown as a visible stand-in of one
cell: C0 and DEL as their Unicode control pictures (U+2400 block: ESC shows as ␛), C1 as ⟨9B⟩-style
hex, so a width cut can never leave half a sequence for the terminal to act on.

`clean` is for the human-readable views (plain, guide, errors, the app); `json_escape` is for JSON,
where the same characters become \\u escapes (json.dumps escapes C0 only, not DEL and C1).
"""
from __future__ import annotations

import re

from oomdoctor.lazyre import lazy_re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_JSON_UNSAFE = lazy_re("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _picture(match: re.Match[str]) -> str:
    c = ord(match.group())
    if c < 0x20:
        return chr(0x2400 + c)
    if c == 0x7F:
        return "\u2421"
    return f"\u27e8{c:02X}\u27e9"


def clean(text: str) -> str:
    """`text` with every C0 control but tab and newline, DEL and every C1 control made visible."""
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(_picture, text)


def json_escape(text: str) -> str:
    """JSON text (or any text bound for a JSON consumer) with C0 but tab/LF/CR, DEL and C1 as \\u escapes.
    In a JSON document these characters can only stand inside strings, where \\u00XX means the same."""
    if not _JSON_UNSAFE.search(text):
        return text
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def unencodable_escaped(text: str, encoding: str, json: bool) -> str:
    """`text` that a stream in `encoding` (ASCII, Latin-1) can take: what it cannot encode becomes \\uXXXX
    (a surrogate pair past U+FFFF) in JSON, or a backslash escape in text."""
    try:
        text.encode(encoding)
        return text
    except (UnicodeEncodeError, LookupError):
        pass
    if not json:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    out = []
    for ch in text:
        try:
            ch.encode(encoding)
            out.append(ch)
        except UnicodeEncodeError:
            c = ord(ch)
            if c > 0xFFFF:
                c -= 0x10000
                out.append(f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}")
            else:
                out.append(f"\\u{c:04x}")
    return "".join(out)
