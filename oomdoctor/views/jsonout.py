"""The --json view: the stable contract of issue 2 (later fields are added, names stay)."""
from __future__ import annotations

import json
from typing import Any

from oomdoctor import __version__
from oomdoctor.facts import COMPONENTS, CrashReport, Estimate, Hardware, Plan, Report, Step, TrainingSetup


def _text(what: Any) -> str:
    """A sentence that is already text, or a words Msg rendered in English."""
    if isinstance(what, str):
        return what
    from oomdoctor.words import say

    return say(what, "en")


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(float(x), nd)


def setup_dict(s: TrainingSetup, params_total: int | None, params_trainable: int | None) -> dict[str, Any]:
    return {
        "model": s.model, "framework": s.framework, "framework_version": s.framework_version,
        "params_total": params_total, "params_trainable": params_trainable,
        "method": s.method, "micro_batch": s.micro_batch, "grad_accum": s.grad_accum, "seq_len": s.seq_len,
        "precision": "pure_bf16" if s.pure_bf16 else s.precision, "optimizer": s.optimizer,
        "grad_ckpt": s.grad_ckpt, "attention": s.attention, "zero_stage": s.zero_stage,
        "offload": offload_name(s), "n_gpus": s.n_gpus,
        "lora_rank": s.lora_rank if s.method in ("lora", "qlora") else None,
        "quant_bits": s.quant_bits, "fused_ce": s.fused_ce, "packing": s.packing,
        "sources": {name: src.describe() for name, src in s.sources.items()},
    }


def offload_name(s: TrainingSetup) -> str:
    if s.offload_optimizer and s.offload_params:
        return "optimizer+params"
    if s.offload_optimizer:
        return "optimizer"
    if s.offload_params:
        return "params"
    return "none"


def hardware_dict(hw: Hardware) -> dict[str, Any]:
    return {"gpu": hw.gpu, "gpu_gib": _r(hw.gpu_gib), "n_gpus": hw.n_gpus, "source": hw.source,
            "other_procs_gib": _r(hw.other_procs_gib), "bf16": hw.bf16, "flash_attn2": hw.flash_attn2,
            "host_ram_gib": _r(hw.host_ram_gib)}


def crash_dict(c: CrashReport) -> dict[str, Any]:
    return {
        "file": c.file,
        "events": [{
            "kind": e.kind, "tried_gib": _r(e.tried_gib), "capacity_gib": _r(e.capacity_gib),
            "free_gib": _r(e.free_gib), "allocated_gib": _r(e.allocated_gib),
            "reserved_unallocated_gib": _r(e.reserved_unallocated_gib), "reserved_gib": _r(e.reserved_gib),
            "process_gib": _r(e.process_gib), "other_processes_gib": _r(e.other_processes_gib),
            "device": e.device, "rank": e.rank, "phase": e.phase, "line": e.line, "message": e.message,
            "phase_evidence": None if e.phase_evidence is None else {
                "line": e.phase_evidence.line, "text": e.phase_evidence.text, "source": e.phase_evidence.source},
            "confidence": e.confidence,
        } for e in c.events],
        "versions": dict(c.versions), "gpu_name": c.gpu_name, "world_size": c.world_size,
        "params_trainable": c.params_trainable, "params_total": c.params_total,
        "step": c.step, "total_steps": c.total_steps, "seq_len_failing": c.seq_len_failing,
        "failed_ranks": list(c.failed_ranks), "diagnoses": list(c.diagnoses), "lines_total": c.lines_total,
        "notes": [_text(n) for n in c.notes], "checks": [_text(n) for n in c.checks],
        "host_ram_gib": c.host_ram_gib, "host_ram_used_pct": c.host_ram_used_pct,
        "memory_samples": [{"line": m.line, "allocated_gib": _r(m.allocated_gib), "reserved_gib": _r(m.reserved_gib),
                            "max_allocated_gib": _r(m.max_allocated_gib), "max_reserved_gib": _r(m.max_reserved_gib),
                            "step": m.step, "label": m.label} for m in c.memory_samples],
    }


def estimate_dict(e: Estimate) -> dict[str, Any]:
    return {"peak_gib": _r(e.peak_gib), "allocated_gib": _r(e.allocated_gib), "fits": e.fits,
            "headroom_gib": _r(e.headroom_gib), "capacity_gib": _r(e.capacity_gib), "phase": e.phase,
            "host_ram_gib": _r(e.host_ram_gib),
            "components": {k: _r(e.components.get(k, 0.0)) for k in COMPONENTS},
            "details": {k: _r(v) for k, v in e.details.items()}, "notes": list(e.notes)}


def step_dict(step: Step, report: Report) -> dict[str, Any]:
    from oomdoctor.configs import edits_for
    from oomdoctor.facts import Change

    changes = []
    for c in step.changes:
        base = report.setup
        files = {edit.file for edit in edits_for(base, [Change(c.field, c.before, c.after)])} if base else set()
        changes.append({"file": sorted(files)[0] if files else None, "key": c.field, "from": c.before, "to": c.after})
    return {"rule": step.rule, "slug": step.slug, "title": step.title, "peak_gib": _r(step.estimate.peak_gib),
            "allocated_gib": _r(step.estimate.allocated_gib), "saved_gib": _r(step.saved_gib),
            "fits": step.estimate.fits, "costs": list(step.costs), "applicability": step.applicability,
            "why": step.why, "changes": changes, "env": dict(step.env), "notes": list(step.notes)}


def plan_dict(plan: Plan, report: Report) -> dict[str, Any]:
    return {"fits": plan.fits, "steps": [step_dict(s, report) for s in plan.steps],
            "skipped": [{"rule": s.rule, "reason": s.reason} for s in plan.skipped],
            "advice": list(plan.advice)}


def to_dict(report: Report) -> dict[str, Any]:
    params_total = params_trainable = None
    if report.setup is not None and report.shape is not None:
        from oomdoctor.memory import count_params, trainable_params

        params_total = count_params(report.shape).total
        params_trainable = trainable_params(report.setup, report.shape)
    plan = plan_dict(report.plan, report) if report.setup is not None else {"fits": False, "steps": []}
    if report.least_cost is not None and report.setup is not None:
        plan["least_cost"] = plan_dict(report.least_cost, report)
    return {
        "version": __version__,
        "setup": setup_dict(report.setup, params_total, params_trainable) if report.setup else None,
        "hardware": hardware_dict(report.hardware) if report.hardware else None,
        "crash": crash_dict(report.crash) if report.crash else None,
        "estimate": estimate_dict(report.estimate) if report.estimate else None,
        "plan": plan,
        "patch": report.patch,
        "env": dict(report.env),
        "notes": list(report.notes),
        "warnings": [_text(w) for w in report.warnings],
    }


def render(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False, default=str)
