"""The --json view: a stable contract (later fields are added, names stay).

Texts (notes, titles, skip reasons, advice) are in the report's language; beside each list of them a
`*_codes` list gives the words code and values of each item (null for a sentence not yet moved into
oomdoctor/words/), so a program can match on codes whatever the language.
"""
from __future__ import annotations

import json
from typing import Any

from oomdoctor import __version__
from oomdoctor.facts import (
    COMPONENTS,
    CrashReport,
    Estimate,
    Finding,
    Hardware,
    ModelShape,
    Msg,
    Plan,
    Report,
    Rung,
    Step,
    Text,
    TrainingSetup,
)
from oomdoctor.words import say, show


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(float(x), nd)


def _as_read(x: float | None) -> float | None:
    """A size read from a log, unrounded: its printed digits are all significant (256 bytes, 1024.00 KiB)."""
    return None if x is None else float(x)


def _bytes(gib: float | None) -> int | None:
    return None if gib is None else int(round(gib * (1 << 30)))


def _code(item: Any) -> Any:
    """A Msg as {"code", "values"} (values that are words themselves nested the same way); None otherwise."""
    if isinstance(item, Msg):
        return {"code": item.code, "values": {k: _value(v) for k, v in item.args}}
    return None


def _value(value: Any) -> Any:
    if isinstance(value, Msg):
        return _code(value)
    if isinstance(value, Text):
        return {"en": value.en, "zh": value.zh}
    if isinstance(value, tuple):
        return [_value(v) for v in value]
    if isinstance(value, float):
        return round(value, 3)
    return value if value is None or isinstance(value, (bool, int, str)) else str(value)


def _texts(items: Any, lang: str) -> list[str]:
    return [show(item, lang) for item in items]


def _codes(items: Any) -> list[Any]:
    return [_code(item) for item in items]


def setup_dict(s: TrainingSetup, params_total: int | None, params_trainable: int | None,
               lang: str = "en") -> dict[str, Any]:
    return {
        "model": s.model, "framework": s.framework, "framework_version": s.framework_version,
        "params_total": params_total, "params_trainable": params_trainable,
        "method": s.method, "micro_batch": s.micro_batch, "grad_accum": s.grad_accum, "seq_len": s.seq_len,
        "precision": "pure_bf16" if s.pure_bf16 else s.precision, "optimizer": s.optimizer,
        "grad_ckpt": s.grad_ckpt, "attention": s.attention, "zero_stage": s.zero_stage,
        "offload": offload_name(s), "n_gpus": s.n_gpus,
        "lora_rank": s.lora_rank if s.method in ("lora", "qlora") else None,
        "quant_bits": s.quant_bits, "fused_ce": s.fused_ce, "packing": s.packing,
        "sources": {name: say(src.describe(), lang) for name, src in s.sources.items()},
        "sources_codes": {name: _code(src.describe()) for name, src in s.sources.items()},
        "framework_reason": show(s.framework_reason, lang) if s.framework_reason is not None else None,
        "framework_reason_code": _code(s.framework_reason),
        "version_reason": show(s.version_reason, lang) if s.version_reason is not None else None,
        "version_reason_code": _code(s.version_reason),
        "seq_parallel": s.seq_parallel,
        **({"megatron": {name: getattr(s, name) for name in (
            "tensor_parallel", "pipeline_parallel", "virtual_pipeline", "expert_parallel", "context_parallel",
            "sequence_parallel", "distributed_optimizer", "recompute", "recompute_method", "recompute_layers",
            "data_parallel")}} if s.megatron else {}),
    }


def model_dict(shape: ModelShape, lang: str = "en") -> dict[str, Any]:
    """The model's shape and where it came from (source: checkpoint | config.json | catalog | log)."""
    from oomdoctor.memory import count_params
    from oomdoctor.models import shape_notes, shape_warnings, source_msg

    return {"name": shape.name, "model_type": shape.model_type, "source": shape.source_kind,
            "path": shape.source_path, "source_text": say(source_msg(shape), lang),
            "counted_as_llama": shape.llama_style_guess, "params_total": count_params(shape).total,
            "shape_confidence": shape.shape_confidence,
            "shape_warnings": [{"code": n.code, "text": say(n, lang)} for n in shape_warnings(shape)],
            "assumptions": [{"code": n.code, "text": say(n, lang)} for n in shape.assumptions],
            "unread_keys": list(shape.unread_keys),
            "layers": shape.num_layers, "hidden_size": shape.hidden_size, "vocab_size": shape.vocab_size,
            "tie_word_embeddings": shape.tie_word_embeddings, "torch_dtype": shape.torch_dtype,
            "stored_dtype": shape.stored_dtype, "quant_method": shape.quant_method, "quant_bits": shape.quant_bits,
            "num_experts": shape.num_experts,
            "notes": [{"code": n.code, "text": say(n, lang)} for n in shape_notes(shape)]}


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


