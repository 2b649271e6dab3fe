"""--verify: trace the plan's final setup on fake tensors and set the trace beside the estimate.

The plan comes in through the Report the pipeline gives (`report.plan.final_setup`, `final_estimate`): nothing
here knows how the planner searched. The trace runs the setup as the plan leaves it (batch, sequence,
checkpointing, optimizer, attention, precision), with Liger's fused linear cross-entropy when the plan asks
for it and liger-kernel is installed; when the fused loss cannot be traced, the report says so and compares
the trace with the estimate of the loss that was traced. No torch at import time.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from typing import Any, Callable

from oomdoctor.facts import GIB, Estimate, Msg, Report, TrainingSetup, msg

# The traced grid's bound (benchmarks/grid.py): within 5% of the traced peak, or 64 MiB (allocator rounding)
AGREE_FRACTION = 0.05
AGREE_SLACK_BYTES = 64 << 20
DEFAULT_TIME_LIMIT_S = 600.0

# fused-loss states: what happened to a fused loss the plan's setup asks for
FUSED_NONE, FUSED_TRACED, FUSED_NOT_INSTALLED, FUSED_NOT_MODELLED = "none", "traced", "not_installed", "not_modelled"


def liger_version() -> str | None:
    """The installed liger-kernel's version, without importing it (its import needs triton and a GPU)."""
    try:
        if importlib.util.find_spec("liger_kernel") is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return importlib.metadata.version("liger-kernel")
    except importlib.metadata.PackageNotFoundError:
        return "?"


@dataclass(frozen=True)
class Verification:
    setup: TrainingSetup              # the plan's final setup, as traced
    rules: tuple[str, ...]            # the plan's steps that lead to it (rule ids), in order
    trace: Any                        # simulate.TraceResult
    estimate: Estimate                # the memory model's figure for what was traced (without the log's correction)
    plan_allocated_gib: float | None  # the plan's own figure for its final setup (with the log's correction)
    fused: str                        # FUSED_* state
    fused_kernel: str = ""            # "liger-kernel 0.6.2" when one was traced

    @property
    def traced_bytes(self) -> int:
        return self.trace.reported_peak_bytes

    @property
    def estimated_bytes(self) -> float:
        """Tensors against tensors: the estimate's allocated figure without the cuBLAS workspace the trace
        cannot see (benchmarks/grid.py compares the same way)."""
        workspace = float(self.estimate.details.get("cublas_workspace_gib", 0.0)) if self.estimate.details else 0.0
        return (self.estimate.allocated_gib - workspace) * GIB

    @property
    def gap(self) -> float:
        """Signed relative error of the estimate against the trace."""
        return (self.estimated_bytes - self.traced_bytes) / self.traced_bytes if self.traced_bytes else 0.0

    @property
    def agrees(self) -> bool:
        diff = abs(self.estimated_bytes - self.traced_bytes)
        return diff <= AGREE_SLACK_BYTES or diff <= AGREE_FRACTION * self.traced_bytes

    @property
    def fused_msg(self) -> Msg | None:
        if self.fused == FUSED_NONE:
            return None
        return msg(f"verify.fused.{self.fused}", kernel=self.fused_kernel)


def _without_fused_loss(setup: TrainingSetup) -> TrainingSetup:
    return setup.with_changes(fused_ce=False, loss_kernel="")


