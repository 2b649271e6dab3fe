"""The plain report's characters for a pipe or a file, written without importing rich.

With no terminal rich writes plain text, but importing it and laying the report out costs about
60 ms of a run that should take well under half a second. PlainConsole, PlainText and PlainTable do
the same layout for what views/plain.py prints: lines of text word-wrapped to the width, and tables
without boxes, padded as rich pads them. Anything whose layout rich would decide differently raises
NeedsRich before a byte is written, and the caller renders with rich instead, so the output is the
same either way: markup or emoji codes in a string, characters that are not one cell wide (CJK,
combining marks, controls, tabs), a table wider than the console, table options not listed here.

The rules follow rich 15: Text.wrap with rich._wrap.divide_line (fold overflow), Lines.justify for
"left" / "right", Table with box=None, padding (0, 1), show_header; tests/test_startup.py checks the
output against rich's on many reports.
"""
from __future__ import annotations

import re

from oomdoctor.lazyre import lazy_re

# One-cell characters the reports use beyond printable ASCII (tests check rich measures each as 1).
ONE_CELL = frozenset("§²·×–—‘’“”•…←→−≈≤≥±°µé≡─│┃║█░▒▓")
_BOLD_LEAD = lazy_re(r"\[bold\]([^\[\]]*)\[/\]")          # the one markup tag plain.py writes
_EMOJI_CODE = re.compile(r":(\S*?)(?:(?:\-)(emoji|text))?:")  # rich's emoji-code pattern
_WORD = re.compile(r"\s*\S+\s*")


class NeedsRich(Exception):
    """This output needs rich's own layout; nothing has been written yet."""


def _checked(text: str) -> str:
    for ch in text:
        if not (" " <= ch <= "~" or ch == "\n" or ch in ONE_CELL):
            raise NeedsRich(f"character {ch!r}")
    return text


def _from_markup(text: str) -> str:
    """What rich's markup and emoji rendering make of `text`, for the strings plain.py prints."""
    text = _BOLD_LEAD.sub(r"\1", text, count=1) if text.startswith("[bold]") else text
    if "[" in text or _EMOJI_CODE.search(text):
        raise NeedsRich("markup or an emoji code")
    return text


class PlainText:
    """The part of rich.text.Text that plain.py uses; styles are dropped, as rich drops them in a pipe."""

    __slots__ = ("plain",)

    def __init__(self, text: str = "", style: object = None) -> None:
        self.plain = text

    def append(self, text: str | PlainText, style: object = None) -> PlainText:
        self.plain += text if isinstance(text, str) else text.plain
        return self

    def __add__(self, other: str | PlainText) -> PlainText:
        return PlainText(self.plain + (other if isinstance(other, str) else other.plain))

    def __getitem__(self, index: slice) -> PlainText:
        return PlainText(self.plain[index])

    def __str__(self) -> str:
        return self.plain

    @classmethod
    def assemble(cls, *parts: str | PlainText | tuple[str, object]) -> PlainText:
        out = cls()
        for part in parts:
            out.append(part[0] if isinstance(part, tuple) else part)
        return out


def _breaks(text: str, width: int) -> list[int]:
    """rich._wrap.divide_line(text, width, fold=True) for text of one-cell characters."""
    breaks: list[int] = []
    offset = 0
    m = _WORD.match(text, 0)
    while m is not None:
        start, word = m.start(), m.group(0)
        word_length = len(word.rstrip())
        if width - offset >= word_length:
            offset += len(word)
        elif word_length > width:
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
            for n, piece in enumerate(pieces):
                if start:
                    breaks.append(start)
                if n == len(pieces) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
        m = _WORD.match(text, m.end())
    return breaks


