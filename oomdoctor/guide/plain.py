"""The walkthrough as a text document (`--walkthrough --plain`, pipes): the same pages, wrapped by cells."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oomdoctor.facts import Report
from oomdoctor.guide.answers import Answers
from oomdoctor.guide.pages import Bar, pages
from oomdoctor.views.bars import GLYPHS
from oomdoctor.views.bars import bar_cells as _bar_cells
from oomdoctor.words import cell_width, wrap_cells

if TYPE_CHECKING:
    from oomdoctor.planner import RuleBook


def render_plain(report: Report, answers: Answers, lang: str, width: int = 78, rules: RuleBook | None = None,
                 options: Any = None) -> str:
    """Every page, one after the other: heading, paragraphs, bars, commands."""
    lines: list[str] = []
    all_pages = pages(report, answers, lang, rules, options, interactive=False)
    for n, page in enumerate(all_pages, 1):
        head = f"{n}/{len(all_pages)}  {page.title}"
        lines += [head, "=" * min(width, cell_width(head)), ""]
        for para in page.paragraphs:
            indent = "  " if para.startswith(("• ", "  ")) else ""
            lines += wrap_cells(para, width, indent)
            lines.append("")
        for bar in page.bars:
            lines += text_bar(bar, width)
            lines.append("")
        if page.code:
            lines += [("    " + ln).rstrip() for ln in page.code.rstrip("\n").splitlines()]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def bar_cells(bar: Bar, cells: int) -> list[tuple[str, int]]:
    """Split `cells` character cells among the segments (scale: the larger of peak and capacity); the rest is "free"."""
    scale = max(bar.peak_gib, bar.capacity_gib, 1e-9)
    out = _bar_cells([(comp, gib) for comp, _name, gib in bar.segments], scale, cells)
    out.append(("free", cells - sum(n for _, n in out)))
    return out


def text_bar(bar: Bar, width: int = 78) -> list[str]:
    cells = max(10, width - 2)
    scale = max(bar.peak_gib, bar.capacity_gib, 1e-9)
    body = "".join(GLYPHS.get(comp, "#") * n if comp != "free" else " " * n for comp, n in bar_cells(bar, cells))
    cap_at = min(cells - 1, int(round(bar.capacity_gib / scale * cells)) - 1) if bar.capacity_gib else cells - 1
    body = body[:cap_at] + "|" + body[cap_at + 1:] if bar.peak_gib > bar.capacity_gib else body
    items = [f"{GLYPHS.get(c, '#')} {name} {gib:.1f}" for c, name, gib in bar.segments if gib >= 0.05]
    legend = [""]
    for item in items:
        joined = f"{legend[-1]}  {item}" if legend[-1] else item
        if cell_width(joined) > width and legend[-1]:
            legend.append(item)
        else:
            legend[-1] = joined
    return [bar.label, "[" + body + "]", *legend]
