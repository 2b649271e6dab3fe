"""Behaviour of the terminal app, driven with Pilot at 80×24 on copies of the demo inputs."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import screen_text
from helpers import settle as _settle

from oomdoctor.facts import Estimate, Hardware, Plan, Report, TrainingSetup
from oomdoctor.pipeline import Options, select_steps
from oomdoctor.session import session_for
from oomdoctor.tui.app import KEYS, OomDoctorApp
from oomdoctor.tui.dialogs import ConfirmApply, HelpScreen, PathDialog
from oomdoctor.tui.widgets import MemoryBars, StepList

# Pilot runs of the app (seconds each): the slow tier, run by the full CI session, not per CPython.
pytestmark = pytest.mark.slow

SIZE = (80, 24)


async def test_first_screen_says_what_died_in_plain_words(demo):
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "asked for" in text and "was free" in text
        assert "backward" in text or "forward" in text or "optimizer" in text


def _row_index(app, rule):
    return [r.rule for r in app.query_one(StepList).rows].index(rule)


async def test_unticking_a_step_plans_again_without_it_and_ticking_brings_it_back(demo):
    from dataclasses import replace

    report, opts, _ = demo
    session = session_for(report, opts)
    app = OomDoctorApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        before_peak = app.selection.estimate.peak_gib
        before_patch = app.selection.patch
        assert before_patch == report.patch
        first = report.plan.steps[0].rule
        app.query_one(StepList).highlighted = _row_index(app, first)
        await pilot.press("space")          # the step leaves the plan: the ladder is walked without it
        await _settle(pilot)
        assert app.opts.skip == (first,)
        expected = session.replan(replace(opts, skip=(first,)))
        assert app.report.plan == expected.plan
        assert first not in [st.rule for st in app.report.plan.steps]
        assert app.selection.patch == expected.patch
        assert app.selection.estimate.peak_gib == pytest.approx(expected.plan.final_estimate(expected.estimate).peak_gib)
        row = app.query_one(StepList).rows[_row_index(app, first)]
        assert row.state == "off"
        await pilot.press("space")          # and back: the report's own plan again
        await _settle(pilot)
        assert app.opts.skip == ()
        assert app.selection.patch == before_patch
        assert app.selection.estimate.peak_gib == pytest.approx(before_peak)


async def test_minus_switches_off_every_step_of_the_plan(demo):
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3", "minus")
        await _settle(pilot)
        taken = {st.rule for st in report.plan.steps}
        assert taken <= set(app.opts.skip)
        assert not taken & {st.rule for st in app.report.plan.steps}
        await pilot.press("plus")           # every proposed step gets its yes, every step comes back
        await _settle(pilot)
        assert not taken & set(app.opts.skip)
        assert {st.rule for st in report.plan.proposed} <= set(app.opts.accept)


async def test_export_writes_the_same_diff_as_the_cli_export(demo, capsys):
    report, opts, folder = demo
    from oomdoctor.cli import main

    main(["--plain", "train.yaml", "train.log", "--export", "cli.diff"])
    capsys.readouterr()
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        assert isinstance(app.screen, PathDialog)
        await pilot.press("enter")          # the default name, plan.diff in the current directory
        await pilot.pause()
    written = (folder / "plan.diff").read_text(encoding="utf-8")
    assert written == report.patch
    assert written == (folder / "cli.diff").read_text(encoding="utf-8")


async def _export_as(pilot, name: str) -> None:
    from textual.widgets import Input

    await pilot.press("e")
    assert isinstance(pilot.app.screen, PathDialog)
    pilot.app.screen.query_one(Input).value = name
    await pilot.press("enter")
    await pilot.pause()


async def test_export_writes_the_diff_of_the_shown_plan(demo):
    from dataclasses import replace

    report, opts, folder = demo
    # one plan: the least-cost plan is the plan, so there is nothing else to switch to
    assert report.least_cost is None and report.plan.steps
    session = session_for(report, opts)
    app = OomDoctorApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3", "l")                 # the plan, all of it ("l" finds no other plan)
        await _settle(pilot)
        assert app.plan_kind == "ladder"
        await _export_as(pilot, "cheapest.diff")
        app.query_one(StepList).highlighted = _row_index(app, report.plan.steps[0].rule)
        await pilot.press("space")                  # without its first step
        await _settle(pilot)
        await _export_as(pilot, "picked.diff")
    cheapest = select_steps(report, report.plan, range(len(report.plan.steps)), cwd=opts.cwd).patch
    assert cheapest and cheapest == report.patch
    assert (folder / "cheapest.diff").read_text(encoding="utf-8") == cheapest
    picked = session.replan(replace(opts, skip=(report.plan.steps[0].rule,))).patch
    assert (folder / "picked.diff").read_text(encoding="utf-8") == picked


async def test_escape_in_the_export_dialog_writes_nothing(demo):
    report, opts, folder = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e", "escape")
        await pilot.pause()
        assert not isinstance(app.screen, PathDialog)
    assert not (folder / "plan.diff").exists()


async def test_apply_asks_first_and_cancel_leaves_the_config_untouched(demo):
    report, opts, folder = demo
    original = (folder / "train.yaml").read_bytes()
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmApply)
        assert app.screen.diff == report.patch
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmApply)
    assert (folder / "train.yaml").read_bytes() == original
    assert not (folder / "train.yaml.orig").exists()


async def test_apply_confirmed_writes_the_config_and_keeps_an_orig(demo):
    report, opts, folder = demo
    from oomdoctor.patch import build_patch

    original = (folder / "train.yaml").read_text(encoding="utf-8")
    expected = {Path(f.path).name: f.new_text for f in build_patch(report.edits, cwd=opts.cwd).files}
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "y")
        await pilot.pause()
    assert (folder / "train.yaml").read_text(encoding="utf-8") == expected["train.yaml"]
    assert (folder / "train.yaml").read_text(encoding="utf-8") != original
    assert (folder / "train.yaml.orig").read_text(encoding="utf-8") == original


async def test_write_copies_leaves_the_originals_alone(demo):
    report, opts, folder = demo
    original = (folder / "train.yaml").read_bytes()
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("w")
        assert isinstance(app.screen, PathDialog)
        await pilot.press("enter")
        await pilot.pause()
    copies = [p for p in (folder / "oomdoctor-patched").rglob("*") if p.is_file()]
    assert sorted(p.name for p in copies) == sorted(Path(e.file).name for e in report.edits)
    copy = next(p for p in copies if p.name == "train.yaml")
    assert copy.read_bytes() != original
    assert (folder / "train.yaml").read_bytes() == original


async def test_l_keeps_the_one_plan_and_says_it_is_the_least_cost_one(demo):
    report, opts, _ = demo
    assert report.least_cost is None
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3", "l")
        await _settle(pilot)
        assert app.plan_kind == "ladder"
        assert app.query_one(StepList).steps == report.plan.steps
        assert app.selection.patch == report.patch
        assert any("already the least-cost plan" in str(n.message) for n in app._notifications)


async def test_help_lists_every_key(demo):
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = [key for key, _ in app.screen.keys]
        for key in ("space", "l", "e", "w", "a", "s", "m", "g", "?", "q", "1-4"):
            assert key in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


def test_every_footer_binding_has_a_help_line():
    for key, binding_key, action, label, what in KEYS:
        if label is not None:
            assert key and what, binding_key


async def test_q_quits(demo):
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        assert app.is_running
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


def test_run_returns_the_exit_code_of_the_plain_path(demo, monkeypatch):
    from oomdoctor.errors import exit_code
    from oomdoctor.tui import run

    report, opts, _ = demo
    shown = []
    monkeypatch.setattr(OomDoctorApp, "run", lambda self, *a, **k: shown.append(self))
    assert run(session_for(report, opts)) == exit_code(report) == 1     # the demo needs a plan, and one fits
    assert shown and shown[0].report is report


async def test_walkthrough_flag_opens_the_guide_first(demo):
    from oomdoctor.tui.walkthrough import WalkthroughScreen

    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts), walkthrough=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WalkthroughScreen)


def _fitting_report() -> Report:
    from oomdoctor.memory import estimate
    from oomdoctor.models import resolve_model

    setup = TrainingSetup(model="meta-llama/Llama-2-7b-hf", method="lora", micro_batch=1, seq_len=512)
    shape = resolve_model(setup.model)
    hw = Hardware(gpu="A100-SXM4-80GB", gpu_gib=80.0)
    est = estimate(setup, shape, hw)
    assert est.fits
    return Report(setup=setup, shape=shape, hardware=hw, estimate=est, plan=Plan(fits=True))


async def test_a_run_that_fits_says_so_and_has_nothing_to_export():
    app = OomDoctorApp(session_for(_fitting_report(), Options()))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await pilot.pause()
        assert "fits as configured" in screen_text(app)
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, PathDialog)


async def test_crash_only_report_renders_without_an_estimate(tmp_path):
    from oomdoctor.facts import CrashEvent, CrashReport

    crash = CrashReport(file="run.log", events=(CrashEvent(kind="cuda_oom", line=9, tried_gib=1.0, free_gib=0.2,
                                                           capacity_gib=23.6),))
    app = OomDoctorApp(session_for(Report(crash=crash, warnings=("no training config given",)), Options()))
    async with app.run_test(size=SIZE) as pilot:
        text = screen_text(app)
        assert "asked for 1.0 GiB more" in text and "no training config given" in text
        await pilot.press("2")
        await pilot.pause()
        assert "No estimate" in screen_text(app)


async def test_the_bars_read_without_colour(demo, monkeypatch):
    report, opts, _ = demo
    monkeypatch.setenv("NO_COLOR", "1")
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        plain = app.query_one("#memory-bars", MemoryBars).render().plain
        assert "┃" in plain and "█" in plain and "weights" in plain
        assert app.no_color


async def test_g_opens_the_walkthrough(demo):
    from oomdoctor.tui.walkthrough import WalkthroughScreen

    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await pilot.pause()
        assert isinstance(app.screen, WalkthroughScreen)


async def test_quick_tab_keys_settle_on_the_last_tab(demo):
    from textual.widgets import TabbedContent

    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")                  # before the first tab's focus has landed
        tabs = app.query_one(TabbedContent)
        seen = set()
        for _ in range(25):                     # a stale focus used to switch the tab back, again and again
            await pilot.pause(0.02)
            seen.add((tabs.active, app.focused))
        assert len(seen) == 1
        active, focused = seen.pop()
        assert active == "memory" and focused in tabs.query_one("#memory").query("*")


def test_a_step_that_gives_memory_back_to_the_host_says_it_uses_more_gpu_memory():
    from rich.console import Console

    from oomdoctor.facts import Step, Text, TrainingSetup
    from oomdoctor.tui.widgets import step_detail

    est = Estimate(components={}, allocated_gib=20.0, peak_gib=21.0, capacity_gib=79.0)
    step = Step(rule="OOM021", slug="host-ram-optimizer-back-on-gpu", title=Text("Keep the optimizer states on the GPU"),
                changes=(), setup=TrainingSetup(), estimate=est, saved_gib=-7.5, costs=(), applicability="safe")
    for lang, words in (("en", "uses 7.5 GiB more on the GPU"), ("zh", "GPU 上多用 7.5 GiB")):
        console = Console(width=120, record=True, file=open(os.devnull, "w"))
        console.print(step_detail(step, 0, lang))
        text = console.export_text()
        assert words in text and "-7.5" not in text


def test_footer_words_come_from_bindings_declared_per_language():
    # Textual reads BINDINGS when a class is made: each language gets its own subclass, built once, and no
    # module of the app reaches into Textual's private per-instance bindings.
    import ast

    from oomdoctor.tui.dialogs import PathDialog
    from oomdoctor.words import say

    zh, en = PathDialog("t", "x", lang="zh"), PathDialog("t", "x")
    assert isinstance(zh, PathDialog) and type(zh).__name__ == "PathDialog"
    described = {b.key: b.description for b in type(zh).BINDINGS}
    assert described["escape"] == say("app.key_cancel", "zh") != say("app.key_cancel", "en")
    assert type(PathDialog("u", "y", lang="zh")) is type(zh) is not type(en)
    private = []
    for path in sorted((Path(__file__).parent.parent / "oomdoctor" / "tui").glob("*.py")):
        private += [f"{path.name}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, ast.Attribute) and node.attr == "_bindings"]
    assert private == []


async def test_one_change_of_state_redraws_what_depends_on_it(demo):
    # The app draws from reactives: a worker starting shows "re-estimating…" in the verdict, and a new
    # selection (here: none) redraws the patch tab, with no render call after either change.
    report, opts, _ = demo
    app = OomDoctorApp(session_for(report, opts))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await _settle(pilot)
        assert "re-estimating" not in screen_text(app)
        app.estimating = True
        await _settle(pilot)
        assert "re-estimating" in screen_text(app)
        app.estimating = False
        await _settle(pilot)
        assert "re-estimating" not in screen_text(app)
        await pilot.press("4")
        await _settle(pilot)
        assert "+deepspeed" in screen_text(app)
        app.selection = None
        await _settle(pilot)
        assert "+deepspeed" not in screen_text(app)
