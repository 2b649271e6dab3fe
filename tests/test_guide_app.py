"""The guide inside the real app, started the way the command line starts it (`oomdoctor --walkthrough ...` in a
terminal): its keys, its plan, export and apply from it, and the app keeping its plan.

Each test runs `oomdoctor.cli.main` with a terminal assumed, and drives the app it starts with Pilot.
"""
from __future__ import annotations

import asyncio
import hashlib
import shutil

import pytest
from helpers import DATA, DEMO_DIR, screen_text, settle

from oomdoctor import cli
from oomdoctor.tui.app import OomDoctorApp
from oomdoctor.tui.dialogs import ConfirmApply, HelpScreen, PathDialog
from oomdoctor.tui.walkthrough import LeaveGuide, WalkthroughScreen

# Pilot runs of the app (seconds each): the slow tier, run by the full CI session, not per CPython.
pytestmark = pytest.mark.slow

LONG = DATA / "guide" / "qwen1_5b_long_a100.yaml"     # with consent the ladder cuts cutoff_len; without, it need not


def drive(monkeypatch, argv, script, size=(80, 24)):
    """Run `oomdoctor argv` as in a terminal; `script(pilot)` drives the app it starts. Returns the exit code."""
    seen = {}

    def run(self, *args, **kwargs):
        async def go():
            async with self.run_test(size=size) as pilot:
                await settle(pilot)
                await script(pilot)
        asyncio.run(go())
        seen["app"] = self

    monkeypatch.setattr(OomDoctorApp, "run", run)
    monkeypatch.setattr(cli, "use_tui", lambda args: True)
    code = cli.main(list(argv))
    assert "app" in seen, "the command line did not start the app"
    return code


async def to_last_page(pilot):
    screen = pilot.app.screen
    while screen.page_index < len(screen._pages) - 1:
        await pilot.press("n")
        await settle(pilot)


async def export_as(pilot, name):
    from textual.widgets import Input

    await pilot.press("e")
    await settle(pilot)
    assert isinstance(pilot.app.screen, PathDialog)
    assert pilot.app.screen.query_one(Input).value == "plan.diff"     # the default, in the current directory
    pilot.app.screen.query_one(Input).value = name
    await pilot.press("enter")
    await settle(pilot)


def test_the_real_app_opens_the_guide_which_turns_pages_and_exports_its_own_plan(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))            # a typed `~` is the user's home, as in the app's export
    state = {}

    async def script(pilot):
        screen = pilot.app.screen
        assert isinstance(screen, WalkthroughScreen) and screen.page_index == 0
        await pilot.press("n")
        await settle(pilot)
        assert screen.page_index == 1 and "2." in screen_text(pilot.app).splitlines()[0]
        await pilot.press("b")
        await settle(pilot)
        assert screen.page_index == 0
        await pilot.press("right", "enter")          # → and Enter turn the page too
        await settle(pilot)
        assert screen.page_index == 2
        await to_last_page(pilot)
        last = screen.current_page
        assert last.key == "apply" and last == screen._pages[-1]
        assert "--export plan.diff" in last.code and screen.report.patch.splitlines()[0] in last.code
        state["command"] = next(line for line in last.code.splitlines() if "--export plan.diff" in line)
        state["patch"] = screen.report.patch
        await export_as(pilot, "~/guide.diff")

    code = drive(monkeypatch, ["--walkthrough", "--demo"], script)
    assert code == 1
    written = (home / "guide.diff").read_text(encoding="utf-8")
    assert written == state["patch"] and written
    # the command the last page gives writes the same plan without the app
    argv = state["command"].split()[1:]
    assert argv[0] == "--demo"
    cli.main(argv + ["--plain"])
    capsys.readouterr()
    assert (tmp_path / "plan.diff").read_text(encoding="utf-8") == written


