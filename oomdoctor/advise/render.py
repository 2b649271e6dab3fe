"""Views of the advisor's Matrix: a plain table that fits 100 columns, and JSON."""
from __future__ import annotations

import json
import textwrap
from dataclasses import fields, replace
from typing import Any

from oomdoctor.advise.model import Cell, Matrix, StrategyRow
from oomdoctor.facts import TrainingSetup

WIDTH = 100
_SETUP_SKIP = ("extras", "sources", "defaults_of", "config_file", "deepspeed_file")


def _r(value: float | None, nd: int = 2) -> float | None:
    return None if value is None else round(float(value), nd)


def setup_changes(before: TrainingSetup, after: TrainingSetup | None) -> dict[str, list[Any]]:
    """Fields that differ, as {field: [before, after]} (JSON-ready)."""
    if after is None:
        return {}
    out: dict[str, list[Any]] = {}
    for f in fields(TrainingSetup):
        if f.name in _SETUP_SKIP:
            continue
        a, b = getattr(before, f.name), getattr(after, f.name)
        if a != b:
            out[f.name] = [list(a) if isinstance(a, tuple) else a, list(b) if isinstance(b, tuple) else b]
    return out


def _row_json(row: StrategyRow, base: TrainingSetup) -> dict[str, Any]:
    return {"strategy": row.key, "label": row.label, "n_gpus": row.n_gpus, "peak_gib": _r(row.peak_gib),
            "allocated_gib": _r(row.allocated_gib), "fits": row.fits, "host_ram_gib": _r(row.host_ram_gib),
            "components": {k: _r(v) for k, v in row.components.items()},
            "speed_vs_one_card": _r(row.speed), "speed_why": row.speed_why, "step_s": _r(row.step_s),
            "hours": _r(row.hours, 4), "cost": _r(row.cost), "setup_changes": setup_changes(base, row.setup)}


def _cell_json(cell: Cell, base: TrainingSetup) -> dict[str, Any]:
    start = replace(base, n_gpus=cell.n_gpus)
    return {"card": cell.card, "n_gpus": cell.n_gpus, "capacity_gib": _r(cell.capacity_gib),
            "fits_as_configured": cell.fits_as_configured, "peak_gib": _r(cell.peak_gib), "fits": cell.fits,
            "final_peak_gib": _r(cell.final_peak_gib),
            "plan": [{"rule": s.rule, "slug": s.slug, "title": s.title, "costs": list(s.costs)} for s in cell.steps],
            "quality_steps": cell.quality_steps, "search": cell.search,
            "setup_changes": setup_changes(start, cell.final_setup), "host_ram_gib": _r(cell.host_ram_gib),
            "step_s": _r(cell.step_s), "hours": _r(cell.hours, 4), "cost": _r(cell.cost), "cheapest": cell.cheapest,
            "assumed": list(cell.assumed)}


