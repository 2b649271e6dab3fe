"""Terminal cells: how wide a text is, and wrapping that breaks Chinese between any two characters.

The one width rule of oomdoctor: CJK ideographs, kana, hangul and full-width forms take two cells
(East Asian Width W/F for the ranges our texts use), everything else one.
"""
from __future__ import annotations

from oomdoctor.lazyre import lazy_re

# (first, last) code points of two-cell characters.
_WIDE_RANGES = ((0x2E80, 0xA4CF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFF60),
                (0xFFE0, 0xFFE6))
_WIDE_CLASS = "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in _WIDE_RANGES)
_TOKENS = lazy_re(rf"\s+|[{_WIDE_CLASS}]|[^\s{_WIDE_CLASS}]+")
_AFTER_SLASH = lazy_re(r"[^/]*/|[^/]+")
_NARROW_TAIL = lazy_re(r"[^\s\u2e80-\uffff]+$")
# The same two patterns for a text with no character from U+2E80 on (every English line): there the wide class
# cannot match and its complement is \S. Compiling a class of ~45k BMP code points costs ~10 ms (sre enumerates
# each one into a bitmap: CPython Lib/re/_compiler.py, _optimize_charset), so English output never compiles it.
_WIDE_FROM = chr(_WIDE_RANGES[0][0])
_TOKENS_NARROW = lazy_re(r"\s+|\S+")
_NARROW_TAIL_NARROW = lazy_re(r"\S+$")
# Chinese typesetting: these never start a line (the character before them comes along).
_NO_LINE_START = frozenset("，。、；：？！）》」』,.;:?!)")
# ... and these never end one (they go down to the next line with what they open).
_NO_LINE_END = frozenset("（《「『")


def is_wide(ch: str) -> bool:
    o = ord(ch)
    return any(a <= o <= b for a, b in _WIDE_RANGES)


def cell_width(text: str) -> int:
    """Terminal cells `text` takes."""
    if text.isascii():
        return len(text)
    return sum(2 if is_wide(ch) else 1 for ch in text)


def fit_cells(text: str, cells: int) -> str:
    """The longest start of `text` that takes at most `cells` cells."""
    out, used = [], 0
    for ch in text:
        w = 2 if is_wide(ch) else 1
        if used + w > cells:
            break
        out.append(ch)
        used += w
    return "".join(out)


def pad_cells(text: str, cells: int, align: str = "left") -> str:
    """`text` cut to `cells` cells and padded with spaces to exactly that width."""
    fitted = fit_cells(text, cells)
    pad = " " * (cells - cell_width(fitted))
    return pad + fitted if align == "right" else fitted + pad


def _pieces(tokens: list[str], room: int):
    """The tokens, with a word wider than `room` (a long path) cut after its slashes, and a piece still
    too wide cut at `room` cells, so that no wrapped line runs past the width."""
    for tok in tokens:
        if tok.isspace() or cell_width(tok) <= room:
            yield tok
            continue
        for part in _AFTER_SLASH.findall(tok):
            while cell_width(part) > room:
                head = fit_cells(part, room)
                yield head
                part = part[len(head):]
            if part:
                yield part


def wrap_cells(text: str, width: int, indent: str = "", initial: str = "") -> list[str]:
    """Lines of at most `width` cells: English breaks at spaces, Chinese between any two characters.
    The first line starts with `initial` ("  - "), the others with `indent`; both count in the width."""
    lines: list[str] = []
    prefix = initial
    cur, cur_w = initial, cell_width(initial)
    room = max(1, width - max(cell_width(initial), cell_width(indent)))
    tokens = _TOKENS if text and max(text) >= _WIDE_FROM else _TOKENS_NARROW
    for tok in _pieces(tokens.findall(text), room):
        w = cell_width(tok)
        if cur_w + w > width and cur[len(prefix):].strip() and not tok.isspace():
            carry = ""
            if tok in _NO_LINE_START:
                # punctuation may not start a line: take the character (or the English word) before it along
                rest = cur
                while rest and (not carry or carry[0] in _NO_LINE_START):
                    tail = (_NARROW_TAIL if max(rest) >= _WIDE_FROM else _NARROW_TAIL_NARROW).search(rest)
                    piece = rest[-1] if is_wide(rest[-1]) else (tail.group() if tail else "")
                    if not piece:
                        break
                    carry, rest = piece + carry, rest[:-len(piece)]
                if len(rest) <= len(prefix) or not rest[len(prefix):].strip():
                    carry, rest = "", cur
                cur = rest
            while not carry and cur.rstrip() and cur.rstrip()[-1] in _NO_LINE_END \
                    and cur.rstrip()[len(prefix):-1].strip():
                stripped = cur.rstrip()
                carry, cur = stripped[-1], stripped[:-1]
            lines.append(cur.rstrip())
            prefix = indent
            cur, cur_w = indent + carry, cell_width(indent) + cell_width(carry)
        if tok.isspace() and cur_w == cell_width(prefix) and (lines or prefix):
            continue
        cur += tok
        cur_w += w
    if cur[len(prefix):].strip() or not lines:
        lines.append(cur.rstrip())
    return lines
