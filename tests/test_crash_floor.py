"""The crash is a measurement: what the failure message printed is a floor under the peak of the phase that
crashed; the estimate is raised to it, the plan is built on it, and a crash is never answered "fits as is".
When the config's own estimate is well below the crash, the finding says what else the log shows."""
from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import run_cli

from oomdoctor.diagnosis import find
from oomdoctor.facts import (
    CrashEvent,
    CrashReport,
    Estimate,
    Hardware,
    TrainingSetup,
)
from oomdoctor.memory import crashfloor
from oomdoctor.words import say

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "floor"


def _run(capsys, monkeypatch, *args: str) -> tuple[int, dict]:
    """The CLI in this process (what is checked is the report, not the process): exit code and JSON."""
    monkeypatch.chdir(DATA)
    code, out, _ = run_cli(capsys, "--json", "--lang", "en", *args)
    return code, json.loads(out)


def _est(alloc: float, moments: dict | None = None, peak_moment: str = "layers backward", cap: float = 40.0) -> Estimate:
    moments = moments or {"forward": alloc - 4, "layers backward": alloc, "optimizer": alloc - 6}
    return Estimate(components={"weights": alloc - 2, "activations": 2.0, "overhead": 1.0}, allocated_gib=alloc,
                    peak_gib=alloc + 1.0, capacity_gib=cap, moments=moments, peak_moment=peak_moment)


def _crash(**ev) -> CrashReport:
    return CrashReport(file="x.log", events=(CrashEvent(kind="cuda_oom", line=3, message="CUDA out of memory.", **ev),))


def test_the_floor_is_held_plus_asked_and_raises_the_phase_that_crashed():
    est = _est(30.0)
    fl = crashfloor.floor(est, _crash(allocated_gib=37.86, tried_gib=0.13, capacity_gib=39.39, phase="backward"))
    assert fl is not None and fl.kind == "gpu" and fl.moment == "layers backward"
    assert abs(fl.observed_gib - 37.99) < 1e-9 and abs(fl.raised_gib - 7.99) < 1e-9
    raised = crashfloor.apply(est, fl)
    assert abs(raised.allocated_gib - 37.99) < 1e-9 and abs(raised.peak_gib - 38.99) < 1e-9
    text = say(fl.message, "en")
    assert "37.86" in text and "0.13" in text and "37.99" in text and "30.00" in text
    assert "37.99" in say(fl.message, "zh")


def test_a_crash_in_a_lower_moment_raises_that_moment_and_the_peak_follows_only_above_it():
    est = _est(30.0)
    # forward is estimated at 26: a floor of 28 there stays under the backward peak
    low = crashfloor.floor(est, _crash(allocated_gib=27.9, tried_gib=0.1, phase="forward"))
    assert low.moment == "forward" and abs(low.raised_gib - 2.0) < 1e-9
    assert crashfloor.apply(est, low).allocated_gib == 30.0
    high = crashfloor.floor(est, _crash(allocated_gib=33.0, tried_gib=1.0, phase="forward"))
    after = crashfloor.apply(est, high)
    assert abs(after.allocated_gib - 34.0) < 1e-9 and after.peak_moment == "forward"


def test_an_estimate_that_already_covers_the_crash_is_kept():
    est = _est(30.0)
    fl = crashfloor.floor(est, _crash(allocated_gib=20.0, tried_gib=2.0, phase="backward"))
    assert fl is not None and not fl.applied
    assert crashfloor.apply(est, fl) == est


def test_every_estimate_of_the_plan_carries_the_same_raise():
    calls = []

    def base(setup, shape, hw, *, crash=None, headroom=0.10):
        calls.append(setup.micro_batch)
        return _est(30.0 - 4.0 * (4 - setup.micro_batch))

    fl = crashfloor.floor(_est(30.0), _crash(allocated_gib=37.0, tried_gib=1.0, phase="backward"))
    est = crashfloor.floored_estimator(base, fl)
    a = est(TrainingSetup(micro_batch=4), None, Hardware(gpu_gib=40.0))
    b = est(TrainingSetup(micro_batch=2), None, Hardware(gpu_gib=40.0))
    assert abs(a.allocated_gib - 38.0) < 1e-9
    assert abs((a.allocated_gib - b.allocated_gib) - 8.0) < 1e-9     # the model's saving, unchanged


def test_a_config_well_below_the_crash_is_a_finding_beyond_the_config():
    est = _est(10.0, cap=80.0)
    crash = _crash(allocated_gib=70.0, tried_gib=2.0, capacity_gib=79.15, phase="backward")
    fl = crashfloor.floor(est, crash)
    f = find(TrainingSetup(), est, fl, crash, Hardware(gpu_gib=79.15))
    assert f.cause == "beyond_config"
    near = crashfloor.floor(_est(60.0, cap=80.0), crash)
    assert find(TrainingSetup(), _est(60.0, cap=80.0), near, crash, Hardware(gpu_gib=79.15)).cause == "config"