def test_declining_to_change_the_experiment_keeps_cutoff_len_out_of_the_guides_and_the_apps_diff(monkeypatch,
                                                                                                   tmp_path):
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "train.yaml"
    shutil.copy(LONG, cfg)
    changed = {}

    async def script(pilot):
        from textual.widgets import Checkbox

        screen = pilot.app.screen
        while screen.current_page.key != "questions":
            await pilot.press("n")
            await settle(pilot)
        box = screen.query_one("#q-allow_method_change", Checkbox)
        help_text = " ".join(q.help for q in screen.questions if q.key == "allow_method_change")
        assert "cutoff_len" in help_text                # the question says what would change
        box.focus()
        await pilot.press("space")                     # yes: permission, not preference (Liger fits without the cut)
        await settle(pilot)
        changed["yes"] = screen.report.patch
        await pilot.press("space")                     # and no again
        await settle(pilot)
        assert screen.answers.allow_method_change is False
        await to_last_page(pilot)
        assert "pip install liger-kernel" in " ".join(screen.current_page.paragraphs)
        await export_as(pilot, "guide.diff")
        await pilot.press("escape")                    # back to the app, which keeps the guide's plan
        await settle(pilot)
        assert not isinstance(pilot.app.screen, WalkthroughScreen)
        assert pilot.app.selection.patch == screen.report.patch
        await export_as(pilot, "app.diff")

    drive(monkeypatch, ["--walkthrough", str(cfg), "--gpu", "A100-40GB"], script)
    # with a yes the plan is still the one that keeps the experiment: no cut while the Liger kernel fits
    yes = [ln for ln in changed["yes"].splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    assert "+enable_liger_kernel: true" in yes and not [ln for ln in yes if "cutoff_len" in ln]
    for name in ("guide.diff", "app.diff"):
        diff = (tmp_path / name).read_text(encoding="utf-8")
        edited = [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        assert edited and not [ln for ln in edited if "cutoff_len" in ln], name
        assert "+enable_liger_kernel: true" in edited


def test_the_app_alone_proposes_but_does_not_take_a_step_that_changes_the_experiment(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "train.yaml"
    shutil.copy(LONG, cfg)

    async def script(pilot):
        from oomdoctor.tui.widgets import StepList

        await pilot.press("3")
        await settle(pilot)
        rows = pilot.app.query_one(StepList).rows
        proposed = [r for r in rows if r.state == "proposed"]
        assert proposed and proposed[0].rule == "OOM003"
        assert "needs your yes" in screen_text(pilot.app)
        assert "+cutoff_len" not in pilot.app.selection.patch
        # ticking it is the yes: the plan is searched again with it; a yes is permission, not preference, so
        # the cut stays out while the Liger kernel fits, and its row says a cheaper plan does without it
        steps = pilot.app.query_one(StepList)
        steps.highlighted = [r.rule for r in steps.rows].index("OOM003")
        await pilot.press("space")
        await settle(pilot)
        assert pilot.app.opts.accept == ("OOM003",)
        assert "+cutoff_len" not in pilot.app.selection.patch
        assert "OOM003" not in [r.rule for r in pilot.app.query_one(StepList).rows]
        rung = next(r for r in pilot.app.report.plan.rungs if r.rule == "OOM003")
        assert rung.state == "dropped" and rung.reason.code == "plan.rung.costlier"

    drive(monkeypatch, [str(cfg), "--gpu", "A100-40GB"], script)


def test_two_gpus_lower_accumulation_so_the_effective_batch_stays(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)

    async def script(pilot):
        from textual.widgets import RadioSet

        screen = pilot.app.screen
        before = screen.report.setup.effective_batch
        while screen.current_page.key != "questions":
            await pilot.press("n")
            await settle(pilot)
        radio = screen.query_one("#q-n_gpus", RadioSet)
        assert pilot.app.focused is radio
        await pilot.press("right")                     # → on the GPU row moves the choice, not the page
        await settle(pilot)
        assert screen.current_page.key == "questions"
        await pilot.press("enter")                     # 2 GPUs
        await settle(pilot)
        assert screen.answers.n_gpus == 2
        final = screen.report.plan.final_setup(screen.report.setup)
        assert final.n_gpus == 2 and final.zero_stage == 3
        assert final.effective_batch == before == 8 and final.grad_accum == 1
        assert "gradient_accumulation_steps: 1" in screen.report.patch
        await to_last_page(pilot)
        assert "--gpus 2" in screen.current_page.code

    drive(monkeypatch, ["--walkthrough", "--demo"], script)


def test_question_mark_lists_the_guides_own_keys_and_q_asks_before_losing_answers(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)

    async def script(pilot):
        screen = pilot.app.screen
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(pilot.app.screen, HelpScreen)
        keys = [k for k, _ in pilot.app.screen.keys]
        assert keys[:2] == ["?", "q"] and "n → enter" in keys and "b ←" in keys and "e" in keys and "esc" in keys
        assert "l" not in keys and "1-4" not in keys                      # the app's keys do nothing here
        await pilot.press("escape")
        await settle(pilot)
        while screen.current_page.key != "questions":
            await pilot.press("n")
            await settle(pilot)
        screen.query_one("#q-prefer").focus()
        await pilot.press("right", "enter")             # prefer speed: a new plan, not exported
        await settle(pilot)
        screen.set_focus(screen.query_one("#wt-body"))
        await pilot.press("q")
        await settle(pilot)
        assert isinstance(pilot.app.screen, LeaveGuide)
        await pilot.press("n")                          # stay
        await settle(pilot)
        assert pilot.app.screen is screen and pilot.app.is_running
        await pilot.press("q", "y")
        await settle(pilot)

    drive(monkeypatch, ["--walkthrough", "--demo"], script)


def _digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_apply_on_the_demo_works_on_a_copy_and_leaves_the_installed_demo_byte_identical(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    before = _digest(DEMO_DIR)

    async def script(pilot):
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmApply)
        await pilot.press("y")
        await settle(pilot)

    drive(monkeypatch, ["--demo"], script)
    assert _digest(DEMO_DIR) == before
    copy = tmp_path / "oomdoctor-demo"
    assert (copy / "train.yaml.orig").read_bytes() == (DEMO_DIR / "train.yaml").read_bytes()
    assert (copy / "train.yaml").read_bytes() != (DEMO_DIR / "train.yaml").read_bytes()


def test_apply_from_the_guide_on_the_demo_also_works_on_a_copy(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    before = _digest(DEMO_DIR)

    async def script(pilot):
        await pilot.press("a")                          # from the first page
        await settle(pilot)
        assert isinstance(pilot.app.screen, ConfirmApply)
        assert pilot.app.screen.diff == pilot.app.screen_stack[-2].report.patch
        await pilot.press("y")
        await settle(pilot)

    drive(monkeypatch, ["--walkthrough", "--demo"], script)
    assert _digest(DEMO_DIR) == before
    assert (tmp_path / "oomdoctor-demo" / "train.yaml.orig").exists()


def test_cli_apply_on_the_demo_writes_a_copy_and_says_where(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = _digest(DEMO_DIR)
    code = cli.main(["--demo", "--apply", "--yes", "--plain"])
    out, err = capsys.readouterr()
    assert code == 1
    assert _digest(DEMO_DIR) == before
    assert str(tmp_path / "oomdoctor-demo") in err
    assert (tmp_path / "oomdoctor-demo" / "train.yaml.orig").exists()


@pytest.mark.parametrize("size", [(60, 20), (80, 24)], ids=["60x20", "80x24"])
@pytest.mark.parametrize("tab", ["1", "3", "4"])
def test_small_screens_keep_the_verdict_and_the_help_and_quit_keys(monkeypatch, tmp_path, size, tab):
    monkeypatch.chdir(tmp_path)

    async def script(pilot):
        await pilot.press(tab)
        await settle(pilot)
        lines = screen_text(pilot.app).rstrip("\n").splitlines()
        title, footer = lines[0], lines[-1]
        assert "126.5 GiB ✗" in title and "GiB ✓" in title        # as configured, and with the plan
        assert "? help" in footer and "q quit" in footer

    drive(monkeypatch, ["--demo"], script, size=size)


@pytest.mark.parametrize("size", [(60, 20), (80, 24)], ids=["60x20", "80x24"])
def test_the_guide_on_small_screens_keeps_the_help_and_quit_keys(monkeypatch, tmp_path, size):
    monkeypatch.chdir(tmp_path)

    async def script(pilot):
        lines = screen_text(pilot.app).rstrip("\n").splitlines()
        assert "? help" in lines[-1] and "q quit" in lines[-1]
        assert "fits" in lines[-2]                      # the status line says where the plan stands

    drive(monkeypatch, ["--walkthrough", "--demo"], script, size=size)


@pytest.mark.parametrize("size", [(60, 20), (80, 24)], ids=["60x20", "80x24"])
def test_matrix_cells_keep_their_numbers_and_units_on_small_screens(monkeypatch, tmp_path, size):
    import re

    monkeypatch.chdir(tmp_path)

    async def script(pilot):
        await pilot.press("m")
        await settle(pilot)
        await settle(pilot)
        text = screen_text(pilot.app)
        rows = [ln for ln in text.splitlines() if re.match(r"\s*▶?\s*(RTX 3090|V100 32GB)\b", ln)]
        assert rows
        for row in rows:
            cells = re.findall(r"(?:✓|✗|[A-Z]) \d+(?:\.\d)? GiB", row)
            assert len(cells) == 4, row             # all four GPU counts, each with its number and unit

    drive(monkeypatch, ["--demo"], script, size=size)
