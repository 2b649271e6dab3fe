"""Every word oomdoctor shows a user, in English and Simplified Chinese: the one home for words.

Facts carry codes (`facts.Msg`); views, the guide, the app and the CLI turn them into text here.
A code's first dotted segment names its table: "crash.kind.cuda_oom" lives in words/crash.py as

    WORDS = {"crash.kind.cuda_oom": ("CUDA ran out of GPU memory", "CUDA 显存不足"), ...}

Every entry has both languages and the same `{fields}` in each (tests/test_words.py checks all tables;
glossary.yaml holds the one Chinese term per concept). Tables are imported on first use, so a run
loads only the ones it speaks. This package imports only oomdoctor.facts: no rich, no textual.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Mapping

from oomdoctor.facts import Msg

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


def has(code: str) -> bool:
    domain = code.partition(".")[0]
    try:
        return code in table(domain)
    except ImportError:
        return False


def say(what: Msg | str, lang: str = "en", /, **values: Any) -> str:
    """The text of a Msg (or of a bare code with `values`) in `lang`, its fields filled.

    A value that is itself a Msg is rendered first, in the same language. An unknown code is shown
    as the code with its values rather than failing a run; tests/test_words.py keeps that from shipping.
    """
    if isinstance(what, Msg):
        code, values = what.code, {**what.values, **values}
    else:
        code = what
    values = {k: say(v, lang) if isinstance(v, Msg) else v for k, v in values.items()}
    try:
        entry = table(code.partition(".")[0])[code]
    except (ImportError, KeyError):
        shown = ", ".join(f"{k}={v}" for k, v in sorted(values.items()))
        return f"{code}({shown})" if shown else code
    text = entry[_INDEX.get(lang, 0)] or entry[0]
    return text.format(**values) if values else text
