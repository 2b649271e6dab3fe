"""What one simulated training step found, and its plain-text table. No torch here."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oomdoctor.facts import COMPONENTS, GIB, Estimate, Msg

# Traced categories use the estimate's component names so the two line up; the trace has no "overhead".
CATEGORIES = ("weights", "gradients", "optimizer", "activations", "logits")
# The moments of a step, in the order they run: the decoder stack's forward, the logits and loss, the logits'
# backward (loss, output layer), the layers' backward (with their recompute under checkpointing), the step.
PHASES = ("forward", "loss", "logits backward", "layers backward", "optimizer")


@dataclass(frozen=True)
class PhasePeak:
    step: int                      # 1-based training step
    phase: str                     # one of PHASES
    peak_bytes: int                # most live tensor bytes at any moment of the phase (after sharding scale)
    categories: Mapping[str, int]  # CATEGORIES -> bytes at that moment

    @property
    def name(self) -> str:
        """'step 2 logits backward': the phase's identifier (phase_label() words it in a language)."""
        return f"step {self.step} {self.phase}"


@dataclass(frozen=True)
class TraceResult:
    peak_bytes: int                        # most live tensor bytes at any moment, per GPU (sharding scaled)
    phases: tuple[PhasePeak, ...]          # in the order they ran
    categories: Mapping[str, int]          # CATEGORIES -> bytes at the overall peak
    peak_phase: str                        # "step 2 loss": where the peak happened
    traced_peak_bytes: int                 # the peak as traced on one process, before any sharding scale
    params_total: int
    params_trainable: int
    buffer_bytes: int                      # non-parameter tensors of the model (rotary tables, ...), in weights
    versions: Mapping[str, str]            # torch, transformers, peft
    attention: str                         # attention implementation that ran (eager | sdpa)
    dtypes: Mapping[str, str]              # load, trainable, autocast
    optimizer: Msg                         # what ran (words/simulate.py "simulate.opt.*")
    micro_batch: int
    seq_len: int
    steps: int
    seconds: float
    limits: tuple[Msg, ...]                # what the trace cannot see ("simulate.limit.*")
    notes: tuple[Msg, ...] = ()            # choices made on the user's behalf (fa2 -> sdpa, ...: "simulate.note.*")
    quantized_weights_bytes: int | None = None   # QLoRA: what the bnb-quantised linear weights would take
    peak_bytes_quantized: int | None = None      # QLoRA: the peak with those weights in place of bf16 copies
    phase_categories_traced: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # unscaled, per phase name

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / GIB

    @property
    def phase_peaks(self) -> dict[str, int]:
        return {p.name: p.peak_bytes for p in self.phases}

    @property
    def reported_peak_bytes(self) -> int:
        """The figure to compare with a GPU: the QLoRA-adjusted peak when there is one."""
        return self.peak_bytes_quantized if self.peak_bytes_quantized is not None else self.peak_bytes


def _gib(n_bytes: float | None) -> str:
    return "-" if n_bytes is None else f"{n_bytes / GIB:8.2f} GiB"


def phase_label(step: int, phase: str, lang: str = "en") -> str:
    """'step 2 logits backward' (or 第 2 步 logits 反向传播) for a phase of PHASES."""
    from oomdoctor.words import say

    return say("simulate.step_phase", lang, step=step, phase=say(f"memory.moment.{phase.replace(' ', '_')}", lang))


