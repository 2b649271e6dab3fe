"""Every table in oomdoctor/words/ is complete in both languages and keeps to the glossary."""
from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest
import yaml
from helpers import read_yaml

from oomdoctor import words
from oomdoctor.facts import msg

GLOSSARY = read_yaml(Path(words.__file__).parent / "glossary.yaml")
ENTRIES = [(domain, code, entry) for domain in words.domains() for code, entry in words.table(domain).items()]


def _zh_texts(node, where: str):
    """(where, text) of every `zh:` text in a rule file's data: titles, whys, costs, notes, skip reasons."""
    if isinstance(node, dict):
        if isinstance(node.get("zh"), str):
            yield where, node["zh"]
        here = f"{where} {node['id']}" if isinstance(node.get("id"), str) else where
        for key, value in node.items():
            yield from _zh_texts(value, f"{here}.{key}" if key != "rules" else here)
    elif isinstance(node, list):
        for item in node:
            yield from _zh_texts(item, where)


def _rule_texts() -> list[tuple[str, str]]:
    from oomdoctor.planner.book import default_rules_dir

    return [found for path in sorted(default_rules_dir().glob("*.yaml"))
            for found in _zh_texts(yaml.safe_load(path.read_text(encoding="utf-8")), path.name)]


# Every Chinese text a user reads: the words tables and the shipped rule files.
ZH_TEXTS = [(code, zh) for _, code, (_, zh) in ENTRIES] + _rule_texts()


def _fields(text: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(text) if name}


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _entry_faults(domain: str, code: str, entry: tuple[str, str]) -> list[str]:
    faults = []
    if not code.startswith(domain + "."):
        faults.append(f"{code} belongs in words/{code.partition('.')[0]}.py")
    en, zh = entry
    if not (en.strip() and zh.strip()):
        faults.append(f"{code}: an empty text")
    elif _fields(en) != _fields(zh):
        faults.append(f"{code}: fields {sorted(_fields(en))} in English, {sorted(_fields(zh))} in Chinese")
    if _has_cjk(en):
        faults.append(f"{code}: Chinese in the English text")
    return faults


# One test over all ~1500 entries, each fault named by its code: a test per entry cost pytest's own
# bookkeeping (~7 ms of CPU each under xdist, collection and the controller's report included) for a check
# of a few microseconds.
def test_every_entry_has_both_languages_with_the_same_fields() -> None:
    assert len(ENTRIES) > 1000
    faults = [fault for domain, code, entry in ENTRIES for fault in _entry_faults(domain, code, entry)]
    assert not faults, "\n".join(faults)


@pytest.mark.parametrize("term", GLOSSARY, ids=[t["en"] for t in GLOSSARY])
def test_chinese_texts_use_the_glossary_term(term: dict) -> None:
    # An avoided word may be part of the right term ("序列长" in "序列长度"): look at what is left without it.
    offenders = [where for where, zh in ZH_TEXTS for bad in term["avoid"] if bad in zh.replace(term["zh"], "")]
    assert not offenders, f"use {term['zh']!r} for {term['en']!r} in: {offenders}"


def _coded_calls():
    """Every `msg("code", ...)` and `say("code", lang, ...)` of the package with a literal code."""
    package = Path(words.__file__).parents[1]
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("msg", "say") \
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                yield f"{path.relative_to(package.parent)}:{node.lineno}", node.args[0].value, node.keywords


def test_every_code_the_package_names_exists_and_gets_exactly_its_fields() -> None:
    wrong = []
    for where, code, keywords in _coded_calls():
        if not words.has(code):
            wrong.append(f"{where}: no entry {code!r}")
        elif all(k.arg is not None for k in keywords):     # **values: not knowable here
            given, needed = {k.arg for k in keywords}, _fields(words.table(code.partition(".")[0])[code][0])
            if given != needed:
                wrong.append(f"{where}: {code} takes {sorted(needed)}, given {sorted(given)}")
    assert not wrong, "\n".join(wrong)


def test_the_glossary_check_reads_the_rule_files_chinese() -> None:
    rule_texts = dict(_rule_texts())
    assert len(rule_texts) >= 60
    assert rule_texts["10-ladder.yaml OOM001.title"].startswith("微批大小减半")
    assert any(where.endswith(".skip_why") for where in rule_texts)


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


def _ascii_punctuation_after_chinese(zh: str) -> list[str]:
    found = []
    for i, ch in enumerate(zh[1:], 1):
        if ch in ",;?" or (ch == ":" and not zh[i + 1:i + 2].isalnum() and zh[i + 1:i + 2] != "%"):
            if _has_cjk(zh[i - 1]):
                found.append(f"ASCII {ch!r} after Chinese text at {i}")
    return found


