"""Which language a run speaks: --lang first (read before argparse, so --help and usage errors speak it
too), then LC_ALL, LC_MESSAGES, LANG; anything that is not Chinese is English."""
import pytest
from helpers import run_cli

from oomdoctor.cli import language


def test_lang_zh_cn_locale_gives_chinese():
    assert language([], {"LANG": "zh_CN.UTF-8"}) == "zh"


def test_lang_flag_overrides_the_locale_in_both_spellings():
    assert language(["--lang", "en"], {"LANG": "zh_CN.UTF-8", "LC_ALL": "zh_CN.UTF-8"}) == "en"
    assert language(["--demo", "--lang=zh"], {"LANG": "en_US.UTF-8"}) == "zh"


def test_lc_all_wins_over_lc_messages_and_lang():
    env = {"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8", "LANG": "zh_CN.UTF-8"}
    assert language([], env) == "en"
    assert language([], {"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}) == "zh"


def test_empty_locale_variables_are_passed_over():
    assert language([], {"LC_ALL": "", "LANG": "zh_CN.GB18030"}) == "zh"


@pytest.mark.parametrize("value", ["C", "POSIX", "en_GB.UTF-8", "de_DE", "ja_JP.UTF-8", ""])
def test_any_locale_that_is_not_chinese_gives_english(value):
    assert language([], {"LANG": value}) == "en"


def test_a_lang_value_argparse_will_refuse_leaves_the_locale_in_charge():
    assert language(["--lang", "fr"], {"LANG": "zh_CN.UTF-8"}) == "zh"
    assert language(["--", "--lang", "zh"], {}) == "en"        # after --, it is a file name


def test_an_unknown_language_flag_is_a_usage_error_in_the_locales_language(capsys, monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    code, out, err = run_cli(capsys, "--demo", "--lang", "fr")
    assert code == 2 and not out
    assert err.startswith("oomdoctor：参数 --lang：无效的选项值：'fr'") and "oomdoctor --help" in err
