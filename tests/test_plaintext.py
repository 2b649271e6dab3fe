"""The plain report written without rich (views/plaintext.py) is what rich writes to a pipe."""
from __future__ import annotations

import io

import pytest
from helpers import FIXTURE_INPUTS, report_of
from hypothesis import given, settings
from hypothesis import strategies as st

from oomdoctor.views import plaintext
from oomdoctor.views.plain import render


def _rich_text(report, width: int, show_patch: bool = True) -> str:
    from rich.console import Console

    out = io.StringIO()
    render(report, Console(file=out, width=width, highlight=False, force_terminal=False, color_system=None),
           show_patch=show_patch)
    return out.getvalue()


def _plain_text(report, width: int, show_patch: bool = True) -> str | None:
    console = plaintext.PlainConsole(width)
    try:
        render(report, console, show_patch=show_patch)
    except plaintext.NeedsRich:
        return None
    return console.text()


@pytest.mark.parametrize("args", FIXTURE_INPUTS, ids=lambda a: a[0].rsplit("/", 1)[-1])
def test_plain_console_writes_what_rich_writes_to_a_pipe(args):
    report = report_of(args)
    taken = 0
    for width in (100, 132, 80, 60, 44):
        for show_patch in (True, False):
            plain = _plain_text(report, width, show_patch)
            if plain is not None:
                taken += 1
                assert plain == _rich_text(report, width, show_patch), (width, show_patch)
    if args[0].endswith(("demo/train.log", "f12_deepspeed_sigkill.log")):
        assert taken >= 2      # these reports fit 100 columns: the fast path must take them


def test_a_table_wider_than_the_console_is_left_to_rich():
    table = plaintext.PlainTable(title="t", title_justify="left", box=None, pad_edge=False)
    table.add_column("a")
    table.add_row("x" * 120)
    with pytest.raises(plaintext.NeedsRich):
        table.lines(100)


@pytest.mark.parametrize("text", ["[red]user text[/]", "a :smile: b", "wide 中文", "tab\there", "bell\x07"])
def test_markup_emoji_wide_and_control_characters_are_left_to_rich(text):
    console = plaintext.PlainConsole(100)
    with pytest.raises(plaintext.NeedsRich):
        console.print(text)


def test_the_one_cell_characters_are_one_cell_for_rich():
    from rich.cells import cell_len

    assert {ch: cell_len(ch) for ch in plaintext.ONE_CELL} == {ch: 1 for ch in plaintext.ONE_CELL}


_CHARS = st.sampled_from(list("ab cd  ef—·█→x\n") + ["word", "longerword", "  "])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_CHARS, max_size=40), width=st.integers(1, 30),
       justify=st.sampled_from(["default", "left", "right"]))
def test_wrap_matches_rich_text_wrap(parts, width, justify):
    from rich.console import Console
    from rich.text import Text

    text = "".join(parts)
    rich_lines = [line.plain for line in Text(text).wrap(Console(width=200), width, justify=justify,
                                                          overflow="fold")]
    assert plaintext.wrap(text, width, justify) == rich_lines


_CELL = st.text(alphabet=st.sampled_from(list("ab —·1.5%\n")), max_size=14)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(_CELL, _CELL, _CELL), min_size=0, max_size=5),
       justify=st.tuples(*[st.sampled_from(["left", "right"])] * 3),
       title=st.sampled_from(["", "Memory", "A title longer than some tables are"]),
       width=st.integers(10, 60))
def test_plain_table_matches_rich_table_or_defers_to_it(rows, justify, title, width):
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    def build(kit_table, kit_text):
        t = kit_table(title=title or None, title_justify="left", box=None, pad_edge=False)
        for name, j in zip(("#", "step", "GiB"), justify):
            t.add_column(name, justify=j)
        for a, b, c in rows:
            t.add_row(a, kit_text(b), c)
        return t

    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False, color_system=None).print(build(Table, Text))
    console = plaintext.PlainConsole(width)
    try:
        console.print(build(plaintext.PlainTable, plaintext.PlainText))
    except plaintext.NeedsRich:
        return
    assert console.text() == out.getvalue()
