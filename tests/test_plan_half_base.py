"""A LoRA base held in fp32 (from_pretrained's default dtype) is loaded in half precision before anything that
costs: LoRA never updates the base, so its dtype is free to choose (rules OOM023-OOM025)."""
from __future__ import annotations

from dataclasses import replace

from helpers import DATA

from oomdoctor.pipeline import Options, build_report
from oomdoctor.planner import load_rules
from oomdoctor.planner.registry import gather

CASE = DATA / "plans" / "alpacacot118_chatglm6b_lora_3090"


def _report(gpu: str = "RTX3090"):
    return build_report(Options(files=(str(CASE / "train.sh"), str(CASE / "crash.log")), gpu=gpu, gpus=1,
                                model=str(CASE / "chatglm-6b")))


def test_fp32_lora_base_is_loaded_in_bf16_and_the_batch_is_kept():
    report = _report()
    assert report.setup.method == "lora" and report.setup.precision == "fp32"
    assert not report.estimate.fits and report.plan.fits
    final = report.plan.final_setup(report.setup)
    assert (final.load_dtype, final.precision) == ("bf16", "bf16")
    assert final.micro_batch == report.setup.micro_batch          # the free step alone fits: no batch cut
    assert [s.rule for s in report.plan.steps] == ["OOM024"]
    assert report.plan.cost["quality"] == 0


def test_card_without_bf16_considers_the_fp16_base_not_the_bf16_one():
    report = _report(gpu="V100-32GB")
    states = {r.rule: r.state for r in report.plan.rungs}
    assert states["OOM024"] == "skipped"                # no bf16 on a V100
    assert states["OOM025"] != "skipped"                # its condition holds; fp16's small quality cost may
    # leave it out of the default plan when a plan without a quality cost fits


def test_base_dtype_fact_follows_an_explicit_load_dtype():
    report = _report()
    facts = gather(report.setup, report.shape, report.hardware, report.crash, report.estimate)
    assert facts["setup.base_dtype"] == "fp32"
    half = replace(report.setup, load_dtype="bf16")
    assert gather(half, report.shape, report.hardware, report.crash, report.estimate)["setup.base_dtype"] == "bf16"


def test_half_base_rules_never_touch_full_fine_tunes_or_quantized_bases():
    book = {r.id: r for r in load_rules()}
    for rid in ("OOM023", "OOM024", "OOM025"):
        leaves = {(c.fact, c.op) for c in book[rid].when.items}
        assert ("setup.is_adapter", "eq") in leaves and ("setup.quant_bits", "missing") in leaves
