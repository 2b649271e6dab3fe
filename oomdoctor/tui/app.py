"""The terminal app: diagnosis, memory picture, plan checkboxes and patch, for 80×24 (60×20 at the least)
over SSH.

Renders one Report: the plan of the user's choices. The choices are the command line's (--skip, --accept,
--gpus): ticking a proposed step gives its yes, unticking a step switches it off, the guide's answers set
them too, and each change plans again through the session (in a thread worker, so keys keep working), so
the app's plan, the guide's and `oomdoctor ... --skip ... --accept ... --export` are one plan.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.padding import Padding
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import Footer, OptionList, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from oomdoctor.facts import COMPONENTS, Estimate, KeyEdit, Plan, Report
from oomdoctor.pipeline import Options, Selection
from oomdoctor.planner import RuleBook
from oomdoctor.session import Session
from oomdoctor.tui.deliver import Deliver, error_text, rel
from oomdoctor.tui.dialogs import HelpScreen, Localized
from oomdoctor.tui.widgets import MemoryBars, Prose, Row, StepList, plan_rows, step_detail
from oomdoctor.views.bars import segments
from oomdoctor.views.describe import (
    component_name,
    crash_numbers,
    crash_where,
    diagnosis_lines,
    fit_verdict,
    install_commands,
    model_lines,
    model_warning_lines,
    override_block,
    setup_rows,
)
from oomdoctor.words import gib, say, show

# (key, binding key, action, footer label or None when hidden, help text): the one table for
# the bindings, the footer and the help screen. Labels and help texts are codes of words/app.py.
# The footer shows them in this order and cuts the last ones on a narrow screen: ? and q come first.
KEYS: tuple[tuple[str, str, str, str | None, str], ...] = (
    ("?", "question_mark", "help", "app.key_help", "app.help_help"),
    ("q", "q", "quit", "app.key_quit", "app.help_quit"),
    ("space", "space", "toggle_step", "app.key_toggle", "app.help_toggle"),
    ("e", "e", "export", "app.key_export", "app.help_export"),
    ("a", "a", "apply", "app.key_apply", "app.help_apply"),
    ("g", "g", "guide", "app.key_guide", "app.help_guide"),
    ("m", "m", "matrix", "app.key_matrix", "app.help_matrix"),
    ("l", "l", "switch_plan", "app.key_plan", "app.help_plan"),
    ("s", "s", "simulate", "app.key_simulate", "app.help_simulate"),
    ("w", "w", "write_copies", None, "app.help_copies"),      # off the footer: 80 columns hold ten keys
    ("1-4", "1", "tab('diagnosis')", None, "app.help_tabs"),
    ("", "2", "tab('memory')", None, ""),
    ("", "3", "tab('plan')", None, ""),
    ("", "4", "tab('patch')", None, ""),
    ("+", "plus", "keep_all", None, "app.help_keep_all"),
    ("-", "minus", "keep_none", None, "app.help_keep_none"),
    ("↑ ↓", "", "", None, "app.help_arrows"),
    ("tab", "", "", None, "app.help_tab"),
)

TABS = ("diagnosis", "memory", "plan", "patch")


class Tabs(TabbedContent):
    """TabbedContent whose tab changes by keys only, never by where the focus lands.

    Textual switches to a pane when a widget in it gets focus, but that message arrives later: a quick
    tab key meanwhile was undone, and two late focuses switched tabs back and forth for ever. Here the
    focus follows the tab (`_tab_activated`), never the other way round.
    """

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        event.stop()
        event.prevent_default()     # Textual runs the base class's handler too unless told not to
# Actions that act on the main screen's plan: off (and out of the footer) while another screen is on top.
MAIN_ONLY = frozenset(action.split("(")[0] for _, bkey, action, _, _ in KEYS
                      if bkey and action not in ("quit", "help"))


class OomDoctorApp(Localized, App[int]):
    CSS_PATH = str(Path(__file__).with_name("app.tcss"))   # absolute: subclasses elsewhere find it too
    TITLE = "oomdoctor"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    # Tab keys are priority bindings: a focused list would otherwise swallow the digits.
    BINDINGS = [
        Binding(bkey, action, label or "", show=label is not None,
                key_display=key if label else None, priority=action.startswith("tab("))
        for key, bkey, action, label, _ in KEYS if bkey
    ]

    # The state the screen is drawn from; each change re-renders what depends on it (the watchers below).
    # Set quietly (set_reactive) in __init__: the widgets exist from on_mount on.
    report: var[Report] = var(Report, init=False, always_update=True)     # the plan of the user's choices
    plan_kind: var[str] = var("ladder", init=False)                         # ladder | least: the plan shown
    # the chosen plan's setup, estimate and patch (a new plan, even an equal one, is drawn again)
    selection: var[Selection | None] = var(None, init=False, always_update=True)
    estimating: var[bool] = var(False, init=False)                          # a worker is planning the choices

    def __init__(self, session: Session, *, walkthrough: bool = False) -> None:
        super().__init__()
        self.session = session
        self.opts: Options = session.options
        self.lang = session.lang
        self.open_walkthrough = walkthrough
        self.set_reactive(OomDoctorApp.report, session.report)
        self.set_reactive(OomDoctorApp.selection, self._report_selection())
        # (answers, the choices they applied to, the choices they made): the guide's, kept
        self.guide_answers: tuple[Any, Options, Options] | None = None
        self.matrix: Any = None     # the advisor's Matrix, built once on the first `m`
        self.deliver = Deliver(self)

    def say(self, key: str, **values) -> str:
        return say(f"app.{key}", self.lang, **values)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MAIN_ONLY and len(self.screen_stack) > 1:
            return False
        return True

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Tabs(initial="diagnosis", id="tabs"):
            with TabPane(self.say("tab_diagnosis"), id="diagnosis"):
                with VerticalScroll():
                    yield Static(id="diag-text")
            with TabPane(self.say("tab_memory"), id="memory"):
                with VerticalScroll():
                    yield MemoryBars(lang=self.lang, id="memory-bars")
                    yield Static(id="memory-table")
            with TabPane(self.say("tab_plan"), id="plan"):
                yield MemoryBars(legend=False, lang=self.lang, id="plan-bars")
                yield Static(id="plan-verdict")
                with Horizontal(id="plan-body"):
                    with Vertical(id="plan-left"):
                        yield Static(id="plan-heading")
                        yield StepList(lang=self.lang, id="steps")
                        with VerticalScroll(id="step-detail-box"):
                            yield Static(id="step-detail")
                    with VerticalScroll(id="plan-diff"):
                        yield Static(id="plan-diff-text")
            with TabPane(self.say("tab_patch"), id="patch"):
                yield Static(id="patch-heading")
                with VerticalScroll(id="patch-scroll"):
                    yield Static(id="patch-text")
                    yield Static(id="patch-env")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#diag-text", Static).update(self._diagnosis_text())
        self._fill_steps()
        self._render_selection()
        if self.open_walkthrough:
            self.action_guide()

    def watch_report(self) -> None:
        self._fill_steps()

    def watch_plan_kind(self) -> None:
        self._fill_steps()
        self._render_plan_text()

    def watch_selection(self) -> None:
        self._render_selection()

    def watch_estimating(self) -> None:
        self._render_verdict()

    # ------------------------------------------------------------------ state

    def current_plan(self) -> Plan:
        if self.plan_kind == "least" and self.report.least_cost is not None:
            return self.report.least_cost
        return self.report.plan

    def _report_selection(self) -> Selection | None:
        """The report already holds the whole ladder's result: the first screen needs no estimate."""
        r = self.report
        if r.setup is None or r.estimate is None:
            return None
        return Selection(setup=r.plan.final_setup(r.setup), estimate=r.plan.final_estimate(r.estimate),
                         edits=r.edits, patch=r.patch, env=dict(r.env), notes=r.notes)

    def _fill_steps(self) -> None:
        self.query_one(StepList).set_rows(plan_rows(self.current_plan(), self.session.rules))

    def cost_text(self, step) -> str:
        """The rule file's own words on what the step costs, in the app's language."""
        rule = self.session.rules.get(step.rule)
        return " ".join(say(c.text, self.lang) for c in rule.costs) if rule is not None else ""

    # ------------------------------------------------------------------ the user's choices -> the plan

    @on(StepList.Toggled, "#steps")
    def _row_toggled(self, message: StepList.Toggled) -> None:
        self.choose(choices_after_toggle(self.opts, message.row, self.session.rules))

    def choose(self, opts: Options, report: Report | None = None) -> None:
        """Take other choices: their plan is `report` when the caller already has it (the guide), else it is
        planned here in a worker."""
        if opts == self.opts and report is None:
            return
        self.opts = opts
        if report is not None:
            self._replanned(opts, report)
            return
        if self.report.setup is None:
            return
        self.estimating = True
        self._replan_worker(opts)

    @work(thread=True, exclusive=True, group="select", exit_on_error=False)
    def _replan_worker(self, opts: Options) -> None:
        try:
            result: Report | Exception = self.session.replan(opts)
        except Exception as err:  # bad edit or estimate: say so, keep the app alive
            result = err
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._replan_done, opts, result)

    def _replan_done(self, opts: Options, result: Report | Exception) -> None:
        if opts != self.opts:
            return  # the user chose again meanwhile; the newer worker will answer
        if isinstance(result, Exception):
            self.estimating = False
            self.notify(self.say("cannot_reestimate", error=error_text(result, self.lang)), severity="error")
            return
        self._replanned(opts, result)

    def _replanned(self, opts: Options, report: Report) -> None:
        self.session = self.session.with_choices(opts, report)
        if self.plan_kind == "least" and (report.least_cost is None or not report.least_cost.steps):
            self.set_reactive(OomDoctorApp.plan_kind, "ladder")     # drawn with the report, just below
        self.report = report
        self.set_reactive(OomDoctorApp.estimating, False)           # the selection's drawing shows it
        self._reselect()

    def _reselect(self) -> None:
        if self.plan_kind == "ladder":
            self.selection = self._report_selection()
            return
        if self.report.setup is None:
            return
        self.estimating = True
        self._select_worker(self.plan_kind)

    @work(thread=True, exclusive=True, group="select", exit_on_error=False)
    def _select_worker(self, kind: str) -> None:
        plan = self.report.least_cost if kind == "least" and self.report.least_cost else self.report.plan
        try:
            result: Selection | Exception = self.session.select(plan, range(len(plan.steps)))
        except Exception as err:  # bad edit or estimate: say so, keep the app alive
            result = err
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._selected, kind, result)

    def _selected(self, kind: str, result: Selection | Exception) -> None:
        if kind != self.plan_kind:
            return  # the user switched again meanwhile; the newer worker will answer
        if isinstance(result, Exception):
            self.estimating = False
            self.notify(self.say("cannot_reestimate", error=error_text(result, self.lang)), severity="error")
        else:
            self.set_reactive(OomDoctorApp.estimating, False)       # the selection's drawing shows it
            self.selection = result

    # ------------------------------------------------------------------ rendering

    def _plan_label(self) -> str:
        plan = self.current_plan()
        name = self.say("ladder" if self.plan_kind == "ladder" else "least_plan")
        return self.say("plan_label", name=name, n=len(plan.steps))

    def _render_selection(self) -> None:
        self._render_title()
        self._render_verdict()
        est_now = self.report.estimate
        est_plan = self.selection.estimate if self.selection else None
        rows = [(self.say("now"), est_now)] + ([(self.say("plan"), est_plan)] if self.current_plan().steps else [])
        self.query_one("#memory-bars", MemoryBars).show(rows)
        self.query_one("#plan-bars", MemoryBars).show(rows)
        self.query_one("#memory-table", Static).update(self._memory_table(est_now, est_plan))
        self._render_plan_text()
        self._render_patch()

    def _render_title(self) -> None:
        # The verdict comes first after the name: a narrow terminal cuts the title from the right.
        r = self.report
        parts = [Text("oomdoctor", style="bold")]
        if r.estimate is not None:
            line = _peak_mark(r.estimate)
            if self.selection and self.current_plan().steps:
                line.append(" → ")
                line.append_text(_peak_mark(self.selection.estimate))
            parts.append(line)
        if r.setup is not None:
            parts.append(Text(f"{_short_model(r.setup.model)} {r.setup.method}"))
        if r.shape is not None and r.shape.shape_confidence == "guessed":
            parts.append(Text(self.say("shape_guessed"), style="bold yellow"))
        if r.hardware is not None:
            gpus = f" ×{r.hardware.n_gpus}" if r.hardware.n_gpus > 1 else ""
            name = r.hardware.gpu if r.hardware.gpu not in ("", "unknown") else gib(r.hardware.gpu_gib)
            parts.append(Text(f"{name}{gpus}"))
        title = Text(" │ ").join(parts)
        title.no_wrap, title.overflow = True, "ellipsis"
        self.query_one("#title", Static).update(title)

    def _render_verdict(self) -> None:
        est = self.report.estimate
        text = Text()
        if est is None:
            text.append(self._why_no_estimate("no_config"))
        elif not self.current_plan().steps:
            text.append(self.say("fits_as_configured" if est.fits else "no_step"), style="bold")
            text.append(fit_verdict(est, self.lang))
        elif self.estimating:
            text.append(self.say("reestimating"), style="italic")
        elif self.selection is not None:
            sel = self.selection.estimate
            text.append(self.say("with_plan", label=self._plan_label()), style="bold")
            text.append(self.say("peak_of", peak=gib(sel.peak_gib), cap=gib(sel.capacity_gib)))
            text.append(fit_verdict(sel, self.lang), style="bold green" if sel.fits else "bold red")
        self.query_one("#plan-verdict", Static).update(text)

    def _render_plan_text(self) -> None:
        plan = self.current_plan()
        other = self.say("least_plan" if self.plan_kind == "ladder" else "ladder")
        heading = Text()
        if plan.steps:
            heading.append(self.say("ladder_title" if self.plan_kind == "ladder" else "least_title"), style="bold")
            heading.append(self.say("plan_heading", n=len(plan.steps),
                                    fit=self.say("fits_word" if plan.fits else "no_fit_word")))
            if self.report.least_cost is not None:
                heading.append(self.say("other_plan", other=other), style="dim")
        elif self.report.estimate is not None and self.report.estimate.fits:
            heading.append(self.say("nothing_to_change"), style="bold")
        else:
            heading.append(self.say("no_step_applies"), style="bold")
        self.query_one("#plan-heading", Static).update(heading)
        self._render_detail()

    def _render_detail(self) -> None:
        plan = self.current_plan()
        steps = self.query_one(StepList)
        i = steps.highlighted
        parts: list = []
        if steps.rows and i is not None and i < len(steps.rows):
            row = steps.rows[i]
            if row.steps:
                number = sum(1 for r in steps.rows[:i] if r.state == "applied")
                parts.append(step_detail(row.steps[-1], number, self.lang, cost_text=self.cost_text(row.steps[-1]),
                                         state=row.state))
            else:
                parts.append(Text(self.say("row_off_detail", title=say(row.title, self.lang), rule=row.rule)))
        if not plan.fits and plan.advice:
            text = Text(self.say("whole_plan_no_fit"), style="bold red")
            text.append(" ".join(say(a, self.lang) for a in plan.advice), style="")
            parts.append(text)
        self.query_one("#step-detail", Static).update(Group(*parts))

    @on(OptionList.OptionHighlighted, "#steps")
    def _step_highlighted(self) -> None:
        if self.query(StepList):      # the message can arrive after an early quit took the widgets away
            self._render_detail()

    def _diff_renderable(self):
        patch = self.selection.patch if self.selection else ""
        if not patch:
            return Text(self.say("no_changes"), style="dim")
        return Syntax(patch, "diff", theme="ansi_dark", background_color="default")

    def _render_patch(self) -> None:
        sel = self.selection
        diff = self._diff_renderable()
        self.query_one("#plan-diff-text", Static).update(diff)
        self.query_one("#patch-text", Static).update(diff)
        heading = Text()
        edits = sel.edits if sel else ()
        files = sorted({e.file for e in edits})
        if files:
            heading.append(self.say("edits_to", n=len(edits)), style="bold")
            heading.append(", ".join(rel(f, self.opts.cwd) for f in files), style="bold")
            heading.append(self.say("patch_keys"), style="dim")
        else:
            heading.append(self.say("patch"), style="bold")
        self.query_one("#patch-heading", Static).update(heading)
        env_text = Text()
        installs = install_commands(self.report.setup, sel.setup) if sel and self.report.setup is not None else []
        if sel and (sel.env or sel.notes or installs):
            env_text.append(self.say("before_launch"), style="bold")
            for line in installs:
                env_text.append(f"  {line}\n", style="bold")
            from oomdoctor.shellsafe import export_line

            for name, value in sel.env.items():
                env_text.append(f"  {export_line(name, value)}\n")
            for note in sel.notes:
                env_text.append(f"  • {say(note, self.lang)}\n")
        if sel is not None:
            # a verl script is not patched: the selection's values as Hydra overrides for its command
            head, overrides = override_block(self.report.setup, sel.setup, self.current_plan(), bool(sel.patch),
                                             self.lang)
            if overrides:
                env_text.append(head + "\n", style="bold")
                for line in overrides:
                    env_text.append(f"  {line}\n", style="bold")
        self.query_one("#patch-env", Static).update(env_text)

    def _why_no_estimate(self, key: str) -> str:
        """Without a config: give one. With a config whose model has no shape here: what the estimate needs."""
        if self.report.setup is not None and self.report.shape is None:
            return say("run.incomplete", self.lang)
        return self.say(key)

    def _memory_table(self, now: Estimate | None, plan: Estimate | None) -> Group | Text:
        if now is None:
            return Text(self._why_no_estimate("no_estimate"))
        if not self.current_plan().steps:
            plan = None         # nothing to compare with: the configured column alone
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
        table.add_column(self.say("per_gpu"), style="bold")
        table.add_column(self.say("as_configured"), justify="right")
        if plan is not None:
            table.add_column(self.say("with_the_plan"), justify="right")
            table.add_column(self.say("change"), justify="right")
        names = [n for n, _ in segments(now)] + [n for n, _ in (segments(plan) if plan is not None else [])
                                                 if n not in COMPONENTS]
        seen: list[str] = []
        for name in names:
            if name in seen:
                continue
            seen.append(name)
            a = dict(segments(now)).get(name, 0.0)
            row = [component_name(name, self.lang), f"{a:.1f}"]
            if plan is not None:
                b = dict(segments(plan)).get(name, 0.0)
                row += [f"{b:.1f}", f"{b - a:+.1f}"]
            table.add_row(*row)
        total = [self.say("peak"), f"{now.peak_gib:.1f}"] + ([f"{plan.peak_gib:.1f}", f"{plan.peak_gib - now.peak_gib:+.1f}"]
                                                   if plan is not None else [])
        table.add_row(*total, style="bold")
        verdicts = [self.say("verdict"), fit_verdict(now, self.lang)] + ([fit_verdict(plan, self.lang), ""] if plan is not None else [])
        table.add_row(*verdicts)
        return Group(table, Text("\n" + self.say("memory_foot", cap=now.capacity_gib, free=f"{now.headroom:.0%}"),
                                 style="dim"),
                     _bullets([show(n, self.lang) for n in now.notes], style="dim"))

    def _diagnosis_text(self) -> Group:
        r = self.report
        parts: list = []
        crash = r.crash
        event = crash.primary if crash else None
        lang = self.lang
        parts.append(_heading(self.say("what_died"), first=True))
        if crash is None:
            parts.append(_indented(self.say("no_log")))
        elif event is None:
            parts.append(_indented(self.say("no_oom", file=crash.file)))
        else:
            parts.append(_indented(Prose(crash_where(event, crash, lang), lang=lang)))
            parts.append(_indented(Prose(crash_numbers(event, r.hardware, lang), style="bold", lang=lang)))
        if r.finding is not None:
            # whether the config explains the crash; the checks come before the plan
            f = r.finding
            parts.append(_heading(say("finding.title", lang)))
            parts.append(_indented(Prose(say(f.message, lang), style="bold red" if f.cause == "beyond_config"
                                         else "", lang=lang)))
            if f.floor is not None and f.floor.applied:
                parts.append(_indented(Prose(say(f.floor.message, lang), lang=lang)))
            if f.clues:
                parts.append(_heading(say("finding.checks", lang)))
                parts.append(_bullets([say(c.message, lang) + " → " + say(c.check, lang)
                                       for c in f.clues], lang=lang))
        if crash and crash.diagnoses:
            parts.append(_heading(self.say("points_to")))
            parts.append(_bullets(diagnosis_lines(crash.diagnoses, lang), lang=lang))
        warns = model_warning_lines(r.shape, lang) if r.shape is not None else []
        if warns and r.shape is not None:       # a guessed shape: what the estimate rests on, before anything else
            parts.append(_heading(self.say("the_model")))
            parts.append(_indented(Prose(model_lines(r.shape, lang)[0], lang=lang)))
            parts.append(_bullets(warns, bullet="⚠", style="yellow", lang=lang))
        if r.setup is not None:
            parts.append(_heading(self.say("the_run")))
            grid = Table.grid(padding=(0, 1))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column()
            for label, value in setup_rows(r.setup, lang):
                grid.add_row(label, value)
            parts.append(Padding(grid, (0, 0, 0, 2)))
        if r.estimate is not None:
            est = r.estimate
            parts.append(_heading(self.say("estimate_per_gpu")))
            grid = Table.grid(padding=(0, 1))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column()
            grid.add_row(self.say("as_configured"), Text.assemble(
                self.say("of_usable", peak=gib(est.peak_gib), cap=gib(est.capacity_gib)),
                (fit_verdict(est, lang), "green" if est.fits else "red")))
            if r.plan.steps:
                final = r.plan.final_estimate(est)
                n = len(r.plan.steps)
                grid.add_row(self.say("with_the_plan"), Text.assemble(
                    self.say("after_steps", peak=gib(final.peak_gib), n=n),
                    (fit_verdict(final, lang), "green" if final.fits else "red")))
            parts.append(Padding(grid, (0, 0, 0, 2)))
            if r.plan.steps:
                parts.append(_indented(Text(self.say("diag_hint"), style="dim")))
        if r.warnings:
            parts.append(_heading(self.say("good_to_know")))
            parts.append(_bullets([show(w, lang) for w in r.warnings], bullet="!", lang=lang))
        return Group(*parts)

    # ------------------------------------------------------------------ actions

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        # Focus follows the tab, so arrows and page keys act on what is shown. Set at once, not with the
        # deferred widget.focus(): a deferred focus landing after the next tab key switched the tab back,
        # and two of them ping-ponged between tabs for ever.
        if event.pane.id != self.query_one(TabbedContent).active:
            return      # stale: another tab is active already
        main = event.pane.screen
        if self.screen is not main:
            return      # the guide (or another screen) is on top: its focus is its own
        target = self.query_one(StepList) if event.pane.id == "plan" else event.pane.query(VerticalScroll).first()
        if main.focused is not target:
            main.set_focus(target)

    def action_toggle_step(self) -> None:
        self.query_one(StepList).action_toggle()

    def action_keep_all(self) -> None:
        """Every proposed step gets its yes, every step switched off comes back."""
        opts = self.opts
        for row in self.query_one(StepList).rows:
            if row.state != "applied":
                opts = choices_after_toggle(opts, row, self.session.rules)
        self.choose(opts)

    def action_keep_none(self) -> None:
        """Every step of the plan switched off."""
        opts = self.opts
        for row in self.query_one(StepList).rows:
            if row.state == "applied":
                opts = choices_after_toggle(opts, row, self.session.rules)
        self.choose(opts)

    def action_switch_plan(self) -> None:
        if self.report.least_cost is None or not self.report.least_cost.steps:
            fits = self.report.estimate is not None and self.report.estimate.fits
            self.notify(self.say("no_least_plan_fits" if fits else "no_least_plan"))
            return
        self.plan_kind = "least" if self.plan_kind == "ladder" else "ladder"
        self._reselect()
        self.notify(self.say("showing_least" if self.plan_kind == "least" else "showing_ladder"))

    # ------------------------------------------------------------------ delivering the patch (tui/deliver.py)

    def action_export(self) -> None:
        self.deliver.export()

    def action_write_copies(self) -> None:
        self.deliver.write_copies()

    def action_apply(self) -> None:
        self.deliver.apply()

    def apply_edits(self, edits: Sequence[KeyEdit], patch: str, files: Sequence[str]) -> None:
        """Ask, then apply `edits` in place (the guide's `a` comes here too)."""
        self.deliver.apply_edits(edits, patch, files)

    def action_guide(self) -> None:
        """The guide starts from the app's choices and its plan; when it closes, its plan is the app's."""
        from oomdoctor.tui.walkthrough import WalkthroughScreen

        answers, base = None, None
        if self.guide_answers is not None and self.guide_answers[2] == self.opts:
            answers, base, _ = self.guide_answers      # nothing changed since: the guide goes on where it was

        def back(result: Any) -> None:
            if result is None:
                return
            answers, opts, report = result
            self.guide_answers = (answers, base if base is not None else self.opts, opts)
            self.choose(opts, report)

        self.push_screen(WalkthroughScreen(self.session, answers=answers, planned=True, base=base), back)

    def action_simulate(self) -> None:
        """Trace the configured setup, and the selected steps' setup when it differs, on fake tensors."""
        from oomdoctor.tui.screens import SimulateScreen

        r = self.report
        targets = []
        if r.setup is not None and r.shape is not None and r.estimate is not None:
            targets.append((self.say("sim_target_configured"), r.setup, r.estimate))
            sel = self.selection
            if sel is not None and sel.setup != r.setup and not self.estimating:
                targets.append((self.say("sim_target_selection"), sel.setup, sel.estimate))
        self.push_screen(SimulateScreen(r.shape, targets, self.lang))

    def action_matrix(self) -> None:
        from oomdoctor.tui.screens import AdviseScreen

        self.push_screen(AdviseScreen(self.session, matrix=self.matrix))

    def action_help(self) -> None:
        self.push_screen(HelpScreen([(key, say(what, self.lang)) for key, _, _, _, what in KEYS if key],
                                    title=self.say("help_title"), hint=self.say("help_close"), lang=self.lang))


