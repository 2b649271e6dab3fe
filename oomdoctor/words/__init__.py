"""Every word oomdoctor shows a user, in English and Simplified Chinese: the one home for words.

Facts carry codes (`facts.Msg`); views, the guide, the app and the CLI turn them into text here.
A code's first dotted segment names its table: "crash.kind.cuda_oom" lives in words/crash.py as

    WORDS = {"crash.kind.cuda_oom": ("CUDA ran out of GPU memory", "CUDA 显存不足"), ...}

Every entry has both languages and the same `{fields}` in each (tests/test_words.py checks all tables;
glossary.yaml holds the one Chinese term per concept). Tables are imported on first use, so a run
loads only the ones it speaks. This package imports only oomdoctor.facts: no rich, no textual.

Fields take Python's format specs (`{gib:.1f}`) and two of ours for English: `{n} step{n:plural::s}`
gives "1 step", "2 steps" (after "plural:" the singular ending, a colon, the plural one), and
`{why:cap}` starts a nested sentence with a capital. Chinese writes `{n} 步` and `{why}`.
Numbers, sizes and terminal widths are formatted here too, once: `gib`, `gib_short`, `hours`
(words/_numbers.py) and `cell_width`, `fit_cells`, `pad_cells`, `wrap_cells` (words/_cells.py).
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping
from typing import Any

from oomdoctor.facts import Msg, Text
from oomdoctor.words._cells import cell_width, fit_cells, pad_cells, wrap_cells
from oomdoctor.words._numbers import count_words, gib, gib_short, hours, signed_gib, size
from oomdoctor.words._safe import clean

__all__ = ["LANGS", "cell_width", "clean", "count_words", "domains", "env_language", "fit_cells", "gib", "gib_short",
           "has", "hours", "join", "language_from_locale", "pad_cells", "say", "show", "signed_gib", "size", "table",
           "wrap_cells"]

LANGS = ("en", "zh")
_INDEX = {"en": 0, "zh": 1}

# POSIX precedence for the message locale: LC_ALL overrides LC_MESSAGES, which overrides LANG.
_LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")

_tables: dict[str, Mapping[str, tuple[str, str]]] = {}


def language_from_locale(value: str | None) -> str:
    """"zh_CN.UTF-8", "zh_TW", "zh" -> "zh"; "C", "en_US.UTF-8", "" -> "en"."""
    if value and value.strip().lower().startswith("zh"):
        return "zh"
    return "en"


def env_language(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale asks for: the first non-empty of LC_ALL, LC_MESSAGES, LANG."""
    env = os.environ if environ is None else environ
    for name in _LOCALE_VARS:
        value = env.get(name)
        if value:
            return language_from_locale(value)
    return "en"


def domains() -> tuple[str, ...]:
    """The table modules of this package (for tests and tools that list every code)."""
    here = os.path.dirname(__file__)
    return tuple(sorted(name[:-3] for name in os.listdir(here)
                        if name.endswith(".py") and not name.startswith("_")))


def table(domain: str) -> Mapping[str, tuple[str, str]]:
    """The WORDS table of words/<domain>.py."""
    found = _tables.get(domain)
    if found is None:
        found = importlib.import_module(f"{__name__}.{domain}").WORDS
        _tables[domain] = found
    return found


def _entry(code: str) -> tuple[str, str] | None:
    domain = code.partition(".")[0]
    if not domain.isidentifier() or domain.startswith("_"):
        return None
    try:
        return table(domain).get(code)
    except ImportError:
        return None


def has(code: str) -> bool:
    return _entry(code) is not None


_FORMATTER: Any = None


def _formatter() -> Any:
    """str.format plus the `plural:` and `cap` specs (string.Formatter is imported only when a text uses them)."""
    global _FORMATTER
    if _FORMATTER is None:
        import string

        class Formatter(string.Formatter):
            def format_field(self, value: Any, format_spec: str) -> Any:
                if format_spec.startswith("plural:"):
                    one, _, many = format_spec[len("plural:"):].partition(":")
                    return one if value == 1 else many
                if format_spec == "cap":
                    text = str(value)
                    return text[:1].upper() + text[1:]
                return format(value, format_spec)

        _FORMATTER = Formatter()
    return _FORMATTER


def say(what: Msg | Text | str, lang: str = "en", /, **values: Any) -> str:
    """The text of a Msg (or of a bare code with `values`, or of a data file's Text) in `lang`.

    A value that is itself a Msg or a Text is rendered first, in the same language. An unknown code
    is shown as the code with its values rather than failing a run; tests/test_words.py keeps that
    from shipping.
    """
    if isinstance(what, Text):
        return clean(what.get(lang))        # a rules or data file's text: input, shown safely
    if isinstance(what, Msg):
        code, values = what.code, {**what.values, **values}
    else:
        code = what
    values = {k: _value(v, lang) for k, v in values.items()}
    entry = _entry(code)
    if entry is None:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(values.items()))
        return f"{code}({shown})" if shown else code
    text = entry[_INDEX.get(lang, 0)] or entry[0]
    if not values:
        return text
    if ":plural:" in text or ":cap}" in text:
        return _formatter().vformat(text, (), values)
    return text.format(**values)


def _value(value: Any, lang: str) -> Any:
    """A field's value ready to format: Msg and Text rendered, a tuple of them joined the language's way."""
    if isinstance(value, (Msg, Text)):
        return say(value, lang)
    if isinstance(value, tuple):
        return join(value, lang)
    if isinstance(value, str):
        return clean(value)                 # file names, log lines, config values: never raw controls
    return value


def show(what: Msg | Text | str, lang: str = "en") -> str:
    """`say` for a Msg or a Text; a plain string (a sentence not yet moved into words/) as it is."""
    if isinstance(what, (Msg, Text)):
        return say(what, lang)
    return clean(str(what))


def join(items: Iterable[Msg | Text | str], lang: str = "en", sep: str = "common.list_sep") -> str:
    """Items shown in `lang` and joined the language's way ("a, b" / "a、b")."""
    return say(sep, lang).join(show(item, lang) for item in items)
