"""One default plan, found by search under one cost model (quality, modelled step time, setup), each cut the
least change that fits, the same on every surface; --advise fits the terminal. Cases in
tests/data/plans-search/ (README there: what each is, and what the code before this gave)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import DATA, ROOT, run_cli

from oomdoctor.facts import Estimate, Hardware, ModelShape, TrainingSetup
from oomdoctor.pipeline import Options, build_report, measured_estimator
from oomdoctor.planner import engine, load_rules, make_plan
from oomdoctor.words import cell_width

CASES = DATA / "plans-search"
LORA_24G = (CASES / "llama3-8b-lora-24g" / "train.log", CASES / "llama3-8b-lora-24g" / "train.yaml")
QLORA_T4 = CASES / "llama3-8b-qlora-t4" / "sft.yaml"
FULL_8B = CASES / "llama3-8b-full" / "train.yaml"
BOOK = load_rules()
BY_ID = {r.id: r for r in BOOK}
OFFLOAD_FIELDS = {"offload_params", "offload_optimizer"}


def _report(*files: Path, **opts):
    return build_report(Options(files=tuple(str(f) for f in files), **opts))


def _fields(plan) -> set[str]:
    return {c.field for s in plan.steps for c in s.changes}


def _signature(plan) -> list[tuple]:
    return [(s.rule, tuple((c.field, c.before, c.after) for c in s.changes)) for s in plan.steps]


# ---------------------------------------------------------------- the 8B LoRA on one 24 GB card

def test_8b_lora_on_24gb_default_plan_has_no_offload_and_no_quality_step():
    report = _report(*LORA_24G)
    plan, start = report.plan, report.setup
    assert not report.estimate.fits and plan.fits
    final = plan.final_setup(start)
    assert not OFFLOAD_FIELDS & _fields(plan) and final.zero_stage == 0
    assert all(s.applicability == "safe" for s in plan.steps)
    assert plan.cost["quality"] == 0 and plan.cost["time_factor"] < 1.05
    # a smaller micro-batch + Liger (and the evaluation batch where evaluation sets the peak), the effective
    # batch kept, inside the card with its headroom
    assert final.fused_ce and final.micro_batch < start.micro_batch
    assert final.effective_batch == start.effective_batch
    assert plan.steps[-1].estimate.peak_gib <= report.hardware.gpu_gib * 0.9 + 1e-6
    # no deepspeed file in the patch, nothing but liger-kernel to install
    assert "ds_z3" not in report.patch and [s["what"] for s in plan.cost["setup"]] == ["liger-kernel"]


def test_8b_lora_micro_batch_is_the_largest_that_fits():
    report = _report(*LORA_24G)
    final = report.plan.final_setup(report.setup)
    est = measured_estimator(report.setup, report.shape, report.hardware, report.crash)
    bigger = [m for m in range(final.micro_batch + 1, report.setup.micro_batch)
              if report.setup.effective_batch % m == 0]
    for m in bigger:
        trial = replace(final, micro_batch=m, grad_accum=report.setup.effective_batch // m)
        assert not est(trial, report.shape, report.hardware, crash=report.crash).fits, m


def test_8b_lora_a_yes_to_quality_gives_the_same_plan():
    default = _report(*LORA_24G)
    agreed = _report(*LORA_24G, accept=("quality",))
    # the same steps and the same patch (the walk may meet them in another order)
    assert sorted(_signature(agreed.plan)) == sorted(_signature(default.plan))
    assert agreed.patch == default.patch
    assert not [s for s in agreed.plan.steps if s.applicability == "needs-consent"]


def test_the_ladder_reaches_the_evaluation_rung_when_the_peak_moves_to_evaluation():
    report = _report(*LORA_24G)
    setup = replace(report.setup, eval_batch=16)     # evaluation outgrows training once the batch is cut
    est = measured_estimator(setup, report.shape, report.hardware, report.crash)
    ladder = make_plan(setup, report.shape, report.hardware, crash=report.crash, estimator=est)
    assert ladder.fits and not OFFLOAD_FIELDS & _fields(ladder)
    rules = [s.rule for s in ladder.steps]
    assert "OOM001" in rules and "OOM012" in rules
    moved = next(i for i, s in enumerate(ladder.steps) if s.estimate.peak_moment == "eval")
    assert moved < rules.index("OOM012")


def test_the_plan_s_offload_speed_is_the_advisor_s(capsys):
    from oomdoctor.advise import build

    report = _report(ROOT / "oomdoctor" / "data" / "demo" / "train.log",
                     ROOT / "oomdoctor" / "data" / "demo" / "train.yaml")
    assert report.plan.final_setup(report.setup).offload_optimizer
    row = next(r for r in build(report).strategies if r.key == "zero3_offload_opt")
    assert report.plan.cost["time_factor"] == pytest.approx(1 / row.speed, rel=0.01)


# ---------------------------------------------------------------- more GPUs: sharding before offload

def test_minimal_pass_keeps_sharding_and_drops_offload_on_four_cards():
    report = _report(FULL_8B, gpu="A100-80GB", gpus=4)
    planner = engine._Planner(report.setup, report.shape, report.hardware, None, 0.10,
                              measured_estimator(report.setup, report.shape, report.hardware, None))
    # offload first, then sharding: each alone fits; dropping the latest (the old pass) kept the offload
    walk = planner.replay([BY_ID["OOM015"], BY_ID["OOM014"]])
    assert walk is not None and walk.estimate.fits
    assert planner.replay([BY_ID["OOM015"]]).estimate.fits and planner.replay([BY_ID["OOM014"]]).estimate.fits
    kept = planner.minimize(walk, BOOK)
    assert [s.rule for s in kept.steps] == ["OOM014"]
    assert not kept.setup.offload_optimizer and kept.setup.zero_stage == 3


def test_with_two_cards_the_plan_shards_where_one_card_offloads():
    one = _report(FULL_8B, gpu="A100-80GB")
    two = _report(FULL_8B, gpu="A100-80GB", gpus=2)
    assert one.plan.fits and two.plan.fits
    assert "OOM014" not in {s.rule for s in one.plan.steps}
    assert "OOM014" in {s.rule for s in two.plan.steps}
    assert two.plan.cost["time_factor"] < one.plan.cost["time_factor"]
    assert two.plan.final_setup(two.setup).effective_batch == two.setup.effective_batch


# ---------------------------------------------------------------- the least change that fits

def test_t4_qlora_cut_is_the_longest_length_that_fits_and_says_what_each_sample_keeps():
    report = _report(QLORA_T4, gpu="T4", accept=("quality",))
    plan, start = report.plan, report.setup
    assert plan.fits and start.seq_len == 18000
    cut = next(s for s in plan.steps if any(c.field == "seq_len" for c in s.changes))
    seq = plan.final_setup(start).seq_len
    assert seq % 256 == 0 and seq > 4 * 512
    est = measured_estimator(start, report.shape, report.hardware, None)
    longer = replace(plan.final_setup(start), seq_len=seq + 256)
    assert not est(longer, report.shape, report.hardware).fits           # the longest that fits
    share = f"{seq / 18000:.0%}"
    assert str(seq) in cut.title.en and any(share in n.en and str(seq) in n.en for n in cut.notes)
    assert any(share in n.zh for n in cut.notes)
    assert not OFFLOAD_FIELDS & _fields(plan)


def test_t4_qlora_without_a_yes_is_told_the_longest_length_its_yes_would_get(capsys):
    code, out, _ = run_cli(capsys, str(QLORA_T4), "--gpu", "T4", "--plain")
    assert code == 3
    flat = " ".join(out.split())
    agreed = _report(QLORA_T4, gpu="T4", accept=("quality",)).plan
    seq = agreed.final_setup(agreed.steps[0].setup).seq_len
    assert f"With your yes to Cut the sequence length to {seq} tokens" in flat


def _fake(setup, shape, hw, *, crash=None, headroom=0.10):
    """2 GiB per sample of 1k tokens, 1 GiB per 16 of LoRA rank, 4 GiB of weights."""
    peak = 4.0 + 2.0 * setup.micro_batch * setup.seq_len / 1024 + setup.lora_rank / 16
    return Estimate(components={"weights": 4.0, "activations": peak - 4.0}, allocated_gib=peak, peak_gib=peak,
                    capacity_gib=hw.usable_gib, headroom=headroom)


def _stretched(setup, gib, accept=()):
    shape = ModelShape("toy", params_total=1_000_000_000, vocab_size=32000)
    planner = engine._Planner(setup, shape, Hardware(gpu_gib=gib), None, 0.10, _fake)
    walk = planner.walk(BOOK.rules, accept=accept)
    assert walk.estimate.fits
    return engine.stretch(planner, planner.minimize(walk, BOOK), BOOK)


def test_micro_batch_step_takes_the_largest_divisor_of_the_effective_batch_that_fits():
    setup = TrainingSetup(method="lora", micro_batch=16, grad_accum=1, seq_len=1024, lora_rank=16, grad_ckpt=True)
    # budget 0.9 * 20 = 18 GiB: 4 + 2m + 1 <= 18 -> m <= 6; divisors of 16: 4
    walk = _stretched(setup, 20.0)
    assert (walk.setup.micro_batch, walk.setup.grad_accum) == (4, 4)


def test_a_micro_batch_step_to_one_is_raised_to_the_largest_that_fits():
    setup = TrainingSetup(method="lora", micro_batch=16, grad_accum=1, seq_len=1024, lora_rank=16, grad_ckpt=True)
    shape = ModelShape("toy", params_total=1_000_000_000, vocab_size=32000)
    planner = engine._Planner(setup, shape, Hardware(gpu_gib=20.0), None, 0.10, _fake)
    walk = planner.replay([BY_ID["OOM002"]])                   # micro-batch 1, accumulation 16
    assert walk.setup.micro_batch == 1
    stretched = engine.stretch(planner, walk, BOOK)
    assert (stretched.setup.micro_batch, stretched.setup.grad_accum) == (4, 4)
    step = stretched.steps[0]
    assert [(c.field, c.before, c.after) for c in step.changes] == [("micro_batch", 16, 4), ("grad_accum", 1, 4)]
    assert "micro-batch to 4" in step.title.en and "4" in step.title.zh


def test_rank_cut_takes_the_highest_rank_that_fits():
    setup = TrainingSetup(method="lora", micro_batch=1, grad_accum=8, seq_len=512, lora_rank=256, grad_ckpt=True)
    # 4 + 1 + r/16 <= 13.5 -> r <= 136: the highest multiple of 8 is 136
    walk = _stretched(setup, 15.0, accept=("quality",))
    assert walk.setup.lora_rank == 136 and walk.estimate.fits


# ---------------------------------------------------------------- one plan on every surface

def test_plain_json_export_write_guide_and_app_show_the_same_plan(capsys, tmp_path, monkeypatch):
    import asyncio

    from oomdoctor.guide import default_answers, options_with_answers
    from oomdoctor.session import open_session

    monkeypatch.chdir(tmp_path)
    log, cfg = (tmp_path / "train.log", tmp_path / "train.yaml")
    log.write_bytes(LORA_24G[0].read_bytes())
    cfg.write_bytes(LORA_24G[1].read_bytes())
    session = open_session(Options(files=(str(log), str(cfg)), cwd=str(tmp_path)))
    report = session.report
    want = _signature(report.plan)
    # JSON
    code, out, _ = run_cli(capsys, str(log), str(cfg), "--json")
    doc = json.loads(out)
    assert [(s["rule"], tuple((c["key"], c["from"], c["to"]) for c in s["changes"])) for s in doc["plan"]["steps"]] \
        == [(r, tuple(ch)) for r, ch in want]
    assert doc["plan"]["cost"] == dict(report.plan.cost)
    # plain, --export, --write
    code, _, _ = run_cli(capsys, str(log), str(cfg), "--plain", "--export", "plan.diff")
    assert code == 1 and (tmp_path / "plan.diff").read_text(encoding="utf-8") == report.patch
    code, out, _ = run_cli(capsys, str(log), str(cfg), "--plain")
    assert "\n".join(ln.rstrip() for ln in report.patch.splitlines()) in out
    for rule, _ in want:
        assert BY_ID[rule].title.en.split()[0] in out
    run_cli(capsys, str(log), str(cfg), "--write", "patched")
    written = (tmp_path / "patched" / "train.yaml").read_text(encoding="utf-8")
    final = report.plan.final_setup(report.setup)
    assert f"per_device_train_batch_size: {final.micro_batch}" in written and "enable_liger_kernel: true" in written
    # the guide
    _, guided = options_with_answers(session, default_answers(report, session.options))
    assert _signature(guided.plan) == want
    # the app
    from oomdoctor.tui.app import OomDoctorApp
    from oomdoctor.tui.widgets import StepList

    async def app_steps():
        app = OomDoctorApp(session)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            return app.query_one(StepList).steps, app.selection.patch

    steps, patch = asyncio.run(app_steps())
    # the app lists the rungs in ladder order: the same steps, the same patch
    assert sorted(_signature(type(report.plan)(steps=tuple(steps)))) == sorted(want)
    assert patch == report.patch


# ---------------------------------------------------------------- --advise fits the terminal

@pytest.mark.parametrize("lang", ["en", "zh"])
def test_advise_fits_80_columns_with_columns_set(capsys, monkeypatch, lang):
    monkeypatch.setenv("COLUMNS", "80")
    prices = DATA / "advise" / "prices.yaml"
    argv = [str(LORA_24G[1]), "--gpu", "RTX4090", "--advise", "--lang", lang]
    if prices.is_file():
        argv += ["--prices", str(prices)]
    code, out, _ = run_cli(capsys, *argv)
    widest = max(cell_width(line) for line in out.splitlines())
    assert widest <= 80 and widest >= 70                  # it uses the width, and no more
    assert ("ZeRO-3 + optimizer offload" if lang == "en" else "优化器卸载") in out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_advise_piped_without_columns_is_80_wide(lang):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "oomdoctor", str(LORA_24G[1]), "--gpu", "RTX4090", "--advise",
                           "--lang", lang], capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert max(cell_width(line) for line in done.stdout.splitlines()) <= 80


def test_advise_takes_a_wider_terminal_when_told(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    _, out, _ = run_cli(capsys, str(LORA_24G[1]), "--gpu", "RTX4090", "--advise")
    assert 80 < max(cell_width(line) for line in out.splitlines()) <= 120


def test_terminal_width_reads_columns_then_the_tty_then_80():
    from oomdoctor.views.plain import terminal_width

    class Pipe:
        def isatty(self):
            return False

    assert terminal_width({"COLUMNS": "132"}, Pipe()) == 132
    assert terminal_width({"COLUMNS": "junk"}, Pipe()) == 80
    assert terminal_width({}, Pipe()) == 80
