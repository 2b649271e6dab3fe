"""The plain report: what a person reads in a terminal with no TUI, or in a pipe.

rich handles colour, NO_COLOR and width in a terminal. With no terminal rich would print plain text,
and print_report writes those same characters through views/plaintext.py without importing rich
(about 60 ms sooner); the helpers below build rich or plain look-alike objects from one `kit`.
Sentences that can run past the width are wrapped here, by terminal cells, with a hanging indent (a
label's column, a bullet's text), so a wrapped line never starts under the label, in English or Chinese;
into a pipe or a file the width is $COLUMNS, else 80, and no line ends in spaces.
"""
from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from oomdoctor.facts import (
    COMPONENTS,
    CrashReport,
    Estimate,
    Finding,
    Plan,
    Report,
    Step,
)
from oomdoctor.views.bars import COLOURS, GLYPHS, bar_cells
from oomdoctor.views.describe import (
    change_words,
    component_name,
    diagnosis_lines,
    event_line,
    event_numbers,
    framework_name,
    install_commands,
    model_lines,
    model_warning_lines,
    override_block,
    read_as_line,
    setup_line,
)
from oomdoctor.words import cell_width, pad_cells, say, show, wrap_cells

PIPE_WIDTH = 80     # into a pipe or a file without $COLUMNS: what `less` and most terminals show

if TYPE_CHECKING:
    from typing import Union

    from rich.console import Console

    from oomdoctor.views.plaintext import PlainConsole

    AnyConsole = Union[Console, PlainConsole]

class Kit(NamedTuple):
    """The Text and Table classes a report is built from: rich's, or views/plaintext.py's look-alikes."""

    Text: Any
    Table: Any


def rich_kit() -> Kit:
    from rich.table import Table
    from rich.text import Text

    return Kit(Text, Table)


def _kit_of(console: AnyConsole) -> Kit:
    kit = getattr(console, "kit", None)
    return Kit(*kit) if kit is not None else rich_kit()


def _label(text: str) -> str:
    """A head-line label padded to the report's 7-cell column ("Crash  ", "崩溃   "), or two cells past a
    longer one ("Read as  ")."""
    return pad_cells(text, max(6, cell_width(text) + 1)) + " "


def hang(parts: list, width: int, indent: int, kit: Kit | None = None, initial: str = "") -> list:
    """Styled lines of `parts` ((text, style) pairs or plain strings) wrapped to `width` cells by words, every
    line after the first `indent` cells in (or starting with `initial` when given: "# " for a shell comment)."""
    Text = (kit or rich_kit()).Text
    pieces = [(p, "") if isinstance(p, str) else p for p in parts]
    whole = Text.assemble(*pieces)
    plain = "".join(t for t, _ in pieces)
    prefix = initial or " " * indent
    out, cursor = [], 0
    for n, line in enumerate(wrap_cells(plain, max(indent + 8, width), indent=prefix)):
        content = line[len(prefix):] if n else line
        at = plain.find(content, cursor) if content else cursor
        if at < 0:                       # not found as it was (cannot happen with wrap_cells): show it plain
            piece = Text(content)
        else:
            piece = whole[at:at + len(content)]
            cursor = at + len(content)
        out.append(Text(prefix) + piece if n else piece)
    return out


def print_hanging(console: AnyConsole, parts: list, indent: int, style: str = "", initial: str = "") -> None:
    kit = _kit_of(console)
    styled = [(p, style) if isinstance(p, str) else p for p in parts]
    for line in hang(styled, console.width, indent, kit, initial):
        console.print(line)


def bar(est: Estimate, width: int, kit: Kit | None = None):
    """A stacked bar of the components, scaled so the capacity line sits at a fixed column."""
    Text = (kit or rich_kit()).Text
    scale_gib = max(est.peak_gib, est.capacity_gib) or 1.0
    text = Text()
    cap_col = round(width * est.capacity_gib / scale_gib)
    used = 0
    parts = [(name, max(0.0, est.components.get(name, 0.0))) for name in COMPONENTS]
    for name, cells in bar_cells(parts, scale_gib, width):
        text.append(GLYPHS[name] * cells, style=COLOURS[name])
        used += cells
    if used < width:
        text.append(" " * (width - used))
    # Mark the capacity line at its column.
    if 0 < cap_col <= width:
        text = text[:cap_col] + Text("|", style="bold red") + text[cap_col:]
    return text


