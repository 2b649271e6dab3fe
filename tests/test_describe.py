"""The report's facts in sentences (views/describe.py) and the bar arithmetic, without rich or Textual."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from oomdoctor.facts import Change, CrashEvent, CrashReport, Estimate, Hardware, Step, Text, TrainingSetup
from oomdoctor.tui.screens import matrix_cell
from oomdoctor.views.bars import bar_cells, segments
from oomdoctor.views.describe import (
    card_phrase,
    change_words,
    crash_numbers,
    crash_where,
    diagnosis_lines,
    event_line,
    event_numbers,
    setup_line,
    step_costs,
)
from oomdoctor.views.describe import fit_verdict as verdict


def _est(peak: float, capacity: float = 80.0, **components: float) -> Estimate:
    return Estimate(components=components, allocated_gib=peak, peak_gib=peak, capacity_gib=capacity)


def test_crash_numbers_say_what_was_asked_what_was_free_and_on_which_card():
    event = CrashEvent(kind="cuda_oom", line=7, tried_gib=2.0, free_gib=1.2, capacity_gib=79.15)
    text = crash_numbers(event, Hardware(gpu="A100-SXM4-80GB", gpu_gib=80.0))
    assert text.startswith("The run asked for 2.0 GiB more while 1.2 GiB was free on the A100-SXM4-80GB (79.2 GiB).")


def test_crash_numbers_name_an_unknown_card_by_its_size():
    event = CrashEvent(kind="cuda_oom", line=7, tried_gib=0.5, free_gib=0.1, capacity_gib=23.6)
    assert "on a 23.6 GiB GPU" in crash_numbers(event, None)


def test_crash_numbers_without_sizes_fall_back_to_the_kind():
    event = CrashEvent(kind="host_oom", line=3)
    assert crash_numbers(event, None).startswith("The machine ran out of host RAM")


def test_crash_where_names_phase_rank_device_step_and_line():
    event = CrashEvent(kind="cuda_oom", line=1234, device=3, rank=3, phase="backward")
    crash = CrashReport(file="run.log", events=(event,), step=12, total_steps=500, failed_ranks=(3, 5))
    text = crash_where(event, crash)
    assert "in the backward pass on rank 3 (cuda:3) at step 12 of 500; run.log line 1234." in text
    assert "Ranks 5 failed too." in text


def test_unknown_diagnosis_codes_are_still_shown():
    lines = diagnosis_lines(["fragmentation", "weird_thing"])
    assert "expandable_segments" in lines[0]
    assert lines[1] == "Weird thing."


def test_segments_show_peak_above_the_components_as_reserve():
    est = Estimate(components={"weights": 10.0, "overhead": 1.0}, allocated_gib=10.0, peak_gib=13.0,
                   capacity_gib=80.0)
    parts = dict(segments(est))
    assert parts["reserve"] == 2.0
    assert parts["gradients"] == 0.0


def test_segments_add_no_reserve_when_components_cover_the_peak():
    assert "reserve" not in dict(segments(_est(11.0, weights=10.0, overhead=1.0)))


@given(st.lists(st.floats(min_value=0, max_value=200), min_size=1, max_size=7),
       st.floats(min_value=1, max_value=400), st.integers(min_value=1, max_value=200))
def test_bar_cells_never_exceed_the_width_and_match_the_rounded_total(values, scale, width):
    parts = [(f"c{i}", v) for i, v in enumerate(values)]
    cells = bar_cells(parts, scale, width)
    assert all(n >= 0 for _, n in cells)
    assert sum(n for _, n in cells) == min(width, round(sum(values) / scale * width))


def test_bar_cells_split_a_full_bar_in_proportion():
    assert bar_cells([("a", 30.0), ("b", 10.0)], 40.0, 8) == [("a", 6), ("b", 2)]


def test_verdict_measures_against_the_capacity_less_headroom():
    assert verdict(_est(70.0)) == "fits, 2.0 GiB spare"
    assert verdict(_est(80.0)) == "over by 8.0 GiB"


def test_card_phrase_prefers_the_gpu_name():
    assert card_phrase(None, Hardware(gpu="RTX 4090", gpu_gib=24.0)) == "the RTX 4090 (24.0 GiB)"
    assert card_phrase(80.0, None) == "an 80.0 GiB GPU"


def test_step_words_show_changes_and_costs():
    setup = TrainingSetup()
    step = Step(rule="R1", slug="ckpt", title=Text("t"), changes=(Change("grad_ckpt", False, True),
                                                             Change("micro_batch", 8, 4)),
                setup=setup, estimate=_est(1.0), saved_gib=1.0, costs=("throughput",),
                applicability="needs-consent")
    # LLaMA-Factory's batch key takes the value as it is; its checkpointing key is inverted, so the field shows
    assert change_words(step) == "grad_ckpt off → on; per_device_train_batch_size 8 → 4"
    assert step_costs(step) == "slower, asks consent"


def test_step_words_name_each_frameworks_own_key_for_the_sequence_length():
    from dataclasses import replace

    from oomdoctor.configs import load_config

    for path, key in (("tests/data/real-configs/axolotl/head_alst_context_parallel.yaml", "sequence_len"),
                      ("oomdoctor/data/demo/train.yaml", "cutoff_len")):
        setup = load_config(path)
        step = Step(rule="OOM003", slug="cut", title=Text("t"), changes=(Change("seq_len", setup.seq_len, 512),),
                    setup=replace(setup, seq_len=512), estimate=_est(1.0), saved_gib=1.0, costs=("quality",),
                    applicability="needs-consent")
        assert change_words(step) == f"{key} {setup.seq_len} → 512"


def test_matrix_cell_says_fits_which_plan_or_nothing_with_the_unit():
    assert matrix_cell(True, True, "", 71.2) == "✓ 71 GiB"
    assert matrix_cell(True, False, "B", 33.4) == "B 33 GiB"
    assert matrix_cell(True, False, "A", 9.46) == "A 9.5 GiB"
    assert matrix_cell(False, False, "", 138.6) == "✗ 139 GiB"


def test_chinese_verdict_and_costs():
    est = _est(50.0, 80.0)
    assert verdict(est, "zh") == "放得下，还余 22.0 GiB"
    step = Step(rule="OOM004", slug="switch-to-lora", title=Text("t"), changes=(), setup=TrainingSetup(), estimate=est,
                saved_gib=1.0, costs=("quality",), applicability="needs-consent")
    assert step_costs(step) == "quality, asks consent"
    assert step_costs(step, "zh") == "影响效果、需要你同意"


def test_chinese_crash_sentence_keeps_the_numbers():
    event = CrashEvent(kind="cuda_oom", line=7, tried_gib=2.0, free_gib=1.2, capacity_gib=79.15, phase="backward")
    crash = CrashReport(file="train.log", events=(event,), step=12)
    text = crash_numbers(event, Hardware(gpu="A100-SXM4-80GB", gpu_gib=80.0), "zh")
    assert "2.0 GiB" in text and "1.2 GiB" in text and "A100-SXM4-80GB" in text
    where = crash_where(event, crash, "zh")
    assert "反向传播" in where and "第 12 步" in where and "train.log 第 7 行" in where


def test_the_plain_reports_crash_line_names_kind_phase_and_device():
    event = CrashEvent(kind="cuda_oom", line=65, tried_gib=2.0, free_gib=1.2, capacity_gib=79.15,
                       allocated_gib=75.8, reserved_unallocated_gib=1.62, device=0, phase="optimizer")
    assert event_line(event) == "CUDA ran out of GPU memory in the optimizer step (GPU 0)"
    assert event_line(event, "zh") == "优化器更新时，CUDA 显存不足（GPU 0）"
    assert event_numbers(event) == ("the run asked for 2.00 GiB more while 1.20 GiB was free on a 79.15 GiB GPU; "
                                    "PyTorch held 75.80 GiB in tensors, 1.62 GiB reserved but unused")
    assert event_numbers(event, "zh").startswith("训练还要再申请 2.00 GiB，当时只剩 1.20 GiB 空闲")


def test_the_numbers_line_starts_cleanly_when_the_request_is_unknown():
    event = CrashEvent(kind="cuda_oom", line=1, free_gib=0.5, capacity_gib=23.6)
    assert event_numbers(event) == "while 0.50 GiB was free on a 23.60 GiB GPU"
    assert event_numbers(event, "zh") == "当时只剩 0.50 GiB 空闲，整卡 23.60 GiB"


def test_setup_line_in_both_languages():
    setup = TrainingSetup(method="lora", lora_rank=16, micro_batch=2, grad_accum=8, seq_len=4096, zero_stage=3)
    assert setup_line(setup) == ("LoRA r=16, micro-batch 2 × accum 8 × 1 GPU, seq 4096, bf16, adamw_torch, "
                                 "grad ckpt on, sdpa, ZeRO-3")
    assert setup_line(setup, "zh").startswith("LoRA r=16，微批大小 2 × 梯度累积 8 × 1 张 GPU，序列长度 4096")