def crash_dict(c: CrashReport, lang: str = "en") -> dict[str, Any]:
    return {
        "file": c.file,
        "events": [{
            # sizes as the log printed them, at full precision (1024.00 KiB is 0.0009765625, not 0.001)
            "kind": e.kind, "tried_gib": _as_read(e.tried_gib), "tried_bytes": _bytes(e.tried_gib),
            "capacity_gib": _as_read(e.capacity_gib), "free_gib": _as_read(e.free_gib),
            "allocated_gib": _as_read(e.allocated_gib), "reserved_unallocated_gib": _as_read(e.reserved_unallocated_gib),
            "reserved_gib": _as_read(e.reserved_gib), "process_gib": _as_read(e.process_gib),
            "other_processes_gib": _as_read(e.other_processes_gib),
            "device": e.device, "rank": e.rank, "phase": e.phase, "line": e.line, "message": e.message,
            "phase_evidence": None if e.phase_evidence is None else {
                "line": e.phase_evidence.line, "text": e.phase_evidence.text, "source": e.phase_evidence.source},
            "confidence": e.confidence,
        } for e in c.events],
        "versions": dict(c.versions), "gpu_name": c.gpu_name, "world_size": c.world_size,
        "params_trainable": c.params_trainable, "params_total": c.params_total,
        "step": c.step, "total_steps": c.total_steps, "seq_len_failing": c.seq_len_failing,
        "failed_ranks": list(c.failed_ranks), "diagnoses": list(c.diagnoses), "lines_total": c.lines_total,
        "notes": _texts(c.notes, lang), "notes_codes": _codes(c.notes), "host_ram_gib": c.host_ram_gib, "host_ram_used_pct": c.host_ram_used_pct,
        "checks": _texts(c.checks, lang), "checks_codes": _codes(c.checks),
        "memory_samples": [{"line": m.line, "allocated_gib": _r(m.allocated_gib), "reserved_gib": _r(m.reserved_gib),
                            "max_allocated_gib": _r(m.max_allocated_gib), "max_reserved_gib": _r(m.max_reserved_gib),
                            "step": m.step, "label": m.label} for m in c.memory_samples],
    }


def finding_dict(f: Finding, lang: str = "en") -> dict[str, Any]:
    """Whether the config explains the crash: `kind` config | beyond_config, the floor the crash set under the
    estimate, and for each clue what the log shows, what to check, and the lines it was read from."""
    fl = f.floor
    return {
        "kind": f.cause, "message": say(f.message, lang), "message_code": _code(f.message),
        "floor": None if fl is None else {
            "kind": fl.kind, "observed_gib": _r(fl.observed_gib), "estimate_gib": _r(fl.estimate_gib),
            "raised_gib": _r(fl.raised_gib), "moment": fl.moment, "line": fl.line, "message": say(fl.message, lang)},
        "clues": [{"kind": c.kind, "message": say(c.message, lang), "check": say(c.check, lang),
                   "evidence": [{"line": e.line, "text": e.text, "source": e.source} for e in c.evidence]}
                  for c in f.clues],
    }


def estimate_dict(e: Estimate, lang: str = "en") -> dict[str, Any]:
    return {"peak_gib": _r(e.peak_gib), "allocated_gib": _r(e.allocated_gib),
            "reserved_gib": _r(e.details.get("reserved_gib", e.allocated_gib)), "fits": e.fits,
            "headroom_gib": _r(e.headroom_gib), "capacity_gib": _r(e.capacity_gib), "phase": e.phase,
            "host_ram_gib": _r(e.host_ram_gib),
            "components": {k: _r(e.components.get(k, 0.0)) for k in COMPONENTS},
            "details": {k: _r(v) for k, v in e.details.items()}, "notes": _texts(e.notes, lang),
            "notes_codes": _codes(e.notes),
            "peak_moment": e.peak_moment, "moments": {k: _r(v) for k, v in e.moments.items()},
            # an upper bound (verl's packed lengths): "may not fit" rather than "does not fit"
            **({"length_bound_gib": _r(e.length_bound_gib), "verdict": "fits" if e.fits else "may_not_fit"}
               if e.length_bound_gib > 0 else {})}