def memory_table(est: Estimate, title: str, kit: Kit | None = None, lang: str = "en"):
    Text, Table = kit or rich_kit()
    table = Table(title=title, title_justify="left", show_header=True, box=None, pad_edge=False)
    table.add_column(say("report.col.component", lang))
    table.add_column(say("report.col.gib", lang), justify="right")
    table.add_column(say("report.col.share", lang), justify="right")
    total = sum(est.components.values()) or 1.0
    for name in COMPONENTS:
        v = est.components.get(name, 0.0)
        table.add_row(Text(f"{GLYPHS[name]} {component_name(name, lang)}", style=COLOURS[name]), f"{v:.2f}",
                      f"{100 * v / total:.0f}%")
    table.add_row(Text(say("report.allocated", lang)), f"{est.allocated_gib:.2f}", "")
    if "reserved_gib" in est.details:
        table.add_row(Text(say("report.reserved", lang)), f"{est.details['reserved_gib']:.2f}", "")
    table.add_row(Text(say("report.peak", lang), style="bold"), Text(f"{est.peak_gib:.2f}", style="bold"), "")
    return table


def verdict(est: Estimate, kit: Kit | None = None, lang: str = "en"):
    Text = (kit or rich_kit()).Text
    numbers = dict(peak=est.peak_gib, cap=est.capacity_gib)
    if est.fits:
        return Text(say("report.fits", lang, free=est.headroom_gib, **numbers), style="bold green")
    if est.length_bound_gib > 0:
        return Text(say("report.may_not_fit", lang, bound=est.length_bound_gib, **numbers), style="bold yellow")
    if est.peak_gib <= est.capacity_gib:
        return Text(say("report.too_tight", lang, pct=100 * est.headroom, **numbers), style="bold yellow")
    return Text(say("report.no_fit", lang, **numbers), style="bold red")


def _saving(step: Step) -> str:
    """GiB a step saves, as −x; a step that costs GPU memory (giving back host RAM) shows +x."""
    return f"+{step.adds_gib:.2f}" if step.adds_gib else f"−{max(0.0, step.saved_gib):.2f}"


