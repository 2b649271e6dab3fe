"""The walkthrough's content, built from a hand-made Report shaped like the demo run."""
import glob
import os
import string
from dataclasses import replace

import pytest
import yaml

from oomdoctor import walkthrough as wt
from oomdoctor.walkthrough import Answers, cell_width, pages, questions, render_plain, wrap_cells
from test_walkthrough_fixtures import hand_report, hand_report_no_crash

RULES_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "rules")


def _page(report, key, lang):
    return next(p for p in pages(report, Answers(), lang) if p.key == key)


def _text(page):
    return "\n".join(page.paragraphs)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_error_page_quotes_the_crash_numbers(lang):
    text = _text(_page(hand_report(), "error", lang))
    for number in ("3.4 GiB", "1.9 GiB", "79.2 GiB", "75.6 GiB", "0.6 GiB", "train.log"):
        assert number in text
    assert ("line 412" if lang == "en" else "第 412 行") in text
    assert ("optimizer step" if lang == "en" else "优化器更新") in text


def test_error_page_in_chinese_names_the_error_in_chinese():
    assert "显存不足" in _text(_page(hand_report(), "error", "zh"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_memory_page_explains_every_component_with_their_gib(lang):
    page = _page(hand_report(), "memory", lang)
    text = _text(page)
    for gib in ("25.1 GiB", "50.2 GiB", "9.4 GiB", "4.9 GiB", "1.3 GiB", "116.0 GiB"):
        assert gib in text
    assert "Llama-2-7b-hf" in text and "4 × 2048 = 8192" in text and "bf16" in text
    names = ("梯度", "优化器状态", "激活值", "logits") if lang == "zh" else ("Gradients", "Optimizer states", "Activations", "Logits")
    for name in names:
        assert name in text
    assert page.bar is not None and page.bar.peak_gib == pytest.approx(116.0)
    assert [c for c, _, _ in page.bar.segments] == list(wt.COMPONENTS)


def test_memory_page_derives_bytes_per_parameter_from_the_estimate():
    # 25.1 GiB of weights over 6.74 B parameters: 4.0 bytes each (fp32 master weights)
    assert "6.74 B parameters × 4.0 bytes" in _text(_page(hand_report(), "memory", "en"))


def test_memory_page_says_how_much_must_be_saved_for_the_headroom():
    text = _text(_page(hand_report(), "memory", "en"))
    # 79.1 usable, 10 % kept free -> 71.2 GiB target; 116.0 - 71.2 = 44.8 GiB
    assert "71.2 GiB" in text and "44.8 GiB" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_step_page_shows_the_key_old_and_new_value_and_the_saving(lang):
    page = _page(hand_report(), "step-1", lang)
    text = _text(page)
    assert "per_device_train_batch_size" in text and "4 → 2" in text
    assert "gradient_accumulation_steps" in text and "4 → 8" in text
    assert "7.1 GiB" in text and "116.0 GiB → 108.9 GiB" in text
    assert "8192" in text and "4096" in text      # tokens per micro-batch before and after
    assert len(page.bars) == 2 and page.bars[1].peak_gib < page.bars[0].peak_gib


def test_step_titles_why_and_costs_come_from_the_rule_files_in_chinese():
    page = _page(hand_report(), "step-1", "zh")
    assert "微批量减半" in page.title
    assert "激活值和 logits 随一次前向传播中的样本数增长" in _text(page)
    assert "更小的批量让 GPU 利用率下降" in _text(page)


def test_consent_step_says_how_to_leave_it_out():
    text = _text(_page(hand_report(), "step-2", "en"))
    assert "--skip OOM004" in text and "full fine-tuning → LoRA" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_apply_page_gives_the_export_and_git_apply_commands(lang):
    page = _page(hand_report(), "apply", lang)
    assert "oomdoctor logs/train.log train.yaml --export plan.diff" in page.code
    assert "git apply plan.diff" in page.code
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in page.code
    assert "+finetuning_type: lora" in page.code
    assert "--write" in _text(page)


def test_apply_command_carries_the_answers_as_flags():
    report = hand_report()
    skipped = report.plan.skipped + (wt.Skipped("OOM004", wt.ANSWER_SKIP_REASONS["method"]),)
    report = replace(report, plan=replace(report.plan, skipped=skipped))
    code = next(p for p in pages(report, Answers(n_gpus=2), "en") if p.key == "apply").code
    assert "--gpus 2" in code and "--skip OOM004" in code


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_watch_page_expects_the_final_peak(lang):
    text = _text(_page(hand_report(), "watch", lang))
    assert "21.4 GiB" in text and "nvidia-smi" in text


def test_pages_follow_the_story_error_memory_questions_plan_steps_apply_watch():
    keys = [p.key for p in pages(hand_report(), Answers(), "en")]
    assert keys == ["error", "memory", "questions", "plan", "step-1", "step-2", "apply", "watch"]


def test_without_a_crash_log_the_first_page_is_a_preflight_check():
    text = _text(_page(hand_report_no_crash(), "error", "en"))
    assert "check before launch" in text and "116.0 GiB" in text


def test_plan_page_explains_rungs_left_out_by_an_answer_in_chinese():
    report = hand_report()
    plan = replace(report.plan, skipped=(wt.Skipped("OOM004", wt.ANSWER_SKIP_REASONS["method"]),))
    text = _text(_page(replace(report, plan=plan), "plan", "zh"))
    assert "从全参数微调改为 LoRA" in text and "而你要求保持不变" in text


def test_questions_default_to_what_the_report_says():
    report = hand_report()
    report = replace(report, setup=replace(report.setup, n_gpus=4))
    qs = {q.key: q for q in questions(report, "en")}
    assert set(qs) == {"n_gpus", "keep_effective_batch", "allow_method_change", "prefer"}
    assert qs["n_gpus"].default == 4 and 4 in dict(qs["n_gpus"].choices)
    assert qs["keep_effective_batch"].default is True and qs["allow_method_change"].default is False
    assert qs["prefer"].default == "memory"
    assert "64" in qs["keep_effective_batch"].prompt     # effective batch 4 × 4 × 4 GPUs


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_render_plain_is_the_whole_walkthrough_quoting_the_report(lang):
    doc = render_plain(hand_report(), Answers(), lang)
    n = len(pages(hand_report(), Answers(), lang))
    assert f"1/{n}" in doc and f"{n}/{n}" in doc
    for number in ("3.4 GiB", "1.9 GiB", "116.0 GiB", "21.4 GiB", "7.1 GiB", "8192"):
        assert number in doc
    if lang == "zh":
        for word in ("显存不足", "梯度累积", "梯度检查点", "优化器状态", "激活值"):
            assert word in doc


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_render_plain_text_fits_78_cells(lang):
    doc = render_plain(hand_report(), Answers(), lang)
    prose = [ln for ln in doc.splitlines() if not ln.startswith("    ")]    # commands and diff are verbatim
    assert max(cell_width(ln) for ln in prose) <= 78


def test_wrap_cells_breaks_chinese_between_characters_and_english_at_spaces():
    zh = wrap_cells("显存" * 30, 20)
    assert all(cell_width(ln) <= 20 for ln in zh) and "".join(zh) == "显存" * 30
    en = wrap_cells("the quick brown fox jumps over the lazy dog", 16)
    assert en == ["the quick brown", "fox jumps over", "the lazy dog"]


def test_every_walkthrough_text_has_both_languages_with_the_same_fields():
    tables = [wt._T, wt._CHANGE_TEACH, wt._PHASES, wt._PHASE_MEANING, wt._DIAGNOSES, wt._FIELD_LABELS,
              wt._COSTS, wt._COMPONENT_NAMES, wt._ZERO_WHAT, wt._METHODS]
    for table in tables:
        for key, entry in table.items():
            assert entry.get("en") and entry.get("zh"), key
            fields = [{f for _, f, _, _ in string.Formatter().parse(entry[lang]) if f} for lang in ("en", "zh")]
            assert fields[0] == fields[1], key


def test_chinese_texts_use_full_width_punctuation():
    tables = [wt._T, wt._CHANGE_TEACH, wt._PHASE_MEANING, wt._DIAGNOSES, wt._COSTS]
    for table in tables:
        for key, entry in table.items():
            zh = entry["zh"]
            for i, ch in enumerate(zh[1:], 1):
                if ch in ",;?" or (ch == ":" and not zh[i + 1:i + 2].isalnum()):
                    assert ord(zh[i - 1]) < 0x2E80, f"{key}: ASCII {ch!r} after Chinese text"


# ---------------------------------------------------------------- the rule files carry both languages

def _rule_items():
    for path in sorted(glob.glob(os.path.join(RULES_DIR, "*.yaml"))):
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
        for item in doc.get("rules", []):
            yield os.path.basename(path), item


def test_the_default_rules_exist():
    assert len(list(_rule_items())) >= 5


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_default_rule_has_title_why_and_cost_text_in_both_languages(lang):
    for path, item in _rule_items():
        where = f"{path}: {item.get('id')}"
        assert isinstance(item.get("title"), dict) and item["title"].get(lang), f"{where} title.{lang}"
        assert isinstance(item.get("why"), dict) and item["why"].get(lang), f"{where} why.{lang}"
        costs = item.get("costs")
        assert costs, f"{where} has no costs"
        for cost in costs:
            assert isinstance(cost.get("text"), dict) and cost["text"].get(lang), f"{where} costs.text.{lang}"


def test_rule_engine_gives_chinese_texts_that_differ_from_english():
    from oomdoctor.planner import load_rules

    book = load_rules(())
    assert len(book) >= 5
    for rule in book:
        for fld in ("title", "why", "costs"):
            zh, en = rule.text(fld, "zh"), rule.text(fld, "en")
            assert zh and en and zh != en, f"{rule.id}.{fld}"
            assert any(ord(ch) >= 0x4E00 for ch in zh), f"{rule.id}.{fld} zh has no Chinese"


def test_wrap_cells_never_starts_a_line_with_chinese_punctuation():
    text = "在你的训练上：每张卡省下 7.1 GiB，峰值 116.0 GiB → 108.9 GiB（可用 79.1 GiB），还不够。"
    for width in range(20, 80):
        lines = wrap_cells(text, width)
        assert all(cell_width(ln) <= width for ln in lines)
        assert not any(ln[0] in "，。；：）" for ln in lines[1:]), (width, lines)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")


def test_the_walkthrough_content_never_imports_textual():
    import subprocess
    import sys

    code = "import sys, oomdoctor.walkthrough, oomdoctor.i18n; print('textual' in sys.modules, 'rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.split() == ["False", "False"], out.stderr