def verify(report: Report, *, time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
           progress: Callable[[Msg], None] | None = None) -> Verification:
    """Trace the final setup of `report`'s plan (its configured setup when the plan changes nothing)."""
    from oomdoctor.memory import estimate
    from oomdoctor.memory.loss import loss_regime
    from oomdoctor.simulate import trace_step

    assert report.setup is not None and report.shape is not None and report.hardware is not None
    setup = report.plan.final_setup(report.setup)
    rules = tuple(step.rule for step in report.plan.steps)
    fused, kernel, compared = FUSED_NONE, "", setup
    if setup.fused_ce or loss_regime(setup, report.shape) in ("fused", "cce", "chunked"):
        if loss_regime(setup, report.shape) != "fused":
            fused, compared = FUSED_NOT_MODELLED, _without_fused_loss(setup)
        else:
            version = liger_version()
            if version is None:
                fused, compared = FUSED_NOT_INSTALLED, _without_fused_loss(setup)
            else:
                fused, kernel = FUSED_TRACED, f"liger-kernel {version}"
                # the tracer runs Liger's fused loss (simulate/fused_loss.py), not its Triton RMSNorm and SwiGLU:
                # the estimate compared keeps the model's own layers, as the trace does
                compared = setup.with_liger_loss_only()
    if progress is not None:
        progress(msg("verify.progress.start", n=len(rules)))
    result = trace_step(setup, report.shape, progress=progress, time_limit_s=time_limit_s,
                        fused_loss=fused == FUSED_TRACED)
    est = estimate(compared, report.shape, report.hardware, crash=report.crash)
    plan_est = report.plan.final_estimate(report.estimate) if report.estimate is not None else None
    return Verification(setup, rules, result, est, plan_est.allocated_gib if plan_est is not None else None,
                        fused, kernel)


def format_verification(v: Verification, lang: str = "en") -> str:
    from oomdoctor.simulate.result import format_result
    from oomdoctor.words import say

    head = say("verify.heading_plan", lang, rules=", ".join(v.rules)) if v.rules else say("verify.heading_as_is", lang)
    lines = [head, "", format_result(v.trace, v.estimate, lang), ""]
    lines.append(say("verify.verdict_agree" if v.agrees else "verify.verdict_differ", lang,
                     traced=v.traced_bytes / GIB, estimated=v.estimated_bytes / GIB, gap=v.gap,
                     bound=AGREE_FRACTION))
    if v.plan_allocated_gib is not None and abs(v.plan_allocated_gib - v.estimate.allocated_gib) > 0.005:
        lines.append("  " + say("verify.plan_figure", lang, gib=v.plan_allocated_gib))
    if v.fused_msg is not None:
        lines.append("  " + say(v.fused_msg, lang))
    return "\n".join(lines)


def _setup_fields(s: TrainingSetup) -> dict[str, Any]:
    """The traced setup's fields that the plan's rules change (as the report's JSON names them)."""
    return {"model": s.model, "framework": s.framework, "framework_version": s.framework_version,
            "method": s.method, "micro_batch": s.micro_batch, "grad_accum": s.grad_accum, "seq_len": s.seq_len,
            "precision": "pure_bf16" if s.pure_bf16 else s.precision, "optimizer": s.optimizer,
            "grad_ckpt": s.grad_ckpt, "attention": s.attention, "zero_stage": s.zero_stage,
            "fsdp": s.fsdp, "n_gpus": s.n_gpus, "lora_rank": s.lora_rank if s.method in ("lora", "qlora") else None,
            "quant_bits": s.quant_bits, "fused_ce": s.fused_ce, "offload_optimizer": s.offload_optimizer,
            "offload_params": s.offload_params}


def verification_dict(v: Verification, lang: str = "en") -> dict[str, Any]:
    from oomdoctor.simulate.result import _code, to_dict
    from oomdoctor.words import say

    fused = v.fused_msg
    return {
        "rules": list(v.rules),
        "setup": _setup_fields(v.setup),
        "traced_allocated_gib": round(v.traced_bytes / GIB, 4),
        "estimated_allocated_gib": round(v.estimated_bytes / GIB, 4),
        "relative": round(v.gap, 4),
        "agrees": v.agrees,
        "bound": AGREE_FRACTION,
        "plan_allocated_gib": None if v.plan_allocated_gib is None else round(v.plan_allocated_gib, 4),
        "fused_loss": {"state": v.fused, "kernel": v.fused_kernel or None,
                       "text": say(fused, lang) if fused is not None else None, "code": _code(fused)},
        **to_dict(v.trace, v.estimate, lang),
    }


__all__ = ["Verification", "verify", "format_verification", "verification_dict", "liger_version",
           "AGREE_FRACTION", "DEFAULT_TIME_LIMIT_S"]
