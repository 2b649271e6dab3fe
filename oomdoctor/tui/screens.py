"""Full screens opened from the main app: the simulation (`s`) and the GPU/strategy advisor (`m`).

Neither imports torch or the advisor at module level: the simulation packages load in a background thread
after the key is pressed, so the app's start never pays for them.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from oomdoctor.facts import GIB, Estimate, ModelShape, TrainingSetup
from oomdoctor.tui.dialogs import Localized
from oomdoctor.words import gib, gib_short, hours, say, show

if TYPE_CHECKING:
    from oomdoctor.session import Session

PROGRESS_LINES = 6      # the last few progress messages stay on screen while a trace runs
WIDE_CELLS = 110        # from here on the advisor shows run times and the step time


def matrix_cell(fits: bool, fits_as_configured: bool, plan: str, peak_gib: float, lang: str = "en") -> str:
    """One fit-matrix cell, narrow enough for 60 columns: '✓ 71 GiB' as configured, 'A 33 GiB' after the plan
    the letter names (listed under the matrix), '✗ 139 GiB' when nothing fits."""
    size = gib_short(peak_gib)
    if not fits:
        return f"✗ {size}"
    if fits_as_configured:
        return f"✓ {size}"
    return f"{plan} {size}"


class _Stopped(Exception):
    """Raised inside the trace's progress callback once nobody waits for the result any more."""


class SimulateScreen(Localized, Screen[None]):
    """Traces real training steps on fake tensors and shows the peaks beside the estimate.

    The trace runs in a daemon thread, not a Textual worker: a worker's thread is joined when the app exits,
    and a trace cannot be interrupted mid-kernel. Escape or quit sets a flag; the next progress message then
    ends the trace, and a result that still arrives is dropped.
    """

    BINDINGS = [Binding("escape", "close", "app.key_back", key_display="esc")]

    class Update(Message):
        """One event from the tracing thread: progress | unavailable | failed | result | done."""

        def __init__(self, kind: str, payload: Any = None) -> None:
            super().__init__()
            self.kind = kind
            self.payload = payload

    def __init__(self, shape: ModelShape | None, targets: Sequence[tuple[str, TrainingSetup, Estimate]],
                 lang: str = "en") -> None:
        """`targets`: (label, setup, its analytic estimate) in the order they are traced."""
        super().__init__()
        self.shape = shape
        self.targets = tuple(targets)
        self.lang = lang
        self.stop = threading.Event()
        self.progress: list[str] = []
        self.results: list[tuple[str, Any, Estimate]] = []
        self.problem: tuple[str, str] | None = None     # (heading, one line) when it cannot run or failed
        self.finished = False
        self.thread: threading.Thread | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(say("app.sim_title", self.lang), style="bold"), id="sim-title", classes="screen-title")
        with VerticalScroll(id="sim-scroll"):
            yield Static(id="sim-status")
            yield Static(id="sim-body")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#sim-scroll").focus()
        if not self.targets or self.shape is None:
            self.problem = (say("app.sim_unavailable", self.lang), say("app.sim_no_config", self.lang))
            self.finished = True
        else:
            self.thread = threading.Thread(target=self._run, name="oomdoctor-simulate", daemon=True)
            self.thread.start()
        self._draw()

    def on_unmount(self) -> None:
        self.stop.set()

    def action_close(self) -> None:
        self.stop.set()
        if not self.finished:
            self.app.notify(say("app.sim_stopped", self.lang))
        self.dismiss(None)

    # ------------------------------------------------------------------ the tracing thread

    def _post(self, kind: str, payload: Any = None) -> None:
        if self.stop.is_set():
            raise _Stopped
        self.post_message(self.Update(kind, payload))   # thread-safe, and never waits on the UI

    def _run(self) -> None:
        try:
            self._trace_all()
        except _Stopped:
            pass
        except Exception as err:   # a bug in the tracer must not take the app down: show it
            try:
                self._post("failed", f"{type(err).__name__}: {err}")
            except _Stopped:
                pass

    def _trace_all(self) -> None:
        from oomdoctor import simulate

        self._post("progress", say("app.sim_checking", self.lang))
        problem = simulate.available()
        if problem:
            self._post("unavailable", show(problem, self.lang))
            return
        assert self.shape is not None
        for label, setup, est in self.targets:
            def progress(message: Any, label: str = label) -> None:
                self._post("progress", f"{label}: {show(message, self.lang)}")

            try:
                result = simulate.trace_step(setup, self.shape, progress=progress)
            except simulate.SimulateError as err:
                self._post("failed", f"{label}: {err.render(self.lang)}")
                return
            self._post("result", (label, result, est))
        self._post("done")

    # ------------------------------------------------------------------ the screen

    def on_simulate_screen_update(self, message: SimulateScreen.Update) -> None:
        if self.stop.is_set():
            return      # the user left; whatever the thread still says is not wanted
        kind, payload = message.kind, message.payload
        if kind == "progress":
            self.progress.append(payload)
        elif kind == "unavailable":
            self.problem = (say("app.sim_unavailable", self.lang), payload)
            self.finished = True
        elif kind == "failed":
            self.problem = (say("app.sim_failed", self.lang), payload)
            self.finished = True
        elif kind == "result":
            self.results.append(payload)
        elif kind == "done":
            self.finished = True
        self._draw()

    def _draw(self) -> None:
        status = Text()
        if not self.finished:
            for line in self.progress[-PROGRESS_LINES:]:
                status.append(f"  {line}\n", style="dim")
            status.append(say("app.sim_running", self.lang), style="italic")
        elif self.problem is None:
            status.append(say("app.sim_done", self.lang), style="bold green")
        if self.problem is not None:
            if status.plain:
                status.append("\n")
            status.append(say("app.problem", self.lang, what=self.problem[0]), style="bold red")
            status.append(self.problem[1])
        self.query_one("#sim-status", Static).update(status)
        self.query_one("#sim-body", Static).update(Group(*[part for label, result, est in self.results
                                                            for part in self._result_parts(label, result, est)]))

    def _result_parts(self, label: str, result: Any, est: Estimate) -> list:
        from oomdoctor.simulate import format_result

        peak = gib(result.reported_peak_bytes / GIB, 2)
        head = Text("\n" + say("app.sim_label", self.lang, label=label), style="bold underline")
        if est is not None and result.peak_bytes:
            gap = (est.allocated_gib * GIB - result.peak_bytes) / result.peak_bytes
            head.append(say("app.sim_peak", self.lang, peak=peak, where=result.peak_phase,
                            est=gib(est.allocated_gib, 2), gap=gap), style="bold")
        else:
            head.append(say("app.sim_peak_only", self.lang, peak=peak, where=result.peak_phase), style="bold")
        return [head, Text(format_result(result, est, self.lang))]


