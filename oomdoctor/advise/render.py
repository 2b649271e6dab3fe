"""Views of the advisor's Matrix: a plain table that fits 100 columns, and JSON."""
from __future__ import annotations

import json
from dataclasses import fields, replace
from typing import Any

from oomdoctor.advise.model import Cell, Matrix, StrategyRow
from oomdoctor.facts import TrainingSetup, msg
from oomdoctor.words import fit_cells, gib_short, hours, pad_cells, say, show, wrap_cells

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


def _row_json(row: StrategyRow, base: TrainingSetup, lang: str) -> dict[str, Any]:
    return {"strategy": row.key, "label": say(row.label, lang), "n_gpus": row.n_gpus, "peak_gib": _r(row.peak_gib),
            "allocated_gib": _r(row.allocated_gib), "fits": row.fits, "host_ram_gib": _r(row.host_ram_gib),
            "components": {k: _r(v) for k, v in row.components.items()},
            "speed_vs_one_card": _r(row.speed), "speed_why": _why(row, lang), "step_s": _r(row.step_s),
            "hours": _r(row.hours, 4), "cost": _r(row.cost), "setup_changes": setup_changes(base, row.setup)}


def _cell_json(cell: Cell, base: TrainingSetup, lang: str) -> dict[str, Any]:
    start = replace(base, n_gpus=cell.n_gpus)
    return {"card": cell.card, "n_gpus": cell.n_gpus, "capacity_gib": _r(cell.capacity_gib),
            "fits_as_configured": cell.fits_as_configured, "peak_gib": _r(cell.peak_gib), "fits": cell.fits,
            "final_peak_gib": _r(cell.final_peak_gib),
            "plan": [{"rule": s.rule, "slug": s.slug, "title": say(s.title, lang), "costs": list(s.costs)}
                     for s in cell.steps],
            "quality_steps": cell.quality_steps, "search": cell.search,
            "setup_changes": setup_changes(start, cell.final_setup), "host_ram_gib": _r(cell.host_ram_gib),
            "step_s": _r(cell.step_s), "hours": _r(cell.hours, 4), "cost": _r(cell.cost), "cheapest": cell.cheapest,
            "assumed": [say(a, lang) for a in cell.assumed]}


def _why(row: StrategyRow, lang: str) -> str:
    return say("advise.why.sep", lang).join(say(m, lang) for m in row.speed_why)