def format_result(result: TraceResult, estimate: Estimate | None = None, lang: str = "en") -> str:
    """Traced peak per phase and per category, next to the analytic estimate's moments and components."""
    from oomdoctor.words import say

    versions = ", ".join(f"{k} {v}" for k, v in result.versions.items())
    autocast = result.dtypes.get("autocast") or say("simulate.autocast_off", lang)
    lines = [
        say("simulate.heading", lang, steps=result.steps, versions=versions),
        "  " + say("simulate.setup_line", lang, batch=result.micro_batch, seq=result.seq_len,
                   attention=result.attention, load=result.dtypes.get("load", "?"),
                   trainable=result.dtypes.get("trainable", "?"), autocast=autocast, optimizer=result.optimizer),
        "  " + say("simulate.params_line", lang, total=result.params_total, trainable=result.params_trainable,
                   seconds=result.seconds),
        "",
        f"{say('simulate.col_phase', lang):<26}{say('simulate.col_traced_peak', lang):>14}"
        + (f"{say('simulate.col_estimate', lang):>14}" if estimate else ""),
    ]
    moments = estimate.moments if estimate else {}
    workspace = float(estimate.details.get("cublas_workspace_gib", 0.0)) if estimate and estimate.details else 0.0
    last = max((p.step for p in result.phases), default=0)
    for p in result.phases:
        mark = "  " + say("simulate.peak_marker", lang) if p.name == result.peak_phase else ""
        # the estimate models the steady step (states allocated): beside the last traced step, tensors only
        est_txt = ""
        if estimate:
            est_gib = moments.get(p.phase) if p.step == last else None
            est_txt = f"{'-':>14}" if est_gib is None else f"{_gib((est_gib - workspace) * GIB):>14}"
        lines.append(f"{phase_label(p.step, p.phase, lang):<26}{_gib(p.peak_bytes):>14}{est_txt}{mark}")
    lines += ["", f"{say('simulate.col_component', lang):<22}{say('simulate.col_traced_at_peak', lang):>16}"
                  f"{say('simulate.col_estimate', lang):>14}"]
    est = estimate.components if estimate else {}
    for name in COMPONENTS:
        traced = result.categories.get(name) if name in CATEGORIES else None
        est_gib = est.get(name)
        est_txt = "-" if est_gib is None else f"{est_gib:8.2f} GiB"
        traced_txt = _gib(traced) if name in CATEGORIES else say("simulate.not_traced", lang)
        lines.append(f"{say('memory.component.' + name, lang):<22}{traced_txt:>16}{est_txt:>14}")
    total_est = f"{estimate.allocated_gib:8.2f} GiB" if estimate else "-"
    lines.append(f"{say('simulate.total_allocated', lang):<22}{_gib(result.peak_bytes):>16}{total_est:>14}")
    if estimate and result.peak_bytes:
        gap = (estimate.allocated_gib * GIB - result.peak_bytes) / result.peak_bytes
        lines.append(f"{'':<22}" + say("simulate.gap", lang, gap=gap))
    if result.peak_bytes_quantized is not None:
        lines.append(f"{say('simulate.quantized', lang):<22}{_gib(result.peak_bytes_quantized):>16}   "
                     + say("simulate.quantized_weights", lang, gib=_gib(result.quantized_weights_bytes).strip()))
    if result.notes:
        lines += ["", say("simulate.choices", lang)] + [f"  - {say(n, lang)}" for n in result.notes]
    lines += ["", say("simulate.limits", lang)] + [f"  - {say(m, lang)}" for m in result.limits]
    return "\n".join(lines)


def _code(value: Any) -> Any:
    """A Msg as {"code", "values"} for --simulate --json, as views/jsonout.py gives the report's codes."""
    if isinstance(value, Msg):
        return {"code": value.code, "values": {k: _code(v) for k, v in value.args}}
    if isinstance(value, tuple):
        return [_code(v) for v in value]
    return value


def _g(n_bytes: float | None) -> float | None:
    return None if n_bytes is None else round(n_bytes / GIB, 4)


def to_dict(result: TraceResult, estimate: Estimate | None = None, lang: str = "en") -> dict[str, Any]:
    """--simulate --json: the traced peak per phase and per component, beside the estimate's moments. Texts are
    in `lang`, each list beside its words codes."""
    from oomdoctor.words import say

    traced = {
        "peak_gib": _g(result.peak_bytes), "peak_phase": result.peak_phase,
        "components": {c: _g(result.categories.get(c, 0)) for c in CATEGORIES},
        "phases": [{"step": p.step, "phase": p.phase, "peak_gib": _g(p.peak_bytes),
                    "components": {c: _g(p.categories.get(c, 0)) for c in CATEGORIES}} for p in result.phases],
        "params_total": result.params_total, "params_trainable": result.params_trainable,
        "buffers_gib": _g(result.buffer_bytes), "versions": dict(result.versions), "attention": result.attention,
        "dtypes": dict(result.dtypes), "optimizer": say(result.optimizer, lang), "micro_batch": result.micro_batch,
        "seq_len": result.seq_len, "steps": result.steps, "seconds": round(result.seconds, 2),
        "quantized_weights_gib": _g(result.quantized_weights_bytes),
        "peak_quantized_gib": _g(result.peak_bytes_quantized),
        "limits": [say(m, lang) for m in result.limits], "limits_codes": [_code(m) for m in result.limits],
        "notes": [say(m, lang) for m in result.notes], "notes_codes": [_code(m) for m in result.notes],
    }
    out: dict[str, Any] = {"traced": traced}
    if estimate is not None:
        out["estimate"] = {
            "allocated_gib": round(estimate.allocated_gib, 4), "peak_gib": round(estimate.peak_gib, 4),
            "peak_moment": estimate.peak_moment,
            "moments": {k: round(v, 4) for k, v in estimate.moments.items()},
            "components": {k: round(float(estimate.components.get(k, 0.0)), 4) for k in COMPONENTS},
        }
        if result.peak_bytes:
            # tensors against tensors: the trace cannot see the cuBLAS workspace the estimate carries
            workspace = float(estimate.details.get("cublas_workspace_gib", 0.0)) if estimate.details else 0.0
            gap = estimate.allocated_gib - workspace - result.peak_bytes / GIB
            out["gap"] = {"allocated_minus_traced_gib": round(gap, 4),
                          "relative": round(gap / (result.peak_bytes / GIB), 4)}
    return out
