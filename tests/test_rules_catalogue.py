"""The default rule catalogue: meta-checks over every rule, and each rule's fires / quiet fixtures."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import read_yaml

from oomdoctor.facts import COMPONENTS, CrashEvent, CrashReport, Estimate, Hardware, ModelShape, TrainingSetup
from oomdoctor.planner import default_rules_dir, explain, fire, holds, list_rules, load_rules
from oomdoctor.planner.registry import gather, value_of

FIXTURES = read_yaml(Path(__file__).parent / "data" / "rules" / "fixtures.yaml")
BOOK = load_rules()
SHAPE = ModelShape("meta-llama/Llama-2-7b-hf", params_total=6738415616)


def test_default_rules_dir_is_the_repo_rules_folder_in_a_checkout():
    assert default_rules_dir() == Path(__file__).resolve().parents[1] / "rules"


def test_ids_and_slugs_are_unique_and_positions_follow_the_ladder():
    assert len(set(BOOK.ids)) == len(BOOK)
    assert len({r.slug for r in BOOK}) == len(BOOK)
    assert [r.position for r in BOOK] == list(range(1, len(BOOK) + 1))


def test_the_users_five_rungs_come_first_in_the_users_order():
    # on every ladder but verl's, whose own cheaper knobs (rules/40-verl.yaml) come first
    slugs = [r.slug for r in BOOK.for_framework("llamafactory")]
    first_five = ["halve-micro-batch", "raise-grad-accum", "cut-cutoff-len", "switch-to-lora", "use-bf16"]
    assert slugs[:5] == first_five


@pytest.mark.parametrize("rule", list(BOOK), ids=lambda r: r.id)
def test_every_default_rule_speaks_english_and_chinese(rule):
    for text in (rule.title, rule.why, *(c.text for c in rule.costs)):
        assert text.en.strip() and text.zh and text.zh.strip()
        assert text.zh != text.en
    assert rule.text("why", "zh") == rule.why.zh
    assert rule.text("title", "en") == rule.title.en


@pytest.mark.parametrize("rule", list(BOOK), ids=lambda r: r.id)
def test_whys_are_sentences_and_titles_are_not(rule):
    assert rule.why.en.endswith("."), rule.id
    assert rule.why.zh.endswith("。"), rule.id
    assert not rule.title.en.endswith(".")
    for cost in rule.costs:
        assert cost.text.en.endswith(".") and cost.text.zh.endswith("。"), rule.id


@pytest.mark.parametrize("rule", list(BOOK), ids=lambda r: r.id)
def test_rules_that_change_the_experiment_ask_for_consent(rule):
    big_quality = any(c.kind == "quality" and c.size != "small" for c in rule.costs)
    if big_quality:
        assert rule.applicability == "needs-consent"


def test_every_rule_has_a_firing_and_a_quiet_fixture():
    assert set(FIXTURES) == set(BOOK.ids)
    for rid, cases in FIXTURES.items():
        assert {"fires", "quiet"} <= set(cases), rid
        fires = cases["fires"]
        assert "expect" in fires or "expect_env" in fires, rid


# ---------------------------------------------------------------- fixtures

def _world(case: dict):
    setup = TrainingSetup(**case.get("setup", {}))
    hw = Hardware(**{"gpu": "A100-80GB", "gpu_gib": 80.0, **case.get("gpu", {})})
    crash = None
    if "crash" in case:
        fields = dict(case["crash"])
        diagnoses = tuple(fields.pop("diagnoses", ()))
        crash = CrashReport(file="run.log", events=(CrashEvent(kind="cuda_oom", line=1, capacity_gib=hw.gpu_gib,
                                                               **fields),), diagnoses=diagnoses)
    comps = {c: 0.0 for c in COMPONENTS}
    comps.update(case.get("estimate", {"weights": 40.0, "overhead": 2.0}))
    total = sum(comps.values())
    est = Estimate(components=comps, allocated_gib=total - comps["overhead"], peak_gib=total,
                   capacity_gib=hw.usable_gib)
    return setup, hw, crash, est


@pytest.mark.parametrize("rid", sorted(FIXTURES))
def test_rule_fires_with_the_expected_change(rid):
    rule = BOOK.get(rid)
    case = FIXTURES[rid]["fires"]
    setup, hw, crash, est = _world(case)
    facts = gather(setup, SHAPE, hw, crash, est)
    assert holds(rule.when, facts), f"{rid} should fire"
    firing = fire(rule, setup, facts, shape=SHAPE, hw=hw, crash=crash, est=est)
    got = {c.field: c.after for c in firing.changes}
    assert got == case.get("expect", {})
    for change in firing.changes:
        assert value_of(setup, change.field) == change.before
    assert dict(firing.env) == case.get("expect_env", {})
    if "expect_note" in case:
        assert any(case["expect_note"] in n.en for n in firing.notes)
        assert all("${" not in text for n in firing.notes for text in (n.en, n.zh or ""))


@pytest.mark.parametrize("rid", sorted(FIXTURES))
def test_rule_stays_quiet_where_it_does_not_apply(rid):
    rule = BOOK.get(rid)
    setup, hw, crash, est = _world(FIXTURES[rid]["quiet"])
    facts = gather(setup, SHAPE, hw, crash, est)
    assert not holds(rule.when, facts), f"{rid} should not fire"


def test_halving_keeps_the_effective_batch_even_for_odd_micro_batches():
    rule = BOOK.get("halve-micro-batch")
    setup = TrainingSetup(micro_batch=3, grad_accum=2)
    firing = fire(rule, setup, gather(setup, SHAPE, Hardware(gpu_gib=80.0), None, None))
    assert firing.setup.micro_batch == 1
    assert firing.setup.effective_batch == setup.effective_batch == 6


# ---------------------------------------------------------------- texts

def test_list_rules_shows_every_rule_in_order_in_both_languages():
    en, zh = list_rules(BOOK, "en"), list_rules(BOOK, "zh")
    positions = [en.index(r.slug) for r in BOOK]
    assert positions == sorted(positions)
    assert BOOK[0].title.en in en and BOOK[0].title.zh in zh


def test_explain_names_the_condition_the_actions_and_the_costs():
    text = explain(BOOK.get("OOM001"))
    assert "setup.micro_batch > 1" in text
    assert "micro_batch x 0.5" in text
    assert "throughput" in text
    assert explain(BOOK, "halve-micro-batch", "zh").startswith("OOM001 halve-micro-batch: 微批大小减半")


def test_qlora_never_looks_cheaper_than_lora():
    from oomdoctor.planner import rule_cost
    assert rule_cost(BOOK.get("switch-to-qlora")) > rule_cost(BOOK.get("switch-to-lora"))
    assert rule_cost(BOOK.get("switch-to-lora")) > sum(rule_cost(r) for r in BOOK if not r.changes_quality)


def test_explain_looks_a_rule_up_in_a_book_by_id_or_slug():
    assert explain(BOOK, "OOM007", lang="zh") == explain(BOOK.get("gradient-checkpointing"), lang="zh")
    assert explain(BOOK, "gradient-checkpointing").startswith("OOM007 gradient-checkpointing: Turn on")


def test_explain_of_an_unknown_rule_is_an_input_error():
    from oomdoctor.errors import InputError
    with pytest.raises(InputError, match="no rule named 'OOM999'"):
        explain(BOOK, "OOM999")
