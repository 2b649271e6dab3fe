"""Which language to speak (English or Simplified Chinese), and the short UI strings in both.

Longer prose lives beside the code that fills it with numbers (walkthrough.py); rule texts live in the
rule files. Only two languages exist: anything that is not Chinese gets English.
"""
from __future__ import annotations

from typing import Any, Mapping

from oomdoctor.words import LANGS, env_language, language_from_locale  # noqa: F401  (moving to words/)


def choose_language(flag: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """`--lang` wins; else the first non-empty of LC_ALL, LC_MESSAGES, LANG decides."""
    if flag:
        flag = flag.strip().lower()
        if flag not in LANGS:
            from oomdoctor.errors import InputError

            raise InputError(f"unknown language {flag!r}: choose en or zh")
        return flag
    return env_language(environ)


choose_lang = choose_language


# key -> {lang: text}; str.format fields are filled by t().
MESSAGES: dict[str, dict[str, str]] = {
    "next": {"en": "Next", "zh": "下一页"},
    "back": {"en": "Back", "zh": "上一页"},
    "close": {"en": "Close", "zh": "关闭"},
    "page_of": {"en": "page {n} of {total}", "zh": "第 {n} / {total} 页"},
    "replanning": {"en": "re-planning…", "zh": "正在重新规划…"},
    "plan_fits": {"en": "plan: {steps} step(s), peak {peak} of {cap} GiB: fits",
                  "zh": "方案：{steps} 步，峰值 {peak} / {cap} GiB：放得下"},
    "plan_no_fit": {"en": "plan: {steps} step(s), peak {peak} of {cap} GiB: still does not fit",
                    "zh": "方案：{steps} 步，峰值 {peak} / {cap} GiB：仍然放不下"},
    "fits_as_is": {"en": "fits as configured: peak {peak} of {cap} GiB",
                   "zh": "按当前配置即可放下：峰值 {peak} / {cap} GiB"},
    "walkthrough": {"en": "oomdoctor walkthrough", "zh": "oomdoctor 分步讲解"},
    "keys_hint": {"en": "→/n next · ←/b back · Tab moves between questions · Esc close",
                  "zh": "→/n 下一页 · ←/b 上一页 · Tab 在问题间切换 · Esc 关闭"},
    "yes": {"en": "yes", "zh": "是"},
    "no": {"en": "no", "zh": "否"},
    "gpu_count": {"en": "{n} GPU(s)", "zh": "{n} 张 GPU"},
}


def lookup(table: Mapping[str, Mapping[str, str]], key: str, lang: str, /, **values: Any) -> str:
    """Entry `key` of a {key: {en: ..., zh: ...}} table in `lang` (English when that language lacks
    it), formatted with `values`."""
    entry = table[key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text


def t(key: str, lang: str, /, **values: Any) -> str:
    """The short UI message `key` (MESSAGES) in `lang`."""
    return lookup(MESSAGES, key, lang, **values)


def pick(texts: Mapping[str, str] | str | None, lang: str) -> str:
    """One language out of a {en: ..., zh: ...} mapping (English as the fallback); a plain str is returned as is."""
    if texts is None:
        return ""
    if isinstance(texts, str):
        return texts
    return str(texts.get(lang) or texts.get("en") or "")