def choices_after_toggle(opts: Options, row: Row, rules: RuleBook) -> Options:
    """The choices after the user ticks or unticks `row`: a step is switched off (--skip), a proposed step gets
    the user's yes (--accept), a step switched off comes back."""
    rule = rules.get(row.rule) if rules is not None else None
    names = {row.rule.lower()} | ({rule.slug.lower()} if rule is not None else set())
    if row.state == "applied":
        accept = tuple(a for a in opts.accept if a.lower() not in names)
        return replace(opts, skip=tuple(opts.skip) + (row.rule,), accept=accept)
    if row.state == "proposed":
        return replace(opts, accept=tuple(opts.accept) + (row.rule,))
    return replace(opts, skip=tuple(s for s in opts.skip if s.lower() not in names))


def _peak_mark(est: Estimate) -> Text:
    return Text.assemble(f"{est.peak_gib:.1f} GiB ", ("✓", "green") if est.fits else ("✗", "red"))


def _heading(title: str, first: bool = False) -> Text:
    return Text(("" if first else "\n") + title, style="bold underline")


def _indented(text: str | Text | Prose) -> Padding:
    return Padding(text, (0, 0, 0, 2))


def _bullets(lines, bullet: str = "•", style: str = "", lang: str = "en") -> Padding:
    """Bulleted lines whose wrapped continuation lines stay under the text, not under the bullet."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    for line in lines:
        grid.add_row(bullet, Prose(line, style=style, lang=lang))
    return Padding(grid, (0, 0, 0, 2))


def _short_model(model: str) -> str:
    return model.rstrip("/").rsplit("/", 1)[-1] if model else "?"