def test_a_message_cut_before_its_figures_still_says_the_card_was_full():
    # "Tried to allocate 112.00 MiB. GPU" and no more: the card held its capacity less what was asked
    est = _est(18.0, cap=79.15)
    crash = _crash(tried_gib=0.11, phase="backward")
    fl = crashfloor.floor(est, crash)
    assert fl is not None and fl.kind == "gpu" and fl.applied
    assert abs(fl.observed_gib - (79.15 - 1.0)) < 1e-9      # on the device's scale, less the estimate's cache share
    assert "0.11" in say(fl.message, "en") and "79.15" in say(fl.message, "en") and say(fl.message, "zh")
    assert find(TrainingSetup(), est, fl, crash, Hardware(gpu_gib=79.15)).cause == "beyond_config"
    # a config whose estimate is near the card is the cause, and the raise is small
    near = _est(74.0, cap=79.15)
    fl_near = crashfloor.floor(near, crash)
    assert find(TrainingSetup(), near, fl_near, crash, Hardware(gpu_gib=79.15)).cause == "config"
    assert fl_near.raised_gib < 5.0
    # the free figure, where printed, is read instead of what was asked
    printed = crashfloor.floor(est, _crash(tried_gib=0.11, free_gib=0.05, capacity_gib=79.15, phase="backward"))
    assert abs(printed.observed_gib - (79.15 - 0.05 + 0.11 - 1.0)) < 1e-9
    # a kill the log only suggests (likely) sets no floor
    likely = CrashReport(file="x.log", events=(CrashEvent(kind="cuda_oom", line=3, confidence="likely"),))
    assert crashfloor.floor(est, likely) is None


def test_the_clues_name_fragmentation_memory_outside_pytorch_and_growth():
    from oomdoctor.facts import MemorySample

    ev = CrashEvent(kind="cuda_oom", line=9, message="CUDA out of memory.", allocated_gib=20.0, tried_gib=1.0,
                    process_gib=31.0, reserved_unallocated_gib=6.0, capacity_gib=39.4, phase="eval")
    samples = tuple(MemorySample(line=i, allocated_gib=10.0 + 2 * i, step=i) for i in range(1, 5))
    crash = CrashReport(file="x.log", events=(ev,), memory_samples=samples)
    f = find(TrainingSetup(do_eval=True, eval_batch=8), _est(21.0), None, crash, Hardware(gpu_gib=39.4))
    kinds = {c.kind for c in f.clues}
    assert {"fragmentation", "outside_pytorch", "growth", "eval"} <= kinds
    outside = next(c for c in f.clues if c.kind == "outside_pytorch")
    assert "5.00" in say(outside.message, "en") and outside.evidence[0].line == 9
    assert all(say(c.check, "zh") for c in f.clues)


def test_a_known_memory_bug_of_the_framework_version_is_a_clue():
    crash = CrashReport(file="x.log", events=_crash(allocated_gib=20.0, tried_gib=1.0).events,
                        versions={"transformers": "4.38.2"})
    f = find(TrainingSetup(), _est(21.0), None, crash, Hardware(gpu_gib=40.0))
    bug = [c for c in f.clues if c.kind == "version_bug"]
    assert bug and "30010" in say(bug[0].check, "en")
    clean = CrashReport(file="x.log", events=crash.events, versions={"transformers": "4.37.2"})
    assert not [c for c in find(TrainingSetup(), _est(21.0), None, clean, Hardware(gpu_gib=40.0)).clues
                if c.kind == "version_bug"]


def test_deepspeed_0164_under_zero3_with_checkpointing_is_a_known_bug_clue():
    # `llamafactory-cli env` prints "- DeepSpeed version: 0.16.4": the crash's versions carry it as deepspeed
    crash = CrashReport(file="x.log", events=_crash(allocated_gib=20.0, tried_gib=1.0).events,
                        versions={"deepspeed": "0.16.4"})
    f = find(TrainingSetup(zero_stage=3, grad_ckpt=True), _est(21.0), None, crash, Hardware(gpu_gib=40.0))
    bug = [c for c in f.clues if c.kind == "version_bug"]
    assert bug and "7116" in say(bug[0].check, "en") and say(bug[0].message, "zh")
    earlier = CrashReport(file="x.log", events=crash.events, versions={"deepspeed": "0.16.3"})
    assert not [c for c in find(TrainingSetup(zero_stage=3), _est(21.0), None, earlier, Hardware(gpu_gib=40.0)).clues
                if c.kind == "version_bug"]


def test_the_13b_lora_crash_is_not_answered_fits_and_the_plan_uses_the_raised_figure(capsys, monkeypatch):
    code, out = _run(capsys, monkeypatch, "lora13b_fp16_mb4.yaml", "lora13b_backward_a100_40gb.log")
    assert code in (1, 3)
    assert out["estimate"]["allocated_gib"] >= 37.99 - 0.01 and not out["estimate"]["fits"]
    assert out["cause"]["kind"] == "config"
    assert out["cause"]["floor"]["raised_gib"] > 5
    if code == 1:
        assert out["plan"]["fits"] and out["plan"]["steps"]


