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
STRATEGIES = ("single", "ddp", "naive_mp", "zero1", "zero2", "zero3", "zero3_offload_opt", "zero3_offload_all", "fsdp",
              "zero3_sp")
MULTI_ONLY = ("ddp", "naive_mp", "zero1", "zero2", "zero3", "fsdp", "zero3_sp")


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
        # long context: every sequence split over all the cards (DeepSpeed Ulysses, ring attention, context
        # parallel), so each holds the activations and logits of 1/n of the tokens
        rows["zero3_sp"] = replace(base, zero_stage=3, n_gpus=n, seq_parallel=n)
    return rows


def naive_model_parallel(single: Estimate, n_gpus: int) -> Estimate:
    """The fullest card (the last: it holds the logits) when the layers are split evenly over `n_gpus`.

    Every moment of the single-GPU estimate is re-cut: weights, gradients and optimizer states by the cards,
    the activations of the layers by the cards except the layer being computed, the logits on the last card.
    """
    n = max(1, n_gpus)
    d, c = single.details, single.components
    paged = d.get("paged_states_gib", 0.0)
    cublas = d.get("cublas_workspace_gib", 0.0)
    context = d.get("cuda_context_gib", 0.0)
    measured = d.get("measured_correction_gib", 0.0)
    one_layer = d.get("layer_saved_gib", 0.0)
    cards: dict[str, dict[str, float]] = {}
    for name in single.moments:
        key = name.replace(" ", "_")
        parts = {comp: d.get(f"moment_{key}_{comp}_gib", 0.0)
                 for comp in ("weights", "gradients", "optimizer", "activations", "logits")}
        act = parts["activations"]
        layer = min(one_layer, act)
        parts = {comp: (value / n if comp in ("weights", "gradients", "optimizer") else value)
                 for comp, value in parts.items()}
        parts["activations"] = (act - layer) / n + layer
        cards[name] = parts
    if not cards:     # an estimate without moments (built by hand): only its components are known
        cards["train"] = {k: c.get(k, 0.0) / (n if k in ("weights", "gradients", "optimizer") else 1)
                          for k in ("weights", "gradients", "optimizer", "activations", "logits")}
    moment = max(cards, key=lambda m: sum(cards[m].values()))
    parts = cards[moment]
    allocated = sum(parts.values()) + cublas + measured
    static_card = parts["weights"] + parts["optimizer"]
    # As memory.estimate: the allocator holds idle the block of the largest tensor the step churns through (the
    # logits' or the widest activation's, both on the last card) and the idle blocks varying batch lengths leave
    reserve = d.get("allocator_reserve_gib", 0.0)
    peak = allocated + reserve + context + paged / n
    comps = dict(parts)
    comps["optimizer"] += paged / n
    comps["overhead"] = context + cublas + reserve + measured
    details = dict(d)
    details.update({"naive_mp_cards": float(n), "naive_mp_static_per_card_gib": static_card,
                    "naive_mp_activations_per_card_gib": parts["activations"]})
    note = msg("advise.naive_mp_note", n=n)
    return replace(single, components=comps, allocated_gib=allocated, peak_gib=peak, details=details,
                   notes=single.notes + (note,), peak_moment=moment,
                   moments={m: sum(p.values()) + cublas for m, p in cards.items()})


def build_strategies(setup: TrainingSetup, shape: ModelShape, hw: Hardware, *, n_gpus: int | None = None,
                     estimator: Estimator | None = None, headroom: float = 0.10, spec=None,
                     tokens: float | None = None, price_per_card_hour: float | None = None,
                     ) -> tuple[StrategyRow, ...]:
    """The strategy rows for `setup` on `n_gpus` cards like `hw` (default: hw.n_gpus)."""
    from oomdoctor.advise import timing

    if estimator is None:
        from oomdoctor.memory import estimate as default_estimator

        estimator = default_estimator
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
        if key == "zero3_sp":
            # the cards share each sequence's compute; the all-to-all of the attention inputs is not timed
            why = why + (msg("advise.why.sequence_split", cards=cards),)
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
