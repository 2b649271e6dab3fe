"""The guided walkthrough as a Textual screen: one page at a time, keyboard only, fits 80×24.

The pages come from oomdoctor.guide (pure content); this module only draws them and turns the question
widgets into Answers, re-planning through the session in a thread worker so typing never waits on the planner.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Checkbox, Footer, Label, RadioButton, RadioSet, Static
from textual.worker import get_current_worker

from oomdoctor.facts import Report
from oomdoctor.guide import (
    Answers, Bar, Page, Question, bar_cells, default_answers, pages, plan_with_answers, questions,
)
from oomdoctor.tui.dialogs import localize_bindings
from oomdoctor.tui.widgets import wrap_legend
from oomdoctor.views.bars import COLOURS, GLYPHS
from oomdoctor.words import pad_cells, say, wrap_cells

LABEL_CELLS = 9
NUMBER_CELLS = 12


class WalkBars(Widget):
    """The page's memory bars, one line each on one scale, and one legend line under them."""

    DEFAULT_CSS = """
    WalkBars { height: auto; margin: 0 0 1 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.bars: tuple[Bar, ...] = ()

    def show(self, bars: tuple[Bar, ...]) -> None:
        self.bars = bars
        self.display = bool(bars)
        self.refresh(layout=True)

    def render(self) -> Text:
        if not self.bars:
            return Text("")
        width = max(40, self.size.width or 78)
        bar_w = width - LABEL_CELLS - NUMBER_CELLS
        scale_gib = max(max(b.peak_gib for b in self.bars), self.bars[0].capacity_gib)
        text = Text()
        for n, bar in enumerate(self.bars):
            if n:
                text.append("\n")
            label = bar.short or bar.label
            text.append(pad_cells(label, LABEL_CELLS - 1) + " ", style="bold")
            scaled = replace(bar, peak_gib=scale_gib, capacity_gib=scale_gib)
            cells: list[tuple[str, str]] = []
            for comp, count in bar_cells(scaled, bar_w):
                glyph = " " if comp == "free" else GLYPHS.get(comp, "#")
                cells.extend([(glyph, COLOURS.get(comp, ""))] * count)
            cells.extend([(" ", "")] * (bar_w - len(cells)))
            cap_cell = min(bar_w - 1, max(0, round(bar.capacity_gib / scale_gib * bar_w) - 1))
            cells[cap_cell] = ("┃", "bold red")
            for glyph, style in cells:
                text.append(glyph, style=style)
            text.append(f" {bar.peak_gib:5.1f} GiB ", style="bold")
            text.append("✓" if bar.fits else "✗", style="bold green" if bar.fits else "bold red")
        items = [Text.assemble((GLYPHS.get(comp, "#"), COLOURS.get(comp, "")), f" {name}")
                 for comp, name, _gib in self.bars[-1].segments]
        items.append(Text.assemble(("┃", "bold red"), f" {self.bars[0].capacity_gib:.0f} GiB"))
        text.append_text(wrap_legend(items, width, LABEL_CELLS))
        return text

    def on_resize(self) -> None:
        self.refresh(layout=True)


class Prose(Widget):
    """Paragraphs wrapped by terminal cells: Chinese breaks between characters, English at spaces."""

    DEFAULT_CSS = """
    Prose { height: auto; }
    """

    def __init__(self, paragraphs: tuple[str, ...] = (), *, classes: str | None = None, id: str | None = None) -> None:
        super().__init__(classes=classes, id=id)
        self.paragraphs = paragraphs

    def show(self, paragraphs: tuple[str, ...]) -> None:
        self.paragraphs = paragraphs
        self.refresh(layout=True)

    def render(self) -> Text:
        width = max(20, self.size.width or 78)
        text = Text(no_wrap=True, overflow="crop")
        for n, para in enumerate(self.paragraphs):
            bullet = para.startswith(("• ", "  "))
            if n:
                text.append("\n" if bullet else "\n\n")
            lines = wrap_cells(para, width, "  " if bullet else "")
            text.append("\n".join(lines), style="dim" if para.startswith("  ") else "")
        return text

    def on_resize(self) -> None:
        self.refresh(layout=True)


class WalkthroughScreen(Screen[None]):
    """Pushed by the main app on `g` (and first with --walkthrough). Escape goes back."""

    DEFAULT_CSS = """
    WalkthroughScreen { layout: vertical; }
    WalkthroughScreen #wt-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    WalkthroughScreen #wt-body { height: 1fr; padding: 0 0 0 1; scrollbar-gutter: stable; scrollbar-size-vertical: 1; }
    WalkthroughScreen #wt-text { height: auto; }
    WalkthroughScreen #wt-code { height: auto; margin: 1 0 0 2; color: $text-muted; }
    WalkthroughScreen #wt-questions { height: auto; }
    WalkthroughScreen .wt-prompt { text-style: bold; margin: 1 0 0 0; }
    WalkthroughScreen .wt-help { color: $text-muted; margin: 0 0 0 2; }
    WalkthroughScreen RadioSet { layout: horizontal; height: auto; width: auto; border: none; padding: 0; }
    WalkthroughScreen RadioSet > RadioButton { width: auto; margin: 0 1 0 0; }
    WalkthroughScreen Checkbox { border: none; padding: 0; margin: 1 0 0 0; width: 100%; text-style: bold; }
    WalkthroughScreen #wt-status { height: 1; padding: 0 1; background: $panel; }
    """

    # Priority: the scrolling body would otherwise take left/right; the radio sets still move with up/down.
    BINDINGS = [
        Binding("right,n", "next", "app.key_next", key_display="→/n", priority=True),
        Binding("left,b", "back", "app.key_previous", key_display="←/b", priority=True),
        Binding("escape", "close", "app.key_leave", key_display="esc"),
    ]

    def __init__(self, session: Any, *, answers: Answers | None = None, planned: bool = False) -> None:
        """`session`: the run's (oomdoctor.session.Session); `planned`: its report was already planned with
        `answers`, so there is nothing to re-plan at start."""
        super().__init__()
        self.session = session
        self.lang = "zh" if session.lang == "zh" else "en"
        report = session.report
        self.base = report
        self.report = report
        self.answers = answers or default_answers(report)
        self.questions: list[Question] = questions(report, self.lang)
        self.page_index = 0
        self.replanning = False
        self.planned = planned
        self._pages: list[Page] = pages(report, self.answers, self.lang, session.rules)
        self._localize_bindings()

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(id="wt-title")
        with VerticalScroll(id="wt-body"):
            yield WalkBars(id="wt-bars")
            yield Prose(id="wt-text")
            with Vertical(id="wt-questions"):
                for q in self.questions:
                    yield from self._question_widgets(q)
            yield Static(id="wt-code")
        yield Static(id="wt-status")
        yield Footer(compact=True)

    def _question_widgets(self, q: Question) -> ComposeResult:
        value = getattr(self.answers, q.key)
        if q.key == "n_gpus" and value is None:
            value = q.default
        if q.kind == "bool":
            yield Checkbox(q.prompt, value=bool(value), id=f"q-{q.key}")
        else:
            yield Label(q.prompt, classes="wt-prompt")
            with RadioSet(id=f"q-{q.key}"):
                for choice, label in q.choices:
                    yield RadioButton(label, value=choice == value)
        yield Prose((q.help,), classes="wt-help")

    def on_mount(self) -> None:
        self._show_page()
        if not self.planned:
            self._replan()

    # ------------------------------------------------------------------ pages

    @property
    def current_page(self) -> Page:
        return self._pages[self.page_index]

    @property
    def page_keys(self) -> list[str]:
        return [p.key for p in self._pages]

    def _show_page(self) -> None:
        page = self.current_page
        self.query_one("#wt-title", Static).update(Text(page.title, style="bold"))
        self.query_one("#wt-bars", WalkBars).show(page.bars)
        on_questions = page.key == "questions"
        paragraphs = page.paragraphs[:1] if on_questions else page.paragraphs
        self.query_one("#wt-text", Prose).show(paragraphs)
        self.query_one("#wt-questions").display = on_questions
        code = self.query_one("#wt-code", Static)
        code.update(Text(page.code) if page.code else "")
        code.display = bool(page.code)
        self.query_one("#wt-body", VerticalScroll).scroll_home(animate=False)
        self._show_status()

    def _show_status(self) -> None:
        where = say("app.page_of", self.lang, n=self.page_index + 1, total=len(self._pages))
        status = Text.assemble((where, "bold"), "  ", self.status_text())
        self.query_one("#wt-status", Static).update(status)

    def status_text(self) -> str:
        if self.replanning:
            return say("app.replanning", self.lang)
        est = self.report.estimate
        if est is None:
            return ""
        if est.fits:
            return say("app.guide_fits_as_is", self.lang, peak=est.peak_gib, cap=est.capacity_gib)
        plan = self.report.plan
        final = plan.final_estimate(est)
        code = "app.guide_plan_fits" if plan.fits else "app.guide_plan_no_fit"
        return say(code, self.lang, steps=len(plan.steps), peak=final.peak_gib, cap=final.capacity_gib)

    def action_next(self) -> None:
        if self.page_index < len(self._pages) - 1:
            self.page_index += 1
            self._show_page()

    def action_back(self) -> None:
        if self.page_index > 0:
            self.page_index -= 1
            self._show_page()

    def action_close(self) -> None:
        self.dismiss(None)

    def go_to(self, key: str) -> None:
        self.page_index = self.page_keys.index(key)
        self._show_page()

    # ------------------------------------------------------------------ answers -> live plan

    @on(Checkbox.Changed)
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        key = (event.checkbox.id or "").removeprefix("q-")
        if key in ("keep_effective_batch", "allow_method_change"):
            self.set_answers(replace(self.answers, **{key: bool(event.value)}))

    @on(RadioSet.Changed)
    def _radio_changed(self, event: RadioSet.Changed) -> None:
        key = (event.radio_set.id or "").removeprefix("q-")
        q = next((q for q in self.questions if q.key == key), None)
        if q is None or event.index < 0:
            return
        self.set_answers(replace(self.answers, **{key: q.choices[event.index][0]}))

    def set_answers(self, answers: Answers) -> None:
        if answers == self.answers:
            return
        self.answers = answers
        self._replan()

    def _replan(self) -> None:
        if self.base.setup is None or self.base.estimate is None:
            return
        self.replanning = True
        self._show_status()
        self._replan_worker(self.answers)

    @work(thread=True, exclusive=True, group="walkthrough-replan")
    def _replan_worker(self, answers: Answers) -> None:
        worker = get_current_worker()
        try:
            report = plan_with_answers(self.session, answers)
        except Exception as err:  # noqa: BLE001 - a planner failure must not take the screen down
            if not worker.is_cancelled:
                text = err.render(self.lang) if hasattr(err, "render") else str(err)
                self.app.call_from_thread(self._replan_failed, say("app.cannot_replan", self.lang, error=text))
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._replanned, report, answers)

    def _replan_failed(self, message: str) -> None:
        self.replanning = False
        self._show_status()
        self.notify(message, severity="error")

    def _replanned(self, report: Report, answers: Answers) -> None:
        if answers != self.answers:
            return      # a newer answer is already being planned
        self.report = report
        self.replanning = False
        key = self.current_page.key
        self._pages = pages(report, answers, self.lang, self.session.rules)
        keys = self.page_keys
        self.page_index = keys.index(key) if key in keys else min(self.page_index, len(keys) - 1)
        self._show_page()

    # ------------------------------------------------------------------ footer in the user's language

    def _localize_bindings(self) -> None:
        localize_bindings(self, self.lang)
        bindings = self._bindings.key_to_bindings
        for key, items in bindings.items():
            bindings[key] = [replace(b, show=b.show and key in ("right", "left", "escape")) for b in items]

