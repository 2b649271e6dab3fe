"""The guided walkthrough as a Textual screen: one page at a time, keyboard only, fits 80×24 (60×20 at least).

The pages come from oomdoctor.guide (pure content); this module only draws them and turns the question
widgets into Answers, re-planning through the session in a thread worker so typing never waits on the planner.
Its plan is the app's: `e` exports it, `a` applies it from any page, and leaving hands it to the app.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Checkbox, Footer, Label, RadioButton, RadioSet, Static
from textual.worker import get_current_worker

from oomdoctor.facts import Report
from oomdoctor.guide import (
    Answers,
    Bar,
    Page,
    Question,
    bar_cells,
    default_answers,
    options_with_answers,
    pages,
    questions,
)
from oomdoctor.tui.dialogs import Localized
from oomdoctor.tui.widgets import wrap_legend
from oomdoctor.views.bars import COLOURS, GLYPHS
from oomdoctor.words import pad_cells, say, wrap_cells

if TYPE_CHECKING:
    from oomdoctor.session import Session

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


class GuideBody(VerticalScroll):
    """The guide's scrolling page: up/down and page keys scroll it; left and right turn the page, not scroll
    it sideways (a page is never wider than the screen)."""

    BINDINGS = [
        Binding("right", "screen.next", show=False),
        Binding("left", "screen.back", show=False),
    ]


# (key shown, binding keys, action, footer label or None, help text): the guide's own keys, for its bindings,
# its footer and its `?` list. The footer cuts from the right on a narrow screen: ? and q come first.
GUIDE_KEYS: tuple[tuple[str, str, str, str | None, str], ...] = (
    ("?", "question_mark", "help", "app.key_help", "app.guide_help_help"),
    ("q", "q", "quit", "app.key_quit", "app.guide_help_quit"),
    ("n → enter", "n,right,enter", "next", "app.key_next", "app.guide_help_next"),
    ("b ←", "b,left", "back", "app.key_previous", "app.guide_help_back"),
    ("e", "e", "export", "app.key_export", "app.guide_help_export"),
    ("a", "a", "apply", "app.key_apply", "app.guide_help_apply"),
    ("esc", "escape", "close", "app.key_to_app", "app.guide_help_close"),
    ("tab ↑ ↓ space", "", "", None, "app.guide_help_answer"),
    ("pgup pgdn", "", "", None, "app.guide_help_scroll"),
)


class WalkthroughScreen(Localized, Screen[Any]):
    """Pushed by the main app on `g` (and first with --walkthrough). Dismissed with (answers, choices, plan) —
    the app takes that plan as its own — or None when nothing changed."""

    DEFAULT_CSS = """
    WalkthroughScreen { layout: vertical; }
    WalkthroughScreen #wt-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    WalkthroughScreen #wt-body { height: 1fr; padding: 0 0 0 1; scrollbar-gutter: stable; scrollbar-size-vertical: 1; }
    WalkthroughScreen #wt-text { height: auto; }
    WalkthroughScreen #wt-code { height: auto; margin: 1 0 0 2; color: $text-muted; }
    WalkthroughScreen #wt-questions { height: auto; }
    WalkthroughScreen .wt-prompt { text-style: bold; margin: 1 0 0 0; }
    WalkthroughScreen .wt-help { color: $text-muted; margin: 0 0 0 2; }
    WalkthroughScreen .wt-hint { color: $text-muted; margin: 1 0 0 0; }
    WalkthroughScreen RadioSet { layout: horizontal; height: auto; width: auto; border: none; padding: 0; }
    WalkthroughScreen RadioSet > RadioButton { width: auto; margin: 0 1 0 0; }
    WalkthroughScreen Checkbox { border: none; padding: 0; margin: 1 0 0 0; width: 100%; text-style: bold; }
    WalkthroughScreen #wt-status { height: 1; padding: 0 1; background: $panel; }
    """

    # Not priority bindings: a focused radio set keeps ← → for its choices and enter for its answer; the page's
    # body hands ← → to the screen (GuideBody).
    BINDINGS = [
        Binding(keys, action, label or "", show=label is not None and key in ("?", "q", "n → enter", "e", "esc"),
                key_display=key.split()[0] if label else None)
        for key, keys, action, label, _ in GUIDE_KEYS if keys
    ]

    def __init__(self, session: Session, *, answers: Answers | None = None, planned: bool = False,
                 base: Any = None) -> None:
        """`session`: the app's (its options are the choices so far, its report their plan); `answers`: the
        guide's answers from the last time it was open; `planned`: the session's report already is the plan of
        those choices, so there is nothing to plan at start; `base`: the choices the answers apply to."""
        super().__init__()
        self.session = session
        self.lang = "zh" if session.lang == "zh" else "en"
        report = session.report
        self.base_options = base if base is not None else session.options
        self.options = session.options
        self.report = report
        self.start_answers = answers or default_answers(report, session.options)
        self.answers = self.start_answers
        self.questions: list[Question] = questions(report, self.lang, session.rules)
        self.page_index = 0
        self.replanning = False
        self.planned = planned and answers is None
        self.exported = False
        self._pages: list[Page] = pages(report, self.answers, self.lang, session.rules, self.options)

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(id="wt-title")
        with GuideBody(id="wt-body"):
            yield WalkBars(id="wt-bars")
            yield Prose(id="wt-text")
            with Vertical(id="wt-questions"):
                for q in self.questions:
                    yield from self._question_widgets(q)
                yield Static(say("app.guide_answer_hint", self.lang), classes="wt-hint")
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
        body = self.query_one("#wt-body", GuideBody)
        body.scroll_home(animate=False)
        # The keys act on what is shown: the page's body, or on the questions page the first question.
        if on_questions and self.questions:
            self.set_focus(self.query_one(f"#q-{self.questions[0].key}"))
        else:
            self.set_focus(body)
        self._show_status()

    def _show_status(self) -> None:
        where = say("app.page_of", self.lang, n=self.page_index + 1, total=len(self._pages))
        status = Text.assemble((where, "bold"), "  ", self.status_text())
        status.no_wrap, status.overflow = True, "ellipsis"
        self.query_one("#wt-status", Static).update(status)

    def status_text(self) -> str:
        if self.replanning:
            return say("app.replanning", self.lang)
        est = self.report.estimate
        if est is None:
            return ""
        plan = self.report.plan
        if est.fits and not plan.steps:
            return say("app.guide_fits_as_is", self.lang, peak=est.peak_gib, cap=est.capacity_gib)
        final = plan.final_estimate(est)
        code = "app.guide_plan_fits" if final.fits else "app.guide_plan_no_fit"
        return say(code, self.lang, steps=len(plan.steps), peak=final.peak_gib, cap=final.capacity_gib)

    def action_next(self) -> None:
        if self.page_index < len(self._pages) - 1:
            self.page_index += 1
            self._show_page()

    def action_back(self) -> None:
        if self.page_index > 0:
            self.page_index -= 1
            self._show_page()

    def go_to(self, key: str) -> None:
        self.page_index = self.page_keys.index(key)
        self._show_page()

    # ------------------------------------------------------------------ leaving, exporting, applying

    def result(self) -> Any:
        """What the app takes over: the answers, the choices and their plan (None when nothing changed)."""
        if self.answers == self.start_answers and self.options == self.session.options and self.planned:
            return None
        return (self.answers, self.options, self.report)

    def action_close(self) -> None:
        """Back to the app, which keeps the guide's plan: nothing is lost."""
        self.dismiss(self.result())

    def answers_would_be_lost(self) -> bool:
        return (self.answers != self.start_answers or self.options != self.session.options) and not self.exported

    def action_quit(self) -> None:
        """Leave oomdoctor; when the answers built a plan that is neither exported nor applied, ask first."""
        if not self.answers_would_be_lost():
            self.app.exit()
            return

        def done(choice: str | None) -> None:
            if choice == "quit":
                self.app.exit()
            elif choice == "export":
                self.action_export()

        self.app.push_screen(LeaveGuide(self.lang), done)

    def action_help(self) -> None:
        from oomdoctor.tui.dialogs import HelpScreen

        self.app.push_screen(HelpScreen([(key, say(what, self.lang)) for key, _, _, _, what in GUIDE_KEYS],
                                        title=say("app.guide_help_title", self.lang),
                                        hint=say("app.help_close", self.lang), lang=self.lang))

    def _plan_patch(self) -> str | None:
        if self.replanning:
            self.notify(say("app.still_estimating", self.lang))
            return None
        if not self.report.patch:
            self.notify(say("app.guide_nothing_to_write", self.lang), severity="warning")
            return None
        return self.report.patch

    def action_export(self) -> None:
        """Write the guide's plan as a diff (asks where; plan.diff in the current directory by default)."""
        patch = self._plan_patch()
        if patch is None:
            return
        from oomdoctor.tui.dialogs import PathDialog

        def done(path: str | None) -> None:
            from oomdoctor.tui.deliver import export_diff

            if path and export_diff(path, patch, self.report.inputs, self.notify, self.lang):
                self.exported = True

        self.app.push_screen(PathDialog(say("app.export_title", self.lang), "plan.diff",
                                        say("app.guide_export_hint", self.lang), lang=self.lang), done)

    def action_apply(self) -> None:
        """Apply the guide's plan to the files, after the same question and with the same .orig backup as `a`
        in the app (the bundled demo: to a copy)."""
        patch = self._plan_patch()
        if patch is None:
            return
        apply_edits = getattr(self.app, "apply_edits", None)
        if apply_edits is None:
            return
        cwd = self.options.cwd
        files = sorted({os.path.relpath(e.file, cwd or os.getcwd()) if os.path.isabs(e.file) else e.file
                        for e in self.report.edits})
        self.exported = True
        apply_edits(self.report.edits, patch, files)

    # ------------------------------------------------------------------ answers -> live plan

    @on(Checkbox.Changed)
    def _checkbox_changed(self, event: Checkbox.Changed) -> None:
        key = (event.checkbox.id or "").removeprefix("q-")
        if key == "keep_effective_batch":
            self.set_answers(replace(self.answers, keep_effective_batch=bool(event.value)))
        elif key == "allow_method_change":
            self.set_answers(replace(self.answers, allow_method_change=bool(event.value)))

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
        if self.report.setup is None or self.report.estimate is None:
            return
        self.replanning = True
        self._show_status()
        self._replan_worker(self.answers)

    @work(thread=True, exclusive=True, group="walkthrough-replan")
    def _replan_worker(self, answers: Answers) -> None:
        worker = get_current_worker()
        try:
            opts, report = options_with_answers(self.session, answers, self.base_options)
        except Exception as err:  # noqa: BLE001 - a planner failure must not take the screen down
            if not worker.is_cancelled:
                text = err.render(self.lang) if hasattr(err, "render") else str(err)
                self.app.call_from_thread(self._replan_failed, say("app.cannot_replan", self.lang, error=text))
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._replanned, report, answers, opts)

    def _replan_failed(self, message: str) -> None:
        self.replanning = False
        self._show_status()
        self.notify(message, severity="error")

    def _replanned(self, report: Report, answers: Answers, opts: Any = None) -> None:
        if answers != self.answers:
            return      # a newer answer is already being planned
        self.report = report
        self.options = opts if opts is not None else self.options
        self.replanning = False
        self.planned = False
        key = self.current_page.key
        focused = self.focused
        self._pages = pages(report, answers, self.lang, self.session.rules, self.options)
        keys = self.page_keys
        self.page_index = keys.index(key) if key in keys else min(self.page_index, len(keys) - 1)
        self._show_page()
        if focused is not None and key == "questions":
            self.set_focus(focused)     # answering goes on where it was


class LeaveGuide(Localized, ModalScreen[str]):
    """Quit with answers not exported: quit anyway, export first, or stay."""

    BINDINGS = [
        Binding("y", "answer('quit')", "app.key_quit"),
        Binding("e", "answer('export')", "app.key_export"),
        Binding("n,escape", "answer('stay')", "app.key_stay"),
    ]
    DEFAULT_CSS = """
    LeaveGuide { align: center middle; }
    """

    def __init__(self, lang: str = "en") -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(say("app.guide_leave_question", self.lang), classes="dialog-title")
            yield Static(say("app.guide_leave_keys", self.lang), classes="dialog-hint")

    def action_answer(self, choice: str) -> None:
        self.dismiss(choice)
