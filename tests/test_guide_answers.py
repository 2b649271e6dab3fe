"""The guide's answers re-plan the demo run (Llama-2-7B full fine-tune, micro-batch 4, cutoff_len 2048, one A100 80GB)."""
from dataclasses import replace

import pytest

from oomdoctor.guide import SKIP_REASONS, Answers, default_answers, pages, plan_with_answers, render_plain
from oomdoctor.pipeline import Options
from oomdoctor.session import open_session, session_for

DEMO = ("oomdoctor/data/demo/train.yaml", "oomdoctor/data/demo/train.log")


@pytest.fixture(scope="module")
def demo():
    session = open_session(Options(files=DEMO))
    return session.report, session


def apply_answers(report, session, answers):
    """The guide's plan for `answers`, for a report that may differ from the session's own."""
    if report is not session.report:
        session = session_for(report, session.options)
    return plan_with_answers(session, answers)


def _rules(report):
    return [st.rule for st in report.plan.steps]


def _changed(report):
    return {c.field for st in report.plan.steps for c in st.changes}


def test_demo_does_not_fit_as_configured(demo):
    report, _ = demo
    assert not report.estimate.fits and report.crash.primary.phase == "optimizer"


def test_allowing_a_method_change_brings_in_lora_and_refusing_removes_it(demo):
    report, opts = demo
    allowed = apply_answers(report, opts, Answers(allow_method_change=True))
    refused = apply_answers(report, opts, Answers(allow_method_change=False))
    # a yes is permission, not preference: the optimizer offload fits without changing the experiment
    assert "method" not in _changed(allowed) and _changed(allowed) == _changed(refused)
    # where nothing that keeps the experiment fits (no offload), the yes brings LoRA in
    no_offload = open_session(replace(opts.options, skip=("OOM015", "OOM016")))
    assert "method" in _changed(apply_answers(report, no_offload, Answers(allow_method_change=True)))
    assert "method" not in _changed(refused) and "quant_bits" not in _changed(refused)
    assert all(st.applicability != "needs-consent" for st in refused.plan.steps)
    # without the yes, LoRA is proposed with what it would save, and the ladder goes on below it
    assert "OOM004" in [st.rule for st in refused.plan.proposed]
    assert {r.rule: r.state for r in refused.plan.rungs}["OOM004"] == "proposed"
    assert refused.plan.fits and [st.rule for st in refused.plan.steps] == ["OOM015"]


def test_more_gpus_let_zero3_split_the_model_states(demo):
    report, opts = demo
    opts = open_session(replace(opts.options, skip=("OOM011",)))    # without the 8-bit optimizer, the GPU count decides
    one = apply_answers(report, opts, Answers(n_gpus=1))
    two = apply_answers(report, opts, Answers(n_gpus=2))
    # the log names one GPU: with two available, the plan spreads the run over them and keeps its batch
    final = two.plan.final_setup(two.setup)
    assert one.plan.final_setup(one.setup).n_gpus == 1 and final.n_gpus == 2 and two.hardware.n_gpus == 2
    assert final.effective_batch == report.setup.effective_batch
    assert _rules(one) != _rules(two)
    zero3 = [st for st in two.plan.steps if any(c.field == "zero_stage" and c.after == 3 for c in st.changes)]
    assert zero3 and two.plan.fits
    four = apply_answers(report, opts, Answers(n_gpus=4))
    assert four.plan.steps[-1].estimate.peak_gib < two.plan.steps[-1].estimate.peak_gib


def test_keeping_the_effective_batch_keeps_it_in_every_step(demo):
    report, opts = demo
    out = apply_answers(report, opts, Answers(keep_effective_batch=True, allow_method_change=True))
    for st in out.plan.steps:
        assert st.setup.effective_batch == report.setup.effective_batch


def _slow(report):
    return sum("throughput" in st.costs for st in report.plan.steps)


def test_preferring_speed_never_adds_slow_rungs_and_still_fits(demo):
    report, opts = demo
    for n in (1, 2, 4):
        memory = apply_answers(report, opts, Answers(n_gpus=n, prefer="memory", allow_method_change=True))
        speed = apply_answers(report, opts, Answers(n_gpus=n, prefer="speed", allow_method_change=True))
        assert _slow(speed) <= _slow(memory)
        assert speed.plan.fits == memory.plan.fits


def test_preferring_speed_drops_a_slow_rung_the_plan_fits_without(demo):
    report, opts = demo
    # the 8-bit optimizer (slow) is what the ladder picks; with 4 GPUs and consent, LoRA alone would also fit,
    # but LoRA costs quality, so preferring speed must not trade one for the other
    memory = apply_answers(report, opts, Answers(n_gpus=1, prefer="memory"))
    speed = apply_answers(report, opts, Answers(n_gpus=1, prefer="speed"))
    assert [st.rule for st in speed.plan.steps] == [st.rule for st in memory.plan.steps]
    assert all(st.applicability == "safe" for st in speed.plan.steps)
    # a long-context LoRA run: halving the micro-batch is a slow rung that a fitting plan can do without
    setup = replace(report.setup, method="lora", seq_len=16384, micro_batch=8, grad_accum=1)
    # (without the demo's crash: it measured the full fine-tune, and a crash is a floor under its own run only)
    long_ctx = replace(report, setup=setup, crash=None)
    memory = apply_answers(long_ctx, opts, Answers(prefer="memory"))
    speed = apply_answers(long_ctx, opts, Answers(prefer="speed"))
    assert memory.plan.fits and speed.plan.fits
    assert _slow(speed) <= _slow(memory)
    for sk in speed.plan.skipped:
        if sk.reason == SKIP_REASONS["speed"]:
            assert sk.rule in [st.rule for st in memory.plan.steps]


def test_default_answers_take_the_gpu_count_from_the_report(demo):
    report, _ = demo
    assert default_answers(report) == Answers(n_gpus=report.setup.n_gpus)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_plain_walkthrough_of_the_demo_quotes_its_numbers(demo, lang):
    report, opts = demo
    planned = apply_answers(report, opts, Answers(allow_method_change=True))
    doc = render_plain(planned, Answers(allow_method_change=True), lang, rules=opts.rules)
    ev = planned.crash.primary
    for value in (ev.tried_gib, ev.free_gib, ev.allocated_gib, planned.estimate.peak_gib,
                  planned.plan.steps[-1].estimate.peak_gib):
        assert f"{value:.1f} GiB" in doc
    assert str(planned.setup.seq_len) in doc and str(planned.setup.micro_batch * planned.setup.seq_len) in doc
    assert "git apply plan.diff" in doc
    if lang == "zh":
        assert "显存不足" in doc and "激活值" in doc and "优化器状态" in doc
        # the plan keeps the experiment (offload fits), so its one step is the offload, titled in Chinese
        title = next(p.title for p in pages(planned, Answers(), "zh") if p.key == "step-1")
        assert "卸载" in title and "CPU 内存" in title
