"""Plain texts for ``--list-rules`` and ``--explain RULE``, in English or Simplified Chinese."""
from __future__ import annotations

from typing import Any

from oomdoctor.planner.rules import AllOf, AnyOf, Condition, Leaf, NotOf, Rule, RuleBook

_WORDS = {
    "en": {"category": "category", "applicability": "applicability", "position": "ladder position",
           "why": "why", "costs": "costs", "when": "when", "always": "always",
           "actions": "actions", "repeat": "repeats", "repeat_n": "up to {n} times while it helps",
           "source": "defined at", "skip_why": "when it does not apply", "saving": "applied even when the "
           "estimate cannot see the saving (the crash log is the evidence)",
           "safe": "safe", "needs-consent": "needs consent (changes the experiment)",
           "header": "Rules in ladder order"},
    "zh": {"category": "类别", "applicability": "适用性", "position": "阶梯位置",
           "why": "原因", "costs": "代价", "when": "触发条件", "always": "总是",
           "actions": "操作", "repeat": "重复", "repeat_n": "有效时最多重复 {n} 次",
           "source": "定义位置", "skip_why": "不适用时", "saving": "即使估算看不到节省也会应用（以崩溃日志为依据）",
           "safe": "安全", "needs-consent": "需要同意（会改变实验）",
           "header": "按阶梯顺序排列的规则"},
}
_COST_WORDS = {"en": {"throughput": "throughput", "quality": "quality", "none": "none"},
               "zh": {"throughput": "吞吐量", "quality": "质量", "none": "无"}}
_CATEGORY_ZH = {"activations": "激活值", "model states": "模型状态", "logits": "logits", "runtime": "运行时",
                "host": "主机"}
_SIZE_ZH = {"small": "小", "medium": "中", "large": "大"}
_OPS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "in": "in", "not_in": "not in",
        "exists": "is known", "missing": "is unknown"}


def _words(lang: str) -> dict[str, str]:
    return _WORDS.get(lang, _WORDS["en"])


def _value(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def condition_text(cond: Condition | None) -> str:
    if cond is None:
        return "always"
    if isinstance(cond, AllOf):
        return " and ".join(_wrap(c) for c in cond.items)
    if isinstance(cond, AnyOf):
        return " or ".join(_wrap(c) for c in cond.items)
    if isinstance(cond, NotOf):
        return "not " + _wrap(cond.item)
    assert isinstance(cond, Leaf)
    if cond.op in ("exists", "missing"):
        return f"{cond.fact} {_OPS[cond.op]}"
    return f"{cond.fact} {_OPS[cond.op]} {_value(cond.value)}"


def _wrap(cond: Condition) -> str:
    text = condition_text(cond)
    return f"({text})" if isinstance(cond, (AllOf, AnyOf)) else text


def action_text(rule: Rule, lang: str = "en") -> list[str]:
    out = []
    for action in rule.actions:
        p = action.params
        if action.kind == "set":
            src = p["from"] if "from" in p else _value(p["value"])
            out.append(f"{p['field']} = {src}")
        elif action.kind == "scale":
            bounds = "".join(f", {b} {p[b]:g}" for b in ("min", "max") if b in p)
            out.append(f"{p['field']} x {p['factor']:g} ({p['rounding']}{bounds})")
        elif action.kind in ("enable", "disable"):
            out.append(f"{p['field']} = {'true' if action.kind == 'enable' else 'false'}")
        elif action.kind == "keep":
            out.append("grad_accum adjusted to keep the effective batch" if lang != "zh"
                       else "调整 grad_accum 以保持有效批量不变")
        elif action.kind == "env":
            from oomdoctor.shellsafe import export_line

            out.append(export_line(p["name"], p["value"]))
        elif action.kind == "note":
            out.append(p["text"].get(lang))
    return out


def explain(rule: Rule | RuleBook | str, name_or_lang: str | None = None, lang: str = "en") -> str:
    """Everything about one rule, for ``--explain RULE``.

    ``explain(rule, "zh")``; or ``explain(book, "OOM007", lang="zh")`` / ``explain("OOM007")`` to look the
    rule up by id or slug (in the default book when none is given); an unknown name is an InputError.
    """
    name = None
    if isinstance(rule, RuleBook):
        book, name = rule, name_or_lang
    else:
        book = None
        if name_or_lang is not None:
            lang = name_or_lang
        if isinstance(rule, str):
            name = rule
    if name is not None:
        from oomdoctor.errors import InputError
        if book is None:
            from oomdoctor.planner import load_rules
            book = load_rules()
        found = book.get(str(name))
        if found is None:
            raise InputError(f"no rule named '{name}' (see --list-rules)")
        rule = found
    assert isinstance(rule, Rule)
    w = _words(lang)
    zh = lang == "zh"
    category = _CATEGORY_ZH[rule.category] if zh else rule.category
    lines = [f"{rule.id} {rule.slug}: {rule.text('title', lang)}",
             f"  {w['category']}: {category}    {w['applicability']}: {w[rule.applicability]}"
             f"    {w['position']}: {rule.position}",
             f"  {w['why']}: {rule.text('why', lang)}",
             f"  {w['costs']}:"]
    for cost in rule.costs:
        size = "" if cost.kind == "none" else f" ({_SIZE_ZH[cost.size] if zh else cost.size})"
        lines.append(f"    - {_COST_WORDS[lang if lang in _COST_WORDS else 'en'][cost.kind]}{size}: {cost.text.get(lang)}")
    lines.append(f"  {w['when']}: {condition_text(rule.when) if rule.when else w['always']}")
    if rule.skip_why:
        lines.append(f"  {w['skip_why']}: {rule.skip_why.get(lang)}")
    lines.append(f"  {w['actions']}:")
    lines.extend(f"    - {a}" for a in action_text(rule, lang))
    if rule.repeat > 1:
        lines.append(f"  {w['repeat']}: {w['repeat_n'].format(n=rule.repeat)}")
    if not rule.check_saving:
        lines.append(f"  {w['saving']}")
    for ref in rule.references:
        lines.append(f"  -> {ref}")
    lines.append(f"  {w['source']}: {rule.where}")
    return "\n".join(lines)


def list_rules(book: RuleBook, lang: str = "en") -> str:
    """One line per rule in ladder order, for ``--list-rules``."""
    w = _words(lang)
    cw = _COST_WORDS[lang if lang in _COST_WORDS else "en"]
    width = max((len(r.slug) for r in book), default=0)
    lines = [f"{w['header']}:"]
    for rule in book:
        costs = ",".join(cw[k] for k in rule.cost_kinds)
        consent = " *" if rule.applicability == "needs-consent" else ""
        lines.append(f"{rule.position:3d}. {rule.id:<7} {rule.slug:<{width}}  {rule.text('title', lang)}"
                     f"  [{_CATEGORY_ZH[rule.category] if lang == 'zh' else rule.category}; {costs}]{consent}")
    lines.append("* " + w["needs-consent"])
    return "\n".join(lines)
