"""`--markdown`: the report as GitHub-flavoured Markdown, to paste into an issue thread.

The same Report the plain view renders (and, after `oomdoctor run`, what the watcher saw): the environment,
the crash lines in a fenced block, the memory table, the plan, the patch as a ```diff block, the environment
variables, the memory timeline. Table cells escape `|`; fences are longer than any backtick run they hold.
"""
from __future__ import annotations

import re

from oomdoctor.facts import COMPONENTS, Report
from oomdoctor.views.describe import (
    change_words,
    component_name,
    event_line,
    event_numbers,
    fit_verdict,
    framework_name,
    override_block,
    setup_line,
)
from oomdoctor.words import say


def _cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip() or " "


def _row(cells: list) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _table(head: list, rows: list, right: tuple[int, ...] = ()) -> list[str]:
    rule = ["---:" if i in right else "---" for i in range(len(head))]
    return [_row(head), "| " + " | ".join(rule) + " |"] + [_row(r) for r in rows]


def _fence(body: str, info: str = "text") -> list[str]:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + info, body.rstrip("\n"), ticks]


def _crash_lines(report: Report) -> str:
    """The log lines the diagnosis rests on: the failure message and the line its phase was read from."""
    crash = report.crash
    if crash is None or not crash.events:
        return ""
    out = []
    for e in crash.events[:4]:
        if e.phase_evidence is not None:
            out.append(f"{crash.file}:{e.phase_evidence.line}: {e.phase_evidence.text}")
        out.append(f"{crash.file}:{e.line}: {e.message}")
    return "\n".join(dict.fromkeys(out))


def _plan_section(report: Report, lang: str) -> list[str]:
    """The plan's steps as a table, then a verl run's overrides for its launch command (its script is not
    patched)."""
    lines: list[str] = []
    plan = report.plan
    if plan.steps:
        rows = []
        for i, step in enumerate(plan.steps, 1):
            text = say(step.title, lang)
            changes = change_words(step, lang)
            rows.append([str(i), text + (f" ({changes})" if changes else ""), f"{step.estimate.peak_gib:.2f}",
                         f"{step.saved_gib:.2f}",
                         say("common.list_sep", lang).join(say(f"plan.cost.{c}", lang) for c in step.costs)
                         or say("plan.cost.none", lang)])
        lines += [f"### {say('markdown.plan', lang)}", ""]
        lines += _table(["#", say("report.col.step", lang), say("report.col.peak", lang),
                         say("markdown.saves_gib", lang), say("report.col.costs", lang)], rows, right=(0, 2, 3))
        lines.append("")
        head, overrides = override_block(report.setup, plan.steps[-1].setup, plan, bool(report.patch), lang)
        if overrides:
            lines += [f"### {say('markdown.overrides', lang)}", "", head, ""] + _fence("\n".join(overrides), "sh")
            lines.append("")
    return lines


def render(report: Report, lang: str = "en", *, watch: dict | None = None) -> str:
    from oomdoctor import __version__
    from oomdoctor.views.sparkline import sparkline

    lines = [f"## {say('markdown.title', lang)}", "", say("markdown.made_by", lang, version=__version__), ""]
    # ---- environment
    env_rows = []
    if report.hardware is not None:
        hw = report.hardware
        env_rows.append([say("report.label.gpu", lang), f"{hw.n_gpus} × {hw.gpu or say('common.unknown', lang)} ({hw.gpu_gib:.2f} GiB, {hw.source})"])
    if report.setup is not None:
        s = report.setup
        env_rows.append([say("markdown.framework", lang), framework_name(s)])
        env_rows.append([say("report.label.model", lang), s.model or (report.shape.name if report.shape else "")])
        env_rows.append([say("report.label.setup", lang), setup_line(s, lang)])
    if report.crash is not None and report.crash.versions:
        env_rows.append([say("markdown.versions", lang),
                         ", ".join(f"{k} {v}" for k, v in sorted(report.crash.versions.items()))])
    if env_rows:
        lines += [f"### {say('markdown.environment', lang)}", ""] + _table(["", ""], env_rows) + [""]
    # ---- crash
    crash = report.crash
    if crash is not None and crash.primary is not None:
        e = crash.primary
        lines += [f"### {say('report.label.crash', lang)}", "", f"**{_cell(event_line(e, lang))}**"]
        numbers = event_numbers(e, lang)
        if numbers:
            lines += ["", numbers]
        body = _crash_lines(report)
        if body:
            lines += [""] + _fence(body)
        lines.append("")
    # ---- memory
    est = report.estimate
    if est is not None:
        rows = [[component_name(c, lang), f"{float(est.components.get(c, 0.0)):.2f}"] for c in COMPONENTS]
        rows.append([f"**{say('markdown.allocated', lang)}**", f"**{est.allocated_gib:.2f}**"])
        rows.append([f"**{say('markdown.peak', lang)}**", f"**{est.peak_gib:.2f}**"])
        lines += [f"### {say('report.memory_title', lang)}", ""]
        lines += _table([say("report.col.component", lang), say("report.col.gib", lang)], rows, right=(1,))
        lines += ["", fit_verdict(est, lang), ""]
    lines += _plan_section(report, lang)
    if report.patch:
        lines += [f"### {say('markdown.patch', lang)}", ""] + _fence(report.patch, "diff") + [""]
    if report.env:
        body = "\n".join(f"export {k}={v}" for k, v in report.env.items())
        lines += [f"### {say('markdown.env', lang)}", ""] + _fence(body, "sh") + [""]
    # ---- what the watcher saw
    if watch:
        lines += [f"### {say('markdown.timeline', lang)}", "",
                  say("watch.timeline_heading", lang, samples=watch["samples"], interval=watch["interval_s"]), ""]
        rows, sparks = [], []
        for g in watch["gpus"]:
            rows.append([str(g["index"]), g["name"], f"{g['peak_gib']:.2f}", f"{g['peak_at_s']:.1f}",
                         f"{g['other_gib']:.2f}", f"{g['total_gib']:.1f}"])
            sparks.append(f"GPU {g['index']}  {sparkline(g['series_gib'], 48, g['total_gib'])}")
        lines += _table(["GPU", say("markdown.card", lang), say("markdown.peak_gib", lang),
                         say("markdown.peak_at", lang), say("markdown.others_gib", lang),
                         say("markdown.total_gib", lang)], rows, right=(0, 2, 3, 4, 5))
        lines += [""] + _fence("\n".join(sparks)) + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


__all__ = ["render"]
