"""Modal screens (ask a path, confirm an in-place apply, list the keys), and bindings in the user's language."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rich.syntax import Syntax
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from oomdoctor.words import has, say


def localize_bindings(node: Any, lang: str) -> None:
    """Footer words in the app's language: every binding description that is a words code becomes its text.

    Bindings are declared once per class with codes ("app.key_back"); each app, screen or widget holds its
    own copy of them, rewritten here when it is created. That copy is Textual's private `_bindings`
    (textual/dom.py, DOMNode.__init__), so pyproject.toml allows only the Textual major version CI tests.
    """
    bindings = node._bindings.key_to_bindings
    for key, items in bindings.items():
        bindings[key] = [replace(b, description=say(b.description, lang)) if b.description and has(b.description)
                         else b for b in items]


class PathDialog(ModalScreen["str | None"]):
    """Ask for a file or folder path; enter accepts, escape cancels (returns None)."""

    BINDINGS = [Binding("escape", "cancel", "app.key_cancel")]

    def __init__(self, title: str, default: str, hint: str = "", *, lang: str = "en") -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.hint = hint
        self.lang = lang
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            yield Input(value=self.default, id="path")
            yield Static((self.hint + "\n" if self.hint else "") + say("app.path_keys", self.lang), classes="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmApply(ModalScreen[bool]):
    """Show the diff that would be applied; only `y` applies."""

    BINDINGS = [
        Binding("y", "answer(True)", "app.key_apply"),
        Binding("n", "answer(False)", "app.key_cancel"),
        Binding("escape", "answer(False)", "app.key_cancel", show=False),
    ]

    def __init__(self, diff: str, files: Sequence[str], *, lang: str = "en") -> None:
        super().__init__()
        self.diff = diff
        self.files = tuple(files)
        self.lang = lang
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        names = ", ".join(self.files) or say("app.no_file", self.lang)
        with Vertical(classes="dialog wide-dialog"):
            yield Static(say("app.apply_question", self.lang, files=names), classes="dialog-title")
            with VerticalScroll(classes="dialog-diff"):
                yield Static(Syntax(self.diff, "diff", theme="ansi_dark", background_color="default"))
            yield Static(say("app.apply_keys", self.lang), classes="dialog-hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class HelpScreen(ModalScreen[None]):
    """Every key the app knows, from the same table the bindings are built from."""

    BINDINGS = [
        Binding("escape", "close", "app.key_close"),
        Binding("question_mark", "close", "app.key_close", show=False),
        Binding("q", "close", "app.key_close", show=False),
    ]

    def __init__(self, keys: Sequence[tuple[str, str]], *, title: str, hint: str, lang: str = "en") -> None:
        super().__init__()
        self.keys = tuple(keys)
        self.title_text = title
        self.hint = hint
        localize_bindings(self, lang)

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, what in self.keys:
            table.add_row(key, what)
        with Vertical(classes="dialog wide-dialog"):
            yield Static(self.title_text, classes="dialog-title")
            with VerticalScroll(classes="dialog-diff"):
                yield Static(table)
            yield Static(self.hint, classes="dialog-hint")

    def action_close(self) -> None:
        self.dismiss(None)
