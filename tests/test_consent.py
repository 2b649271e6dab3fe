"""Consent means consent: a step that changes the experiment is only proposed unless the user says yes
(`--accept`), on every surface that writes or shows a patch; a plan keeps no step it fits without."""
from __future__ import annotations

import json
import shutil

import pytest
from helpers import DATA, run_cli

LONG = DATA / "guide" / "qwen1_5b_long_a100.yaml"            # with a yes the ladder cuts cutoff_len
QWEN14B = (DATA / "guide" / "qwen14b_lora_4090.log", DATA / "guide" / "qwen14b_lora_4090.yaml")


def _edited(diff: str) -> list[str]:
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


@pytest.fixture
def long_cfg(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "train.yaml"
    shutil.copy(LONG, cfg)
    return cfg


def _cut_to(lines: list[str]) -> int:
    """The new cutoff_len of a diff's two cutoff_len lines (from 16384)."""
    assert lines[0] == "-cutoff_len: 16384" and lines[1].startswith("+cutoff_len: "), lines
    return int(lines[1].split(": ")[1])


@pytest.mark.parametrize("accept", [None, "quality", "OOM003", "cut-cutoff-len", "OOM003,OOM004"])
def test_export_holds_a_consent_step_only_with_the_flag(capsys, long_cfg, accept):
    # without the Liger kernel nothing that keeps the experiment fits, so a yes lets the cut in
    argv = [str(long_cfg), "--gpu", "A100-40GB", "--plain", "--export", "plan.diff", "--skip", "OOM010"]
    if accept:
        argv += ["--accept", accept]
    code, _, _ = run_cli(capsys, *argv)
    assert code == 1 if accept else code == 3
    cut = [ln for ln in _edited((long_cfg.parent / "plan.diff").read_text(encoding="utf-8")) if "cutoff_len" in ln]
    if accept:
        # the longest length that fits, a multiple of 256, not the ladder's floor of 512
        new = _cut_to(cut)
        assert 512 < new < 16384 and new % 256 == 0
    else:
        assert cut == []


@pytest.mark.parametrize("accept", ["quality", "OOM003"])
def test_a_yes_is_permission_not_preference(capsys, long_cfg, accept):
    # the Liger kernel fits without changing the experiment: the yes does not bring the cut in
    code, _, _ = run_cli(capsys, str(long_cfg), "--gpu", "A100-40GB", "--plain", "--export", "plan.diff",
                         "--accept", accept)
    edited = _edited((long_cfg.parent / "plan.diff").read_text(encoding="utf-8"))
    assert code == 1 and not [ln for ln in edited if "cutoff_len" in ln] and "+enable_liger_kernel: true" in edited


def test_apply_holds_a_consent_step_only_with_the_flag(capsys, long_cfg):
    run_cli(capsys, str(long_cfg), "--gpu", "A100-40GB", "--plain", "--apply", "--yes", "--skip", "OOM010")
    assert "cutoff_len: 16384" in long_cfg.read_text(encoding="utf-8")
    shutil.copy(LONG, long_cfg)
    run_cli(capsys, str(long_cfg), "--gpu", "A100-40GB", "--plain", "--apply", "--yes", "--accept", "quality",
            "--skip", "OOM010")
    assert "cutoff_len: 16384" not in long_cfg.read_text(encoding="utf-8")
    assert "cutoff_len: " in long_cfg.read_text(encoding="utf-8")


def test_json_and_plain_show_the_proposed_step_with_what_it_would_save(capsys, long_cfg):
    code, out, _ = run_cli(capsys, str(long_cfg), "--gpu", "A100-40GB", "--json")
    plan = json.loads(out)["plan"]
    proposed = {st["rule"]: st for st in plan["proposed"]}
    assert proposed["OOM003"]["saved_gib"] > 1 and proposed["OOM003"]["applicability"] == "needs-consent"
    assert all(st["applicability"] == "safe" for st in plan["steps"])
    assert "cutoff_len" not in " ".join(_edited(json.loads(out)["patch"]))
    states = {r["rule"]: r["state"] for r in plan["rungs"]}
    assert states["OOM003"] == "proposed" and states["OOM010"] == "applied"
    code, out, _ = run_cli(capsys, str(long_cfg), "--gpu", "A100-40GB", "--plain")
    flat = " ".join(out.split())
    assert "OOM003 proposed: Cut the sequence length to 512 tokens would save" in flat and "--accept OOM003" in flat
    assert "pip install liger-kernel" in flat


def test_the_report_lists_every_rung_in_ladder_order_with_its_state(capsys, long_cfg):
    from oomdoctor.planner import load_rules

    code, out, _ = run_cli(capsys, str(long_cfg), "--gpu", "A100-40GB", "--plain")
    section = out[out.index("Every rung, in ladder order"):]
    ids = [r.id for r in load_rules().for_framework("llamafactory")]     # the verl rungs are not on its ladder
    import re

    heads = [ln.strip() for ln in section.splitlines()[1:] if ln.startswith("  OOM")]
    mentioned = []
    for head in heads:
        names = re.match(r"(OOM\d+(?:–OOM\d+)?(?:, OOM\d+)*)", head).group(1)
        for part in names.split(", "):
            first, _, last = part.partition("–")
            mentioned += ids[ids.index(first):ids.index(last) + 1] if last else [first]
    assert mentioned == ids                         # every rung once, in ladder order
    assert any(" applied:" in h for h in heads) and any(" proposed:" in h for h in heads)
    assert any(" skipped:" in h for h in heads)


def test_unknown_accept_name_is_a_one_line_error(capsys, long_cfg):
    code, out, err = run_cli(capsys, str(long_cfg), "--gpu", "A100-40GB", "--accept", "OOM999")
    assert code == 2 and "OOM999" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- minimal plans

def test_the_14b_lora_on_a_4090_has_a_default_plan_with_no_step_it_could_do_without():
    from dataclasses import replace

    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session

    session = open_session(Options(files=tuple(str(p) for p in QWEN14B)))
    report = session.report
    # the card's capacity as its OOM message prints it (the name is the crash reader's: see the report of #19)
    assert report.hardware.gpu_gib == pytest.approx(23.64) and report.setup.method == "lora"
    assert not report.estimate.fits
    plan = report.plan
    assert plan.fits and plan.steps
    assert all(st.applicability == "safe" for st in plan.steps)              # no cutoff_len cut without a yes
    assert "OOM003" in [st.rule for st in plan.proposed]
    # the old default plan cut cutoff_len, then offloaded, ending far below the card: now each step is needed
    for i in range(len(plan.steps)):
        keep = [j for j in range(len(plan.steps)) if j != i]
        without = session.select(plan, keep)
        assert not without.estimate.fits, plan.steps[i].rule
    dropped = plan.rungs_in("dropped")
    assert dropped and dropped[0].rule == "OOM001"                            # halving the batch was not needed
    # and its rung says so, with the peak the plan has without it
    assert dropped[0].reason.code == "plan.rung.dropped"
    assert dropped[0].reason.values["peak"] == pytest.approx(plan.steps[-1].estimate.peak_gib, abs=0.01)
    # with a yes to everything the plan is minimal too
    yes = session.replan(replace(session.options, accept=("quality",)))
    for i in range(len(yes.plan.steps)):
        keep = [j for j in range(len(yes.plan.steps)) if j != i]
        assert not session.select(yes.plan, keep).estimate.fits


def test_the_plain_report_says_which_steps_were_dropped(capsys):
    code, out, _ = run_cli(capsys, *(str(p) for p in QWEN14B), "--plain")
    flat = " ".join(out.split())
    assert "The plan fits without 1 step it took on the way, so it was left out: Halve the micro-batch" in flat
    assert "OOM001 dropped:" in flat
