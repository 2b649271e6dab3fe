"""Modal screens (ask a path, confirm an in-place apply, list the keys), and bindings in the user's language."""
from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rich.syntax import Syntax
from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingsMap
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from oomdoctor.words import has, say


class Localized:
    """A Textual app, screen or widget whose BINDINGS describe keys with words codes ("app.key_back"): what is
    built is a subclass made once per language whose BINDINGS hold the words, so the footer shows them.

    Textual reads a class's BINDINGS when the class is created (DOMNode.__init_subclass__, textual/dom.py), and
    a subclass's bindings for a key replace its bases' (DOMNode._merge_bindings): the public class attribute is
    all this uses. The language is the `lang` the constructor is given, else its `session`'s.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return super().__new__(in_language(cls, _language_of(cls, args, kwargs)))


def _language_of(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    try:
        bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
    except TypeError:
        return "en"         # __init__ says what is wrong with the arguments
    bound.apply_defaults()
    lang = bound.arguments.get("lang")
    if lang is None and bound.arguments.get("session") is not None:
        lang = bound.arguments["session"].lang
    return lang if isinstance(lang, str) else "en"


_IN_LANGUAGE: dict[tuple[type, str], type] = {}       # each class is made once per language


def in_language(cls: type, lang: str) -> type:
    """`cls` with its coded binding descriptions in `lang`, made once per class and language."""
    if getattr(cls, "_bindings_lang", None) is not None:
        return cls
    if (cls, lang) not in _IN_LANGUAGE:
        _IN_LANGUAGE[cls, lang] = _said_in(cls, lang)
    return _IN_LANGUAGE[cls, lang]


def _said_in(cls: type, lang: str) -> type:
    keys: dict[str, list[Binding]] = {}
    for base in reversed(cls.__mro__):         # as DOMNode._merge_bindings: a subclass's key replaces its bases'
        for key, items in BindingsMap(base.__dict__.get("BINDINGS", ())).key_to_bindings.items():
            keys[key] = list(items)
    said = [replace(b, description=say(b.description, lang)) if b.description and has(b.description) else b
            for items in keys.values() if any(b.description and has(b.description) for b in items) for b in items]
    namespace = {"BINDINGS": said, "_bindings_lang": lang, "__module__": cls.__module__,
                 "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}
    return type(cls)(cls.__name__, (cls,), namespace)


class PathDialog(Localized, ModalScreen["str | None"]):
    """Ask for a file or folder path; enter accepts, escape cancels (returns None)."""

    BINDINGS = [Binding("escape", "cancel", "app.key_cancel")]

    def __init__(self, title: str, default: str, hint: str = "", *, lang: str = "en") -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.hint = hint
        self.lang = lang

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


class ConfirmApply(Localized, ModalScreen[bool]):
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

    def compose(self) -> ComposeResult:
        names = ", ".join(self.files) or say("app.no_file", self.lang)
        with Vertical(classes="dialog wide-dialog"):
            yield Static(say("app.apply_question", self.lang, files=names), classes="dialog-title")
            with VerticalScroll(classes="dialog-diff"):
                yield Static(Syntax(self.diff, "diff", theme="ansi_dark", background_color="default"))
            yield Static(say("app.apply_keys", self.lang), classes="dialog-hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class HelpScreen(Localized, ModalScreen[None]):
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