def test_copies_of_a_single_gpu_run_on_one_card_are_beyond_the_config_with_their_lines(capsys, monkeypatch):
    code, out = _run(capsys, monkeypatch, "--gpus", "8", "llama3_8b_lora_mb1.yaml", "eight_copies_on_gpu0.log")
    assert code in (1, 3)
    cause = out["cause"]
    assert cause["kind"] == "beyond_config"
    shared = [c for c in cause["clues"] if c["kind"] == "shared_device"]
    assert shared and any("distributed training: False" in e["text"] for e in shared[0]["evidence"])
    assert any("Process 2101" in e["text"] for e in shared[0]["evidence"])


def test_the_plain_report_lists_the_checks_before_the_plan(capsys, monkeypatch):
    monkeypatch.chdir(DATA)
    monkeypatch.setenv("COLUMNS", "80")
    _, text, _ = run_cli(capsys, "--plain", "--lang", "en", "--gpus", "8", "llama3_8b_lora_mb1.yaml",
                         "eight_copies_on_gpu0.log")
    assert "Check first" in text
    plan_at = text.find("Plan (")
    assert plan_at == -1 or text.find("Check first") < plan_at
    _, zh, _ = run_cli(capsys, "--plain", "--lang", "zh", "--gpus", "8", "llama3_8b_lora_mb1.yaml",
                       "eight_copies_on_gpu0.log")
    assert "先检查" in zh


def test_exit_code_is_never_fits_with_a_crash():
    from oomdoctor.errors import ExitCode, exit_code
    from oomdoctor.facts import Report

    fits = Estimate(components={}, allocated_gib=1.0, peak_gib=2.0, capacity_gib=80.0)
    assert exit_code(Report(estimate=fits)) == ExitCode.FITS
    assert exit_code(Report(estimate=fits, crash=_crash(allocated_gib=1.0))) == ExitCode.PLAN



def test_a_request_larger_than_the_card_floors_the_phase_at_the_request_never_below_zero():
    # "CUDA out of memory. Tried to allocate 182.28 GiB" on an 80 GB card (unslothai/unsloth#4175): the request
    # alone exceeds the card, and an estimate with a large overhead must not turn the floor negative
    est = Estimate(components={"activations": 500.0, "overhead": 300.0}, allocated_gib=500.0, peak_gib=800.0,
                   capacity_gib=79.15, moments={"layers backward": 500.0}, peak_moment="layers backward")
    fl = crashfloor.floor(est, _crash(tried_gib=182.28))
    assert fl is not None and abs(fl.observed_gib - 182.28) < 1e-9
    assert not re.search(r"-\d", say(fl.message, "en")), say(fl.message, "en")
    # a small estimate still sees the request as the floor, far beyond the config
    small = _est(18.0, cap=79.15)
    fl_small = crashfloor.floor(small, _crash(tried_gib=182.28))
    assert abs(fl_small.observed_gib - 182.28) < 1e-9
    assert find(TrainingSetup(), small, fl_small, _crash(tried_gib=182.28), Hardware(gpu_gib=79.15)).cause \
        == "beyond_config"


def test_a_message_with_no_size_at_all_floors_the_card_and_says_the_size_is_unknown():
    # "torch.cuda.OutOfMemoryError: CUDA out of memory" alone: the card was full, the ask is unknown
    est = _est(15.0, cap=23.69)
    crash = _crash(phase="backward")
    fl = crashfloor.floor(est, crash)
    assert fl is not None and fl.applied and fl.observed_gib > est.allocated_gib
    assert fl.message.code == "memory.floor.device_unsized"
    assert "0.00" not in say(fl.message, "en") and "23.69" in say(fl.message, "en") and say(fl.message, "zh")


def test_one_process_driving_several_gpus_is_a_data_parallel_clue_with_its_trainer_line(tmp_path):
    log = tmp_path / "dp.log"
    log.write_text("[INFO|trainer.py:2081] >>   Instantaneous batch size per device = 1\n"
                   "[INFO|trainer.py:2083] >>   Training with DataParallel so batch size has been adjusted to: 4\n"
                   "torch.cuda.OutOfMemoryError: CUDA out of memory\n", encoding="utf-8")
    crash = CrashReport(file=str(log), events=(CrashEvent(kind="cuda_oom", line=3, confidence="certain",
                                                          message="CUDA out of memory"),))
    est = _est(6.0, cap=23.69)
    fl = crashfloor.floor(est, crash)
    f = find(TrainingSetup(micro_batch=1), est, fl, crash, Hardware(gpu_gib=23.69))
    assert f.cause == "beyond_config"
    dp = [c for c in f.clues if c.kind == "data_parallel"]
    assert dp and dp[0].evidence[0].line == 2 and "DataParallel" in dp[0].evidence[0].text
    assert "4 GPUs" in say(dp[0].message, "en") and say(dp[0].check, "zh")
    # a log without the Trainer's line has no such clue
    plain = tmp_path / "plain.log"
    plain.write_text("torch.cuda.OutOfMemoryError: CUDA out of memory\n", encoding="utf-8")
    other = CrashReport(file=str(plain), events=crash.events)
    assert not [c for c in find(TrainingSetup(), est, fl, other, Hardware(gpu_gib=23.69)).clues
                if c.kind == "data_parallel"]
