"""The app's own widgets: the memory bars and the checkbox list of plan steps."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import OptionList

from oomdoctor.facts import Estimate, Plan, Step
from oomdoctor.facts import Text as FText
from oomdoctor.tui.dialogs import Localized
from oomdoctor.views.bars import COLOURS, GLYPHS, bar_cells, segments
from oomdoctor.views.describe import change_words, component_name, step_costs
from oomdoctor.words import cell_width, clean, gib, pad_cells, say, wrap_cells

if TYPE_CHECKING:
    from oomdoctor.planner import RuleBook

LABEL_CELLS = 7
NUMBER_CELLS = 12   # " 94.2 GiB ✗"


class Prose:
    """A paragraph that wraps by terminal cells in Chinese (between any two characters), like Rich in English.

    Rich breaks only at spaces, so "LoRA 冻结……" would leave "LoRA" alone on a line before the Chinese run.
    """

    def __init__(self, text: str, style: str = "", lang: str = "en") -> None:
        self.text = clean(text)         # a log line or a rule's text never drives the terminal
        self.style = style
        self.lang = lang

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.lang != "zh":
            yield Text(self.text, style=self.style)
            return
        for paragraph in self.text.split("\n"):
            for line in wrap_cells(paragraph, max(8, options.max_width)) or [""]:
                yield Text(line, style=self.style, no_wrap=True, overflow="fold")


class MemoryBars(Widget):
    """One horizontal stacked bar per estimate, all on one scale, with the GPU's capacity drawn across.

    Every component has its own glyph as well as its own colour, so the picture reads with NO_COLOR.
    """

    DEFAULT_CSS = """
    MemoryBars { height: auto; }
    """

    def __init__(self, *, legend: bool = True, lang: str = "en", id: str | None = None) -> None:
        super().__init__(id=id)
        self.legend = legend
        self.lang = lang
        self.rows: list[tuple[str, Estimate]] = []

    def show(self, rows: Sequence[tuple[str, Estimate | None]]) -> None:
        self.rows = [(label, est) for label, est in rows if est is not None]
        self.refresh(layout=True)

    def render(self) -> Text:
        width = max(30, self.size.width or 80)
        if not self.rows:
            return Text(say("app.no_estimate", self.lang))
        capacity = self.rows[0][1].capacity_gib
        headroom = self.rows[0][1].headroom
        # Past twice the capacity the exact length tells nothing more; the plan's bar stays readable.
        scale = min(max([capacity] + [est.peak_gib for _, est in self.rows]), 2.0 * capacity) * 1.03
        bar_w = width - LABEL_CELLS - NUMBER_CELLS
        cap_cell = min(bar_w - 1, round(capacity / scale * bar_w))
        limit_cell = min(bar_w - 1, round(capacity * (1.0 - headroom) / scale * bar_w))
        text = Text()
        for n, (label, est) in enumerate(self.rows):
            if n:
                text.append("\n")
            # Padded by terminal cells: a Chinese label is two cells a character.
            text.append(pad_cells(pad_cells(label, LABEL_CELLS - 1), LABEL_CELLS), style="bold")
            cells: list[tuple[str, str]] = []
            for name, count in bar_cells(segments(est), scale, bar_w):
                cells.extend([(GLYPHS[name], COLOURS[name])] * count)
            cells.extend([(" ", "")] * (bar_w - len(cells)))
            if est.peak_gib > scale:
                cells[-1] = ("»", "bold red")
            cells[limit_cell] = ("╎", "bold")
            cells[cap_cell] = ("┃", "bold red")
            for glyph, style in cells:
                text.append(glyph, style=style)
            text.append(f" {est.peak_gib:5.1f} GiB ", style="bold")
            text.append("✓" if est.fits else "✗", style="bold green" if est.fits else "bold red")
        if self.legend:
            text.append_text(self._legend(width, capacity, headroom))
        return text

    def _legend(self, width: int, capacity: float, headroom: float) -> Text:
        present = {name for _, est in self.rows for name, value in segments(est) if value > 0}
        items = [Text.assemble((GLYPHS[name] * 2, COLOURS[name]), f" {component_name(name, self.lang)}")
                 for name in GLYPHS if name in present]
        items.append(Text.assemble(("┃", "bold red"), f" {capacity:.1f} GiB"))
        items.append(Text.assemble(("╎", "bold"), " " + say("app.fit_limit", self.lang, free=f"{headroom:.0%}")))
        return wrap_legend(items, width, LABEL_CELLS)


def wrap_legend(items: list[Text], width: int, indent: int) -> Text:
    """Legend items on a new line, wrapped by whole items; continuation lines start `indent` cells in,
    under the bars rather than under their labels."""
    out = Text("\n" + " " * indent)
    used = indent
    for i, item in enumerate(items):
        if i and used + 2 + item.cell_len > width:
            out.append("\n" + " " * indent)
            used = indent
        elif i:
            out.append("  ")
            used += 2
        out.append_text(item)
        used += item.cell_len
    return out

    def on_resize(self) -> None:
        # The bar's cells depend on the width: redraw (and re-measure the wrapped legend).
        self.refresh(layout=True)


@dataclass(frozen=True)
class Row:
    """One line of the plan's checklist: a rung that is in the plan (ticked), proposed and waiting for the
    user's yes, or switched off by the user (both unticked)."""

    rule: str
    state: str                      # applied | proposed | off
    title: FText                    # the rule's title, as its file gives it
    steps: tuple[Step, ...] = ()    # applied: its steps; proposed: what it would do; off: none

    @property
    def saved_gib(self) -> float | None:
        return sum(st.saved_gib for st in self.steps) if self.steps else None


