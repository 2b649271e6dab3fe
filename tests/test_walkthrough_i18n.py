import string

import pytest

from oomdoctor.errors import InputError
from oomdoctor.i18n import MESSAGES, choose_language, language_from_locale, t


def test_lang_zh_cn_locale_gives_chinese():
    assert choose_language(None, {"LANG": "zh_CN.UTF-8"}) == "zh"


def test_lang_flag_overrides_the_locale():
    assert choose_language("en", {"LANG": "zh_CN.UTF-8", "LC_ALL": "zh_CN.UTF-8"}) == "en"
    assert choose_language("zh", {"LANG": "en_US.UTF-8"}) == "zh"


def test_lc_all_wins_over_lc_messages_and_lang():
    env = {"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8", "LANG": "zh_CN.UTF-8"}
    assert choose_language(None, env) == "en"
    assert choose_language(None, {"LC_MESSAGES": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}) == "zh"


def test_empty_locale_variables_are_passed_over():
    assert choose_language(None, {"LC_ALL": "", "LANG": "zh_CN.GB18030"}) == "zh"


@pytest.mark.parametrize("value", ["C", "POSIX", "en_GB.UTF-8", "de_DE", "ja_JP.UTF-8", ""])
def test_any_locale_that_is_not_chinese_gives_english(value):
    assert language_from_locale(value) == "en"
    assert choose_language(None, {"LANG": value}) == "en"


def test_no_locale_at_all_gives_english():
    assert choose_language(None, {}) == "en"


def test_unknown_language_flag_is_an_input_error():
    with pytest.raises(InputError):
        choose_language("fr", {})


def test_every_ui_message_has_both_languages_with_the_same_fields():
    for key, entry in MESSAGES.items():
        assert entry.get("en") and entry.get("zh"), key
        fields = [{f for _, f, _, _ in string.Formatter().parse(entry[lang]) if f} for lang in ("en", "zh")]
        assert fields[0] == fields[1], key


def test_message_is_formatted_in_the_asked_language():
    assert t("page_of", "zh", n=2, total=8) == "第 2 / 8 页"
    assert t("page_of", "en", n=2, total=8) == "page 2 of 8"
