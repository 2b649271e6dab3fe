"""Which GPUs, how many, which strategy: strategy rows, the fit matrix, run time and cost.

Public API::

    build(report, prices=None, tokens=None, *, cards=MATRIX_CARDS, counts=MATRIX_COUNTS, estimator=None,
          correction=None, rules=None) -> Matrix
    to_json(matrix, lang="en") -> str
    render_plain(matrix, lang="en") -> str
    build_strategies(setup, shape, hw, *, n_gpus=None, estimator=None, headroom=0.10, spec=None,
                     tokens=None, price_per_card_hour=None) -> tuple[StrategyRow, ...]
    naive_model_parallel(single_estimate, n_gpus) -> Estimate
    build_cells(setup, shape, *, estimator, cards, counts, rules=None, headroom=0.10, skip=(), tokens=None,
                prices=None) -> tuple[Cell, ...]
    load_prices(path) -> Prices
"""
from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oomdoctor.advise.cards import HOST_RAM_PER_GPU_GIB, MATRIX_CARDS, MATRIX_COUNTS, adapt_to_card, spec_of
from oomdoctor.errors import InputError
from oomdoctor.facts import Hardware, Msg, Report, msg

if TYPE_CHECKING:
    from oomdoctor.advise.matrix import build_cells, fit_cell
    from oomdoctor.advise.model import Cell, Matrix, PlanStep, StrategyRow
    from oomdoctor.advise.prices import Prices, load_prices
    from oomdoctor.advise.render import render_plain, to_json
    from oomdoctor.advise.strategies import build_strategies, naive_model_parallel

__all__ = ["MATRIX_CARDS", "MATRIX_COUNTS", "Cell", "Matrix", "PlanStep", "Prices", "StrategyRow", "build",
           "build_cells", "build_strategies", "fit_cell", "load_prices", "naive_model_parallel", "render_plain",
           "to_json"]

