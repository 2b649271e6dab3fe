"""The panel of real OOM threads (tests/data/plans/): no crash is answered "fits as is", and the plan holds the
fix that worked in the thread, or one no costlier that fits, in at least 85% of them (benchmarks/panel.py)."""
from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import panel

CASES = panel.load_panel()
RESULTS: dict[str, panel.Result] = {}
# Every test reads RESULTS, one CLI run per case: under xdist one worker runs them all, so each case runs once.
pytestmark = pytest.mark.xdist_group("plan_panel")


def _run_in_process(case: panel.Case) -> panel.Result:
    """What benchmarks/panel.py's run_case gives (the same arguments, folder and COLUMNS), through cli.main in this
    process: the panel checks the report, not the process (the process boundary has tests of its own)."""
    from oomdoctor.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        mp.chdir(case.folder)
        mp.setenv("COLUMNS", "100")
        code = main(panel.case_argv(case))
    text = out.getvalue()
    return panel.judge(case, code, json.loads(text) if text.strip() else {}, err.getvalue())


def _result(case: panel.Case) -> panel.Result:
    if case.id not in RESULTS:
        RESULTS[case.id] = _run_in_process(case)
    return RESULTS[case.id]


def test_the_panel_has_cases_with_a_source_and_a_known_fix():
    assert CASES
    for case in CASES:
        assert case.source.startswith("https://github.com/"), case.id
        assert case.fix and all(k in panel.TIERS or k in panel.FINDINGS for k in case.fix), case.id
        assert any(f.endswith(".log") for f in case.files), case.id


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_crash_is_never_answered_fits_as_is(case):
    res = _result(case)
    assert res.exit != 0, f"{case.id}: exit 0 ({res.why})"
    if res.exit == 5:
        # no estimate (a model the catalog lacks): not "fits", and counted as a failure by the rate below
        return
    assert res.exit in (1, 3), f"{case.id}: exit {res.exit} ({res.why})"
    cause = res.raw.get("cause") or {}
    assert cause.get("kind") in ("config", "beyond_config"), case.id


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_plan_fits_by_its_own_reconciled_estimate_or_says_what_would(case):
    res = _result(case)
    plan = res.raw.get("plan") or {}
    if res.exit == 1 and plan.get("steps"):
        assert plan["fits"] and plan["steps"][-1]["fits"], case.id
    elif res.exit == 3:
        assert plan.get("proposed") or plan.get("advice"), case.id


def test_the_panel_keeps_every_thread_it_has_taken_in():
    # 40 threads, the number the plan panel asks for: raise this floor as threads land, never lower it
    assert len(CASES) >= 40, len(CASES)
    assert len({c.source for c in CASES}) == len(CASES)       # one case per thread


def test_a_known_gap_is_recorded_only_on_a_case_that_fails():
    # `known_gap` explains a failure; on a passing case it would be a stale note
    for case in CASES:
        if case.known_gap:
            assert not _result(case).ok, case.id


def test_every_case_records_its_first_sight():
    # the result of the code before anything was changed for the case, kept beside the after figure
    for case in CASES:
        assert case.first_sight in ("PASS", "FAIL"), case.id
        assert case.first_detail, case.id


def _known_gaps(cases: list[panel.Case]) -> list:
    """Cases with their `known_gap` as a strict expected failure: the reason is kept, and the test fails the day the
    case starts passing, so the note cannot outlive the gap."""
    return [pytest.param(c, id=c.id, marks=pytest.mark.xfail(strict=True, reason=c.known_gap)) if c.known_gap
            else pytest.param(c, id=c.id) for c in cases]


@pytest.mark.parametrize("case", _known_gaps([c for c in CASES if "beyond_config" in c.fix]))
def test_a_thread_whose_cause_was_not_the_config_is_answered_with_the_floor_it_read(case):
    cause = _result(case).raw.get("cause") or {}
    assert cause.get("kind") == "beyond_config", case.id
    floor = cause.get("floor") or {}
    assert floor.get("observed_gib", 0) > floor.get("estimate_gib", 0) > 0, case.id


def test_the_panel_rate_is_at_least_85_percent():
    results = [_result(c) for c in CASES]
    s = panel.summary(results)
    failed = [f"{r.case.id}: {r.why}" for r in results if not r.ok]
    assert s["rate"] >= 0.85, failed


def test_the_scorer_reads_a_plan_by_what_its_steps_change():
    step = {"changes": [{"key": "zero_stage", "from": 2, "to": 3}, {"key": "offload_optimizer", "from": False,
                                                                      "to": True}], "env": {}}
    assert panel.step_kinds(step) == {"offload"}
    assert panel.step_kinds({"changes": [{"key": "micro_batch", "from": 4, "to": 1}], "env": {}}) == {"batch"}
    assert panel.step_kinds({"changes": [], "env": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}}) \
        == {"fragmentation"}
    case = panel.Case(id="x", folder=Path("."), source="https://github.com/x/y/issues/1", gpu=None, gpus=None,
                      fix=("zero3",))
    offload = {"plan": {"fits": True, "steps": [step]}}
    assert not panel.judge(case, 1, offload).ok                       # offload costs more than ZeRO-3
    assert panel.judge(case, 1, {"plan": {"fits": True, "steps": [
        {"changes": [{"key": "micro_batch", "from": 4, "to": 1}], "env": {}}]}}).ok   # no costlier
    assert not panel.judge(case, 0, {"plan": {"fits": True, "steps": []}}).ok   # exit 0 on a crash never passes
    assert not panel.judge(case, 1, {"plan": {"fits": True, "steps": []}}).ok   # nor exit 1 with no step
    s = panel.summary([panel.judge(case, 0, {}), panel.judge(
        panel.Case(id="z", folder=Path("."), source="s", gpu=None, gpus=None, fix=("zero3",), first_sight="PASS",
                   first_detail="d"), 1, {"plan": {"fits": True, "steps": [step]}})])
    assert s["exit0"] == ["x"] and s["passed"] == 0
    assert s["first_sight"] == {"cases": 1, "passed": 1, "rate": 1.0}
    finding = panel.Case(id="y", folder=Path("."), source="s", gpu=None, gpus=None, fix=("beyond_config",))
    assert panel.judge(finding, 1, {"cause": {"kind": "beyond_config"}, "plan": {}}).ok
    assert not panel.judge(finding, 1, {"cause": {"kind": "config"}, "plan": {}}).ok