def plan_rows(plan: Plan, rules: RuleBook) -> list[Row]:
    """The checklist of a plan, in ladder order: its steps, the rungs waiting for a yes, the rungs switched off."""
    rows: list[Row] = []
    for rung in plan.rungs:
        if rung.state == "applied" and rung.steps:
            rows.append(Row(rung.rule, "applied", rung.steps[0].title, rung.steps))
        elif rung.state == "proposed" and rung.steps:
            rows.append(Row(rung.rule, "proposed", rung.steps[0].title, rung.steps))
        elif rung.state == "skipped" and rung.reason is not None and (
                rung.reason.code == "plan.skip.on_request" or rung.reason.code.startswith("guide.skip_")):
            rule = rules.get(rung.rule) if rules is not None else None
            rows.append(Row(rung.rule, "off", rule.title if rule is not None else FText(rung.rule)))
    if not plan.rungs:          # a plan built by hand, without rungs: its steps
        rows = [Row(st.rule, "applied", st.title, (st,)) for st in plan.steps]
    return rows


class StepList(Localized, OptionList):
    """The plan's rungs as checkboxes. Space or enter toggles the highlighted one: a step leaves the plan
    (the ladder is walked again without it), a proposed rung gets the user's yes and comes in."""

    BINDINGS = [
        Binding("space", "toggle", "app.key_toggle"),
    ]

    class Toggled(Message):
        """The user ticked or unticked a row."""

        def __init__(self, step_list: StepList, row: Row) -> None:
            super().__init__()
            self.step_list = step_list
            self.row = row

        @property
        def control(self) -> StepList:
            return self.step_list

    def __init__(self, *, lang: str = "en", id: str | None = None) -> None:
        super().__init__(id=id)
        self.lang = lang
        self.rows: tuple[Row, ...] = ()

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(st for row in self.rows if row.state == "applied" for st in row.steps)

    def set_rows(self, rows: Sequence[Row]) -> None:
        highlighted_rule = self.rows[self.highlighted].rule if self.rows and self.highlighted is not None \
            and self.highlighted < len(self.rows) else None
        self.rows = tuple(rows)
        self.set_options([self._prompt(i) for i in range(len(self.rows))])
        if self.rows:
            rules = [r.rule for r in self.rows]
            self.highlighted = rules.index(highlighted_rule) if highlighted_rule in rules else 0

    def _mark(self, row: Row) -> str:
        if row.state == "applied":
            return step_costs_words(row, self.lang)
        return say("app.row_needs_yes" if row.state == "proposed" else "app.row_off", self.lang)

    def _prompt(self, i: int) -> Text:
        row = self.rows[i]
        box = "[x]" if row.state == "applied" else "[ ]"
        marks_w = max(cell_width(self._mark(r)) for r in self.rows)
        title_w = max(12, (self.size.width or 80) - 4 - 4 - 12 - marks_w - 1)
        title = say(row.title, self.lang)
        if cell_width(title) > title_w:
            title = pad_cells(title, title_w - 1) + "…"
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{box} ", style="bold")
        number = f"{sum(1 for r in self.rows[:i + 1] if r.state == 'applied')}." if row.state == "applied" else "  "
        text.append(f"{number:<3}" + pad_cells(title, title_w), style="" if row.state == "applied" else "dim")
        saved = row.saved_gib
        text.append(f" {-saved:+6.1f} GiB " if saved is not None else " " * 12, style="bold")
        text.append(self._mark(row), style="yellow" if row.state == "proposed" else "dim")
        return text

    # Textual's DOMNode.action_toggle(attribute_name) flips an attribute; this list's toggle takes none.
    def action_toggle(self) -> None:  # type: ignore[override]
        i = self.highlighted
        if i is None or not self.rows:
            return
        self.post_message(self.Toggled(self, self.rows[i]))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_toggle()

    def on_resize(self) -> None:
        if self.rows:
            for i in range(len(self.rows)):
                self.replace_option_prompt_at_index(i, self._prompt(i))


def step_costs_words(row: Row, lang: str) -> str:
    return step_costs(row.steps[0], lang) if row.steps else ""


def step_detail(step: Step, index: int, lang: str = "en", *, cost_text: str = "", state: str = "applied") -> Group:
    """What the step changes, what it saves and costs, and why it helps; `cost_text`: the rule's own words.
    A proposed step (state) says it waits for the user's yes."""
    text = Text()
    if state == "proposed":
        text.append(say("app.proposed_head", lang), style="bold yellow")
    else:
        text.append(say("app.step_n", lang, n=index + 1), style="bold")
    text.append(change_words(step, lang) or say(step.title, lang))
    text.append("\n")
    common = dict(costs=step_costs(step, lang), rule=step.rule, slug=step.slug)
    if state == "proposed":
        text.append(say("app.step_would_save", lang, saved=gib(step.saved_gib), **common), style="dim")
    elif step.adds_gib:             # giving memory back to the host costs GPU memory
        text.append(say("app.step_uses", lang, more=gib(step.adds_gib), **common), style="dim")
    else:
        text.append(say("app.step_saves", lang, saved=gib(step.saved_gib), **common), style="dim")
    parts: list = [text]
    why = say(step.why, lang)
    if why:
        parts.append(Prose(why, lang=lang))
    if cost_text:
        parts.append(Prose(cost_text, style="dim", lang=lang))
    return Group(*parts)