# The module each public name comes from, imported on first use (PEP 562's module __getattr__): the planner
# times every plan through advise.cards and advise.timing, and a plain report must not pay for importing the
# fit matrix, its renderer and the prices reader (~20 ms of a start).
_LAZY = {"build_cells": "matrix", "fit_cell": "matrix", "Cell": "model", "Matrix": "model", "PlanStep": "model",
         "StrategyRow": "model", "Prices": "prices", "load_prices": "prices", "render_plain": "render",
         "to_json": "render", "build_strategies": "strategies", "naive_model_parallel": "strategies"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def build(report: Report, prices: str | Prices | None = None, tokens: float | None = None, *,
          cards: Sequence[str] = MATRIX_CARDS, counts: Sequence[int] = MATRIX_COUNTS, estimator=None,
          correction=None, rules=None, host_ram_gib: float | None = None, accept: Sequence[str] = (),
          skip: Sequence[str] = ()) -> Matrix:
    """The advisor's answer for the run in `report` (which needs a setup and a model shape; without a GPU,
    a renter's case, the strategies have no card to fit and the matrix is the whole answer).

    `estimator` and `correction` are the session's (calibrated once from the crash log), `rules` its
    rule book; without them they are built here. `tokens` was checked where it was read (the CLI)."""
    from oomdoctor import calibrate
    from oomdoctor.advise import timing
    from oomdoctor.advise.matrix import build_cells
    from oomdoctor.advise.model import Matrix
    from oomdoctor.advise.prices import load_prices
    from oomdoctor.advise.strategies import build_strategies
    from oomdoctor.memory import estimate

    started = time.perf_counter()
    setup, shape, hw = report.setup, report.shape, report.hardware
    if setup is None or shape is None:
        raise InputError(msg("cli.needs_config", flag="--advise"))
    no_card = hw is None
    if hw is None:
        # No card yet: the strategy rows say per-GPU peak and host RAM; whether they fit is the matrix's job.
        hw = Hardware(gpu="", gpu_gib=0.0, n_gpus=max(1, setup.n_gpus), source="none")
    price_book = load_prices(prices) if isinstance(prices, str) else prices
    headroom = report.estimate.headroom if report.estimate is not None else 0.10

    # Learn from the log: the last measured step peak raises every estimate below.
    corr = correction
    if estimator is None:
        # re-estimated rather than report.estimate, which may already carry the correction (pipeline)
        base = estimate(setup, shape, hw, crash=report.crash, headroom=headroom)
        corr = calibrate.correction(base, report.crash)
        estimator = calibrate.corrected_estimator(estimate, corr)

    total, tokens_source = timing.total_tokens(setup, tokens)
    user_spec = spec_of(hw.gpu) if hw.gpu and not no_card else None
    n_user = max(1, hw.n_gpus or setup.n_gpus or 1)
    user_setup, user_assumed = adapt_to_card(setup, hw)
    user_price = price_book.of(user_spec.name) if (price_book is not None and user_spec is not None) else None
    rows = build_strategies(user_setup, shape, hw, n_gpus=n_user, estimator=estimator, headroom=headroom,
                            spec=user_spec, tokens=total, price_per_card_hour=user_price)

    card_list = list(cards)
    if user_spec is not None and user_spec.name not in {s.name for s in map(spec_of, card_list) if s}:
        card_list.append(user_spec.name)      # the user's own card gets a row too
    cells = build_cells(setup, shape, estimator=estimator, cards=card_list, counts=counts, headroom=headroom,
                        tokens=total, prices=price_book, rules=rules, host_ram_gib=host_ram_gib, accept=accept,
                        skip=skip)

    dp = timing.DP_EFFICIENCY
    assumptions: list[Msg | str] = [
        msg("advise.assume.work", mfu=timing.MFU),
        msg("advise.assume.tokens", source=tokens_source),
        msg("advise.assume.batch"),
        msg("advise.assume.scaling", ddp_nv=dp["nvlink"][0], z3_nv=dp["nvlink"][1], ddp_pcie=dp["pcie"][0],
            z3_pcie=dp["pcie"][1]),
        msg("advise.assume.offload", rate=timing.CPU_ADAM_PARAMS_PER_S / 1e9),
        msg("advise.assume.no_bf16"),
    ]
    st = timing.step_time(user_setup, shape, user_spec, 1) if user_spec is not None else None
    if st is not None and st.recompute_frac:
        assumptions.append(msg("advise.assume.recompute", frac=st.recompute_frac))
    assumptions += [a for a in user_assumed if a not in assumptions]
    if corr is not None and corr.applied:
        assumptions.append(msg("advise.assume.measured", gib=corr.delta_gib))
    if no_card:
        assumptions.append(msg("advise.assume.no_card"))
    elif user_spec is None:
        assumptions.append(msg("advise.assume.unknown_card", gpu=hw.gpu))
    assumptions.append(msg("advise.assume.host_ram_flag", gib=host_ram_gib) if host_ram_gib else
                       msg("advise.assume.host_ram", gib=HOST_RAM_PER_GPU_GIB))
    if not accept:
        assumptions.append(msg("advise.assume.consent"))
    return Matrix(model=setup.model or shape.name, setup=setup, hardware=hw.gpu, n_gpus=n_user,
                  strategies=rows, cards=tuple(dict.fromkeys(c.card for c in cells)), counts=tuple(counts),
                  cells=cells, tokens=total, tokens_source=tokens_source, mfu=timing.MFU,
                  currency=price_book.currency if price_book else "", priced=price_book is not None,
                  assumptions=tuple(assumptions), calibration=corr.message if corr else None,
                  calibration_gib=corr.delta_gib if corr else 0.0,
                  measured=tuple(calibrate.measured_curve(report.crash)), headroom=headroom,
                  elapsed_s=time.perf_counter() - started, host_ram_gib=host_ram_gib,
                  specs=tuple(s for s in (spec_of(c) for c in dict.fromkeys(c.card for c in cells)) if s))
