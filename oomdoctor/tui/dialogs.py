"""Modal screens: ask a path, confirm an in-place apply, list the keys."""
from __future__ import annotations

from typing import Sequence

from rich.syntax import Syntax
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class PathDialog(ModalScreen["str | None"]):
    """Ask for a file or folder path; enter accepts, escape cancels (returns None)."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, title: str, default: str, hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            yield Input(value=self.default, id="path")
            yield Static((self.hint + "\n" if self.hint else "") + "enter: ok · esc: cancel", classes="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmApply(ModalScreen[bool]):
    """Show the diff that would be applied; only `y` applies."""

    BINDINGS = [
        Binding("y", "answer(True)", "apply"),
        Binding("n", "answer(False)", "cancel"),
        Binding("escape", "answer(False)", "cancel", show=False),
    ]

    def __init__(self, diff: str, files: Sequence[str]) -> None:
        super().__init__()
        self.diff = diff
        self.files = tuple(files)

    def compose(self) -> ComposeResult:
        names = ", ".join(self.files) or "no file"
        with Vertical(classes="dialog wide-dialog"):
            yield Static(f"Apply these changes in place to {names}?\nEach file is kept as FILE.orig first.",
                         classes="dialog-title")
            with VerticalScroll(classes="dialog-diff"):
                yield Static(Syntax(self.diff, "diff", theme="ansi_dark", background_color="default"))
            yield Static("y: apply · n or esc: cancel", classes="dialog-hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class HelpScreen(ModalScreen[None]):
    """Every key the app knows, from the same table the bindings are built from."""

    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("question_mark", "close", "close", show=False),
        Binding("q", "close", "close", show=False),
    ]

    def __init__(self, keys: Sequence[tuple[str, str]], *, title: str = "Keys", hint: str = "esc or ?: close") -> None:
        super().__init__()
        self.keys = tuple(keys)
        self.title_text = title
        self.hint = hint

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
