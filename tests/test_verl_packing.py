"""verl's packed lengths: use_dynamic_bsz bounds a micro-batch by its token budget; use_remove_padding without one
leaves the padded length as an upper bound ("may not fit", not OOM); OOM032 packs by tokens (docs/estimates.md §31)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import report_of, run_cli

from oomdoctor.memory import estimate
from oomdoctor.planner.registry import value_of, with_values
from oomdoctor.views.describe import override_block

# verl's published 14B LoRA fit line (examples/tuning/14b, SOURCES.tsv): 58 sequences per GPU ran on 2 x H100
TUNING = Path(__file__).parent / "data" / "reference" / "verl-tuning" / "qwen2-14b_grpo-lora_2_h100_fsdp_vllm.sh"
ACTOR = "actor_rollout_ref.actor"


def _script(tmp_path: Path, *overrides: str, padding: bool = True) -> tuple[str, ...]:
    """The 14B tuning script with more `key=value` overrides (and use_remove_padding as given)."""
    text = TUNING.read_text(encoding="utf-8")
    if not padding:
        text = text.replace("use_remove_padding=True", "use_remove_padding=False")
    extra = "".join(f"    {o} \\\n" for o in overrides)
    text = text.replace("    algorithm.kl_ctrl.kl_coef", extra + "    algorithm.kl_ctrl.kl_coef", 1)
    path = tmp_path / "run.sh"
    path.write_text(text, encoding="utf-8")
    return str(path), "--gpu", "H100"


def test_dynamic_batch_size_bounds_the_update_by_its_token_budget(tmp_path):
    padded = report_of(_script(tmp_path))
    sp = padded.setup.seq_parallel or 1
    assert padded.estimate.details["tokens_per_gpu"] == padded.setup.micro_batch * padded.setup.seq_len / sp
    small = report_of(_script(tmp_path, f"{ACTOR}.use_dynamic_bsz=True", f"{ACTOR}.ppo_max_token_len_per_gpu=6144"))
    large = report_of(_script(tmp_path, f"{ACTOR}.use_dynamic_bsz=True", f"{ACTOR}.ppo_max_token_len_per_gpu=12288"))
    # dp_actor.py:551-553: max_token_len x sp per micro-batch, split over the sp ranks: the budget per GPU
    assert small.estimate.details["tokens_per_gpu"] == 6144
    assert large.estimate.details["tokens_per_gpu"] == 12288
    assert small.estimate.peak_gib < large.estimate.peak_gib < padded.estimate.peak_gib
    # a budget is a bound whatever the data: the verdict is a verdict
    assert small.estimate.length_bound_gib == 0.0


def test_a_budget_above_the_ranks_whole_mini_batch_leaves_one_micro_batch_of_it(tmp_path):
    report = report_of(_script(tmp_path, f"{ACTOR}.use_dynamic_bsz=True", f"{ACTOR}.ppo_max_token_len_per_gpu=10000000"))
    mech, setup = report.setup.mechanisms, report.setup
    assert report.estimate.details["tokens_per_gpu"] == mech.mini_batch_per_rank * setup.seq_len / setup.seq_parallel


def test_the_log_prob_passes_follow_the_actor_budget_unless_told(tmp_path):
    follows = report_of(_script(tmp_path, f"{ACTOR}.use_dynamic_bsz=True", f"{ACTOR}.ppo_max_token_len_per_gpu=6144"))
    own = report_of(_script(tmp_path, f"{ACTOR}.use_dynamic_bsz=True", f"{ACTOR}.ppo_max_token_len_per_gpu=6144",
                            "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=12288"))
    assert follows.setup.mechanisms.log_prob_token_budget == 6144
    assert own.setup.mechanisms.log_prob_token_budget == 12288
    ratio = own.estimate.details["verl_log_prob_logits_gib"] / follows.estimate.details["verl_log_prob_logits_gib"]
    assert ratio == pytest.approx(2.0)


def test_a_packed_run_over_the_card_only_at_the_padded_bound_may_not_fit(capsys):
    code, out, _ = run_cli(capsys, str(TUNING), "--gpu", "H100", "--json")
    est = json.loads(out)["estimate"]
    assert est["fits"] is False and est["verdict"] == "may_not_fit"
    assert 0 < est["length_bound_gib"] <= est["peak_gib"]
    # the mean packed length under which it fits: below the padded length, from the estimate's own terms
    assert 0 < est["details"]["verl_packed_fit_tokens"] < 1536
    code, out, _ = run_cli(capsys, str(TUNING), "--gpu", "H100", "--plain")
    assert "may not fit" in out and "does not fit" not in out.split("Plan")[0]
    code, out, _ = run_cli(capsys, str(TUNING), "--gpu", "H100", "--plain", "--lang", "zh")
    assert "可能放不下" in out


def test_the_padded_run_without_packing_is_a_plain_oom(tmp_path, capsys):
    code, out, _ = run_cli(capsys, *_script(tmp_path, padding=False), "--json")
    est = json.loads(out)["estimate"]
    assert est["fits"] is False and "length_bound_gib" not in est and "verdict" not in est


def test_the_mean_length_the_note_names_is_where_the_estimate_fits():
    report = report_of((str(TUNING), "--gpu", "H100"))
    tokens = int(report.estimate.details["verl_packed_fit_tokens"])
    setup = report.setup
    # every token term scaled to that mean length: the micro-batch's tokens at `tokens` per sample
    shorter = estimate(setup.with_changes(seq_len=tokens), report.shape, report.hardware)
    longer = estimate(setup.with_changes(seq_len=int(tokens * 1.2)), report.shape, report.hardware)
    assert shorter.fits and not longer.fits


def test_token_packing_rung_fires_when_both_are_off_and_names_the_keys(tmp_path):
    report = report_of(_script(tmp_path, padding=False))
    assert not report.estimate.fits and report.estimate.length_bound_gib == 0.0
    steps = report.plan.steps
    assert steps and steps[0].rule == "OOM032" and report.plan.fits
    after = steps[0].setup
    assert value_of(after, "dynamic_bsz") is True and value_of(after, "remove_padding") is True
    # the estimate re-run after the rung, its budget the most that fits in whole samples
    again = estimate(after, report.shape, report.hardware)
    assert again.peak_gib == pytest.approx(steps[0].estimate.peak_gib) and again.fits
    budget = value_of(after, "token_budget")
    assert budget % after.seq_len == 0 and budget >= 2 * after.seq_len
    one_more = estimate(with_values(after, {"token_budget": budget + after.seq_len}), report.shape, report.hardware)
    assert not one_more.fits
    _, lines = override_block(report.setup, report.plan.final_setup(report.setup), report.plan, False, "en")
    assert f"{ACTOR}.use_dynamic_bsz=True" in lines
    assert "actor_rollout_ref.model.use_remove_padding=True" in lines
    assert f"{ACTOR}.ppo_max_token_len_per_gpu={budget}" in lines


def test_token_packing_rung_is_not_offered_when_the_budget_is_on(tmp_path):
    report = report_of(_script(tmp_path, f"{ACTOR}.use_dynamic_bsz=True", f"{ACTOR}.ppo_max_token_len_per_gpu=98304"))
    assert not report.estimate.fits
    assert "OOM032" not in [s.rule for s in report.plan.steps]
    assert "OOM032" in [s.rule for s in report.plan.skipped]


def test_a_device_oom_of_the_same_run_is_a_plain_oom_not_a_doubt(tmp_path, capsys):
    # the crash measured that the run does not fit at whatever lengths its samples had
    log = tmp_path / "run.log"
    log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                   "capacity of 79.19 GiB of which 1.20 GiB is free. Of the allocated memory 70.12 GiB is allocated "
                   "by PyTorch, and 1.30 GiB is reserved by PyTorch but unallocated.\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, str(log), str(TUNING), "--gpu", "H100", "--json")
    est = json.loads(out)["estimate"]
    assert code == 1 and est["fits"] is False and "verdict" not in est and "length_bound_gib" not in est
    # and no "a mean length of N tokens would fit" beside it: the crash measured the run's real lengths
    assert "verl_packed_fit_tokens" not in est["details"]
    code, out, _ = run_cli(capsys, str(log), str(TUNING), "--gpu", "H100", "--plain")
    assert "does not fit" in out.split("Plan")[0] and "may not fit" not in out.split("Plan")[0]


def test_a_run_over_the_card_at_every_length_does_not_fit_with_no_doubt(capsys):
    # on a 16 GiB card what does not scale with the samples (the 14B shard, the rollout engine) is over already
    code, out, _ = run_cli(capsys, str(TUNING), "--gpu", "16GiB", "--json")
    est = json.loads(out)["estimate"]
    assert est["fits"] is False and "verdict" not in est and "verl_packed_fit_tokens" not in est["details"]