def plan_table(plan: Plan, start: Estimate, title: str, kit: Kit | None = None, lang: str = "en"):
    Text, Table = kit or rich_kit()
    table = Table(title=title, title_justify="left", box=None, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column(say("report.col.step", lang))
    table.add_column(say("report.col.peak", lang), justify="right")
    table.add_column(say("report.col.saves", lang), justify="right")
    table.add_column(say("report.col.costs", lang))
    for i, step in enumerate(plan.steps, 1):
        title_text = Text(say(step.title, lang))
        if step.applicability == "needs-consent":
            title_text.append(say("report.needs_consent", lang), style="yellow")
        changes = change_words(step, lang)
        if changes:
            title_text.append(f"\n   {changes}", style="dim")
        costs = say("common.list_sep", lang).join(say(f"plan.cost.{c}", lang) for c in step.costs)
        table.add_row(str(i), title_text, f"{step.estimate.peak_gib:.2f}", _saving(step),
                      costs or say("plan.cost.none", lang))
    return table


def fmt(value: object, lang: str = "en") -> str:
    if isinstance(value, bool):
        return say("common.on" if value else "common.off", lang)
    if value is None:
        return say("common.none", lang)
    return str(value)


def cost_line(cost: Any, lang: str = "en") -> str:
    """The plan's cost (planner.costs) in one line: quality, modelled step time, what the setup adds."""
    setup = [say("report.plan_cost.file", lang) if item["kind"] == "file" else
             say("report.plan_cost.launcher", lang, n=item["what"]) if item["kind"] == "launcher" else item["what"]
             for item in cost.get("setup", ())]
    quality = say("report.plan_cost.quality" if cost.get("quality") else "report.plan_cost.no_quality", lang)
    return say("report.plan_cost", lang, quality=quality, factor=cost.get("time_factor", 1.0),
               setup=say("common.list_sep", lang).join(setup) if setup else say("report.plan_cost.nothing", lang))


def _same_steps(a: Plan, b: Plan) -> bool:
    return [(s.rule, s.changes) for s in a.steps] == [(s.rule, s.changes) for s in b.steps]


def render(report: Report, console: AnyConsole, *, show_patch: bool = True, lang: str = "en") -> None:
    """Print the report on `console`: a rich Console, or a views.plaintext.PlainConsole."""
    kit = _kit_of(console)
    _render_head(report, console, kit, lang)
    est = report.estimate
    if est is None:
        return
    console.print()
    width = max(20, min(60, console.width - 20))
    _render_estimate(report, est, console, kit, width, lang)
    plan = report.plan
    if est.fits and not plan.steps and not plan.proposed:
        return
    console.print()
    _render_plan(report, est, console, kit, width, lang)
    _render_tail(report, console, kit, show_patch, lang)


def _render_head(report: Report, console: AnyConsole, kit: Kit, lang: str) -> None:
    """The heading: the version and model, the crash, the card, the setup as read, the model, the warnings."""
    from oomdoctor import __version__

    s, crash, hw = report.setup, report.crash, report.hardware
    head = kit.Text(f"oomdoctor {__version__}", style="bold")
    if s is not None:
        head.append(f" — {s.model} ({framework_name(s)})")
    console.print(head)
    if crash is not None:
        render_crash(crash, console, lang)
    if hw is not None:
        others = say("report.gpu_others", lang, gib=hw.other_procs_gib) if hw.other_procs_gib else ""
        source = say(f"report.source.{hw.source}", lang) if hw.source in ("log", "flag", "nvml") else hw.source
        gpu = hw.gpu if hw.gpu not in ("", "unknown") else say("report.card_unnamed", lang)
        _head_line(console, say("report.label.gpu", lang),
                   say("report.gpu_line", lang, gpu=gpu, gib=hw.gpu_gib, n=hw.n_gpus, source=source) + others)
    if s is not None:
        _head_line(console, say("report.label.setup", lang), setup_line(s, lang))
        read_as = read_as_line(s, lang)
        if read_as:
            _head_line(console, say("report.label.read_as", lang), read_as)
    if report.shape is not None:
        model_head, notes = model_lines(report.shape, lang)
        _head_line(console, say("report.label.model", lang), model_head)
        for warning in model_warning_lines(report.shape, lang):
            print_hanging(console, ["       " + say("report.model_warning", lang, text=warning)], 9, style="bold yellow")
        for note in notes:
            print_hanging(console, [f"       · {note}"], 9, style="yellow")
    for w in report.warnings:
        line = say("report.note", lang, note=show(w, lang))
        print_hanging(console, [line], cell_width(say("report.note", lang, note="")), style="yellow")


def _render_estimate(report: Report, est: Estimate, console: AnyConsole, kit: Kit, width: int, lang: str) -> None:
    """The memory table, the bar against the card, the verdict, the log's own readings, the finding, the notes."""
    Text = kit.Text
    crash = report.crash
    console.print(memory_table(est, say("report.memory_title", lang), kit, lang))
    console.print(Text("  ") + bar(est, width, kit) + Text("  " + say("report.capacity_mark", lang,
                                                                         gib=est.capacity_gib)))
    console.print(verdict(est, kit, lang))
    if crash is not None and crash.memory_samples:
        from oomdoctor.calibrate import measured_curve

        curve = measured_curve(crash)
        if curve:
            shown = ", ".join(f"{x}: {g:.1f}" for x, g in curve[-6:])
            console.print(Text("  " + say("report.measured", lang, points=shown), style="cyan"))
    if report.finding is not None:
        render_finding(report.finding, console, lang)
    floor = report.finding.floor.message if report.finding is not None and report.finding.floor is not None else None
    for note in est.notes:
        if note != floor:
            print_hanging(console, [f"  · {show(note, lang)}"], 4, style="dim")


def _render_plan(report: Report, est: Estimate, console: AnyConsole, kit: Kit, width: int, lang: str) -> None:
    """The plan (or the least-cost plan beside it), its verdict and cost, the advice, and every rung's state."""
    plan = report.plan
    if plan.steps:
        _render_steps(report, est, console, kit, width, lang)
    if report.least_cost is not None and report.least_cost.steps and not _same_steps(report.least_cost, plan):
        console.print()
        console.print(plan_table(report.least_cost, est, say("report.least_title", lang), kit, lang))
        console.print(verdict(report.least_cost.steps[-1].estimate, kit, lang))
    if not plan.fits and not est.fits:
        console.print(kit.Text(say("report.no_plan_fits", lang), style="bold red"))
    for advice in plan.advice:
        print_hanging(console, [f"  → {say(advice, lang)}"], 4, style="yellow")
    if plan.rungs:
        render_rungs(plan, console, lang)
    elif plan.skipped:
        # Rungs skipped for the same reason are named together, so the reason is read once.
        by_reason: dict[str, list[str]] = {}
        for k in plan.skipped:
            by_reason.setdefault(say(k.reason, lang), []).append(k.rule)
        for reason, rules in list(by_reason.items())[:8]:
            print_hanging(console, [say("report.skipped", lang, rules=", ".join(rules), reason=reason)], 2,
                          style="dim")


def _render_steps(report: Report, est: Estimate, console: AnyConsole, kit: Kit, width: int, lang: str) -> None:
    plan, s = report.plan, report.setup
    title = say("report.plan_title" if not est.fits else "report.plan_title_fits", lang)
    console.print(plan_table(plan, est, title, kit, lang))
    final = plan.steps[-1].estimate
    console.print(kit.Text("  ") + bar(final, width, kit))
    console.print(verdict(final, kit, lang))
    if plan.cost:
        print_hanging(console, [cost_line(plan.cost, lang)], 2, style="dim")
    installs = install_commands(s, plan.steps[-1].setup) if s is not None else []
    if installs:
        # without the package the patched run stops at its start: said where the plan is, not in a cost
        print_hanging(console, [(say("report.install", lang, cmds=" ; ".join(installs)), "bold")], 2)
    # a verl YAML config is patched (the diff below holds these keys); a script or a pasted command is not
    head, overrides = override_block(s, plan.steps[-1].setup, plan, bool(report.patch), lang)
    if overrides:
        print_hanging(console, [head], 2)
        for line in overrides:
            console.print(kit.Text("    " + line, style="bold"))
    dropped = plan.rungs_in("dropped")
    if dropped:
        titles = say("common.list_sep", lang).join(say(r.steps[0].title, lang) for r in dropped if r.steps)
        print_hanging(console, [say("report.dropped", lang, n=len(dropped), titles=titles)], 2, style="dim")


def _render_tail(report: Report, console: AnyConsole, kit: Kit, show_patch: bool, lang: str) -> None:
    """The environment to export and the notes (lines to paste into a shell), then the patch."""
    if report.env or report.notes:
        console.print()
        from oomdoctor.shellsafe import export_line

        for name, value in report.env.items():
            # Never wrapped: the line is for pasting into a shell whole.
            console.print(kit.Text(export_line(name, value)), soft_wrap=True)
        for note in report.notes:
            # each wrapped line stays a comment, so the block can be pasted into a shell
            print_hanging(console, [f"# {say(note, lang)}"], 2, initial="# ")
    if show_patch and report.patch:
        console.print()
        console.print(kit.Text(say("report.patch_title", lang), style="bold"))
        console.print(kit.Text(report.patch), highlight=False, markup=False)


def render_finding(finding: Finding, console: AnyConsole, lang: str = "en") -> None:
    """Whether the config explains the crash; when it does not, what to check first (before the plan), each
    check with the log lines it rests on."""
    kit = _kit_of(console)
    beyond = finding.cause == "beyond_config"
    console.print()
    label = _label(say("finding.title", lang))
    print_hanging(console, [(label, "bold"), (say(finding.message, lang), "bold red" if beyond else "")],
                  cell_width(label))
    if finding.floor is not None and finding.floor.applied:
        print_hanging(console, [f"  · {say(finding.floor.message, lang)}"], 4, style="cyan")
    if not finding.clues:
        return
    console.print(kit.Text("  " + say("finding.checks", lang), style="bold"))
    for n, clue in enumerate(finding.clues, 1):
        lead = f"  {n}. "
        print_hanging(console, [lead, say(clue.message, lang)], cell_width(lead))
        print_hanging(console, [" " * cell_width(lead), ("→ " + say(clue.check, lang), "yellow")], cell_width(lead) + 2)
        for ev in clue.evidence[:3]:
            where = f"{ev.line}: " if ev.line else ""
            print_hanging(console, [" " * cell_width(lead), (f"│ {where}{ev.text}", "dim")], cell_width(lead) + 2)


def _head_line(console: AnyConsole, label: str, *parts: Any) -> None:
    """A head line: its label in a column of its own, wrapped lines under the text, not under the label."""
    lead = _label(label)
    print_hanging(console, [(lead, "bold"), *parts], cell_width(lead))


STATE_STYLE = {"applied": "green", "proposed": "yellow", "dropped": "dim", "skipped": "dim", "not_reached": "dim"}


def render_rungs(plan: Plan, console: AnyConsole, lang: str = "en") -> None:
    """Every rung of the ladder in its order, with what the plan did with it; neighbours in the same state
    for the same reason share a line, so a reason is read once."""
    Text = _kit_of(console).Text
    console.print()
    console.print(Text(say("report.rungs_title", lang), style="bold"))
    groups: list[tuple[str, str, list[str]]] = []
    for rung in plan.rungs:
        text = _rung_text(rung, plan, lang)
        if groups and groups[-1][0] == rung.state and groups[-1][1] == text and rung.state != "applied":
            groups[-1][2].append(rung.rule)
        else:
            groups.append((rung.state, text, [rung.rule]))
    for state, text, rules in groups:
        named = f"{rules[0]}–{rules[-1]}" if len(rules) > 2 else ", ".join(rules)
        head = say("report.rung_head", lang, rules=named, state=say(f"plan.state.{state}", lang))
        style = STATE_STYLE.get(state, "")
        print_hanging(console, [("  " + head, f"bold {style}".strip()), (text, style)], 4)


def _rung_text(rung: Any, plan: Plan, lang: str) -> str:
    if rung.state == "applied":
        first = plan.steps.index(rung.steps[0]) + 1 if rung.steps and rung.steps[0] in plan.steps else 0
        times = say("report.rung_times", lang, n=len(rung.steps)) if len(rung.steps) > 1 else ""
        return say("report.rung_applied", lang, title=say(rung.steps[0].title, lang), n=first, times=times)
    if rung.state == "proposed" and rung.steps:
        step = rung.steps[0]
        return say("report.rung_proposed", lang, title=say(step.title, lang), saved=step.saved_gib,
                   peak=step.estimate.peak_gib, rule=rung.rule)
    if rung.state == "dropped" and rung.steps:
        return say("report.rung_dropped", lang, title=say(rung.steps[0].title, lang), why=show(rung.reason, lang))
    return show(rung.reason, lang) if rung.reason is not None else ""


def render_crash(crash: CrashReport, console: AnyConsole, lang: str = "en") -> None:
    indent = " " * 7
    e = crash.primary
    if e is None:
        _head_line(console, say("report.label.log", lang), say("report.no_oom_in", lang, file=crash.file))
        return
    _head_line(console, say("report.label.crash", lang), f"{crash.file}:{e.line}  ", (event_line(e, lang), "bold red"))
    numbers = event_numbers(e, lang)
    if numbers:
        print_hanging(console, [indent + numbers], 7)
    if e.phase_evidence is not None:
        text = e.phase_evidence.text
        shown = text if len(text) <= 70 else text[:69] + "…"
        print_hanging(console, [indent + say("crash.evidence.line", lang, line=e.phase_evidence.line, text=shown)], 7,
                      style="dim")
    if e.confidence != "certain":
        print_hanging(console, [indent + say(f"crash.confidence.{e.confidence}", lang)], 7, style="yellow")
    ranks = sorted({ev.rank for ev in crash.events if ev.rank is not None})
    if len(ranks) > 1:
        print_hanging(console, [indent + say("report.ranks", lang, n=len(crash.events),
                                             ranks=", ".join(map(str, ranks)))], 7)
    for line in diagnosis_lines(crash.diagnoses, lang):
        print_hanging(console, [f"{indent}· {line}"], 9, style="yellow")
    for check in crash.checks:
        print_hanging(console, [f"{indent}· {say(check, lang)}"], 9, style="yellow")
    if crash.host_ram_gib:
        if crash.host_ram_used_pct:
            line = say("report.host_ram_used", lang, gib=crash.host_ram_gib, pct=crash.host_ram_used_pct)
        else:
            line = say("report.host_ram", lang, gib=crash.host_ram_gib)
        print_hanging(console, [indent + line], 7)


def pipe_width(environ: Any = None) -> int:
    """Columns for a pipe or a file: $COLUMNS when it is a sane number, else PIPE_WIDTH."""
    text = (os.environ if environ is None else environ).get("COLUMNS", "")
    return int(text) if text.strip().isdigit() and 20 <= int(text) <= 1000 else PIPE_WIDTH


def terminal_width(environ: Any = None, stream: Any = None) -> int:
    """Columns a plain surface may use: $COLUMNS when it is a sane number, else the terminal's width when
    stdout is one, else PIPE_WIDTH (80)."""
    env = os.environ if environ is None else environ
    text = env.get("COLUMNS", "")
    if text.strip().isdigit() and 20 <= int(text) <= 1000:
        return int(text)
    out = sys.stdout if stream is None else stream
    try:
        if out.isatty():
            cols = os.get_terminal_size(out.fileno()).columns
            if 20 <= cols <= 1000:
                return cols
    except (AttributeError, OSError, ValueError):
        pass
    return PIPE_WIDTH


def print_report(report: Report, *, show_patch: bool = True, lang: str = "en") -> None:
    """The plain report on stdout: rich in a terminal, the same characters without rich in a pipe or file."""
    if sys.stdout.isatty():
        from rich.console import Console

        render(report, Console(highlight=False), show_patch=show_patch, lang=lang)
        return
    width = pipe_width()
    if _rich_writes_plain_text():
        from oomdoctor.views.plaintext import NeedsRich, PlainConsole

        plain = PlainConsole(width)
        try:
            render(report, plain, show_patch=show_patch, lang=lang)
        except NeedsRich:
            pass        # something rich lays out its own way: let rich write it all
        else:
            sys.stdout.write(_no_trailing_spaces(plain.text()))
            return
    import io

    from rich.console import Console

    out = io.StringIO()
    render(report, Console(highlight=False, width=width, file=out), show_patch=show_patch, lang=lang)
    sys.stdout.write(_no_trailing_spaces(out.getvalue()))


def _no_trailing_spaces(text: str) -> str:
    """Tables pad their cells to the column: a file or a pipe gets the lines without the padding at the end."""
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _rich_writes_plain_text() -> bool:
    """True when rich.console.Console would see no terminal and write no escape codes (rich 15 rules)."""
    env = os.environ
    if env.get("TTY_COMPATIBLE") == "1" or env.get("FORCE_COLOR"):
        return False
    if getattr(sys.stdin, "__module__", "").startswith("idlelib"):
        return False
    # rich reports a UnicodeEncodeError its own way; only UTF-8 streams take the plain path.
    return (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "").replace("_", "") == "utf8"


def render_to_string(report: Report, width: int = 100, show_patch: bool = True, lang: str = "en") -> str:
    from rich.console import Console

    console = Console(width=width, record=True, force_terminal=False, color_system=None, file=io.StringIO())
    render(report, console, show_patch=show_patch, lang=lang)
    return console.export_text()