class AdviseScreen(Localized, Screen[None]):
    """Which GPUs, how many, which strategy: the fit matrix first, then the user's card, then the strategies."""

    BINDINGS = [Binding("escape", "close", "app.key_back", key_display="esc")]

    class Built(Message):
        def __init__(self, matrix: Any) -> None:
            super().__init__()
            self.matrix = matrix

    def __init__(self, session: Session, *, matrix: Any = None) -> None:
        """`session`: the run's (its report, --prices, --tokens, rules and calibrated estimator);
        `matrix`: one built before (kept by the app)."""
        super().__init__()
        self.session = session
        self.lang = session.lang
        self.matrix = matrix
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(say("app.adv_title", self.lang), style="bold"), id="adv-title", classes="screen-title")
        with VerticalScroll(id="adv-scroll"):
            yield Static(id="adv-body")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#adv-scroll").focus()
        if self.matrix is None:
            self._build()
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def action_close(self) -> None:
        self.dismiss(None)

    @work(thread=True, exit_on_error=False, group="advise")
    def _build(self) -> None:
        from oomdoctor import advise

        s = self.session
        try:
            matrix: Any = advise.build(s.report, prices=s.options.prices, tokens=s.options.tokens,
                                       estimator=s.estimator, correction=s.correction, rules=s.rules,
                                       host_ram_gib=s.options.host_ram, accept=s.options.accept, skip=s.options.skip)
        except Exception as err:     # InputError for a crash-only report, or a bug: say it, keep the app
            matrix = err
        if not get_current_worker().is_cancelled:
            self.post_message(self.Built(matrix))

    def on_advise_screen_built(self, message: AdviseScreen.Built) -> None:
        if isinstance(message.matrix, Exception):
            err = message.matrix
            self.error = err.render(self.lang) if hasattr(err, "render") else str(err)
        else:
            self.matrix = message.matrix
            if hasattr(self.app, "matrix"):
                self.app.matrix = message.matrix     # the next `m` shows it at once
        self._draw()

    # ------------------------------------------------------------------ rendering

    def _draw(self) -> None:
        body = self.query_one("#adv-body", Static)
        if self.error is not None:
            body.update(Text(say("app.adv_failed", self.lang, err=self.error), style="bold red"))
        elif self.matrix is None:
            body.update(Text(say("app.adv_building", self.lang), style="italic"))
        else:
            body.update(self._matrix_view(self.matrix, max(60, self.size.width or 80)))

    def _user_card(self, m: Any) -> str | None:
        from oomdoctor.advise.cards import spec_of

        spec = spec_of(m.hardware) if m.hardware else None
        return spec.name if spec is not None and spec.name in m.cards else None

    def _matrix_view(self, m: Any, width: int) -> Group:
        from oomdoctor.advise.render import _plan_letters

        lang = self.lang
        wide = width >= WIDE_CELLS
        timed = wide and any(c.hours is not None for c in m.cells)
        user_card = self._user_card(m)
        self.letters = _plan_letters(m)
        head = f"{m.model} · {m.n_gpus} × {m.hardware}" if m.hardware else m.model
        parts: list = [Text(head, style="bold")]
        if m.calibration:
            parts.append(Text(show(m.calibration, lang), style="dim"))

        extra = (", " + say("app.adv_runtime", lang) if timed else "") + (f", {say('app.adv_cost', lang)}" if m.priced else "")
        parts.append(Text("\n" + say("app.adv_matrix", lang, extra=extra), style="bold underline"))
        parts.append(Text(say("app.adv_legend", lang), style="dim"))
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
        table.add_column(say("app.adv_card", lang), no_wrap=True, overflow="crop")
        for n in m.counts:
            table.add_column(say("app.adv_gpus_head", lang, n=n), no_wrap=True)
        for card in m.cards:
            mine = card == user_card
            row: list[Text] = [Text(("▶ " if mine else "  ") + card, style="bold" if mine else "")]
            for n in m.counts:
                row.append(self._cell(m.cell(card, n), timed, m.priced, mine and n == m.n_gpus, m.currency))
            table.add_row(*row)
        parts.append(table)
        if self.letters:
            by_key = {tuple(s.slug for s in c.steps): c.steps for c in m.cells if c.steps and c.fits}
            for key, letter in self.letters.items():
                titles = say("advise.why.sep", lang).join(say(step.title, lang) for step in by_key[key])
                parts.append(Padding(Text(f"{letter}: {titles}", style="dim"), (0, 0, 0, 2)))
        over = [c for c in m.cells if c.host_ram_over]
        if over:
            from oomdoctor.advise.render import _host_words

            parts.append(Text(say("advise.legend_host", lang, budget=_host_words(m, lang)), style="yellow"))
        if user_card is None:
            parts.append(Text(say("app.adv_not_in_catalog", lang), style="dim"))
        else:
            parts.append(Text("\n" + say("app.adv_your_card", lang, card=user_card), style="bold underline"))
            parts.append(self._card_plans(m, user_card))
        best = m.cheapest
        if best is not None:
            parts.append(Text("\n" + say("app.adv_cheapest", lang, n=best.n_gpus, card=best.card,
                                         hours=hours(best.hours),
                                         cost=f"{best.cost:,.2f} {m.currency}".strip()), style="bold"))
        if m.strategies:
            parts.append(self._strategies(m, wide))
        if m.assumptions:
            parts.append(Text("\n" + say("app.adv_assumptions", lang), style="bold underline"))
            parts.append(_bullets([show(a, lang) for a in m.assumptions], style="dim"))
        return Group(*parts)

    def _cell(self, cell: Any, timed: bool, priced: bool, mine: bool, currency: str = "") -> Text:
        if cell is None:
            return Text("")
        letter = getattr(self, "letters", {}).get(tuple(s.slug for s in cell.steps), "?")
        words = matrix_cell(cell.fits, cell.fits_as_configured, letter,
                            cell.final_peak_gib if cell.fits else cell.peak_gib, self.lang)
        if cell.host_ram_over:
            words += "!"
        if timed and cell.fits:
            words += " " + hours(cell.hours)
        if priced and cell.fits and cell.cost is not None:
            words += f" {cell.cost:,.0f} {currency}".rstrip() + ("*" if cell.cheapest else "")
        colour = "red" if not cell.fits else ("green" if cell.fits_as_configured else "yellow")
        return Text(words, style=colour + (" bold reverse" if mine else ""))

    def _card_plans(self, m: Any, card: str) -> Padding:
        lang = self.lang
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        sep = say("advise.why.sep", lang)
        for n in m.counts:
            cell = m.cell(card, n)
            if cell is None:
                continue
            mark = "▶" if n == m.n_gpus else " "
            if not cell.fits:
                line = Text(say("app.adv_cell_none", lang, n=n, peak=gib(cell.peak_gib)), style="red")
            elif cell.fits_as_configured:
                line = Text(say("app.adv_cell_fits", lang, n=n, peak=gib(cell.peak_gib)), style="green")
            else:
                titles = sep.join(say(step.title, lang) for step in cell.steps)
                line = Text(say("app.adv_cell_plan", lang, n=n, steps=titles)
                            + f" → {gib(cell.final_peak_gib)}")
            grid.add_row(mark, line)
        return Padding(grid, (0, 0, 0, 1))

    def _strategies(self, m: Any, wide: bool) -> Group:
        from oomdoctor.advise.render import host_budget

        lang = self.lang
        budget = next((c.capacity_gib * (1 - m.headroom) for c in m.cells if c.card == self._user_card(m)), None)
        if not m.hardware:
            title = say("advise.strategies_any", lang, n=m.n_gpus)
        elif budget:
            title = say("app.adv_strategies", lang, n=m.n_gpus, card=m.hardware, budget=gib(budget))
        else:
            title = say("app.adv_strategies_on", lang, n=m.n_gpus, card=m.hardware)
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
        table.add_column(say("app.adv_strategy", lang), ratio=1)
        table.add_column(say("app.adv_gpus", lang), justify="right", no_wrap=True)
        table.add_column(say("app.adv_peak", lang), justify="right", no_wrap=True)
        table.add_column(say("app.adv_fits", lang), justify="center", no_wrap=True)
        table.add_column(say("app.adv_host", lang), justify="right", no_wrap=True)
        table.add_column(say("app.adv_speed", lang), justify="right", no_wrap=True)
        if wide:
            table.add_column(say("app.adv_step", lang), justify="right", no_wrap=True)
        table.add_column(say("app.adv_run", lang), justify="right", no_wrap=True)
        if m.priced:
            table.add_column(say("app.adv_cost", lang), justify="right", no_wrap=True)
        for r in m.strategies:
            label: Any = Text(say(r.label, lang), style="bold")
            if r.speed_why and r.key != "single":
                why = say("advise.why.sep", lang).join(say(w, lang) for w in r.speed_why)
                label = Group(label, Padding(Text(why, style="dim"), (0, 0, 0, 2)))
            host = f"{r.host_ram_gib:.0f} GiB" if r.host_ram_gib >= 0.5 else "-"
            if r.host_ram_gib >= 0.5 and r.host_ram_gib > host_budget(m, r.n_gpus):
                host += "!"
            fits = (Text("✓", style="green") if r.fits else Text("✗", style="red")) if m.hardware else "-"
            row = [label, str(r.n_gpus), gib(r.peak_gib), fits, host,
                   f"{r.speed:.2f}x" if r.speed is not None else "-"]
            if wide:
                row.append(f"{r.step_s:.1f}s" if r.step_s is not None else "-")
            row.append(hours(r.hours) if r.fits else "-")
            if m.priced:
                row.append(f"{r.cost:,.2f}" if r.fits and r.cost is not None else "-")
            table.add_row(*row)
        return Group(Text("\n" + title, style="bold underline"), table,
                     Text(say("app.adv_speed_note", lang), style="dim"))


def _bullets(lines: Sequence[str], style: str = "") -> Padding:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for line in lines:
        grid.add_row("•", Text(line, style=style))
    return Padding(grid, (0, 0, 0, 1))