def to_json(matrix: Matrix, lang: str = "en") -> str:
    m = matrix
    cheapest = m.cheapest
    doc = {
        "model": m.model, "hardware": m.hardware, "n_gpus": m.n_gpus, "headroom": m.headroom,
        "estimate_note": say("advise.estimate_note", lang), "lang": lang,
        "tokens": m.tokens, "tokens_source": say(m.tokens_source, lang), "mfu": m.mfu,
        "currency": m.currency, "priced": m.priced,
        "strategies": [_row_json(r, m.setup, lang) for r in m.strategies],
        "cards": list(m.cards), "counts": list(m.counts),
        "cells": [_cell_json(c, m.setup, lang) for c in m.cells],
        "cheapest": None if cheapest is None else {"card": cheapest.card, "n_gpus": cheapest.n_gpus,
                                                    "cost": _r(cheapest.cost), "hours": _r(cheapest.hours)},
        "calibration": None if m.calibration is None else {"sentence": show(m.calibration, lang),
                                                           "delta_gib": _r(m.calibration_gib)},
        "measured": [[x, _r(g)] for x, g in m.measured],
        "assumptions": [show(a, lang) for a in m.assumptions], "elapsed_s": _r(m.elapsed_s, 3),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


# ---------------------------------------------------------------- plain text

def hours_text(h: float | None) -> str:
    """'45m', '1.6h', '38h', '12d': a run time at a glance."""
    return hours(h)


def _money(c: float | None) -> str:
    if c is None:
        return "-"
    return f"{c:.2f}" if c < 100 else f"{c:,.0f}"


def _wrap(text: str, indent: str = "  ", first: str = "") -> list[str]:
    """Lines of at most WIDTH cells; Chinese breaks between characters."""
    return wrap_cells(text, WIDTH, indent=indent, initial=first or indent)


def _setup_line(s: TrainingSetup, lang: str) -> str:
    method = {"full": msg("advise.method.full"), "lora": msg("advise.method.lora", rank=s.lora_rank),
              "qlora": msg("advise.method.qlora", bits=s.quant_bits, rank=s.lora_rank),
              "freeze": msg("advise.method.freeze")}.get(s.method, s.method)
    parts = [method, msg("advise.batch", mb=s.micro_batch, ga=s.grad_accum), msg("advise.seq", seq=s.seq_len),
             s.precision, s.optimizer, msg("advise.ckpt_on" if s.grad_ckpt else "advise.ckpt_off")]
    if s.zero_stage:
        parts.append(f"ZeRO-{s.zero_stage}")
    if s.fsdp:
        parts.append(f"FSDP {s.fsdp}")
    return say("common.list_sep", lang).join(show(p, lang) for p in parts)


def _strategy_lines(m: Matrix, lang: str) -> list[str]:
    if not m.strategies:
        return []
    out = [say("advise.strategies_on", lang, n=m.n_gpus, card=m.hardware)]
    budget = None
    cells = [c for c in m.cells if c.card == m.hardware]
    if cells:
        budget = cells[0].capacity_gib * (1 - m.headroom)
    if budget is not None:
        out[0] += say("advise.strategies_fit", lang, budget=budget, share=1 - m.headroom)
    cost_col = m.priced

    def col(key: str, cells: int) -> str:
        return pad_cells(say(f"advise.col.{key}", lang), cells, "right")

    head = (pad_cells(say("advise.col.strategy", lang), 34) + col("gpus", 5) + col("peak", 9) + col("fits", 6)
            + col("host", 10) + col("speed", 8) + col("step", 8) + col("run", 7))
    if cost_col:
        head += col("cost", 10)
    out.append(head)
    for r in m.strategies:
        host = f"{r.host_ram_gib:.0f} GiB" if r.host_ram_gib >= 0.5 else "-"
        speed = f"{r.speed:.2f}x" if r.speed is not None else "-"
        step = f"{r.step_s:.1f}s" if r.step_s is not None else "-"
        # a run that does not fit has no run time or cost, only its speed if it had the memory
        run = hours_text(r.hours) if r.fits else "-"
        fits = pad_cells(say("common.yes" if r.fits else "common.no", lang), 6, "right")
        line = (f"{pad_cells(fit_cells(say(r.label, lang), 33), 34)}{r.n_gpus:>5}{r.peak_gib:>9.1f}{fits}{host:>10}"
                f"{speed:>8}{step:>8}{run:>7}")
        if cost_col:
            line += f"{_money(r.cost if r.fits else None):>10}"
        out.append(line)
        if r.speed_why and r.key != "single":
            out.extend(_wrap(_why(r, lang), indent="      ", first="    "))
    out.append("  " + say("advise.speed_note", lang))
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
        return f"x {gib_short(c.peak_gib)}"
    mark = "ok" if c.fits_as_configured else letters.get(tuple(s.slug for s in c.steps), "?")
    parts = [mark, gib_short(c.final_peak_gib)]
    if timed:
        parts.append(hours_text(c.hours))
    if priced:
        parts.append(_money(c.cost))
    text = " ".join(parts)
    return text + ("*" if c.cheapest else "")


def _matrix_lines(m: Matrix, lang: str) -> list[str]:
    letters = _plan_letters(m)
    timed = any(c.hours is not None for c in m.cells)
    card_w = 16
    col_w = max(12, min(21, (WIDTH - card_w) // max(1, len(m.counts))))
    what = say("advise.matrix_what", lang) + (say("advise.matrix_time", lang) if timed else "") + (
        say("advise.matrix_cost", lang) + (f" {m.currency}" if m.currency else "") if m.priced else "")
    out = [say("advise.matrix_title", lang, what=what), "  " + say("advise.legend", lang)]
    if m.priced:
        out.append("  " + say("advise.legend_price", lang))
    head = pad_cells(say("advise.col.card", lang), card_w) + "".join(
        pad_cells(say("advise.gpus_head", lang, n=n), col_w) for n in m.counts)
    out.append(head.rstrip())
    for card in m.cards:
        row = f"{card[:card_w - 1]:<{card_w}}"
        for n in m.counts:
            row += f"{_cell_text(m.cell(card, n), letters, m.priced, timed)[:col_w - 1]:<{col_w}}"
        out.append(row.rstrip())
    if letters:
        out.append(say("advise.plans", lang))
        by_key = {tuple(s.slug for s in c.steps): c.steps for c in m.cells if c.steps and c.fits}
        for key, letter in letters.items():
            titles = say("advise.why.sep", lang).join(
                say(s.title, lang) + (say("advise.changes_experiment", lang) if "quality" in s.costs else "")
                for s in by_key[key])
            out.extend(_wrap(titles, indent="     ", first=f"  {letter}: "))
    if any(c.search == "ladder" for c in m.cells):
        out.append("  " + say("advise.ladder_cells", lang))
    best = m.cheapest
    if best is not None:
        how = (say("advise.as_configured", lang) if best.fits_as_configured else
               say("advise.with_plan", lang, letter=letters.get(tuple(s.slug for s in best.steps), "?")))
        cur = f" {m.currency}" if m.currency else ""
        out.append(say("advise.cheapest", lang, n=best.n_gpus, card=best.card, how=how, hours=hours_text(best.hours),
                       cost=_money(best.cost) + cur))
    elif m.priced:
        out.append(say("advise.no_priced_fit", lang))
    return out


def render_plain(matrix: Matrix, lang: str = "en") -> str:
    m = matrix
    out = [say("advise.title", lang, model=m.model), *(_wrap(_setup_line(m.setup, lang), indent="  ", first="  ")),
           "  " + say("advise.every_estimate", lang), ""]
    if m.calibration:
        out.extend(_wrap(show(m.calibration, lang), indent="  ", first=say("advise.measured", lang)))
        if m.measured:
            curve = ", ".join(f"{x}: {g:.1f}" for x, g in m.measured[-8:])
            out.extend(_wrap(say("advise.measured_curve", lang, points=curve), indent="  ", first="  "))
        out.append("")
    out.extend(_strategy_lines(m, lang))
    out.append("")
    out.extend(_matrix_lines(m, lang))
    out.append("")
    out.append(say("advise.assumptions", lang))
    for a in m.assumptions:
        out.extend(_wrap(show(a, lang), indent="    ", first="  - "))
    return "\n".join(line.rstrip() for line in out)
