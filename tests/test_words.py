"""Every table in oomdoctor/words/ is complete in both languages and keeps to the glossary."""
from __future__ import annotations

import string
from pathlib import Path

import pytest
import yaml

from oomdoctor import words
from oomdoctor.facts import msg

GLOSSARY = yaml.safe_load((Path(words.__file__).parent / "glossary.yaml").read_text(encoding="utf-8"))
ENTRIES = [(domain, code, entry) for domain in words.domains() for code, entry in words.table(domain).items()]


def _fields(text: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(text) if name}


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


@pytest.mark.parametrize("domain,code,entry", ENTRIES, ids=[code for _, code, _ in ENTRIES])
def test_entry_has_both_languages_with_the_same_fields(domain: str, code: str, entry: tuple[str, str]) -> None:
    assert code.startswith(domain + "."), f"{code} belongs in words/{code.partition('.')[0]}.py"
    en, zh = entry
    assert en.strip() and zh.strip()
    assert _fields(en) == _fields(zh)
    assert not _has_cjk(en), f"{code}: Chinese in the English text"


@pytest.mark.parametrize("term", GLOSSARY, ids=[t["en"] for t in GLOSSARY])
def test_chinese_texts_use_the_glossary_term(term: dict) -> None:
    offenders = [code for _, code, (_, zh) in ENTRIES for bad in term["avoid"] if bad in zh]
    assert not offenders, f"use {term['zh']!r} for {term['en']!r} in: {offenders}"


def test_say_fills_fields_renders_nested_messages_and_falls_back_on_unknown_codes() -> None:
    assert words.say(msg("common.gib", value=2.345), "zh") == "2.3 GiB"
    assert words.say("common.yes", "zh") == "是"
    assert words.say(msg("common.gib", value=1.0), "fr") == "1.0 GiB"
    assert words.say("nowhere.at_all", "en", n=3) == "nowhere.at_all(n=3)"


def test_language_comes_from_the_locale_in_posix_order() -> None:
    assert words.env_language({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert words.env_language({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}) == "en"
    assert words.env_language({"LC_MESSAGES": "zh_TW", "LANG": "en_US"}) == "zh"
    assert words.env_language({}) == "en"
