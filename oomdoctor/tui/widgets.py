"""The app's own widgets: the memory bars and the checkbox list of plan steps."""
from __future__ import annotations

from typing import Sequence

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import OptionList

from oomdoctor.facts import Estimate, Step
from oomdoctor.views.bars import COLOURS, GLYPHS, bar_cells, segments
from oomdoctor.views.describe import change_words, component_name, step_costs
from oomdoctor.words import cell_width, gib, pad_cells, say, wrap_cells

LABEL_CELLS = 7
NUMBER_CELLS = 12   # " 94.2 GiB ✗"


class Prose:
    """A paragraph that wraps by terminal cells in Chinese (between any two characters), like Rich in English.

    Rich breaks only at spaces, so "LoRA 冻结……" would leave "LoRA" alone on a line before the Chinese run.
    """

    def __init__(self, text: str, style: str = "", lang: str = "en") -> None:
        self.text = text
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


class StepList(OptionList):
    """The plan's steps as checkboxes. Space or enter toggles the highlighted step."""

    BINDINGS = [
        Binding("space", "toggle", "app.key_toggle"),
    ]

    class Changed(Message):
        """The set of kept steps changed."""

        def __init__(self, step_list: "StepList", keep: tuple[int, ...]) -> None:
            super().__init__()
            self.step_list = step_list
            self.keep = keep

        @property
        def control(self) -> "StepList":
            return self.step_list

    def __init__(self, *, lang: str = "en", id: str | None = None) -> None:
        super().__init__(id=id)
        self.lang = lang
        from oomdoctor.tui.dialogs import localize_bindings

        localize_bindings(self, lang)
        self.steps: tuple[Step, ...] = ()
        self.titles: tuple[str, ...] = ()
        self.keep: set[int] = set()

    def set_steps(self, steps: Sequence[Step], keep: Sequence[int]) -> None:
        self.steps = tuple(steps)
        self.titles = tuple(say(s.title, self.lang) for s in self.steps)
        self.keep = set(keep)
        highlighted = self.highlighted
        self.set_options([self._prompt(i) for i in range(len(self.steps))])
        if self.steps:
            self.highlighted = min(highlighted or 0, len(self.steps) - 1)

    def set_keep(self, keep: Sequence[int]) -> None:
        self.keep = set(keep)
        for i in range(len(self.steps)):
            self.replace_option_prompt_at_index(i, self._prompt(i))
        self.post_message(self.Changed(self, tuple(sorted(self.keep))))

    def _prompt(self, i: int) -> Text:
        step = self.steps[i]
        box = "[x]" if i in self.keep else "[ ]"
        costs_w = max(cell_width(step_costs(s, self.lang)) for s in self.steps)
        title_w = max(16, (self.size.width or 80) - 4 - 4 - 12 - costs_w - 1)
        title = self.titles[i]
        if cell_width(title) > title_w:
            title = pad_cells(title, title_w - 1) + "…"
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{box} ", style="bold")
        text.append(f"{i + 1}. " + pad_cells(title, title_w))
        text.append(f" {-step.saved_gib:+6.1f} GiB ", style="bold")
        text.append(step_costs(step, self.lang), style="dim")
        return text

    def action_toggle(self) -> None:
        i = self.highlighted
        if i is None or not self.steps:
            return
        self.set_keep(sorted(self.keep ^ {i}))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_toggle()

    def on_resize(self) -> None:
        if self.steps:
            for i in range(len(self.steps)):
                self.replace_option_prompt_at_index(i, self._prompt(i))


def step_detail(step: Step, index: int, lang: str = "en", *, cost_text: str = "") -> Group:
    """What the step changes, what it saves and costs, and why it helps; `cost_text`: the rule's own words."""
    text = Text()
    text.append(say("app.step_n", lang, n=index + 1), style="bold")
    text.append(change_words(step, lang) or say(step.title, lang))
    text.append("\n")
    common = dict(costs=step_costs(step, lang), rule=step.rule, slug=step.slug)
    if step.adds_gib:               # giving memory back to the host costs GPU memory
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