def to_json(matrix: Matrix) -> str:
    m = matrix
    cheapest = m.cheapest
    doc = {
        "model": m.model, "hardware": m.hardware, "n_gpus": m.n_gpus, "headroom": m.headroom,
        "estimate_note": "all memory, time and cost figures are estimates; see assumptions",
        "tokens": m.tokens, "tokens_source": m.tokens_source, "mfu": m.mfu,
        "currency": m.currency, "priced": m.priced,
        "strategies": [_row_json(r, m.setup) for r in m.strategies],
        "cards": list(m.cards), "counts": list(m.counts),
        "cells": [_cell_json(c, m.setup) for c in m.cells],
        "cheapest": None if cheapest is None else {"card": cheapest.card, "n_gpus": cheapest.n_gpus,
                                                    "cost": _r(cheapest.cost), "hours": _r(cheapest.hours)},
        "calibration": None if m.calibration is None else {"sentence": m.calibration,
                                                           "delta_gib": _r(m.calibration_gib)},
        "measured": [[x, _r(g)] for x, g in m.measured],
        "assumptions": list(m.assumptions), "elapsed_s": _r(m.elapsed_s, 3),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


# ---------------------------------------------------------------- plain text

def hours_text(h: float | None) -> str:
    """'45m', '1.6h', '38h', '12d': a run time at a glance."""
    if h is None:
        return "-"
    if h < 1:
        return f"{h * 60:.0f}m"
    if h < 10:
        return f"{h:.1f}h"
    if h < 1000:
        return f"{h:.0f}h"
    return f"{h / 24:.0f}d"


def _money(c: float | None) -> str:
    if c is None:
        return "-"
    return f"{c:.2f}" if c < 100 else f"{c:,.0f}"


def _gib(g: float) -> str:
    return f"{g:.0f}G" if g >= 10 else f"{g:.1f}G"


def _wrap(text: str, indent: str = "  ", first: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first or indent, subsequent_indent=indent,
                         break_on_hyphens=False) or [first.rstrip()]


def _setup_line(s: TrainingSetup) -> str:
    method = {"full": "full fine-tune", "lora": f"LoRA r{s.lora_rank}", "qlora": f"QLoRA {s.quant_bits}-bit r{s.lora_rank}",
              "freeze": "freeze tuning"}.get(s.method, s.method)
    parts = [method, f"micro-batch {s.micro_batch} x accum {s.grad_accum}", f"seq {s.seq_len}", s.precision,
             s.optimizer, "grad ckpt" if s.grad_ckpt else "no grad ckpt"]
    if s.zero_stage:
        parts.append(f"ZeRO-{s.zero_stage}")
    if s.fsdp:
        parts.append(f"FSDP {s.fsdp}")
    return ", ".join(parts)


def _strategy_lines(m: Matrix) -> list[str]:
    if not m.strategies:
        return []
    out = [f"Strategies on {m.n_gpus} x {m.hardware}"]
    budget = None
    cells = [c for c in m.cells if c.card == m.hardware]
    if cells:
        budget = cells[0].capacity_gib * (1 - m.headroom)
    if budget is not None:
        out[0] += f" (fits: peak <= {budget:.1f} GiB, {1 - m.headroom:.0%} of the card)"
    cost_col = m.priced
    head = f"{'strategy':<34}{'GPUs':>5}{'peak GiB':>9}{'fits':>6}{'host RAM':>10}{'speed':>8}{'step':>8}{'run':>7}"
    if cost_col:
        head += f"{'cost':>10}"
    out.append(head)
    for r in m.strategies:
        host = f"{r.host_ram_gib:.0f} GiB" if r.host_ram_gib >= 0.5 else "-"
        speed = f"{r.speed:.2f}x" if r.speed is not None else "-"
        step = f"{r.step_s:.1f}s" if r.step_s is not None else "-"
        # a run that does not fit has no run time or cost, only its speed if it had the memory
        run = hours_text(r.hours) if r.fits else "-"
        line = (f"{r.label[:33]:<34}{r.n_gpus:>5}{r.peak_gib:>9.1f}{('yes' if r.fits else 'no'):>6}{host:>10}"
                f"{speed:>8}{step:>8}{run:>7}")
        if cost_col:
            line += f"{_money(r.cost if r.fits else None):>10}"
        out.append(line)
        if r.speed_why and r.key != "single":
            out.extend(_wrap(r.speed_why, indent="      ", first="    "))
    out.append("  speed: throughput in units of one card training alone (if it had the memory)")
    return out


def _plan_letters(m: Matrix) -> dict[tuple[str, ...], str]:
    letters: dict[tuple[str, ...], str] = {}
    for c in m.cells:
        if c.steps and c.fits:
            key = tuple(s.slug for s in c.steps)
            if key not in letters:
                letters[key] = chr(ord("A") + len(letters)) if len(letters) < 26 else "?"
    return letters


def _cell_text(c: Cell | None, letters: dict[tuple[str, ...], str], priced: bool, timed: bool) -> str:
    if c is None:
        return ""
    if not c.fits:
        return f"x {_gib(c.peak_gib)}"
    mark = "ok" if c.fits_as_configured else letters.get(tuple(s.slug for s in c.steps), "?")
    parts = [mark, _gib(c.final_peak_gib)]
    if timed:
        parts.append(hours_text(c.hours))
    if priced:
        parts.append(_money(c.cost))
    text = " ".join(parts)
    return text + ("*" if c.cheapest else "")


def _matrix_lines(m: Matrix) -> list[str]:
    letters = _plan_letters(m)
    timed = any(c.hours is not None for c in m.cells)
    card_w = 16
    col_w = max(12, min(21, (WIDTH - card_w) // max(1, len(m.counts))))
    what = "peak per GPU" + (", run time" if timed else "") + (f", cost{(' ' + m.currency) if m.currency else ''}"
                                                              if m.priced else "")
    out = [f"Fit matrix ({what})",
           "  ok = fits as configured, A-Z = fits with that plan (below), x = nothing fits (peak as configured)"]
    if m.priced:
        out.append("  * = the cheapest that fits without changing the experiment; - = no price for that card")
    head = f"{'card':<{card_w}}" + "".join(f"{(str(n) + (' GPU' if n == 1 else ' GPUs')):<{col_w}}" for n in m.counts)
    out.append(head.rstrip())
    for card in m.cards:
        row = f"{card[:card_w - 1]:<{card_w}}"
        for n in m.counts:
            row += f"{_cell_text(m.cell(card, n), letters, m.priced, timed)[:col_w - 1]:<{col_w}}"
        out.append(row.rstrip())
    if letters:
        out.append("Plans:")
        by_key = {tuple(s.slug for s in c.steps): c.steps for c in m.cells if c.steps and c.fits}
        for key, letter in letters.items():
            titles = "; ".join(s.title + (" (changes the experiment)" if "quality" in s.costs else "")
                               for s in by_key[key])
            out.extend(_wrap(titles, indent="     ", first=f"  {letter}: "))
    if any(c.search == "ladder" for c in m.cells):
        out.append("  (some cells took the ladder plan: the least-cost search ran out of its time budget)")
    best = m.cheapest
    if best is not None:
        how = "as configured" if best.fits_as_configured else f"with plan {letters.get(tuple(s.slug for s in best.steps), '?')}"
        cur = f" {m.currency}" if m.currency else ""
        out.append(f"Cheapest that fits: {best.n_gpus} x {best.card} {how}, about {hours_text(best.hours)} "
                   f"and {_money(best.cost)}{cur}.")
    elif m.priced:
        out.append("No priced card fits; add prices for more cards.")
    return out


def render_plain(matrix: Matrix) -> str:
    m = matrix
    out = [f"oomdoctor advise - {m.model}", *(_wrap(_setup_line(m.setup), indent="  ", first="  ")),
           "  Every figure below is an estimate; the assumptions are listed at the end.", ""]
    if m.calibration:
        out.extend(_wrap(m.calibration, indent="  ", first="Measured: "))
        if m.measured:
            curve = ", ".join(f"{x}: {g:.1f}" for x, g in m.measured[-8:])
            out.extend(_wrap(f"measured curve (step or line: GiB) {curve}", indent="  ", first="  "))
        out.append("")
    out.extend(_strategy_lines(m))
    out.append("")
    out.extend(_matrix_lines(m))
    out.append("")
    out.append("Assumptions:")
    for a in m.assumptions:
        out.extend(_wrap(a, indent="    ", first="  - "))
    return "\n".join(line.rstrip() for line in out)
