"""The simulation (`s`) and advisor (`m`) screens and the Chinese app, driven with Pilot."""
from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import ROOT, screen_text

from oomdoctor.facts import ModelShape
from oomdoctor.pipeline import Options, build_report, plan_report
from oomdoctor.session import session_for
from oomdoctor.tui.app import OomDoctorApp
from oomdoctor.tui.dialogs import HelpScreen, PathDialog
from oomdoctor.tui.screens import AdviseScreen, SimulateScreen, matrix_cell
from oomdoctor.tui.widgets import StepList

# Pilot runs of the app (seconds each): the slow tier, run by the full CI session, not per CPython.
pytestmark = pytest.mark.slow

SIZE = (80, 24)


def _tiny_report():
    """The advisor's LoRA config on an A100 40GB, with a model small enough to trace in seconds."""
    opts = Options(files=(str(ROOT / "tests" / "data" / "advise" / "lora_a100_40g.yaml"),), gpu="A100-40GB")
    report = build_report(opts)
    tiny = ModelShape(name="tiny-llama", hidden_size=256, intermediate_size=688, num_layers=2, num_heads=4,
                      num_kv_heads=4, vocab_size=32000)
    return plan_report(replace(report, shape=tiny), opts), opts


async def _until(pilot, done, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        await pilot.pause(0.1)
    await pilot.pause()


# ---------------------------------------------------------------- simulate

async def test_simulate_without_torch_says_what_to_install(demo, monkeypatch):
    from oomdoctor import simulate

    report, opts, _ = demo
    message = "--simulate needs torch, transformers and peft (torch missing): pip install 'oomdoctor[simulate]'"
    monkeypatch.setattr(simulate, "available", lambda: message)
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        assert isinstance(app.screen, SimulateScreen)
        await _until(pilot, lambda: app.screen.finished, 10)
        text = screen_text(app)
        assert "Cannot simulate here" in text and "pip install 'oomdoctor[simulate]'" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SimulateScreen)


