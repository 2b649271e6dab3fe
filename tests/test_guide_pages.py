"""The guide's pages, built from a hand-made Report shaped like the demo run."""
import glob
import os
from dataclasses import replace

import pytest
import yaml
from helpers import ROOT, hand_report, hand_report_no_crash

from oomdoctor.facts import COMPONENTS, Skipped
from oomdoctor.guide import SKIP_REASONS, Answers, pages, questions, render_plain
from oomdoctor.planner import load_rules
from oomdoctor.words import cell_width

RULES_DIR = str(ROOT / "rules")
BOOK = load_rules(())


def _page(report, key, lang, rules=None):
    return next(p for p in pages(report, Answers(), lang, rules) if p.key == key)


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
    assert [c for c, _, _ in page.bar.segments] == list(COMPONENTS)


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


def test_step_titles_and_why_come_from_the_step_and_costs_from_the_rule_book_in_chinese():
    page = _page(hand_report(), "step-1", "zh", BOOK)
    assert "微批大小减半，梯度累积加倍" in page.title
    assert "激活值与微批大小成正比。" in _text(page)
    assert "微批更小时 GPU 利用率下降" in _text(page)         # the cost text of rules/10-ladder.yaml OOM001


def test_without_the_rule_book_a_step_costs_are_told_by_kind():
    text = _text(_page(hand_report(), "step-1", "en"))
    assert "Training gets slower" in text


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
    skipped = report.plan.skipped + (Skipped("OOM004", SKIP_REASONS["method"]),)
    report = replace(report, plan=replace(report.plan, skipped=skipped))
    code = next(p for p in pages(report, Answers(n_gpus=2), "en") if p.key == "apply").code
    assert "--gpus 2" in code and "--skip OOM004" in code


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_watch_page_expects_the_final_peak(lang):
    text = _text(_page(hand_report(), "watch", lang))
    assert "21.4 GiB" in text and "nvidia-smi" in text


def test_pages_follow_the_story_and_end_on_the_plan_itself():
    keys = [p.key for p in pages(hand_report(), Answers(), "en")]
    assert keys == ["error", "memory", "questions", "plan", "step-1", "step-2", "watch", "apply"]


def test_without_a_crash_log_the_first_page_is_a_preflight_check():
    text = _text(_page(hand_report_no_crash(), "error", "en"))
    assert "check before launch" in text and "116.0 GiB" in text


def test_plan_page_explains_rungs_left_out_by_an_answer_in_chinese():
    report = hand_report()
    plan = replace(report.plan, skipped=(Skipped("OOM004", SKIP_REASONS["method"]),))
    text = _text(_page(replace(report, plan=plan), "plan", "zh", BOOK))
    assert "从全参数微调改为 LoRA" in text and "而你要求保持不变" in text


def test_plan_page_gives_the_planners_own_reasons_in_chinese_too():
    text = _text(_page(hand_report(), "plan", "zh", BOOK))
    assert "它不会改变当前设置中的任何东西。" in text           # hand_report skips OOM003: no change


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


# ---------------------------------------------------------------- the rule files carry both languages

def _rule_items():
    for path in sorted(glob.glob(os.path.join(RULES_DIR, "*.yaml"))):
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
        for item in doc.get("rules", []):
            yield os.path.basename(path), item


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


def test_the_guide_never_imports_textual_or_rich():
    import subprocess
    import sys

    code = "import sys, oomdoctor.guide, oomdoctor.words; print('textual' in sys.modules, 'rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.split() == ["False", "False"], out.stderr


# ---------------------------------------------------------------- promises the words make

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_card_the_log_does_not_name_is_its_size_never_a_placeholder(lang):
    from helpers import session_of

    from oomdoctor.guide import default_answers, questions
    from oomdoctor.views.plain import render_to_string

    session = session_of(("tests/data/logs/f01_torch25_backward.log", "tests/data/advise/lora_a100_40g.yaml"), lang)
    report = session.report
    assert report.hardware.gpu == ""                    # the log names no card
    prompt = questions(report, lang, session.rules)[0].prompt
    assert "23.6 GiB" in prompt and "from log" not in prompt
    text = render_plain(report, default_answers(report), lang, rules=session.rules)
    plain = render_to_string(report, lang=lang)
    for words in (text, plain):
        assert "GPU from log" not in words and "unknown" not in words
    assert ("card not named" if lang == "en" else "型号未知") in plain


def test_the_overhead_sentence_says_what_shrinks_it_as_the_steps_then_show():
    from helpers import session_of

    from oomdoctor.guide import default_answers

    # a long-context run: the fused cross-entropy takes the logits away, and the allocator's reserve with them
    session = session_of(("tests/data/guide/qwen1_5b_long_a100.yaml", "--gpu", "A100-40GB"))
    report = session.report
    d, overhead = report.estimate.details, report.estimate.components["overhead"]
    all_pages = pages(report, default_answers(report), "en", session.rules)
    memory = _text(next(p for p in all_pages if p.key == "memory"))
    line = next(ln for ln in memory.splitlines() if ln.startswith("Overhead"))
    fixed = d["cuda_context_gib"] + d["cublas_workspace_gib"]
    assert f"{overhead:.1f} GiB" in line and f"{fixed:.1f} GiB" in line and f"{overhead - fixed:.1f} GiB" in line
    assert "no setting shrinks it" not in line.lower() and "shrinks the reserve too" in line
    final = report.plan.final_estimate(report.estimate).components["overhead"]
    assert final < overhead - 1.0                        # and the plan's step does shrink it, as its page shows
    step = _text(next(p for p in all_pages if p.key == "step-1"))
    assert f"overhead {overhead:.1f} → {final:.1f} GiB" in step


def test_the_last_page_names_what_to_install_and_the_command_line_that_gives_the_same_plan():
    from helpers import session_of

    from oomdoctor.guide import default_answers, options_with_answers

    session = session_of(("tests/data/guide/qwen1_5b_long_a100.yaml", "--gpu", "A100-40GB"))
    answers = default_answers(session.report)
    choices, report = options_with_answers(session, answers)
    last = pages(report, answers, "en", session.rules, choices)[-1]
    assert last.key == "apply"
    assert "pip install liger-kernel" in last.paragraphs[1]          # said first, not in a costs line
    command = next(ln for ln in last.code.splitlines() if "--export plan.diff" in ln)
    assert "--gpu A100-40GB" in command and command.startswith("oomdoctor ")
    assert report.patch.splitlines()[0] in last.code


def test_a_lora_run_is_not_asked_about_switching_to_lora():
    from helpers import session_of

    session = session_of(("tests/data/guide/qwen14b_lora_4090.log", "tests/data/guide/qwen14b_lora_4090.yaml"))
    method = next(q for q in questions(session.report, "en", session.rules) if q.key == "allow_method_change")
    assert "LoRA/QLoRA" not in method.prompt + method.help and "LoRA → " not in method.help
    assert "Cut the sequence length to 512 tokens" in method.help
