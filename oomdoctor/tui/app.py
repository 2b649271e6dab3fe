"""The terminal app: diagnosis, memory picture, plan checkboxes and patch, for 80×24 over SSH.

Renders one Report. Toggling steps re-runs only `pipeline.select_steps` (estimate + edits + diff),
in a thread worker so keys keep working while it runs.
"""
from __future__ import annotations

import os
from pathlib import Path

from rich.console import Group
from rich.padding import Padding
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, OptionList, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from oomdoctor.errors import InputError
from oomdoctor.facts import COMPONENTS, Estimate, Plan, Report
from oomdoctor.pipeline import Options, Selection, select_steps
from oomdoctor.tui.dialogs import ConfirmApply, HelpScreen, PathDialog
from oomdoctor.tui.widgets import MemoryBars, StepList, step_detail
from oomdoctor.tui.words import (
    SHORT_NAMES, crash_numbers, crash_where, diagnosis_lines, gib, segments, setup_lines, verdict,
)

# (key, binding key, action, footer label or None when hidden, help text): the one table for
# the bindings, the footer and the help screen.
KEYS: tuple[tuple[str, str, str, str | None, str], ...] = (
    ("space", "space", "toggle_step", "toggle", "keep or drop the highlighted plan step (enter too)"),
    ("l", "l", "switch_plan", "plan", "switch between the ladder and the least-cost plan"),
    ("e", "e", "export", "export", "export the diff of the selected steps to a file"),
    ("w", "w", "write_copies", "copies", "write patched copies of the configs into a folder"),
    ("a", "a", "apply", "apply", "apply the diff to the configs in place, after a confirmation"),
    ("g", "g", "guide", "guide", "open the guided walkthrough"),
    ("?", "question_mark", "help", "help", "show this list of keys"),
    ("q", "q", "quit", "quit", "quit"),
    ("1-4", "1", "tab('diagnosis')", None, "show the Diagnosis, Memory, Plan or Patch tab"),
    ("", "2", "tab('memory')", None, ""),
    ("", "3", "tab('plan')", None, ""),
    ("", "4", "tab('patch')", None, ""),
    ("+", "plus", "keep_all", None, "keep every step of the plan"),
    ("-", "minus", "keep_none", None, "drop every step of the plan"),
    ("↑ ↓", "", "", None, "move in the step list; pgup/pgdn scroll the diff"),
    ("tab", "", "", None, "move the focus"),
)

TABS = ("diagnosis", "memory", "plan", "patch")


