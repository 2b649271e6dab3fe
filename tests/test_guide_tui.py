"""The guide screen, driven with the keyboard through a tiny host app (Pilot and snapshots)."""
import pytest
from helpers import hand_report, settle
from textual.app import App, ComposeResult
from textual.widgets import Checkbox, RadioSet, Static

from oomdoctor.guide import Answers, pages
from oomdoctor.pipeline import Options
from oomdoctor.session import open_session, session_for
from oomdoctor.tui.walkthrough import WalkthroughScreen

# Pilot runs of the app (seconds each): the slow tier, run by the full CI session, not per CPython.
pytestmark = pytest.mark.slow


class Host(App):
    """Stands in for the main app: one screen underneath, the guide pushed on top."""

    def __init__(self, report, opts, lang, **kw):
        super().__init__()
        self.session = session_for(report, opts, lang) if report is not None else open_session(opts, lang)
        self.kw = kw

    def compose(self) -> ComposeResult:
        yield Static("main app", id="main")

    def on_mount(self) -> None:
        self.push_screen(WalkthroughScreen(self.session, **self.kw))


async def press_n(pilot, key, n):
    for _ in range(n):
        await pilot.press(key)


def title_of(screen):
    return str(screen.query_one("#wt-title", Static).render())


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_next_and_back_walk_every_page_in_order(lang):
    report = hand_report()
    expected = [p.title for p in pages(report, Answers(n_gpus=1), lang)]
    app = Host(report, Options(), lang, planned=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        seen = []
        for _ in expected:
            seen.append(screen.current_page.title)
            assert screen.current_page.title in title_of(screen)
            await pilot.press("n")
        assert seen == expected
        assert screen.page_index == len(expected) - 1      # n on the last page stays there
        await pilot.press("left")
        assert screen.page_index == len(expected) - 2
        await press_n(pilot, "b", 20)
        assert screen.page_index == 0
        await pilot.press("right")
        assert screen.page_index == 1


async def test_escape_returns_to_the_main_app():
    app = Host(hand_report(), Options(), "en", planned=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WalkthroughScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WalkthroughScreen)
        assert app.query_one("#main", Static)


async def test_footer_shows_the_page_keys_in_chinese():
    app = Host(hand_report(), Options(), "zh", planned=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        shown = {b.binding.description for b in app.screen.active_bindings.values() if b.binding.show}
        assert {"帮助", "退出", "下一页", "导出", "回到主界面"} <= shown


async def test_question_widgets_show_only_on_the_questions_page():
    app = Host(hand_report(), Options(), "en", planned=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert not screen.query_one("#wt-questions").display
        await press_n(pilot, "n", 2)
        assert screen.current_page.key == "questions"
        assert screen.query_one("#wt-questions").display
        assert screen.query_one("#q-allow_method_change", Checkbox).value is False
        assert screen.query_one("#q-keep_effective_batch", Checkbox).value is True


async def test_keyboard_answers_set_the_answers():
    app = Host(hand_report(), Options(), "en", planned=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        await press_n(pilot, "n", 2)
        screen.query_one("#q-allow_method_change", Checkbox).focus()
        await pilot.press("space")
        await pilot.pause()
        assert screen.answers.allow_method_change is True
        screen.query_one("#q-prefer", RadioSet).focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert screen.answers.prefer == "speed"
        # the page keys still work while a question has the focus
        await pilot.press("n")
        assert screen.current_page.key == "plan"


# ---------------------------------------------------------------- snapshots (80×24, both languages)

async def _to_page(pilot, key):
    await settle(pilot)
    screen = pilot.app.screen
    while screen.current_page.key != key:
        await pilot.press("n")
    await pilot.pause()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_snapshot_questions_page(snap_compare, lang):
    app = Host(hand_report(), Options(), lang, planned=True)
    assert snap_compare(app, terminal_size=(80, 24), run_before=lambda pilot: _to_page(pilot, "questions"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_snapshot_first_plan_step(snap_compare, lang):
    app = Host(hand_report(), Options(), lang, planned=True)
    assert snap_compare(app, terminal_size=(80, 24), run_before=lambda pilot: _to_page(pilot, "step-1"))


# ---------------------------------------------------------------- the whole walkthrough on the demo

DEMO = ("oomdoctor/data/demo/train.yaml", "oomdoctor/data/demo/train.log")


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_walk_the_demo_answering_questions_changes_the_plan(lang):
    # without the 8-bit optimizer and the offload rungs, the GPU count and the method answer decide the plan
    # (with offload at hand, a yes to LoRA is not taken: a yes is permission, not preference)
    opts = Options(files=DEMO, skip=("OOM011", "OOM015", "OOM016"))
    app = Host(None, opts, lang)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.current_page.key == "error"
        assert f"{screen.report.crash.primary.tried_gib:.1f} GiB" in " ".join(screen.current_page.paragraphs)
        while screen.current_page.key != "questions":
            await pilot.press("n")
        method_fields = lambda: {c.field for st in screen.report.plan.steps for c in st.changes}  # noqa: E731
        assert "method" not in method_fields()          # default: the experiment stays as it is

        screen.query_one("#q-allow_method_change", Checkbox).focus()
        await pilot.press("space")
        await settle(pilot)
        assert screen.answers.allow_method_change and "method" in method_fields()

        await pilot.press("space")                      # and back: LoRA leaves the plan again
        await settle(pilot)
        assert "method" not in method_fields()

        single_gpu_rules = [st.rule for st in screen.report.plan.steps]
        screen.query_one("#q-n_gpus", RadioSet).focus()
        await pilot.press("down", "enter")              # 1 GPU -> 2 GPUs
        await settle(pilot)
        assert screen.answers.n_gpus == 2 and screen.report.hardware.n_gpus == 2
        assert [st.rule for st in screen.report.plan.steps] != single_gpu_rules
        assert any(c.field == "zero_stage" and c.after == 3 for st in screen.report.plan.steps for c in st.changes)
        final = screen.report.plan.final_setup(screen.report.setup)
        assert final.n_gpus == 2 and final.effective_batch == screen.report.setup.effective_batch

        seen = [screen.current_page.key]
        while screen.page_index < len(screen._pages) - 1:
            await pilot.press("n")
            seen.append(screen.current_page.key)
        assert seen[0] == "questions" and seen[1] == "plan" and seen[-2:] == ["watch", "apply"]
        assert any(k.startswith("step-") for k in seen)
        apply = next(p for p in screen._pages if p.key == "apply")
        assert "--gpus 2" in apply.code and "--export plan.diff" in apply.code
        status = str(screen.query_one("#wt-status", Static).render())
        assert ("fits" if lang == "en" else "放得下") in status
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WalkthroughScreen)