def test_every_chinese_text_uses_full_width_punctuation_after_chinese() -> None:
    faults = [f"{code}: {fault}" for _, code, (_, zh) in ENTRIES for fault in _ascii_punctuation_after_chinese(zh)]
    assert not faults, "\n".join(faults)


def test_the_punctuation_check_finds_ascii_after_chinese_only() -> None:
    assert _ascii_punctuation_after_chinese("显存不足,请减小批大小") == ["ASCII ',' after Chinese text at 4"]
    assert _ascii_punctuation_after_chinese("显存:12 GiB, 50% 模型:90%") == []
    assert _entry_faults("cli", "plan.x", ("a {n}", "乙 {m}")) == [
        "plan.x belongs in words/plan.py", "plan.x: fields ['n'] in English, ['m'] in Chinese"]


def test_plural_and_capital_specs_fill_english_and_leave_chinese_alone() -> None:
    assert words.say("cli.wrote_copies", "en", n=1, folder="out") == "oomdoctor: wrote 1 patched file into out"
    assert words.say("cli.wrote_copies", "en", n=3, folder="out") == "oomdoctor: wrote 3 patched files into out"
    assert words.say("cli.wrote_copies", "zh", n=3, folder="out") == "oomdoctor：已把 3 个修改后的文件写入 out"
    why = msg("plan.cond.unknown", fact=msg("plan.fact.setup.lora_rank"))
    assert words.say(msg("plan.skip.unmet", why=why)) == "The LoRA rank is unknown."
    assert words.say(msg("plan.skip.unmet", why=why), "zh") == "LoRA 秩未知。"


def test_a_tuple_value_is_joined_the_languages_way() -> None:
    items = (msg("common.on"), "x")
    assert words.say(msg("plan.value_list", items=items)) == "on, x"
    assert words.say(msg("plan.value_list", items=items), "zh") == "开、x"


# ---------------------------------------------------------------- terminal cells

def test_wide_characters_take_two_cells_and_fit_and_pad_count_them() -> None:
    assert words.cell_width("显存 GiB") == 8
    assert words.fit_cells("显存不足", 5) == "显存"
    assert words.pad_cells("显存", 6) == "显存  " and words.pad_cells("ab", 4, "right") == "  ab"


def test_wrap_cells_breaks_chinese_between_characters_and_english_at_spaces() -> None:
    zh = words.wrap_cells("显存" * 30, 20)
    assert all(words.cell_width(ln) <= 20 for ln in zh) and "".join(zh) == "显存" * 30
    en = words.wrap_cells("the quick brown fox jumps over the lazy dog", 16)
    assert en == ["the quick brown", "fox jumps over", "the lazy dog"]


def test_wrap_cells_starts_the_first_line_with_its_own_prefix() -> None:
    lines = words.wrap_cells("one two three four five six", 12, indent="    ", initial="  - ")
    assert lines == ["  - one two", "    three", "    four", "    five six"]


def test_wrap_cells_never_starts_a_line_with_chinese_punctuation() -> None:
    text = "在你的训练上：每张卡省下 7.1 GiB，峰值 116.0 GiB → 108.9 GiB（可用 79.1 GiB），还不够。"
    for width in range(20, 80):
        lines = words.wrap_cells(text, width)
        assert all(words.cell_width(ln) <= width for ln in lines)
        assert not any(ln[0] in "，。；：）" for ln in lines[1:]), (width, lines)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")


def test_wrap_cells_cuts_a_word_too_long_for_any_line_after_a_slash_and_never_runs_past_the_width() -> None:
    path = "/tmp/venv/lib/python3.11/site-packages/oomdoctor/data/demo/train.log:65"
    lines = words.wrap_cells(f"Crash  {path}  CUDA ran out of GPU memory", 60, indent=" " * 7)
    assert all(words.cell_width(ln) <= 60 for ln in lines), lines
    assert lines[0].endswith("oomdoctor/") and lines[1].lstrip().startswith("data/demo/train.log:65")
    assert "".join(ln.strip() for ln in lines).replace(" ", "") == f"Crash{path}CUDAranoutofGPUmemory"
    slashless = words.wrap_cells("x" * 50, 20, indent="  ")
    assert [len(ln) for ln in slashless] == [18, 20, 16] and "".join(slashless).replace(" ", "") == "x" * 50
    assert words.wrap_cells("a short/path fits", 30) == ["a short/path fits"]
