"""Views of the advisor's Matrix: a plain table that fits the terminal (80 columns unless told), and JSON."""
from __future__ import annotations

import json
from dataclasses import fields, replace
from typing import Any

from oomdoctor.advise.model import Cell, Matrix, StrategyRow
from oomdoctor.facts import TrainingSetup, msg
from oomdoctor.words import cell_width, gib_short, hours, pad_cells, say, show, wrap_cells

WIDTH = 80          # columns when the caller does not say (render_plain's width); render_plain sets it per call
MIN_WIDTH = 64
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


def _row_json(row: StrategyRow, base: TrainingSetup, lang: str, m: Matrix) -> dict[str, Any]:
    return {"strategy": row.key, "label": say(row.label, lang), "n_gpus": row.n_gpus, "peak_gib": _r(row.peak_gib),
            "allocated_gib": _r(row.allocated_gib), "fits": row.fits if m.hardware else None,
            "host_ram_gib": _r(row.host_ram_gib),
            "host_ram_over": row.host_ram_gib >= 0.5 and row.host_ram_gib > host_budget(m, row.n_gpus),
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
            "host_budget_gib": _r(cell.host_budget_gib), "host_ram_over": cell.host_ram_over,
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
        "strategies": [_row_json(r, m.setup, lang, m) for r in m.strategies],
        "cards": list(m.cards), "counts": list(m.counts),
        "cells": [_cell_json(c, m.setup, lang) for c in m.cells],
        "cheapest": None if cheapest is None else {"card": cheapest.card, "n_gpus": cheapest.n_gpus,
                                                    "cost": _r(cheapest.cost), "hours": _r(cheapest.hours)},
        "calibration": None if m.calibration is None else {"sentence": show(m.calibration, lang),
                                                           "delta_gib": _r(m.calibration_gib)},
        "measured": [[x, _r(g)] for x, g in m.measured],
        "assumptions": [show(a, lang) for a in m.assumptions], "elapsed_s": _r(m.elapsed_s, 3),
        "host_ram_gib": m.host_ram_gib, "host_ram_per_gpu_gib": None if m.host_ram_gib else host_budget(m, 1),
        "card_specs": [{"card": s.name, "usable_gib": s.usable_gib, "mem_gbs": s.mem_gbs,
                        "bf16_tflops": s.bf16_tflops, "arch": s.arch} for s in m.specs],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


# ---------------------------------------------------------------- plain text

def hours_text(h: float | None) -> str:
    """'45m', '1.6h', '38h', '12d': a run time at a glance."""
    return hours(h)


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


def host_budget(m: Matrix, n_gpus: int) -> float:
    """Host RAM the machine of `n_gpus` cards has: --host-ram, else a typical rental host's per card."""
    from oomdoctor.advise.cards import HOST_RAM_PER_GPU_GIB

    return m.host_ram_gib if m.host_ram_gib else HOST_RAM_PER_GPU_GIB * max(1, n_gpus)


def _gib(value: float, nd: int = 1) -> str:
    return f"{value:.{nd}f} GiB"


def _strategy_lines(m: Matrix, lang: str) -> list[str]:
    if not m.strategies:
        return []
    if m.hardware:
        out = [say("advise.strategies_on", lang, n=m.n_gpus, card=m.hardware)]
    else:
        out = [say("advise.strategies_any", lang, n=m.n_gpus)]
    budget = None
    cells = [c for c in m.cells if c.card == m.hardware]
    if cells:
        budget = cells[0].capacity_gib * (1 - m.headroom)
    if budget is not None:
        out[0] += say("advise.strategies_fit", lang, budget=budget, share=1 - m.headroom)
    out = wrap_cells(out[0], WIDTH, indent="  ", initial="")
    cost_col = m.priced

    def col(key: str, cells: int) -> str:
        return pad_cells(say(f"advise.col.{key}", lang), cells, "right")

    # The label takes what the numbers leave; on a narrow terminal the numbers close up first, then the step
    # time goes (the run time and the speed say it too); a name that still does not fit takes its own line.
    widths = {"gpus": 5, "peak": 11, "fits": 6, "host": 11, "speed": 7, "step": 7, "run": 7}
    if cost_col:
        widths["cost"] = 12
    need = min(33, 1 + max(cell_width(say(r.label, lang)) for r in m.strategies))
    label_w = WIDTH - sum(widths.values())
    if label_w < need:
        widths.update(gpus=4, peak=10, fits=5, host=9)
        label_w = WIDTH - sum(widths.values())
    if label_w < need:
        widths.pop("step")
        label_w = WIDTH - sum(widths.values())
    label_w = max(12, min(33, label_w))
    head = pad_cells(say("advise.col.strategy", lang), label_w) + "".join(col(k, w) for k, w in widths.items())
    out.append(head)
    flagged = False
    for r in m.strategies:
        host = _gib(r.host_ram_gib, 0) if r.host_ram_gib >= 0.5 else "-"
        if r.host_ram_gib >= 0.5 and r.host_ram_gib > host_budget(m, r.n_gpus):
            host += "!"
            flagged = True
        speed = f"{r.speed:.2f}x" if r.speed is not None else "-"
        step = f"{r.step_s:.1f}s" if r.step_s is not None else "-"
        # a run that does not fit has no run time or cost, only its speed if it had the memory
        run = hours_text(r.hours) if r.fits else "-"
        fits = "-" if not m.hardware else say("common.yes" if r.fits else "common.no", lang)
        values = {"gpus": str(r.n_gpus), "peak": _gib(r.peak_gib), "fits": fits, "host": host, "speed": speed,
                  "step": step, "run": run, "cost": _money(r.cost if r.fits else None, m.currency)}
        label = say(r.label, lang)
        if cell_width(label) > label_w - 1:
            out.append(label)       # a long name on a narrow terminal takes its own line, whole
            label = ""
        line = pad_cells(label, label_w) + "".join(pad_cells(values[k], w, "right") for k, w in widths.items())
        out.append(line)
        if r.speed_why and r.key != "single":
            out.extend(_wrap(_why(r, lang), indent="      ", first="    "))
    out.extend(_wrap(say("advise.speed_note", lang), indent="    ", first="  "))
    if flagged:
        out.extend(_wrap(say("advise.host_flag_rows", lang, budget=_host_words(m, lang)), indent="    ", first="  "))
    return out


def _host_words(m: Matrix, lang: str) -> str:
    from oomdoctor.advise.cards import HOST_RAM_PER_GPU_GIB

    if m.host_ram_gib:
        return say("advise.host_given", lang, gib=m.host_ram_gib)
    return say("advise.host_default", lang, gib=HOST_RAM_PER_GPU_GIB)


def _plan_letters(m: Matrix) -> dict[tuple[str, ...], str]:
    letters: dict[tuple[str, ...], str] = {}
    for c in m.cells:
        if c.steps and c.fits:
            key = tuple(s.slug for s in c.steps)
            if key not in letters:
                letters[key] = chr(ord("A") + len(letters)) if len(letters) < 26 else "?"
    return letters


def _cell_text(c: Cell | None, letters: dict[tuple[str, ...], str], timed: bool) -> str:
    """One cell: how it fits (ok, a plan's letter, x), the peak per GPU and the run time, each with its unit;
    ! when the host runs out of RAM, * on the cheapest."""
    if c is None:
        return ""
    if not c.fits:
        return f"x {gib_short(c.peak_gib)}"
    mark = "ok" if c.fits_as_configured else letters.get(tuple(s.slug for s in c.steps), "?")
    parts = [mark, gib_short(c.final_peak_gib)]
    if timed:
        parts.append(hours_text(c.hours))
    text = " ".join(parts)
    return text + ("!" if c.host_ram_over else "") + ("*" if c.cheapest else "")


def _money(c: float | None, currency: str = "") -> str:
    if c is None:
        return "-"
    amount = f"{c:.2f}" if c < 100 else f"{c:,.0f}"
    return f"{amount} {currency}".strip()


def _matrix_lines(m: Matrix, lang: str) -> list[str]:
    letters = _plan_letters(m)
    timed = any(c.hours is not None for c in m.cells)
    card_w = 16
    col_w = max(12, min(21, (WIDTH - card_w) // max(1, len(m.counts))))
    what = say("advise.matrix_what", lang) + (say("advise.matrix_time", lang) if timed else "")
    out = [say("advise.matrix_title", lang, what=what), *_wrap(say("advise.legend", lang), indent="    ", first="  ")]
    flagged = [c for c in m.cells if c.host_ram_over]
    if flagged:
        out.extend(_wrap(say("advise.legend_host", lang, budget=_host_words(m, lang)), indent="    ", first="  "))
    if m.priced:
        out.extend(_wrap(say("advise.legend_price", lang), indent="    ", first="  "))
    head = pad_cells(say("advise.col.card", lang), card_w) + "".join(
        pad_cells(say("advise.gpus_head", lang, n=n), col_w) for n in m.counts)
    out.append(head.rstrip())
    for card in m.cards:
        row = f"{card[:card_w - 1]:<{card_w}}"
        for n in m.counts:
            row += f"{_cell_text(m.cell(card, n), letters, timed)[:col_w - 1]:<{col_w}}"
        out.append(row.rstrip())
    if letters:
        out.append(say("advise.plans", lang))
        by_key = {tuple(s.slug for s in c.steps): c.steps for c in m.cells if c.steps and c.fits}
        for key, letter in letters.items():
            titles = say("advise.why.sep", lang).join(
                say(s.title, lang) + (say("advise.changes_experiment", lang) if "quality" in s.costs else "")
                for s in by_key[key])
            out.extend(_wrap(titles, indent="     ", first=f"  {letter}: "))
    if flagged:
        out.extend(_host_lines(m, flagged, lang))
    if m.priced:
        out.extend(_cost_lines(m, head, card_w, col_w, lang))
    if any(c.search == "ladder" for c in m.cells):
        out.append("  " + say("advise.ladder_cells", lang))
    best = m.cheapest
    if best is not None:
        how = (say("advise.as_configured", lang) if best.fits_as_configured else
               say("advise.with_plan", lang, letter=letters.get(tuple(s.slug for s in best.steps), "?")))
        out.append(say("advise.cheapest", lang, n=best.n_gpus, card=best.card, how=how, hours=hours_text(best.hours),
                       cost=_money(best.cost, m.currency)))
    elif m.priced:
        out.append(say("advise.no_priced_fit", lang))
    return out


def _host_lines(m: Matrix, flagged: list[Cell], lang: str) -> list[str]:
    """The host memory each flagged cell needs against what the host has, card by card."""
    out = [say("advise.host_needed", lang)]
    for card in m.cards:
        over = [c for c in flagged if c.card == card]
        if over:
            each = say("common.list_sep", lang).join(
                say("advise.host_cell", lang, n=c.n_gpus, need=c.host_ram_gib, has=c.host_budget_gib)
                for c in over)
            out.extend(_wrap(f"{card}: {each}", indent="      ", first="  "))
    return out


def _cost_lines(m: Matrix, head: str, card_w: int, col_w: int, lang: str) -> list[str]:
    """The matrix again with each fitting cell's cost; * marks the cheapest."""
    out = ["", say("advise.cost_title", lang, currency=m.currency or say("advise.no_currency", lang)), head.rstrip()]
    for card in m.cards:
        row = f"{card[:card_w - 1]:<{card_w}}"
        for n in m.counts:
            c = m.cell(card, n)
            text = "" if c is None else (_money(c.cost, m.currency) if c.fits else "-") + (
                "*" if c is not None and c.cheapest else "")
            row += f"{text[:col_w - 1]:<{col_w}}"
        out.append(row.rstrip())
    return out


def _card_lines(m: Matrix, lang: str) -> list[str]:
    """The cards of the matrix as the catalog has them: what PyTorch sees, bandwidth, speed, link."""
    from oomdoctor.advise.cards import nvlink

    if not m.specs:
        return []
    out = [say("advise.cards_title", lang),
           pad_cells(say("advise.col.card", lang), 16) + pad_cells(say("advise.col.memory", lang), 12, "right")
           + pad_cells(say("advise.col.bandwidth", lang), 13, "right") + pad_cells(say("advise.col.tflops", lang), 12,
                                                                                 "right")
           + "  " + say("advise.col.link", lang)]
    for spec in m.specs:
        bw = f"{spec.mem_gbs:,.0f} GB/s" if spec.mem_gbs else "-"
        link = say("advise.link.nvlink" if nvlink(spec) else "advise.link.pcie_short", lang)
        out.append(f"{spec.name[:15]:<16}{spec.usable_gib:>8.1f} GiB{bw:>13}{spec.bf16_tflops:>7.0f} TFLOPS  {link}")
    return out


def render_plain(matrix: Matrix, lang: str = "en", width: int = 80) -> str:
    """The matrix as text of at most `width` cells a line (not below MIN_WIDTH), English or Chinese."""
    global WIDTH
    saved, WIDTH = WIDTH, max(MIN_WIDTH, int(width))
    try:
        return _render_plain(matrix, lang)
    finally:
        WIDTH = saved


def _render_plain(matrix: Matrix, lang: str) -> str:
    m = matrix
    out = [say("advise.title", lang, model=m.model), *(_wrap(_setup_line(m.setup, lang), indent="  ", first="  ")),
           *_wrap(say("advise.every_estimate", lang), indent="  ", first="  "), ""]
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
    cards = _card_lines(m, lang)
    if cards:
        out.extend(cards)
        out.append("")
    out.append(say("advise.assumptions", lang))
    for a in m.assumptions:
        out.extend(_wrap(show(a, lang), indent="    ", first="  - "))
    # a table row no narrower terminal could hold (the card list at MIN_WIDTH) wraps rather than runs past it
    lines: list[str] = []
    for line in out:
        lines.extend([line] if cell_width(line) <= WIDTH else wrap_cells(line.strip(), WIDTH, indent="    ",
                                                                         initial="  "))
    return "\n".join(line.rstrip() for line in lines)
