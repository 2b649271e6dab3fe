"""--verify: the plan's final setup traced on fake tensors, traced versus estimated (needs torch, transformers, peft)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "configs"
MODEL = ROOT / "tests" / "data" / "models" / "sim-llama-2l"


def _needs_simulate():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")


def _verify_json(capsys, config: str, *extra: str):
    from oomdoctor.cli import main

    code = main([str(CONFIGS / config), "--model", str(MODEL), *extra, "--verify", "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out)["verify"], err


@pytest.mark.simulate
def test_verify_traces_the_plans_final_setup_and_agrees_with_the_estimate_within_five_percent(capsys):
    _needs_simulate()
    code, doc, err = _verify_json(capsys, "lf_verify_full.yaml", "--gpu", "6GiB")
    assert code == 1                                    # a plan was proposed, as without --verify
    assert doc["rules"], "the config does not fit 6 GiB: the plan has steps"
    # what was traced is the plan's final setup, not the configured batch of 8
    assert doc["setup"]["micro_batch"] == doc["traced"]["micro_batch"] < 8
    assert doc["traced_allocated_gib"] == doc["traced"]["peak_gib"]
    assert abs(doc["relative"]) <= 0.05 and doc["agrees"] is True
    assert doc["relative"] == pytest.approx(
        (doc["estimated_allocated_gib"] - doc["traced_allocated_gib"]) / doc["traced_allocated_gib"], abs=1e-3)
    assert doc["fused_loss"]["state"] == "none"
    n = len(doc["rules"])
    assert f"tracing the plan's final setup ({n} step{'s' if n > 1 else ''} applied)" in err
    assert "step 2/2: backward" in err


@pytest.mark.simulate
def test_verify_in_chinese_prints_the_verdict_and_progress_in_chinese(capsys):
    _needs_simulate()
    from oomdoctor.cli import main

    main([str(CONFIGS / "lf_sim_lora.yaml"), "--model", str(MODEL), "--gpu", "24GiB", "--verify", "--lang", "zh"])
    out, err = capsys.readouterr()
    assert out.startswith("在假张量上验证当前配置（方案没有改动任何设置）")
    assert "两者相差在 5% 以内" in out and "正在追踪方案的最终配置" in err


@pytest.fixture(scope="module")
def liger_missing():
    """--verify --json of lf_verify_liger.yaml with liger-kernel not installed, traced once for the two tests
    that read it (the same command, the same trace)."""
    import contextlib
    import io

    _needs_simulate()
    from oomdoctor.cli import main
    from oomdoctor.simulate import verify

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        patch.setattr(verify, "liger_version", lambda: None)
        main([str(CONFIGS / "lf_verify_liger.yaml"), "--model", str(MODEL), "--gpu", "24GiB", "--verify", "--json"])
    return json.loads(out.getvalue())["verify"]


@pytest.mark.simulate
def test_verify_says_plainly_that_the_fused_loss_is_not_traced_without_liger(liger_missing):
    doc = liger_missing
    assert doc["setup"]["fused_ce"] is True
    assert doc["fused_loss"]["state"] == "not_installed" and doc["fused_loss"]["kernel"] is None
    assert doc["fused_loss"]["text"].startswith("fused loss NOT traced: ")
    # the model's own loss ran (full logits), and the estimate it is compared with is for that loss
    assert doc["traced"]["components"]["logits"] > 0.1
    assert doc["agrees"] is True


@pytest.mark.simulate
def test_verify_traces_liger_fused_loss_when_it_is_installed(capsys, monkeypatch, liger_missing):
    _needs_simulate()
    from oomdoctor.simulate import verify

    monkeypatch.setattr(verify, "liger_version", lambda: "0.6.2")
    _, fused, _ = _verify_json(capsys, "lf_verify_liger.yaml", "--gpu", "24GiB")
    plain = liger_missing                               # the same config traced with the model's own loss
    assert fused["fused_loss"]["state"] == "traced" and fused["fused_loss"]["kernel"] == "liger-kernel 0.6.2"
    assert any("Liger's fused linear cross-entropy" in n for n in fused["traced"]["notes"])
    # one chunk of logits at a time: far below the full logits of the model's own loss
    assert fused["traced"]["components"]["logits"] < plain["traced"]["components"]["logits"] / 10
    assert fused["traced_allocated_gib"] < plain["traced_allocated_gib"] / 3
    assert abs(fused["relative"]) <= 0.08, fused["relative"]


@pytest.mark.simulate
def test_a_trace_past_its_time_limit_stops_with_a_one_line_error():
    _needs_simulate()
    from oomdoctor.facts import ModelShape, TrainingSetup
    from oomdoctor.simulate import SimulateTimeout, trace_step
    from oomdoctor.words import say

    shape = ModelShape(name="s", model_type="llama", hidden_size=256, intermediate_size=704, num_layers=2,
                       num_heads=4, num_kv_heads=2, vocab_size=32000)
    said = []
    with pytest.raises(SimulateTimeout) as caught:
        trace_step(TrainingSetup(method="full", micro_batch=2, seq_len=256), shape, time_limit_s=1e-3,
                   progress=said.append)
    assert say(caught.value.message) == ("the trace was stopped at its time limit of 0 s "
                                         "(raise it with --verify-seconds)")
    assert caught.value.exit_code == 2


def test_verify_without_torch_is_one_line_and_exit_two():
    code = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None
        from oomdoctor.cli import main
        sys.exit(main([{str(CONFIGS / 'lf_sim_lora.yaml')!r}, "--model", {str(MODEL)!r}, "--gpu", "24GiB",
                       "--verify"]))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "LANG": "C"})
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("oomdoctor: --verify needs torch, transformers and peft (torch")
    assert "run it where the training runs" in lines[0]


@pytest.mark.simulate
def test_verify_agrees_with_the_estimate_within_five_percent_on_traced_grid_cases():
    """--verify's comparison on configurations of benchmarks/grid.py (the same draw tests/test_grid.py checks),
    each given as the final setup of a report's plan."""
    _needs_simulate()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import grid

    from oomdoctor.facts import Plan, Report
    from oomdoctor.simulate.verify import verify

    rows = []
    for case in grid.cases(40, grid.CI_SEED)[:4]:
        report = Report(setup=case.setup, shape=case.shape, hardware=grid.HW, plan=Plan())
        v = verify(report, time_limit_s=300)
        assert v.setup == case.setup and v.fused == "none"
        row = grid.Row(case, v.traced_bytes, v.estimated_bytes, v.trace.peak_phase, v.estimate.peak_moment, 0, 0)
        assert v.agrees == (row.score <= grid.BOUND_P95)
        rows.append((case.name, v.gap, v.agrees))
    assert all(agrees for _, _, agrees in rows), rows