class OomDoctorApp(App[int]):
    CSS_PATH = str(Path(__file__).with_name("app.tcss"))   # absolute: subclasses elsewhere find it too
    TITLE = "oomdoctor"
    ENABLE_COMMAND_PALETTE = False
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    # Tab keys are priority bindings: a focused list would otherwise swallow the digits.
    BINDINGS = [
        Binding(bkey, action, label or "", show=label is not None, key_display=key if label else None,
                priority=action.startswith("tab("))
        for key, bkey, action, label, _ in KEYS if bkey
    ]

    def __init__(self, report: Report, opts: Options | None = None, *, lang: str = "en",
                 walkthrough: bool = False) -> None:
        super().__init__()
        self.report = report
        self.opts = opts or Options()
        self.lang = lang
        self.open_walkthrough = walkthrough
        self.plan_kind = "ladder"
        self.keep: dict[str, tuple[int, ...]] = {
            "ladder": tuple(range(len(report.plan.steps))),
            "least": tuple(range(len(report.least_cost.steps))) if report.least_cost else (),
        }
        self.selection: Selection | None = self._report_selection()
        self.estimating = False
        self.applied = False

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with TabbedContent(initial="diagnosis", id="tabs"):
            with TabPane("1 Diagnosis", id="diagnosis"):
                with VerticalScroll():
                    yield Static(id="diag-text")
            with TabPane("2 Memory", id="memory"):
                with VerticalScroll():
                    yield MemoryBars(id="memory-bars")
                    yield Static(id="memory-table")
            with TabPane("3 Plan", id="plan"):
                yield MemoryBars(legend=False, id="plan-bars")
                yield Static(id="plan-verdict")
                with Horizontal(id="plan-body"):
                    with Vertical(id="plan-left"):
                        yield Static(id="plan-heading")
                        yield StepList(id="steps")
                        with VerticalScroll(id="step-detail-box"):
                            yield Static(id="step-detail")
                    with VerticalScroll(id="plan-diff"):
                        yield Static(id="plan-diff-text")
            with TabPane("4 Patch", id="patch"):
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
        self.query_one(StepList).set_steps(self.current_plan().steps, self.keep[self.plan_kind])

    @on(StepList.Changed, "#steps")
    def _steps_changed(self, message: StepList.Changed) -> None:
        self.keep[self.plan_kind] = message.keep
        self._reselect()

    def _reselect(self) -> None:
        keep = self.keep[self.plan_kind]
        if self.plan_kind == "ladder" and keep == tuple(range(len(self.report.plan.steps))):
            self.selection = self._report_selection()
            self._render_selection()
            return
        if self.report.setup is None:
            return
        self.estimating = True
        self._render_verdict()
        self._select_worker(self.plan_kind, keep)

    @work(thread=True, exclusive=True, group="select", exit_on_error=False)
    def _select_worker(self, kind: str, keep: tuple[int, ...]) -> None:
        plan = self.report.least_cost if kind == "least" and self.report.least_cost else self.report.plan
        try:
            result: Selection | Exception = select_steps(self.report, plan, keep, cwd=self.opts.cwd)
        except Exception as err:  # bad edit or estimate: say so, keep the app alive
            result = err
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._selected, kind, keep, result)

    def _selected(self, kind: str, keep: tuple[int, ...], result: Selection | Exception) -> None:
        if kind != self.plan_kind or keep != self.keep[kind]:
            return  # the user toggled again meanwhile; the newer worker will answer
        self.estimating = False
        if isinstance(result, Exception):
            self.notify(f"cannot re-estimate: {result}", severity="error")
        else:
            self.selection = result
        self._render_selection()

    # ------------------------------------------------------------------ rendering

    def _plan_label(self) -> str:
        plan = self.current_plan()
        keep = self.keep[self.plan_kind]
        name = "ladder" if self.plan_kind == "ladder" else "least-cost plan"
        return f"{name}, {len(keep)} of {len(plan.steps)} step{'s' if len(plan.steps) != 1 else ''}"

    def _render_selection(self) -> None:
        self._render_title()
        self._render_verdict()
        est_now = self.report.estimate
        est_plan = self.selection.estimate if self.selection else None
        rows = [("now", est_now)] + ([("plan", est_plan)] if self.current_plan().steps else [])
        self.query_one("#memory-bars", MemoryBars).show(rows)
        self.query_one("#plan-bars", MemoryBars).show(rows)
        self.query_one("#memory-table", Static).update(self._memory_table(est_now, est_plan))
        self._render_plan_text()
        self._render_patch()

    def _render_title(self) -> None:
        r = self.report
        parts = [Text("oomdoctor", style="bold")]
        if r.setup is not None:
            parts.append(Text(f"{_short_model(r.setup.model)} {r.setup.method}"))
        if r.hardware is not None:
            gpus = f" ×{r.hardware.n_gpus}" if r.hardware.n_gpus > 1 else ""
            parts.append(Text(f"{r.hardware.gpu}{gpus}"))
        if r.estimate is not None:
            line = _peak_mark(r.estimate)
            if self.selection and self.current_plan().steps:
                line.append(" → ")
                line.append_text(_peak_mark(self.selection.estimate))
            parts.append(line)
        title = Text(" │ ").join(parts)
        title.no_wrap, title.overflow = True, "ellipsis"
        self.query_one("#title", Static).update(title)

    def _render_verdict(self) -> None:
        est = self.report.estimate
        text = Text()
        if est is None:
            text.append("No estimate without a training config.")
        elif not self.current_plan().steps:
            text.append("The run fits as configured: " if est.fits else "No step applies: ", style="bold")
            text.append(verdict(est))
        elif self.estimating:
            text.append("re-estimating…", style="italic")
        elif self.selection is not None:
            sel = self.selection.estimate
            text.append(f"With {self._plan_label()}: ", style="bold")
            text.append(f"{gib(sel.peak_gib)} of {gib(sel.capacity_gib)} — ")
            text.append(verdict(sel), style="bold green" if sel.fits else "bold red")
        self.query_one("#plan-verdict", Static).update(text)

    def _render_plan_text(self) -> None:
        plan = self.current_plan()
        other = "least-cost plan" if self.plan_kind == "ladder" else "ladder"
        heading = Text()
        if plan.steps:
            heading.append("Ladder" if self.plan_kind == "ladder" else "Least-cost plan", style="bold")
            n = len(plan.steps)
            heading.append(f" ({n} step{'s' if n != 1 else ''}, {'fits' if plan.fits else 'does not fit'})")
            if self.report.least_cost is not None:
                heading.append(f" · l: {other}", style="dim")
        elif self.report.estimate is not None and self.report.estimate.fits:
            heading.append("Nothing to change.", style="bold")
        else:
            heading.append("No step of the ladder applies.", style="bold")
        self.query_one("#plan-heading", Static).update(heading)
        self._render_detail()

    def _render_detail(self) -> None:
        plan = self.current_plan()
        steps = self.query_one(StepList)
        i = steps.highlighted
        text = step_detail(plan.steps[i], i) if plan.steps and i is not None and i < len(plan.steps) else Text()
        if not plan.fits and plan.advice:
            if text.plain:
                text.append("\n")
            text.append("Even the whole plan does not fit. ", style="bold red")
            text.append(" ".join(plan.advice))
        self.query_one("#step-detail", Static).update(text)

    @on(OptionList.OptionHighlighted, "#steps")
    def _step_highlighted(self) -> None:
        self._render_detail()

    def _diff_renderable(self):
        patch = self.selection.patch if self.selection else ""
        if not patch:
            return Text("No file changes for this selection.", style="dim")
        return Syntax(patch, "diff", theme="ansi_dark", background_color="default")

    def _render_patch(self) -> None:
        sel = self.selection
        diff = self._diff_renderable()
        self.query_one("#plan-diff-text", Static).update(diff)
        self.query_one("#patch-text", Static).update(diff)
        heading = Text()
        files = sorted({e.file for e in sel.edits}) if sel else []
        if files:
            heading.append(f"{len(sel.edits)} edit{'s' if len(sel.edits) != 1 else ''} to ", style="bold")
            heading.append(", ".join(_rel(f, self.opts.cwd) for f in files), style="bold")
            heading.append(" · e export · w copies · a apply", style="dim")
        else:
            heading.append("Patch", style="bold")
        self.query_one("#patch-heading", Static).update(heading)
        env_text = Text()
        if sel and (sel.env or sel.notes):
            env_text.append("\nBefore you launch:\n", style="bold")
            for name, value in sel.env.items():
                env_text.append(f"  export {name}={value}\n")
            for note in sel.notes:
                env_text.append(f"  • {note}\n")
        self.query_one("#patch-env", Static).update(env_text)

    def _memory_table(self, now: Estimate | None, plan: Estimate | None) -> Group | Text:
        if now is None:
            return Text("No estimate: give the training config to see where the memory goes.")
        show_plan = plan is not None and bool(self.current_plan().steps)
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
        table.add_column("per GPU", style="bold")
        table.add_column("as configured", justify="right")
        if show_plan:
            table.add_column("with plan", justify="right")
            table.add_column("change", justify="right")
        names = [n for n, _ in segments(now)] + [n for n, _ in segments(plan) if show_plan and n not in COMPONENTS]
        seen: list[str] = []
        for name in names:
            if name in seen:
                continue
            seen.append(name)
            a = dict(segments(now)).get(name, 0.0)
            row = [SHORT_NAMES.get(name, name), f"{a:.1f}"]
            if show_plan:
                b = dict(segments(plan)).get(name, 0.0)
                row += [f"{b:.1f}", f"{b - a:+.1f}"]
            table.add_row(*row)
        total = ["peak", f"{now.peak_gib:.1f}"] + ([f"{plan.peak_gib:.1f}", f"{plan.peak_gib - now.peak_gib:+.1f}"]
                                                   if show_plan else [])
        table.add_row(*total, style="bold")
        verdicts = ["verdict", verdict(now)] + ([verdict(plan), ""] if show_plan else [])
        table.add_row(*verdicts)
        return Group(table, Text(f"\nGiB per GPU; usable capacity {now.capacity_gib:.1f} GiB, "
                                 f"{now.headroom:.0%} kept free for fragmentation and spikes.", style="dim"),
                     _bullets(now.notes, style="dim"))

    def _diagnosis_text(self) -> Group:
        r = self.report
        parts: list = []
        crash = r.crash
        event = crash.primary if crash else None
        parts.append(_heading("What died", first=True))
        if crash is None:
            parts.append(_indented("No crash log given: this is an estimate of the config alone."))
        elif event is None:
            parts.append(_indented(f"{crash.file} holds no out-of-memory error oomdoctor knows."))
        else:
            parts.append(_indented(crash_where(event, crash)))
            parts.append(_indented(Text(crash_numbers(event, r.hardware), style="bold")))
        if crash and crash.diagnoses:
            parts.append(_heading("What it points to"))
            parts.append(_bullets(diagnosis_lines(crash.diagnoses)))
        if r.setup is not None:
            parts.append(_heading("The run"))
            grid = Table.grid(padding=(0, 1))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column()
            for label, value in setup_lines(r.setup):
                grid.add_row(label, value)
            parts.append(Padding(grid, (0, 0, 0, 2)))
        if r.estimate is not None:
            est = r.estimate
            parts.append(_heading("Estimate per GPU"))
            grid = Table.grid(padding=(0, 1))
            grid.add_column(style="bold", no_wrap=True)
            grid.add_column()
            grid.add_row("as configured", Text.assemble(f"{gib(est.peak_gib)} of {gib(est.capacity_gib)} usable — ",
                                                        (verdict(est), "green" if est.fits else "red")))
            if r.plan.steps:
                final = r.plan.final_estimate(est)
                grid.add_row("with the plan", Text.assemble(
                    f"{gib(final.peak_gib)} after {len(r.plan.steps)} step{'s' if len(r.plan.steps) != 1 else ''} — ",
                    (verdict(final), "green" if final.fits else "red")))
            parts.append(Padding(grid, (0, 0, 0, 2)))
            if r.plan.steps:
                parts.append(_indented(Text("3: the plan's steps · 4: the diff", style="dim")))
        if r.warnings:
            parts.append(_heading("Good to know"))
            parts.append(_bullets(r.warnings, bullet="!"))
        return Group(*parts)

    # ------------------------------------------------------------------ actions

    def action_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        # Focus follows the tab, so arrows and page keys act on what is shown.
        if event.pane.id == "plan":
            self.query_one(StepList).focus()
        else:
            event.pane.query(VerticalScroll).first().focus()

    def action_toggle_step(self) -> None:
        self.query_one(StepList).action_toggle()

    def action_keep_all(self) -> None:
        self.query_one(StepList).set_keep(range(len(self.current_plan().steps)))

    def action_keep_none(self) -> None:
        self.query_one(StepList).set_keep(())

    def action_switch_plan(self) -> None:
        if self.report.least_cost is None or not self.report.least_cost.steps:
            self.notify("There is no least-cost plan: " +
                        ("the run fits as it is." if self.report.estimate and self.report.estimate.fits
                         else "no cheaper set of steps fits."))
            return
        self.plan_kind = "least" if self.plan_kind == "ladder" else "ladder"
        self._fill_steps()
        self._render_plan_text()
        self._reselect()
        self.notify(f"Showing the {'least-cost plan' if self.plan_kind == 'least' else 'ladder'}.")

    def _patch_or_say(self) -> str | None:
        if self.estimating:
            self.notify("Still re-estimating; try again in a moment.")
            return None
        if self.selection is None or not self.selection.patch:
            self.notify("Nothing to write: the selected steps change no file.", severity="warning")
            return None
        return self.selection.patch

    def _path(self, path: str) -> Path:
        p = Path(os.path.expanduser(path))
        return p if p.is_absolute() else Path(self.opts.cwd or os.getcwd()) / p

    def action_export(self) -> None:
        patch = self._patch_or_say()
        if patch is None:
            return

        def done(path: str | None) -> None:
            if not path:
                return
            try:
                self._path(path).write_text(patch, encoding="utf-8")
            except OSError as err:
                self.notify(f"cannot write {path}: {err.strerror}", severity="error")
                return
            self.notify(f"Wrote the diff to {path} (apply with: git apply {path})")

        self.push_screen(PathDialog("Export the diff to", "oomdoctor.diff",
                                    "the same diff as oomdoctor --export"), done)

    def _patchset(self):
        from oomdoctor.patch import build_patch

        assert self.selection is not None
        return build_patch(self.selection.edits, cwd=self.opts.cwd)

    def action_write_copies(self) -> None:
        if self._patch_or_say() is None:
            return

        def done(folder: str | None) -> None:
            if not folder:
                return
            from oomdoctor.patch import write_copies

            try:
                written = write_copies(self._patchset(), str(self._path(folder)))
            except (OSError, ValueError, InputError) as err:
                self.notify(f"cannot write copies: {err}", severity="error")
                return
            self.notify(f"Wrote {len(written)} patched file{'s' if len(written) != 1 else ''} into {folder}")

        self.push_screen(PathDialog("Write patched copies into the folder", "oomdoctor-patched/",
                                    "your own files stay as they are"), done)

    def action_apply(self) -> None:
        patch = self._patch_or_say()
        if patch is None:
            return
        if self.applied:
            self.notify("Already applied. Run oomdoctor again to check the new config.", severity="warning")
            return
        assert self.selection is not None
        files = sorted({_rel(e.file, self.opts.cwd) for e in self.selection.edits})

        def done(yes: bool | None) -> None:
            if not yes:
                self.notify("Nothing changed.")
                return
            from oomdoctor.patch import apply_in_place

            try:
                changed = apply_in_place(self._patchset())
            except (OSError, ValueError, InputError) as err:
                self.notify(f"cannot apply: {err}", severity="error")
                return
            self.applied = True
            self.notify(f"Updated {', '.join(str(c) for c in changed)} (each kept as .orig)")

        self.push_screen(ConfirmApply(patch, files), done)

    def action_guide(self) -> None:
        try:
            from oomdoctor.tui.walkthrough import WalkthroughScreen
        except ModuleNotFoundError as err:
            if err.name != "oomdoctor.tui.walkthrough":
                raise
            self.notify("The guided walkthrough is not part of this build yet.", severity="warning")
            return
        self.push_screen(WalkthroughScreen(self.report, self.opts, self.lang))

    def action_help(self) -> None:
        self.push_screen(HelpScreen([(key, what) for key, _, _, _, what in KEYS if key]))


def _peak_mark(est: Estimate) -> Text:
    return Text.assemble(f"{est.peak_gib:.1f} GiB ", ("✓", "green") if est.fits else ("✗", "red"))


def _heading(title: str, first: bool = False) -> Text:
    return Text(("" if first else "\n") + title, style="bold underline")


def _indented(text: str | Text) -> Padding:
    return Padding(text, (0, 0, 0, 2))


def _bullets(lines, bullet: str = "•", style: str = "") -> Padding:
    """Bulleted lines whose wrapped continuation lines stay under the text, not under the bullet."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for line in lines:
        grid.add_row(bullet, Text(line, style=style))
    return Padding(grid, (0, 0, 0, 2))


def _short_model(model: str) -> str:
    return model.rstrip("/").rsplit("/", 1)[-1] if model else "?"


def _rel(path: str, cwd: str | None) -> str:
    try:
        return os.path.relpath(path, cwd or os.getcwd()) if os.path.isabs(path) else path
    except ValueError:
        return path
