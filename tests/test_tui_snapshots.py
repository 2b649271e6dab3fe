"""How the app looks on the demo inputs, at 60×20 (the least it is laid out for), 80×24 (SSH) and 120×40 (a wide
terminal). At every size the title keeps the verdict and the footer keeps `?` and `q`
(tests/test_guide_app.py checks that in words too).

Review a changed snapshot by eye (pytest --snapshot-report) before accepting it with --snapshot-update.
"""
from __future__ import annotations

from pathlib import Path

import pytest

# Pilot runs of the app (seconds each): the slow tier, run by the full CI session, not per CPython.
pytestmark = pytest.mark.slow

DEMO = Path(__file__).resolve().parents[1] / "oomdoctor" / "data" / "demo"
SIZES = [pytest.param((60, 20), id="60x20"), pytest.param((80, 24), id="80x24"),
         pytest.param((120, 40), id="120x40")]


@pytest.fixture
def demo_app(monkeypatch):
    """The app on the demo, with relative paths so the pictures do not depend on where the repo lives."""
    return _demo(monkeypatch, "en")


@pytest.fixture
def demo_app_zh(monkeypatch):
    return _demo(monkeypatch, "zh")


def _demo(monkeypatch, lang: str):
    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session
    from oomdoctor.tui.app import OomDoctorApp

    monkeypatch.chdir(DEMO)
    monkeypatch.delenv("NO_COLOR", raising=False)
    opts = Options(files=("train.yaml", "train.log"), cwd=str(DEMO))
    return OomDoctorApp(open_session(opts, lang))


def _keys(*keys: str):
    async def run_before(pilot) -> None:
        for key in keys:
            await pilot.press(key)
            await pilot.pause()                 # the toggle's message starts the worker
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
    return run_before



@pytest.mark.parametrize("size", SIZES)
def test_diagnosis_tab(snap_compare, demo_app, size):
    assert snap_compare(demo_app, terminal_size=size, run_before=_keys())


@pytest.mark.parametrize("size", SIZES)
def test_memory_tab(snap_compare, demo_app, size):
    assert snap_compare(demo_app, terminal_size=size, run_before=_keys("2"))


@pytest.mark.parametrize("size", SIZES)
def test_plan_tab(snap_compare, demo_app, size):
    assert snap_compare(demo_app, terminal_size=size, run_before=_keys("3"))


@pytest.mark.parametrize("size", SIZES)
def test_plan_tab_after_a_yes_to_the_proposed_step(snap_compare, demo_app, size):
    # the first row is LoRA, proposed: space gives the yes and the ladder is walked again with it
    assert snap_compare(demo_app, terminal_size=size, run_before=_keys("3", "space"))


@pytest.mark.parametrize("size", SIZES)
def test_patch_tab(snap_compare, demo_app, size):
    assert snap_compare(demo_app, terminal_size=size, run_before=_keys("4"))


def test_help_screen(snap_compare, demo_app):
    assert snap_compare(demo_app, terminal_size=(80, 24), run_before=_keys("question_mark"))


def test_apply_confirmation(snap_compare, demo_app):
    assert snap_compare(demo_app, terminal_size=(80, 24), run_before=_keys("a"))


@pytest.mark.parametrize("size", SIZES)
def test_advise_screen(snap_compare, demo_app, size):
    assert snap_compare(demo_app, terminal_size=size, run_before=_keys("m"))


def test_plan_tab_in_chinese(snap_compare, demo_app_zh):
    assert snap_compare(demo_app_zh, terminal_size=(80, 24), run_before=_keys("3"))


def test_diagnosis_tab_in_chinese(snap_compare, demo_app_zh):
    assert snap_compare(demo_app_zh, terminal_size=(80, 24), run_before=_keys())


@pytest.mark.parametrize("size", [pytest.param((60, 20), id="60x20"), pytest.param((80, 24), id="80x24")])
def test_guide_last_page(snap_compare, monkeypatch, size):
    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session
    from oomdoctor.tui.app import OomDoctorApp

    monkeypatch.chdir(DEMO)
    app = OomDoctorApp(open_session(Options(files=("train.yaml", "train.log"), cwd=str(DEMO)), "en"), walkthrough=True)

    async def run_before(pilot) -> None:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        screen = pilot.app.screen
        while screen.page_index < len(screen._pages) - 1:
            await pilot.press("n")
            await pilot.pause()
    assert snap_compare(app, terminal_size=size, run_before=run_before)
