"""verl runs get a plan of verl's own memory knobs (rules/40-verl.yaml), shown as Hydra overrides."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import options_of, report_of, run_cli

from oomdoctor.errors import InputError
from oomdoctor.memory import estimate
from oomdoctor.planner import load_rules
from oomdoctor.planner.registry import value_of, with_values
from oomdoctor.session import open_session

VERL = str(Path(__file__).parent / "data" / "real-configs" / "verl")
# Qwen2.5-VL-7B LoRA GRPO with free_cache_engine=False and a 0.6 vLLM share: over an A100-40GB
OVER = (f"{VERL}/head_grpo_qwen2_5_vl_7b_lora.sh", "--gpu", "A100-40GB")
FITS = (f"{VERL}/head_grpo_qwen2_5_3b_lora.sh", "--gpu", "H100")
BOOK = load_rules()
VERL_ONLY = {r.id for r in BOOK if r.frameworks == ("verl",)}
NOT_FOR_VERL = {r.id for r in BOOK if "verl" in r.skip_frameworks}


def test_a_verl_run_over_the_card_gets_a_plan_of_verl_knobs_that_fits_each_step_re_estimated():
    report = report_of(OVER)
    assert report.estimate is not None and not report.estimate.fits
    plan = report.plan
    assert plan.fits and plan.steps
    assert "OOM026" in [s.rule for s in plan.steps]            # free_cache_engine on
    assert not {s.rule for s in plan.steps} & NOT_FOR_VERL
    for step in plan.steps:
        again = estimate(step.setup, report.shape, report.hardware)
        assert again.peak_gib == pytest.approx(step.estimate.peak_gib)
    assert plan.steps[-1].estimate.fits


def test_a_verl_run_that_fits_gets_no_steps():
    report = report_of(FITS)
    assert report.estimate is not None and report.estimate.fits
    assert report.plan.steps == ()


def test_the_generic_rungs_verl_has_no_key_for_are_not_on_its_ladder():
    rungs = {r.rule for r in report_of(OVER).plan.rungs}
    assert rungs and not rungs & NOT_FOR_VERL
    assert VERL_ONLY <= rungs
    assert {"OOM014", "OOM016", "OOM017"} <= NOT_FOR_VERL


def test_the_sequence_cut_reaches_verl_sft_but_not_its_ppo_trainers():
    from test_rules_catalogue import FIXTURES, SHAPE, _world

    from oomdoctor.configs import load_config
    from oomdoctor.planner import holds
    from oomdoctor.planner.registry import gather

    rule = BOOK.get("OOM003")
    _setup, hw, crash, est = _world(FIXTURES["OOM003"]["fires"])
    sft = load_config(f"{VERL}/head_sft_qwen_05_peft.sh")
    assert sft.framework == "verl" and sft.stage == "sft" and sft.seq_len > 512
    # verl's SFT trainer takes data.max_length as the sample's whole length, as cutoff_len is elsewhere
    assert holds(rule.when, gather(sft, SHAPE, hw, crash, est))
    assert not holds(rule.when, gather(replace(sft, stage="ppo"), SHAPE, hw, crash, est))


def test_a_non_verl_ladder_does_not_list_the_verl_rungs(demo):
    report = demo[0]
    assert report.plan.rungs and not {r.rule for r in report.plan.rungs} & VERL_ONLY


def test_plain_output_shows_the_plan_as_hydra_overrides(capsys):
    code, out, _ = run_cli(capsys, *OVER, "--plain")
    assert code == 1
    assert "actor_rollout_ref.rollout.free_cache_engine=True" in out.split()
    # OOM032: the update packed by a token budget (use_dynamic_bsz), the micro-batch in sequences left alone
    assert "actor_rollout_ref.actor.use_dynamic_bsz=True" in out.split()
    assert any(w.startswith("actor_rollout_ref.actor.ppo_max_token_len_per_gpu=") for w in out.split())
    assert "ppo_micro_batch_size_per_gpu=" not in out


def test_markdown_output_shows_the_same_overrides_in_a_shell_block(capsys):
    code, out, _ = run_cli(capsys, *OVER, "--markdown")
    assert code == 1
    block = out.split("### Command overrides", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0].split()
    assert "actor_rollout_ref.rollout.free_cache_engine=True" in block
    assert "actor_rollout_ref.actor.use_dynamic_bsz=True" in block


def test_markdown_of_a_run_that_is_not_verl_has_no_override_block(demo):
    from oomdoctor.views.markdown import render

    assert "Command overrides" not in render(demo[0])


async def test_the_apps_patch_tab_shows_the_overrides_a_verl_script_needs():
    from oomdoctor.tui.app import OomDoctorApp

    app = OomDoctorApp(open_session(options_of(OVER)))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        shown = str(app.query_one("#patch-env").render())
    assert "actor_rollout_ref.rollout.free_cache_engine=True" in shown.split()
    assert "actor_rollout_ref.actor.use_dynamic_bsz=True" in shown.split()


def test_the_guides_apply_page_gives_the_overrides_to_paste():
    from oomdoctor.guide.answers import Answers
    from oomdoctor.guide.pages import pages

    code = next(p for p in pages(report_of(OVER), Answers(), "en") if p.key == "apply").code.split()
    assert "actor_rollout_ref.rollout.free_cache_engine=True" in code
    assert "actor_rollout_ref.actor.use_dynamic_bsz=True" in code


def test_json_output_names_verl_keys(capsys):
    code, out, _ = run_cli(capsys, *OVER, "--json")
    assert code == 1
    changes = [c for s in json.loads(out)["plan"]["steps"] for c in s["changes"]]
    keys = {c["config_key"]: c["config_value"] for c in changes if c["config_key"]}
    assert keys["actor_rollout_ref.rollout.free_cache_engine"] is True
    assert keys["actor_rollout_ref.actor.use_dynamic_bsz"] is True
    assert keys["actor_rollout_ref.actor.ppo_max_token_len_per_gpu"] % report_of(OVER).setup.seq_len == 0


def test_dynamic_batch_size_cuts_the_token_budget_not_the_micro_batch(capsys):
    # use_dynamic_bsz: verl packs by ppo_max_token_len_per_gpu (24000 here), the tokens the update holds
    # (dp_actor.py:551-553); micro-batch 16 -> 8 -> 4 quarters it
    code, out, _ = run_cli(capsys, f"{VERL}/user_issue855_grpo_14b_dynamic_bsz_cut.sh", "--gpu", "A100-40GB",
                           "--plain")
    assert code == 1
    assert "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=6000" in out.split()
    assert "ppo_micro_batch_size_per_gpu=" not in out
    assert "ppo_mini_batch_size stays" in out


def test_freeing_the_cache_engine_lowers_the_estimate_it_models():
    report = report_of(OVER)
    awake, asleep = report.setup, with_values(report.setup, {"rollout_sleeps": True})
    assert value_of(awake, "rollout_sleeps") is False and value_of(asleep, "rollout_sleeps") is True
    before, after = (estimate(s, report.shape, report.hardware).peak_gib for s in (awake, asleep))
    assert after < before


def test_a_response_cut_keeps_the_prompt():
    setup = report_of(OVER).setup
    prompt = setup.extras["verl_prompt_length"]
    cut = with_values(setup, {"response_length": 512})
    assert cut.seq_len == prompt + 512 and value_of(cut, "response_length") == 512


def test_verl_facts_are_absent_for_other_frameworks(demo):
    report = demo[0]
    assert value_of(report.setup, "rollout_sleeps") is None
    assert value_of(report.setup, "response_length") is None


def test_an_unknown_framework_in_a_rule_file_names_its_line(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("schema_version: 1\nrules:\n  - {id: OOM001, order: 5}\n  - id: X1\n    slug: x\n"
                    "    title: {en: X, zh: 叉}\n    why: {en: X., zh: 叉。}\n    category: runtime\n"
                    "    costs: []\n    applicability: safe\n    frameworks: [nemo]\n    actions: [{enable: grad_ckpt}]\n")
    with pytest.raises(InputError) as err:
        load_rules([str(path)])
    assert "r.yaml:11" in str(err.value) and "frameworks" in str(err.value)


def test_more_gpus_for_verl_means_its_own_fsdp_not_zero3(capsys):
    code, out, _ = run_cli(capsys, f"{VERL}/user_issue249_ppo_72b_model_var_cut.sh", "--gpu", "H100", "--plain")
    assert code == 3
    assert "verl's FSDP across" in " ".join(out.split()) and "ZeRO" not in out


def test_explain_says_which_frameworks_a_rung_is_for(capsys):
    assert "only for: verl" in run_cli(capsys, "--explain", "OOM026")[1]
    assert "not for: verl" in run_cli(capsys, "--explain", "switch-to-qlora")[1]


def test_a_rollout_share_that_leaves_no_headroom_is_lowered_until_the_rollout_fits(capsys):
    # vLLM at gpu_memory_utilization 0.9 takes 90% of the card while it generates, over the 10% headroom
    args = (f"{VERL}/head_grpo_qwen3_4b_npu_dynamic_bsz.sh", "--gpu", "H100")
    report = open_session(replace(options_of(args), model="Qwen/Qwen3-4B"), "en").report
    assert not report.estimate.fits and report.estimate.peak_moment == "rollout"
    assert [s.rule for s in report.plan.steps] == ["OOM028"] and report.plan.fits
    fraction = value_of(report.plan.steps[-1].setup, "rollout_gpu_fraction")
    assert 0.3 <= fraction < 0.9
    code, out, _ = run_cli(capsys, *args, "--model", "Qwen/Qwen3-4B", "--plain")
    assert code == 1 and f"actor_rollout_ref.rollout.gpu_memory_utilization={fraction}" in out.split()


def test_the_sft_trainer_gets_its_own_keys(capsys):
    code, out, _ = run_cli(capsys, f"{VERL}/head_sft_qwen_05_peft.sh", "--gpu", "6GiB", "--plain")
    assert code == 1
    flat = " ".join(out.split())
    assert "data.micro_batch_size_per_gpu=1" in out.split() and "(data.train_batch_size stays" in flat
    assert "ppo_mini_batch_size" not in out


YAML = str(Path(__file__).parent / "data" / "configs" / "verl_grpo_3b_lora.yaml")


def test_a_verl_yaml_config_is_patched_on_verl_keys_not_shown_as_overrides(capsys):
    code, out, _ = run_cli(capsys, YAML, "--gpu", "A100-40GB", "--plain")
    assert code == 1
    assert "+    use_dynamic_bsz: true" in out.splitlines()
    assert any(line.startswith("+    ppo_max_token_len_per_gpu: ") for line in out.splitlines())
    assert "A verl script is not patched" not in out


def test_the_patch_writer_sets_verl_knobs_and_inserts_the_absent_ones():
    import yaml

    from oomdoctor.configs import edits_for, load_config
    from oomdoctor.facts import Change
    from oomdoctor.patch.build import build_patch

    setup = load_config(YAML)
    changes = [Change("rollout_sleeps", True, False), Change("rollout_gpu_fraction", 0.6, 0.54),
               Change("response_length", 1024, 512), Change("critic_offload_optimizer", False, True)]
    new = yaml.safe_load(build_patch(edits_for(setup, changes)).files[0].new_text)
    rollout = new["actor_rollout_ref"]["rollout"]
    assert rollout["free_cache_engine"] is False and rollout["gpu_memory_utilization"] == 0.54
    assert new["data"]["max_response_length"] == 512 and new["data"]["max_prompt_length"] == 512
    assert new["critic"]["model"]["fsdp_config"]["optimizer_offload"] is True


def test_json_names_the_token_budget_of_a_dynamic_batch_run(capsys):
    code, out, _ = run_cli(capsys, f"{VERL}/user_issue855_grpo_14b_dynamic_bsz_cut.sh", "--gpu", "A100-40GB", "--json")
    assert code == 1
    change = json.loads(out)["plan"]["steps"][0]["changes"][0]
    assert change["key"] == "micro_batch" and change["to"] == 8
    assert change["config_key"] == "actor_rollout_ref.actor.ppo_max_token_len_per_gpu" and change["config_value"] == 12000
