"""The planner: ladder walk, skip reasons, least-cost search, advice; with a small exact fake estimator
and with the real estimator on the acceptance scenarios."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.errors import InputError
from oomdoctor.facts import CrashEvent, CrashReport, Estimate, Hardware, ModelShape, TrainingSetup, msg
from oomdoctor.planner import engine, least_cost_plan, load_rules, make_plan, plan_cost
from oomdoctor.words import say

DATA = Path(__file__).parent / "data" / "rules"
BOOK = load_rules()
POS = {r.id: r.position for r in BOOK}

LLAMA2_7B = ModelShape("meta-llama/Llama-2-7b-hf", hidden_size=4096, intermediate_size=11008, num_layers=32,
                       num_heads=32, num_kv_heads=32, vocab_size=32000, tie_word_embeddings=False,
                       params_total=6738415616)
QWEN25_7B = ModelShape("Qwen/Qwen2.5-7B", model_type="qwen2", hidden_size=3584, intermediate_size=18944,
                       num_layers=28, num_heads=28, num_kv_heads=4, vocab_size=152064, tie_word_embeddings=False,
                       attention_bias=True, params_total=7615616512)
SMALL = ModelShape("toy-1b", params_total=1_000_000_000, vocab_size=32000)


def fake_estimate(setup, shape, hw, *, crash=None, headroom=0.10):
    """Round numbers: 1 GiB per billion params per byte; activations 1 GiB per 1k tokens (x4 without
    checkpointing, x2 in fp32); logits 1 GiB per 1k tokens per 32k vocabulary (x0.2 fused)."""
    billions = shape.params_total / 1e9
    adapter = setup.method in ("lora", "qlora")
    trainable = billions * 0.01 if adapter else billions
    n = max(1, setup.n_gpus)
    weights = billions * (0.5 if setup.method == "qlora" else 2.0 if adapter else 4.0)
    grads = trainable * 4.0 / (n if setup.zero_stage >= 2 else 1)
    optim = trainable * (2.0 if "8bit" in setup.optimizer else 8.0)
    optim = 0.0 if setup.offload_optimizer else optim / (n if setup.zero_stage >= 1 else 1)
    if setup.zero_stage >= 3:
        weights /= n
    ktok = setup.micro_batch * setup.seq_len / 1024
    acts = ktok * (1 if setup.grad_ckpt else 4) * (2 if setup.precision == "fp32" else 1)
    logits = ktok * shape.vocab_size / 32000 * (0.2 if setup.fused_ce else 1.0)
    comps = {"weights": weights, "gradients": grads, "optimizer": optim, "activations": acts, "logits": logits,
             "overhead": 1.0}
    total = sum(comps.values())
    return Estimate(components=comps, allocated_gib=total - 1.0, peak_gib=total, capacity_gib=hw.usable_gib,
                    headroom=headroom)


def _peak(setup, shape=SMALL, gib=80.0):
    return fake_estimate(setup, shape, Hardware(gpu_gib=gib)).peak_gib


# ---------------------------------------------------------------- the ladder, exactly

def test_a_setup_that_fits_gets_an_empty_plan():
    setup = TrainingSetup(method="lora", micro_batch=1, seq_len=1024)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=80.0), estimator=fake_estimate)
    assert plan.fits and plan.steps == () and plan.skipped == ()


def test_halving_repeats_while_needed_and_keeps_the_effective_batch():
    # full 1B: states 16 GiB + 1 overhead; 8 x 2048 tokens: 16 acts + 16 logits = 49 GiB.
    setup = TrainingSetup(method="full", micro_batch=8, grad_accum=1, seq_len=2048)
    assert _peak(setup) == pytest.approx(49.0)
    # 40 GiB card, 36 GiB budget: 8 -> 4 (33 GiB) fits after one halving; 30 GiB card needs 8 -> 2.
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=40.0), estimator=fake_estimate)
    assert [s.rule for s in plan.steps] == ["OOM001"] and plan.fits
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=30.0), estimator=fake_estimate)
    assert [s.rule for s in plan.steps] == ["OOM001", "OOM001"] and plan.fits
    final = plan.steps[-1].setup
    assert (final.micro_batch, final.grad_accum) == (2, 4)
    assert final.effective_batch == setup.effective_batch


def test_every_step_is_re_estimated_and_saved_gib_is_the_drop_in_peak():
    setup = TrainingSetup(method="full", micro_batch=8, seq_len=2048, grad_ckpt=False, precision="fp32")
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=24.0), estimator=fake_estimate)
    before = _peak(setup)
    for step in plan.steps:
        assert step.estimate == fake_estimate(step.setup, SMALL, Hardware(gpu_gib=24.0))
        assert step.saved_gib == pytest.approx(before - step.estimate.peak_gib)
        assert step.saved_gib > 0
        before = step.estimate.peak_gib


def test_steps_come_in_ladder_order():
    setup = TrainingSetup(method="full", micro_batch=8, seq_len=4096, grad_ckpt=False, precision="fp32")
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=12.0), estimator=fake_estimate, accept=("quality",))
    positions = [POS[s.rule] for s in plan.steps]
    assert positions == sorted(positions)
    assert plan.fits


def test_plan_stops_as_soon_as_it_fits():
    setup = TrainingSetup(method="full", micro_batch=2, seq_len=2048)
    # 17 + 4 + 4 = 25 GiB; 26 GiB card (23.4 budget): one halving -> 21 GiB fits; nothing after it is tried.
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=26.0), estimator=fake_estimate)
    assert [s.rule for s in plan.steps] == ["OOM001"]
    assert plan.skipped == ()
    assert plan.steps[-1].estimate.fits


def test_a_false_condition_is_skipped_with_a_reason_a_person_understands():
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=512)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=16.0), estimator=fake_estimate)
    reasons = {s.rule: s.reason for s in plan.skipped}
    assert say(reasons["OOM001"]) == "The micro-batch is 1, the rule needs it above 1."
    assert "saves no memory once the micro-batch is 1" in say(reasons["OOM002"])
    assert say(reasons["OOM003"]) == "The sequence length is 512, the rule needs it above 512."


def test_a_rung_that_would_not_lower_the_estimate_is_skipped():
    def flat(setup, shape, hw, *, crash=None, headroom=0.10):       # activations do not depend on the batch
        return fake_estimate(setup.with_changes(micro_batch=1), shape, hw, crash=crash, headroom=headroom)

    setup = TrainingSetup(method="full", micro_batch=8, seq_len=1024)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=16.0), estimator=flat)
    reasons = {s.rule: s.reason for s in plan.skipped}
    assert say(reasons["OOM001"]) == ("It would not lower the estimate (peak 19.0 GiB before, 19.0 GiB after). "
                                 "The peak is mostly optimizer states (8.0 GiB).")
    assert "峰值主要来自优化器状态（8.0 GiB）" in say(reasons["OOM001"], "zh")
    assert "OOM001" not in [s.rule for s in plan.steps]


def test_skip_leaves_out_rules_by_id_slug_or_cost_kind():
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=2048)
    hw = Hardware(gpu_gib=16.0)
    plan = make_plan(setup, SMALL, hw, estimator=fake_estimate, skip=["switch-to-lora", "OOM003"])
    assert not {"OOM003", "OOM004"} & {s.rule for s in plan.steps}
    assert {s.rule: s.reason for s in plan.skipped}["OOM004"] == msg("plan.skip.on_request")
    no_quality = make_plan(setup, SMALL, hw, estimator=fake_estimate, skip=["quality"])
    assert all("quality" not in s.costs for s in no_quality.steps)


def test_zero3_rung_uses_all_gpus_keeps_the_batch_and_says_how_to_launch():
    setup = TrainingSetup(method="full", micro_batch=1, grad_accum=8, seq_len=512, optimizer="adamw_8bit")
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=12.0, n_gpus=4), estimator=fake_estimate,
                     skip=["needs-consent"])
    step = next(s for s in plan.steps if s.rule == "OOM014")
    assert (step.setup.zero_stage, step.setup.n_gpus, step.setup.grad_accum) == (3, 4, 2)
    assert step.setup.effective_batch == setup.effective_batch
    assert any("--nproc_per_node 4" in note.en for note in step.notes)


def test_fragmentation_in_the_log_adds_the_allocator_setting_to_the_step_env():
    crash = CrashReport("run.log", events=(CrashEvent("cuda_oom", 12, tried_gib=1.0, capacity_gib=24.0,
                                                      allocated_gib=16.0, reserved_unallocated_gib=4.0),))
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=512, grad_ckpt=True)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=20.0), crash=crash, estimator=fake_estimate)
    envs = [s.env for s in plan.steps if s.env]
    assert envs == [{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}]
    assert next(s for s in plan.steps if s.env).saved_gib == 0


def test_evidence_rungs_below_the_first_fit_still_apply():
    # Halving the batch fits at the first rung; the log's fragmentation still earns the allocator setting.
    crash = CrashReport("run.log", events=(CrashEvent("cuda_oom", 12, tried_gib=1.0, capacity_gib=24.0,
                                                      allocated_gib=16.0, reserved_unallocated_gib=4.0),))
    setup = TrainingSetup(method="lora", micro_batch=8, seq_len=2048, grad_ckpt=True)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=24.0), crash=crash, estimator=fake_estimate)
    assert plan.fits and [s.rule for s in plan.steps] == ["OOM001", "OOM013"]
    assert plan.steps[1].env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    assert make_plan(setup, SMALL, Hardware(gpu_gib=24.0), estimator=fake_estimate).steps[-1].rule == "OOM001"
    cheapest = least_cost_plan(setup, SMALL, Hardware(gpu_gib=24.0), crash=crash, estimator=fake_estimate)
    assert cheapest.fits and "OOM013" in [s.rule for s in cheapest.steps]


def test_a_crash_at_eval_applies_the_eval_rung_even_when_the_estimate_fits():
    crash = CrashReport("run.log", events=(CrashEvent("cuda_oom", 30, tried_gib=6.0, capacity_gib=80.0,
                                                      phase="eval"),))
    setup = TrainingSetup(method="lora", micro_batch=1, seq_len=1024, do_eval=True, eval_batch=8)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=80.0), crash=crash, estimator=fake_estimate)
    assert plan.fits
    assert [s.rule for s in plan.steps] == ["OOM012"]
    assert {c.field: c.after for c in plan.steps[0].changes} == {"eval_batch": 4, "eval_accum": 1}


HOST_KILL = CrashReport("run.log", events=(CrashEvent("host_oom", 40, phase="zero_init"),), diagnoses=("host_ram",))


def test_a_host_ram_kill_gives_offloaded_states_back_to_the_gpu_while_it_fits():
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=1024, grad_ckpt=True, zero_stage=3,
                          offload_params=True, offload_optimizer=True)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=80.0), crash=HOST_KILL, estimator=fake_estimate)
    assert plan.fits
    assert [s.rule for s in plan.steps] == ["OOM020", "OOM021", "OOM022"]
    final = plan.steps[-1].setup
    assert not final.offload_params and not final.offload_optimizer
    assert any("dmesg" in n.en for n in plan.steps[-1].notes)


def test_a_host_ram_kill_keeps_the_offload_the_gpu_cannot_hold():
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=1024, grad_ckpt=True, zero_stage=2,
                          offload_optimizer=True)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=16.0), crash=HOST_KILL, estimator=fake_estimate)
    assert [s.rule for s in plan.steps] == ["OOM022"]
    reason = next(k.reason for k in plan.skipped if k.rule == "OOM021")
    assert reason.code == "plan.skip.breaks_fit" and say(reason).startswith("The run would no longer fit on the GPU")


def test_after_a_host_ram_kill_the_ladder_never_adds_cpu_offload():
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=1024, grad_ckpt=True)
    keep = ("quality",)                       # no LoRA or shorter samples: the host rungs come next
    plain = make_plan(setup, LLAMA2_7B, Hardware(gpu_gib=24.0), skip=keep, estimator=fake_estimate)
    killed = make_plan(setup, LLAMA2_7B, Hardware(gpu_gib=24.0), crash=HOST_KILL, skip=keep, estimator=fake_estimate)
    assert {"OOM015", "OOM016"} & {s.rule for s in plain.steps}
    assert not {"OOM015", "OOM016"} & {s.rule for s in killed.steps}
    reasons = {k.rule: k.reason for k in killed.skipped}
    assert "offloading would ask the host for more" in say(reasons["OOM015"])


def test_an_estimate_whose_peak_is_at_evaluation_is_not_evidence_when_it_fits():
    # The host-RAM kill above is not about evaluation: a fitting estimate with its peak at evaluation
    # does not make the evaluation rung evidence (a crash at evaluation does, see the test above).
    setup = TrainingSetup(method="lora", micro_batch=1, seq_len=1024, do_eval=True, eval_batch=8)

    def eval_peak(s, shape, hw, *, crash=None, headroom=0.10):
        est = fake_estimate(s, shape, hw, crash=crash, headroom=headroom)
        return Estimate(components=est.components, allocated_gib=est.allocated_gib, peak_gib=est.peak_gib,
                        capacity_gib=est.capacity_gib, headroom=headroom, phase="eval")

    plan = make_plan(setup, SMALL, Hardware(gpu_gib=80.0), crash=HOST_KILL, estimator=eval_peak)
    assert "OOM012" not in [s.rule for s in plan.steps]


def test_a_rung_the_estimator_refuses_is_skipped_with_its_message():
    def no_qlora(setup, shape, hw, *, crash=None, headroom=0.10):
        if setup.method == "qlora":
            raise InputError("QLoRA is not modelled for this model")
        return fake_estimate(setup, shape, hw, crash=crash, headroom=headroom)

    setup = TrainingSetup(method="lora", micro_batch=1, seq_len=512)
    plan = make_plan(setup, ModelShape("big", params_total=20_000_000_000), Hardware(gpu_gib=40.0),
                     estimator=no_qlora)
    assert say({s.rule: s.reason for s in plan.skipped}["OOM017"]) == (
        "The estimate cannot follow it: QLoRA is not modelled for this model.")


def test_when_nothing_fits_the_advice_names_a_gpu_count_and_a_card_size():
    big = ModelShape("big-70b", params_total=70_000_000_000)
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=512)
    plan = make_plan(setup, big, Hardware(gpu="RTX4090", gpu_gib=24.0, n_gpus=1), estimator=fake_estimate)
    assert not plan.fits
    text = " ".join(say(a) for a in plan.advice)
    assert "ZeRO-3 across" in text
    assert "GiB would fit" in text or "would fit the planned setup" in text


def test_advice_gpu_count_really_fits():
    big = ModelShape("big-70b", params_total=70_000_000_000)
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=512)
    hw = Hardware(gpu="RTX4090", gpu_gib=24.0)
    plan = make_plan(setup, big, hw, estimator=fake_estimate, skip=["needs-consent"])
    line = say(next(a for a in plan.advice if a.code == "plan.advice.zero3_as_is"))
    n = int(line.split("across ")[1].split(" ")[0])
    ok = fake_estimate(engine._with_zero3(setup, n), big, hw)
    worse = fake_estimate(engine._with_zero3(setup, n // 2), big, hw)
    assert ok.fits and not worse.fits


def test_custom_rule_directory_changes_the_plan_order():
    setup = TrainingSetup(method="full", micro_batch=2, seq_len=2048, grad_ckpt=False)
    book = load_rules([str(DATA / "custom")])
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=30.0), rules=book, estimator=fake_estimate)
    assert plan.steps[0].rule == "OOM007"                  # checkpointing moved first by the custom file
    default = make_plan(setup, SMALL, Hardware(gpu_gib=30.0), estimator=fake_estimate)
    assert default.steps[0].rule == "OOM001"


# ---------------------------------------------------------------- least cost

def test_least_cost_prefers_throughput_costs_over_changing_the_experiment():
    # The ladder cuts cutoff_len (quality) before it reaches checkpointing; the cheapest plan does not.
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=4096, grad_ckpt=False)
    hw = Hardware(gpu_gib=40.0)
    ladder = make_plan(setup, SMALL, hw, estimator=fake_estimate, accept=("quality",))
    cheap = least_cost_plan(setup, SMALL, hw, estimator=fake_estimate, accept=("quality",))
    assert "OOM003" in [s.rule for s in ladder.steps]
    assert cheap.fits
    assert all("quality" not in s.costs for s in cheap.steps)
    assert plan_cost(cheap) < plan_cost(ladder)


def test_least_cost_puts_quality_changing_steps_last():
    setup = TrainingSetup(method="full", micro_batch=4, seq_len=4096, grad_ckpt=False)
    cheap = least_cost_plan(setup, ModelShape("13b", params_total=13_000_000_000), Hardware(gpu_gib=40.0),
                            estimator=fake_estimate, accept=("quality",))
    kinds = ["quality" in s.costs for s in cheap.steps]
    assert cheap.fits and any(kinds)
    assert kinds == sorted(kinds)


def test_least_cost_equals_the_ladder_when_the_ladder_is_already_cheapest():
    setup = TrainingSetup(method="full", micro_batch=2, seq_len=2048, fused_ce=True)
    hw = Hardware(gpu_gib=24.0)             # 21.8 GiB against 21.6: one halving or the 8-bit optimizer, same cost
    ladder = make_plan(setup, SMALL, hw, estimator=fake_estimate)
    cheap = least_cost_plan(setup, SMALL, hw, estimator=fake_estimate)
    assert [s.rule for s in cheap.steps] == [s.rule for s in ladder.steps] == ["OOM001"]


def test_least_cost_without_a_fit_returns_the_ladder_and_its_advice():
    big = ModelShape("big-70b", params_total=70_000_000_000)
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=512)
    hw = Hardware(gpu_gib=24.0)
    cheap = least_cost_plan(setup, big, hw, estimator=fake_estimate)
    assert not cheap.fits and cheap.advice


# ---------------------------------------------------------------- acceptance, real estimator

SCENARIOS = {
    "llama2-7b-full-80g": (TrainingSetup(model="meta-llama/Llama-2-7b-hf", method="full", precision="bf16",
                                         micro_batch=4, grad_accum=1, seq_len=2048),
                           LLAMA2_7B, Hardware(gpu="A100-80GB", gpu_gib=80.0)),
    "qwen2.5-7b-lora-8k-24g": (TrainingSetup(model="Qwen/Qwen2.5-7B", method="lora", precision="bf16",
                                             micro_batch=4, grad_accum=1, seq_len=8192),
                               QWEN25_7B, Hardware(gpu="RTX4090", gpu_gib=23.99)),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_acceptance_ladder_plan_is_in_ladder_order_and_fits(name):
    setup, shape, hw = SCENARIOS[name]
    from oomdoctor.memory import estimate
    assert not estimate(setup, shape, hw).fits
    plan = make_plan(setup, shape, hw)
    assert plan.fits and plan.steps
    positions = [POS[s.rule] for s in plan.steps]
    assert positions == sorted(positions)
    peaks = [s.estimate.peak_gib for s in plan.steps]
    assert all(b < a for a, b in zip([estimate(setup, shape, hw).peak_gib] + peaks, peaks))
    assert plan.steps[-1].estimate.fits


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_acceptance_least_cost_plan_fits_at_no_more_cost_than_the_ladder(name):
    setup, shape, hw = SCENARIOS[name]
    ladder = make_plan(setup, shape, hw)
    cheap = least_cost_plan(setup, shape, hw)
    assert cheap.fits and cheap.steps[-1].estimate.fits
    assert plan_cost(cheap) <= plan_cost(ladder)


def test_acceptance_llama_ladder_keeps_the_effective_batch_while_it_halves():
    setup, shape, hw = SCENARIOS["llama2-7b-full-80g"]
    plan = make_plan(setup, shape, hw)
    for step in plan.steps:
        if step.rule in ("OOM001", "OOM002"):
            assert step.setup.effective_batch == setup.effective_batch


def test_an_offload_rung_that_needs_more_host_memory_than_the_machine_has_is_skipped():
    def with_host(setup, shape, hw, *, crash=None, headroom=0.10):
        est = fake_estimate(setup, shape, hw, crash=crash, headroom=headroom)
        host = shape.params_total / 1e9 * 12 if setup.offload_optimizer else 0.0
        return Estimate(est.components, est.allocated_gib, est.peak_gib, est.capacity_gib, est.headroom,
                        host_ram_gib=host)

    setup = TrainingSetup(method="full", micro_batch=1, seq_len=512, optimizer="adamw_torch")
    big = ModelShape("big-13b", params_total=13_000_000_000)
    hw = Hardware(gpu_gib=80.0, host_ram_gib=64.0)
    plan = make_plan(setup, big, hw, estimator=with_host, skip=["needs-consent", "paged-8bit-optimizer"])
    reasons = {s.rule: s.reason for s in plan.skipped}
    assert say(reasons["OOM015"]) == "It would need 156 GiB of host memory; this machine has 64 GiB."
    roomy = make_plan(setup, big, Hardware(gpu_gib=80.0, host_ram_gib=512.0), estimator=with_host,
                      skip=["needs-consent", "paged-8bit-optimizer"])
    assert "OOM015" in [s.rule for s in roomy.steps]


def test_advice_names_the_smallest_catalog_card_that_fits():
    gpus = pytest.importorskip("oomdoctor.gpus")
    shape = ModelShape("toy-5b", params_total=5_000_000_000)
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=1024)
    everything = [r.id for r in BOOK]
    plan = make_plan(setup, shape, Hardware(gpu="RTX4090", gpu_gib=23.99), estimator=fake_estimate, skip=everything)
    peak = fake_estimate(setup, shape, Hardware(gpu_gib=1.0)).peak_gib
    bigger = sorted((c.usable_gib, c.name) for c in gpus.catalog() if c.usable_gib * 0.9 >= peak)
    line = say(next(a for a in plan.advice if a.code == "plan.advice.card"))
    assert line.startswith(f"One {bigger[0][1]} ")


# ---------------------------------------------------------------- consent, and minimal plans

def test_a_rung_that_changes_the_experiment_is_only_proposed_without_consent_and_the_ladder_goes_on():
    # full fine-tune, long context: cutoff_len (OOM003) and LoRA (OOM004) come before checkpointing (OOM007)
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=4096, grad_ckpt=False)
    hw = Hardware(gpu_gib=40.0)
    plan = make_plan(setup, SMALL, hw, estimator=fake_estimate)
    assert all(st.applicability == "safe" for st in plan.steps)
    assert "OOM007" in [st.rule for st in plan.steps] and plan.fits
    proposed = {st.rule: st for st in plan.proposed}
    assert {"OOM003", "OOM004"} <= set(proposed)
    cut = proposed["OOM003"]
    assert cut.changes[0].field == "seq_len" and cut.changes[0].after == 512
    assert cut.saved_gib == pytest.approx(_peak(setup, gib=40.0) - cut.estimate.peak_gib)
    states = {r.rule: r.state for r in plan.rungs}
    assert states["OOM003"] == states["OOM004"] == "proposed" and states["OOM007"] == "applied"
    # every rung of this setup's ladder, in ladder order (the rungs scoped to verl are not on it)
    assert [r.rule for r in plan.rungs] == [r.id for r in BOOK.for_framework(setup.framework).rules]


@pytest.mark.parametrize("accept", [("quality",), ("OOM003",), ("cut-cutoff-len",), ("all",)])
def test_consent_by_id_slug_or_quality_takes_the_rung_into_the_plan(accept):
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=4096, grad_ckpt=False)
    plan = make_plan(setup, SMALL, Hardware(gpu_gib=40.0), estimator=fake_estimate, accept=accept)
    assert "OOM003" in [st.rule for st in plan.steps]
    assert "OOM003" not in [st.rule for st in plan.proposed]


def test_the_least_cost_plan_never_takes_a_rung_without_consent():
    setup = TrainingSetup(method="full", micro_batch=4, seq_len=4096, grad_ckpt=False)
    shape = ModelShape("13b", params_total=13_000_000_000)
    cheap = least_cost_plan(setup, shape, Hardware(gpu_gib=40.0), estimator=fake_estimate)
    assert all(st.applicability == "safe" for st in cheap.steps)


def test_a_plan_drops_the_steps_it_fits_without_latest_first():
    # halving the micro-batch helps a little; the 8-bit optimizer alone then makes it fit with room to spare:
    # once it fits, the plan no longer needs the halvings
    setup = TrainingSetup(method="full", micro_batch=2, seq_len=2048, fused_ce=True, optimizer="adamw_torch")
    shape = ModelShape("3b", params_total=3_000_000_000, vocab_size=32000)
    hw = Hardware(gpu_gib=50.0)
    plan = make_plan(setup, shape, hw, estimator=fake_estimate)
    assert plan.fits
    dropped = plan.rungs_in("dropped")
    for i, step in enumerate(plan.steps):
        keep = [st for j, st in enumerate(plan.steps) if j != i]
        trial = setup
        for st in keep:
            trial = trial.with_changes(**{c.field: c.after for c in st.changes})
        assert not fake_estimate(trial, shape, hw).fits, f"{step.rule} could go"
    assert dropped and all(r.reason.code == "plan.rung.dropped" for r in dropped)


def test_a_rung_that_leads_the_ladder_into_a_dead_end_is_walked_around():
    # The demo: the 8-bit optimizer (OOM011) leaves about 83 GiB with the optimizer states near 15% of it, the
    # offload rung's threshold. Taken first, either nothing below fits and it is walked around (dead end), or
    # offloading follows and makes it unnecessary (dropped); the plan is the offload alone either way.
    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session

    session = open_session(Options(files=("oomdoctor/data/demo/train.log", "oomdoctor/data/demo/train.yaml")))
    plan = session.report.plan
    assert plan.fits
    assert [st.rule for st in plan.steps] == ["OOM015"]
    skipped = {sk.rule: sk.reason.code for sk in plan.skipped}
    states = {r.rule: r.state for r in plan.rungs}
    assert skipped.get("OOM011") == "plan.skip.dead_end" or states.get("OOM011") == "dropped"


def test_when_nothing_fits_without_consent_the_advice_names_the_yes_that_would():
    setup = TrainingSetup(method="full", micro_batch=1, seq_len=512, optimizer="adamw_8bit", zero_stage=3,
                          offload_optimizer=True, offload_params=True)
    shape = ModelShape("70b", params_total=70_000_000_000, vocab_size=32000)
    plan = make_plan(setup, shape, Hardware(gpu_gib=24.0), estimator=fake_estimate)
    if not plan.fits and plan.proposed:
        codes = [a.code for a in plan.advice]
        yes = [a for a in plan.advice if a.code == "plan.advice.with_yes"]
        assert "plan.advice.still_needs" in codes
        for a in yes:
            assert all(r in {st.rule for st in plan.proposed} for r in a.values["rules"].split(","))