def wrap(text: str, width: int, justify: str = "default") -> list[str]:
    """rich's Text.wrap(width, justify, overflow="fold") for text of one-cell characters, as strings."""
    lines: list[str] = []
    for para in text.split("\n"):
        cuts = [0, *_breaks(para, width), len(para)]
        for a, b in zip(cuts, cuts[1:]):
            line = para[a:b]
            if len(line) > width:          # rstrip_end: drop trailing spaces that overflow
                excess = len(line) - width
                spaces = len(line) - len(line.rstrip())
                line = line[:len(line) - min(spaces, excess)]
            if justify == "left":
                line = line[:width].ljust(width)
            elif justify == "right":
                line = line.rstrip()[:width].rjust(width)
            elif justify != "default":
                raise NeedsRich(f"justify {justify}")
            lines.append(line[:width])
    return lines


class PlainTable:
    """rich.table.Table(box=None, pad_edge=False, show_header=True, padding=(0, 1)) for tables that fit."""

    def __init__(self, title: str | None = None, *, title_justify: str = "center", show_header: bool = True,
                 box: object = "default", pad_edge: bool = True, **other: object) -> None:
        if box is not None or pad_edge or not show_header or other:
            raise NeedsRich("table options")
        self.title = _from_markup(title) if title else None
        self.title_justify = title_justify
        self.headers: list[str] = []
        self.justify: list[str] = []
        self.rows: list[list[str]] = []

    def add_column(self, header: str = "", justify: str = "left") -> None:
        self.headers.append(_from_markup(header))
        self.justify.append(justify)

    def add_row(self, *cells: str | PlainText) -> None:
        row = [_from_markup(c) if isinstance(c, str) else c.plain for c in cells]
        self.rows.append(row + [""] * (len(self.headers) - len(row)))

    def lines(self, max_width: int) -> list[str]:
        n = len(self.headers)
        if not n or any(len(r) > n for r in self.rows):
            raise NeedsRich("table shape")
        pads = [(0 if i == 0 else 1, 0 if i == n - 1 else 1) for i in range(n)]
        if any("\n" in h for h in self.headers):
            raise NeedsRich("a header of several lines")       # rich aligns those to the bottom
        widths = []
        for i, (left, right) in enumerate(pads):
            content = max(len(line) for cell in [self.headers[i], *(r[i] for r in self.rows)]
                          for line in (cell.splitlines() or [""]))
            widths.append(content + left + right or 1)
        table_width = sum(widths)
        if table_width > max_width:
            raise NeedsRich("table wider than the console")   # rich would shrink and wrap columns
        out: list[str] = []
        if self.title:
            out += wrap(self.title, table_width, self.title_justify)
        for row in [self.headers, *self.rows]:
            cells = [[" " * left + line + " " * right
                      for line in wrap(cell, width - left - right, self.justify[i])]
                     for i, (cell, width, (left, right)) in enumerate(zip(row, widths, pads))]
            height = max(len(c) for c in cells)
            for c, width in zip(cells, widths):
                c += [" " * width] * (height - len(c))        # cells sit at the top of their row
            out += ["".join(c[k] for c in cells) for k in range(height)]
        return out


class PlainConsole:
    """Collects what rich.console.Console(width=width) would write to a pipe; `text()` is all of it."""

    kit = (PlainText, PlainTable)

    def __init__(self, width: int) -> None:
        self.width = width
        self._out: list[str] = []

    def print(self, *objects: str | PlainText | PlainTable, highlight: object = None, markup: bool = True,
              soft_wrap: bool = False) -> None:
        if len(objects) > 1:
            raise NeedsRich("several objects")
        obj = objects[0] if objects else ""
        if soft_wrap and isinstance(obj, PlainText):    # rich's soft_wrap: the line as it is, never folded
            lines = obj.plain.split("\n")
        elif soft_wrap and isinstance(obj, str):
            lines = (_from_markup(obj) if markup else obj).split("\n")
        elif isinstance(obj, PlainTable):
            lines = obj.lines(self.width)
        elif isinstance(obj, PlainText):
            lines = wrap(obj.plain, self.width)
        elif isinstance(obj, str):
            lines = wrap(_from_markup(obj) if markup else obj, self.width)
        else:
            raise NeedsRich(type(obj).__name__)
        for line in lines:
            self._out.append(_checked(line))
            self._out.append("\n")

    def text(self) -> str:
        return "".join(self._out)