async def test_simulate_says_what_to_install_in_the_apps_language(demo, monkeypatch):
    from oomdoctor import simulate
    from oomdoctor.facts import msg

    report, opts, _ = demo
    missing = msg("simulate.missing", missing=("torch", "peft"), hint=simulate.INSTALL_HINT)
    monkeypatch.setattr(simulate, "available", lambda: missing)
    app = OomDoctorApp(session_for(report, opts, "zh"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("s")
        await _until(pilot, lambda: app.screen.finished, 10)
        text = " ".join(screen_text(app).split())
        assert "--simulate 需要 torch、transformers 和 peft（缺少 torch、peft）" in text


async def test_simulate_traces_the_configured_run_and_the_selected_steps(demo, monkeypatch):
    from oomdoctor import simulate

    report, opts, _ = demo
    monkeypatch.setattr(simulate, "available", lambda: "not here")
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        targets = app.screen.targets
        assert [setup for _, setup, _ in targets] == [report.setup, report.plan.final_setup(report.setup)]
        assert targets[1][2].peak_gib == pytest.approx(report.plan.final_estimate(report.estimate).peak_gib)


async def test_simulate_shows_the_traced_peak_of_a_tiny_model():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    report, opts = _tiny_report()
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("s")
        screen = app.screen
        await _until(pilot, lambda: screen.finished, 60)
        assert screen.problem is None, screen.problem
        assert len(screen.results) == 1
        label, result, est = screen.results[0]
        assert est is report.estimate
        assert result.params_total < 50_000_000           # the tiny shape ran, not the 7B from the config
        text = " ".join(screen_text(app).split())      # the heading wraps at 100 columns
        assert f"traced peak {result.reported_peak_bytes / 2**30:.2f} GiB ({result.peak_phase})" in text
        assert f"{report.estimate.allocated_gib:.2f} GiB allocated" in text


async def test_escape_stops_a_running_simulation_and_q_still_quits(demo, monkeypatch):
    from oomdoctor import simulate

    report, opts, _ = demo
    stopped = threading.Event()

    def slow_trace(setup, shape, *, progress=None, **kw):
        try:
            for i in range(600):                   # a minute of work, reporting progress as the tracer does
                progress(f"phase {i}")
                time.sleep(0.1)
        except BaseException:
            stopped.set()
            raise
        raise AssertionError("the trace was never stopped")

    monkeypatch.setattr(simulate, "available", lambda: None)
    monkeypatch.setattr(simulate, "trace_step", slow_trace)
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        screen = app.screen
        await _until(pilot, lambda: len(screen.progress) >= 3, 10)
        assert "phase" in screen.progress[-1] and not screen.finished
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SimulateScreen)
        assert stopped.wait(5), "the trace kept running after escape"
        screen.thread.join(5)
        assert not screen.thread.is_alive()
        await pilot.press("s")                     # a second run, left running: quitting must not wait for it
        await _until(pilot, lambda: len(app.screen.progress) >= 2, 10)
        started = time.monotonic()
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
        assert time.monotonic() - started < 2


# ---------------------------------------------------------------- advise

async def test_matrix_key_shows_the_fit_matrix_and_the_users_card(demo):
    from oomdoctor import advise
    from oomdoctor.advise.cards import spec_of

    report, opts, _ = demo
    matrix = advise.build(report)
    mine = spec_of(report.hardware.gpu).name
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        assert isinstance(app.screen, AdviseScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = screen_text(app)
        assert "Fit matrix" in text
        row = next(line for line in text.splitlines() if line.strip().startswith(f"▶ {mine}"))
        from oomdoctor.advise.render import _plan_letters

        letters = _plan_letters(matrix)
        for n in matrix.counts:
            cell = matrix.cell(mine, n)
            words = matrix_cell(cell.fits, cell.fits_as_configured, letters.get(tuple(s.slug for s in cell.steps), "?"),
                                cell.final_peak_gib if cell.fits else cell.peak_gib)
            assert words in row
        assert app.matrix is not None
        await pilot.press("end")                   # the strategies sit below the fold at 80×24, above the assumptions
        await pilot.pause()
        for _ in range(6):
            if "speed" in screen_text(app):
                break
            await pilot.press("pageup")
            await pilot.pause()
        assert "speed" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, AdviseScreen)
        await pilot.press("m")                     # built once: shown at once the second time
        await pilot.pause()
        assert app.screen.matrix is app.matrix


async def test_the_matrix_screen_prices_the_run_with_prices_and_tokens_from_the_command_line(demo):
    from dataclasses import replace

    from oomdoctor import advise

    report, opts, _ = demo
    prices = str(Path(__file__).parent / "data" / "advise" / "prices.yaml")
    opts = replace(opts, prices=prices, tokens=2e8)
    expected = advise.build(report, prices=prices, tokens=2e8)
    assert expected.priced and expected.cheapest is not None
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen.matrix.priced
        text = screen_text(app)
        assert "cost" in text and f"{expected.cheapest.cost:,.0f} {expected.currency}*" in text


async def test_plan_keys_are_off_while_the_matrix_is_shown(demo):
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await app.workers.wait_for_complete()
        await pilot.press("e", "s")
        await pilot.pause()
        assert isinstance(app.screen, AdviseScreen)
        assert not any(isinstance(s, (PathDialog, SimulateScreen)) for s in app.screen_stack)
        footer = screen_text(app).splitlines()[-1]
        assert "export" not in footer and "quit" in footer


async def test_a_crash_only_report_says_the_matrix_needs_a_config():
    from oomdoctor.facts import CrashEvent, CrashReport, Report

    crash = CrashReport(file="run.log", events=(CrashEvent(kind="cuda_oom", line=9, capacity_gib=23.6),))
    app = OomDoctorApp(session_for(Report(crash=crash), Options()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "needs a training config" in screen_text(app)


# ---------------------------------------------------------------- keys and language

async def test_help_and_footer_list_simulate_and_matrix(demo):
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        # The footer paints after the first frame; on a loaded machine that can take a few pauses.
        await _until(pilot, lambda: "q quit" in screen_text(app).splitlines()[-1], 5.0)
        footer = screen_text(app).splitlines()[-1]
        assert "s simulate" in footer and "m matrix" in footer and "q quit" in footer
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = dict(app.screen.keys)
        assert "fake tensors" in keys["s"] and "fit matrix" in keys["m"]


async def test_chinese_app_shows_chinese_labels_and_rule_texts(demo):
    from oomdoctor.planner import load_rules

    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts, "zh"))
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "q 退出" in screen_text(app).splitlines()[-1], 5.0)     # the footer's first paint
        text = screen_text(app)
        assert "1 诊断" in text and "出了什么问题" in text and "q 退出" in text
        await pilot.press("3")
        await pilot.pause()
        rule = load_rules().get(report.plan.steps[0].rule)
        steps = app.query_one(StepList)
        steps.highlighted = [r.rule for r in steps.rows].index(rule.id)
        await pilot.pause()
        from oomdoctor.words import say

        assert say(steps.rows[steps.highlighted].title, "zh") == rule.text("title", "zh")
        text = screen_text(app)
        assert rule.text("title", "zh") in text
        assert rule.text("why", "zh")[:10] in text
        await pilot.press("question_mark")
        assert dict(app.screen.keys)["m"].startswith("用哪种卡")


async def test_chinese_matrix_screen(demo):
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts, "zh"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = screen_text(app)
        assert "适配矩阵" in text and "esc 返回" in text and "1 张" in text


async def test_english_app_after_a_chinese_one_keeps_english_keys(demo):
    report, opts, _ = demo
    async with OomDoctorApp(session_for(report, opts, "zh")).run_test(size=SIZE):
        pass
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "quit" in screen_text(app).splitlines()[-1] or "退出" in screen_text(app), 5.0)
        assert "q quit" in screen_text(app).splitlines()[-1]
