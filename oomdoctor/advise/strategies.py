"""One training run, every way of spreading it over the cards: per-GPU peak, fit, host RAM, speed.

Each row re-estimates the user's setup with the strategy's fields set (dataclasses.replace) through the
same estimator the planner uses, so the rows and the plan's ZeRO/offload rungs agree. Naive model
parallel (layers split over the cards in one process, device_map="auto") has no setup field; its row
is derived from the single-GPU estimate: states divided by the cards, the activations of each card's
layers, the logits on the last card.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from oomdoctor.advise.model import StrategyRow
from oomdoctor.facts import Estimate, Hardware, ModelShape, Msg, TrainingSetup, msg

Estimator = Callable[..., Estimate]

# Row order; each key's name is words code advise.strategy.<key>.
STRATEGIES = ("single", "ddp", "naive_mp", "zero1", "zero2", "zero3", "zero3_offload_opt", "zero3_offload_all", "fsdp")
MULTI_ONLY = ("ddp", "naive_mp", "zero1", "zero2", "zero3", "fsdp")

# memory.estimate's constants, read when present so the naive row stays in step with the model
_DEFAULT_RESERVE_FRAC = 0.10


def _base(setup: TrainingSetup) -> TrainingSetup:
    return replace(setup, zero_stage=0, offload_optimizer=False, offload_params=False, fsdp=None)


def strategy_setups(setup: TrainingSetup, n_gpus: int) -> dict[str, TrainingSetup]:
    """The setup of every row that has one (naive model parallel is derived from "single")."""
    base = _base(setup)
    n = max(1, n_gpus)
    rows = {"single": replace(base, n_gpus=1)}
    if n > 1:
        rows["ddp"] = replace(base, n_gpus=n)
        rows["zero1"] = replace(base, zero_stage=1, n_gpus=n)
        rows["zero2"] = replace(base, zero_stage=2, n_gpus=n)
        rows["zero3"] = replace(base, zero_stage=3, n_gpus=n)
    rows["zero3_offload_opt"] = replace(base, zero_stage=3, offload_optimizer=True, n_gpus=n)
    rows["zero3_offload_all"] = replace(base, zero_stage=3, offload_optimizer=True, offload_params=True, n_gpus=n)
    if n > 1:
        rows["fsdp"] = replace(base, fsdp="full_shard", n_gpus=n)
    return rows


def naive_model_parallel(single: Estimate, n_gpus: int) -> Estimate:
    """The fullest card (the last: it holds the logits) when the layers are split evenly over `n_gpus`."""
    try:
        from oomdoctor.memory.estimate import ALLOCATOR_RESERVE_FRAC as reserve_frac
    except ImportError:
        reserve_frac = _DEFAULT_RESERVE_FRAC
    n = max(1, n_gpus)
    d, c = single.details, single.components
    act = d.get("activations_gib", c.get("activations", 0.0))
    logits_fwd = d.get("logits_forward_gib", 0.0)
    logits_bwd = d.get("logits_backward_gib", 0.0)
    grads = d.get("grads_full_gib", c.get("gradients", 0.0))
    temps = d.get("optimizer_step_temporaries_gib", 0.0)
    paged = d.get("paged_states_gib", 0.0)
    cublas = d.get("cublas_workspace_gib", 0.0)
    context = d.get("cuda_context_gib", 0.0)
    measured = d.get("measured_correction_gib", 0.0)
    weights = c.get("weights", 0.0)
    # everything alive all step long (weights, states, master copies), as allocated
    if "moment_loss_gib" in d:
        static = d["moment_loss_gib"] - act - logits_fwd
    else:
        static = weights + c.get("optimizer", 0.0) - paged
    # one layer's transient (the recomputed or back-propagated layer) lives on the card doing backward
    one_layer = d.get("recomputed_layer_gib") or d.get("per_layer_gib") or 0.0
    act_card = (act - one_layer) / n + one_layer
    static_card = static / n
    moments = {
        "loss": static_card + act_card + logits_fwd,
        "backward": static_card + act_card + logits_bwd,
        "optimizer step": static_card + (grads + temps) / n,
    }
    moment = max(moments, key=moments.get)
    allocated = moments[moment] + cublas + measured
    # As memory.estimate: the cache fragments on what comes and goes within a step, not on the weights and
    # states a card holds all along; the idle blocks varying batch lengths leave are the last card's (logits).
    reserve = reserve_frac * max(0.0, allocated - measured - cublas - static_card)
    reserve += d.get("varlen_cached_logits_gib", 0.0)
    peak = allocated + reserve + context + paged / n
    comps = {
        "weights": weights / n,
        "gradients": grads / n if moment == "optimizer step" else 0.0,
        "optimizer": (static - weights + paged) / n + (temps / n if moment == "optimizer step" else 0.0),
        "activations": act_card if moment != "optimizer step" else 0.0,
        "logits": (logits_fwd if moment == "loss" else logits_bwd) if moment != "optimizer step" else 0.0,
        "overhead": context + cublas + reserve + measured,
    }
    details = dict(d)
    details.update({"naive_mp_cards": float(n), "naive_mp_static_per_card_gib": static_card,
                    "naive_mp_activations_per_card_gib": act_card})
    note = msg("advise.naive_mp_note", n=n)
    return replace(single, components=comps, allocated_gib=allocated, peak_gib=peak, details=details,
                   notes=single.notes + (note,))


def build_strategies(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *, n_gpus: int | None = None,
                     estimator: Estimator | None = None, headroom: float = 0.10, spec=None,
                     tokens: float | None = None, price_per_card_hour: float | None = None,
                     ) -> tuple[StrategyRow, ...]:
    """The strategy rows for `setup` on `n_gpus` cards like `hw` (default: hw.n_gpus)."""
    from oomdoctor.advise import timing

    if estimator is None:
        from oomdoctor.memory import estimate as estimator
    n = max(1, n_gpus or hw.n_gpus or setup.n_gpus or 1)
    rows: list[StrategyRow] = []
    setups = strategy_setups(setup, n)
    single_tps: float | None = None
    ests: dict[str, Estimate] = {}
    for key in STRATEGIES:
        if key == "naive_mp":
            if n < 2:
                continue
            est = naive_model_parallel(ests["single"], n)
            row_setup = replace(setups["single"], n_gpus=n)
            cards = n
        elif key in setups:
            row_setup = setups[key]
            cards = row_setup.n_gpus
            est = estimator(row_setup, shape, replace(hw, n_gpus=max(cards, 1)), headroom=headroom)
        else:
            continue
        ests[key] = est
        st = timing.step_time(row_setup, shape, spec, cards, naive_mp=(key == "naive_mp"))
        tps = st.tokens_per_s if st else None
        if key == "single":
            single_tps = tps
        speed = tps / single_tps if (tps and single_tps) else None
        why: tuple[Msg, ...] = st.reasons if st else ()
        if key == "single" and st:
            why = (msg("advise.why.one_card_does_all"),) + why
        elif key == "single":
            why = (msg("advise.why.one_card"),)
        hours = timing.run_hours(tokens, st)
        cost = hours * price_per_card_hour * cards if (hours is not None and price_per_card_hour is not None) else None
        rows.append(StrategyRow(key=key, label=msg(f"advise.strategy.{key}"), n_gpus=cards, setup=row_setup, peak_gib=est.peak_gib,
                                allocated_gib=est.allocated_gib, components=dict(est.components),
                                fits=est.fits, host_ram_gib=est.host_ram_gib, speed=speed, speed_why=why,
                                step_s=st.step_s if st else None, hours=hours, cost=cost))
    return tuple(rows)