def step_dict(step: Step, report: Report, lang: str = "en") -> dict[str, Any]:
    from oomdoctor.configs import edits_for
    from oomdoctor.facts import Change
    from oomdoctor.views.describe import override_of

    changes = []
    for c in step.changes:
        base = report.setup
        edits = sorted(edits_for(base, [Change(c.field, c.before, c.after)]), key=lambda e: e.file) if base else []
        # a verl script is not patched: its Hydra key and value are named, the user's to paste
        shown = override_of(base, c) if base is not None and not edits else None
        changes.append({"file": edits[0].file if edits else None, "key": c.field, "from": c.before, "to": c.after,
                        "config_key": ".".join(edits[0].key_path) or None if len(edits) == 1
                        else (shown[0] if shown else None),
                        "config_value": edits[0].value if len(edits) == 1 and not edits[0].create
                        else (shown[1] if shown else None)})
    return {"rule": step.rule, "slug": step.slug, "title": show(step.title, lang),
            "peak_gib": _r(step.estimate.peak_gib),
            "allocated_gib": _r(step.estimate.allocated_gib), "saved_gib": _r(step.saved_gib),
            "fits": step.estimate.fits, "costs": list(step.costs), "applicability": step.applicability,
            "why": show(step.why, lang), "changes": changes, "env": dict(step.env), "notes": _texts(step.notes, lang)}


def rung_dict(rung: Rung, plan: Plan, report: Report, lang: str = "en") -> dict[str, Any]:
    """One rung in ladder order: its state (applied, proposed, dropped, skipped, not_reached), why, and for
    a proposed or dropped rung what it would do (or did)."""
    out: dict[str, Any] = {"rule": rung.rule, "state": rung.state,
                           "reason": show(rung.reason, lang) if rung.reason is not None else None,
                           "reason_code": _code(rung.reason)}
    if rung.state == "applied":
        out["steps"] = [plan.steps.index(s) + 1 for s in rung.steps if s in plan.steps]
    elif rung.steps:
        out["step"] = step_dict(rung.steps[0], report, lang)
    return out


def plan_dict(plan: Plan, report: Report, lang: str = "en") -> dict[str, Any]:
    return {"fits": plan.fits, "steps": [step_dict(s, report, lang) for s in plan.steps],
            "skipped": [{"rule": s.rule, "reason": show(s.reason, lang), "reason_code": _code(s.reason)}
                        for s in plan.skipped],
            "proposed": [step_dict(s, report, lang) for s in plan.proposed],
            "rungs": [rung_dict(r, plan, report, lang) for r in plan.rungs],
            "advice": _texts(plan.advice, lang), "advice_codes": _codes(plan.advice),
            "cost": dict(plan.cost) if plan.cost else None}


def to_dict(report: Report, lang: str = "en") -> dict[str, Any]:
    params_total = params_trainable = None
    if report.setup is not None and report.shape is not None:
        from oomdoctor.memory import count_params, trainable_params

        params_total = count_params(report.shape).total
        params_trainable = trainable_params(report.setup, report.shape)
    plan = plan_dict(report.plan, report, lang) if report.setup is not None else {"fits": False, "steps": []}
    if report.least_cost is not None and report.setup is not None:
        plan["least_cost"] = plan_dict(report.least_cost, report, lang)
    return {
        "version": __version__,
        "setup": setup_dict(report.setup, params_total, params_trainable, lang) if report.setup else None,
        "model": model_dict(report.shape, lang) if report.shape else None,
        "hardware": hardware_dict(report.hardware) if report.hardware else None,
        "lang": lang,
        "crash": crash_dict(report.crash, lang) if report.crash else None,
        "cause": finding_dict(report.finding, lang) if report.finding is not None else None,
        "estimate": estimate_dict(report.estimate, lang) if report.estimate else None,
        "plan": plan,
        "patch": report.patch,
        "env": dict(report.env),
        "notes": _texts(report.notes, lang),
        "warnings": [say(w, lang) for w in report.warnings],
        "warnings_codes": _codes(report.warnings),
    }


def render(report: Report, lang: str = "en") -> str:
    return json.dumps(to_dict(report, lang), indent=2, ensure_ascii=False, default=str)
