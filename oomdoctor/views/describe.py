"""The report's facts as sentences in the user's language, for every view: the plain report, the app, the guide.

No rich and no textual: each function returns plain strings built from the codes of words/report.py (and the
crash, memory and plan tables), so a fact is worded once whatever draws it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oomdoctor.facts import (
    Change,
    CrashEvent,
    CrashReport,
    Estimate,
    Hardware,
    ModelShape,
    Msg,
    Plan,
    Step,
    TrainingSetup,
    msg,
)
from oomdoctor.words import gib, has, join, say, show, size


def _code_or(code: str, fallback: str) -> Msg | str:
    return msg(code) if has(code) else fallback


def kind_words(kind: str) -> Msg | str:
    """'CUDA ran out of GPU memory' for "cuda_oom"; an unknown kind as its name."""
    return _code_or(f"crash.kind.{kind}", kind.replace("_", " "))


def phase_words(phase: str) -> Msg:
    """'in the backward pass' for "backward"; an unknown phase as 'during <phase>'."""
    return msg(f"crash.phase.{phase}") if has(f"crash.phase.{phase}") else msg("report.phase_unknown", phase=phase)


def component_name(component: str, lang: str = "en") -> str:
    """A memory component's short name (bars, tables): 'grads', '权重'."""
    return say(f"memory.component.{component}", lang) if has(f"memory.component.{component}") else component


# ---------------------------------------------------------------- the crash

def event_line(e: CrashEvent, lang: str = "en") -> str:
    """The crash in one line: 'CUDA ran out of GPU memory in the optimizer step (GPU 0)'."""
    where = []
    if e.rank is not None:
        where.append(msg("report.where.rank", rank=e.rank))
    if e.device is not None:
        where.append(msg("report.where.device", device=e.device))
    kind = kind_words(e.kind)
    if e.phase and where:
        return say("report.event", lang, kind=kind, phase=phase_words(e.phase), where=tuple(where))
    if e.phase:
        return say("report.event_phase", lang, kind=kind, phase=phase_words(e.phase))
    if where:
        return say("report.event_where", lang, kind=kind, where=tuple(where))
    return show(kind, lang)


def event_numbers(e: CrashEvent, lang: str = "en") -> str:
    """What the crash message measured, compact: asked, free, capacity; what PyTorch and others held."""
    asked = ""
    if e.tried_gib is not None:
        asked += say("report.numbers.asked", lang, size=size(e.tried_gib))
    if e.free_gib is not None:
        asked += say("report.numbers.free", lang, size=size(e.free_gib))
    if e.capacity_gib is not None:
        asked += say("report.numbers.capacity", lang, gib=e.capacity_gib)
    asked = asked.lstrip(" ，")
    held = []
    if e.allocated_gib is not None:
        held.append(msg("report.numbers.held", size=size(e.allocated_gib)))
    if e.reserved_unallocated_gib is not None:
        held.append(msg("report.numbers.reserved", size=size(e.reserved_unallocated_gib)))
    if e.other_processes_gib:
        held.append(msg("report.numbers.others", size=size(e.other_processes_gib)))
    if not held:
        return asked
    held_text = join(held, lang)
    return say("report.numbers.then", lang, first=asked, second=held_text) if asked else held_text


def card_phrase(capacity_gib: float | None, hw: Hardware | None, lang: str = "en") -> str:
    """'the A100-SXM4-80GB (79.2 GiB)' / 'a 24.0 GiB GPU'."""
    cap = capacity_gib if capacity_gib is not None else (hw.gpu_gib if hw and hw.gpu_gib else None)
    gpu = hw.gpu if hw is not None else ""
    named = gpu not in ("", "unknown")
    if named and cap is not None:
        return say("report.card_named", lang, gpu=gpu, gib=cap)
    if named:
        return say("report.card_name", lang, gpu=gpu)
    if cap is not None:
        return say("report.card_size_an" if f"{cap:.0f}".startswith("8") else "report.card_size", lang, gib=cap)
    return say("report.card_unknown", lang)


def crash_numbers(event: CrashEvent, hw: Hardware | None, lang: str = "en") -> str:
    """The crash's numbers in plain sentences."""
    card = card_phrase(event.capacity_gib, hw, lang)
    if event.tried_gib is not None and event.free_gib is not None:
        text = say("report.asked_free", lang, tried=gib(event.tried_gib), free=gib(event.free_gib), card=card)
    elif event.tried_gib is not None:
        text = say("report.asked", lang, tried=gib(event.tried_gib), card=card)
    else:
        text = say("report.kind_sentence", lang, kind=kind_words(event.kind))
    held = []
    if event.allocated_gib is not None:
        held.append(msg("report.held_live", gib=gib(event.allocated_gib)))
    if event.reserved_unallocated_gib is not None:
        held.append(msg("report.held_reserved", gib=gib(event.reserved_unallocated_gib)))
    if held:
        parts = held[0] if len(held) == 1 else msg("report.held_and", first=held[0], second=held[1])
        text += say("report.held", lang, parts=parts)
    if event.other_processes_gib:
        text += say("report.others_held", lang, gib=gib(event.other_processes_gib))
    return text


def crash_where(event: CrashEvent, crash: CrashReport, lang: str = "en") -> str:
    """'CUDA ran out of GPU memory in the backward pass on rank 0 (cuda:0) at step 12 of 500; train.log line 1234.'"""
    phase = say("report.where_phase", lang, phase=phase_words(event.phase)) if event.phase else ""
    rank = f"rank {event.rank}" if event.rank is not None else None
    device = f"cuda:{event.device}" if event.device is not None else None
    if rank and device:
        place = say("report.where_place2", lang, rank=rank, device=device)
    elif rank or device:
        place = say("report.where_place", lang, place=rank or device)
    else:
        place = ""
    if crash.step is None:
        step = ""
    elif crash.total_steps:
        step = say("report.where_step_of", lang, step=crash.step, total=crash.total_steps)
    else:
        step = say("report.where_step", lang, step=crash.step)
    code = "report.where_died" if phase or place or step else "report.where_died_bare"
    text = say(code, lang, what=kind_words(event.kind), phase=phase, place=place, step=step, file=crash.file,
               line=event.line)
    others = [r for r in crash.failed_ranks if r != event.rank]
    if others:
        text += say("report.ranks_too", lang, ranks=tuple(str(r) for r in others))
    return text


def diagnosis_lines(codes: Sequence[str], lang: str = "en") -> list[str]:
    """The log's diagnoses as sentences; an unknown one as its name."""
    return [say(f"crash.diagnosis.{code}", lang) if has(f"crash.diagnosis.{code}")
            else code.replace("_", " ").capitalize() + "." for code in codes]


# ---------------------------------------------------------------- the setup

def setup_line(s: TrainingSetup, lang: str = "en") -> str:
    """The setup in one line, for the plain report."""
    method = {"full": msg("report.method.full"), "lora": msg("report.method.lora", rank=s.lora_rank),
              "qlora": msg("report.method.qlora", bits=s.quant_bits or 4, rank=s.lora_rank),
              "freeze": msg("report.method.freeze", n=s.freeze_trainable_layers)}.get(s.method, s.method)
    method = _peft_method(s) or method
    parallel = say("report.zero", lang, stage=s.zero_stage) if s.zero_stage else ""
    if s.offload_optimizer or s.offload_params:
        parallel += say("report.offload", lang)
    if s.fsdp:
        parallel += say("report.fsdp", lang, mode=s.fsdp)
    if s.megatron:
        parallel += say("report.megatron", lang, tp=s.tensor_parallel, pp=s.pipeline_parallel, ep=s.expert_parallel,
                        cp=s.context_parallel, dp=s.data_parallel)
    return say("report.setup_line", lang, method=method, mb=s.micro_batch, ga=s.grad_accum, n=s.n_gpus,
               seq=s.seq_len, precision=msg("report.pure_bf16") if s.pure_bf16 else s.precision,
               optimizer=s.optimizer, ckpt=msg("report.ckpt_on" if s.grad_ckpt else "report.ckpt_off"),
               attention=s.attention, parallel=parallel)


def _peft_method(s: TrainingSetup) -> Msg | None:
    """A PEFT adapter the estimate models on its own (IA3, VeRA, the prompt-learning types), named as such."""
    kind = s.mechanisms.peft_type if s.method in ("lora", "qlora") else ""
    if kind in ("PROMPT_TUNING", "PREFIX_TUNING", "P_TUNING"):
        return msg("report.method.prompt", kind=kind, tokens=s.mechanisms.virtual_tokens)
    if kind == "IA3":
        return msg("report.method.ia3")
    if kind == "VERA":
        return msg("report.method.vera", rank=s.lora_rank)
    return None


def setup_rows(setup: TrainingSetup, lang: str = "en") -> list[tuple[str, str]]:
    """(label, value) pairs that say what the run is, in the order a person reads a config."""
    method = setup.method + (say("report.rank_of", lang, rank=setup.lora_rank)
                             if setup.method in ("lora", "qlora") else "")
    memory: list[Msg | str] = [msg("report.grad_ckpt_on" if setup.grad_ckpt else "report.grad_ckpt_off"),
                               msg("report.attention_is", kernel=setup.attention)]
    if setup.zero_stage:
        memory.append(f"ZeRO-{setup.zero_stage}")
    if setup.fsdp:
        memory.append(f"FSDP {setup.fsdp}")
    if setup.offload_optimizer:
        memory.append(msg("report.optimizer_offload"))
    if setup.offload_params:
        memory.append(msg("report.parameter_offload"))
    rows = [
        ("model", setup.model or "?"),
        ("method", f"{setup.stage} · {method}"),
        ("batch", say("report.batch", lang, mb=setup.micro_batch, ga=setup.grad_accum, n=setup.n_gpus,
                      eb=setup.effective_batch)),
        ("sequence", say("report.tokens", lang, n=setup.seq_len) + (say("report.packed", lang) if setup.packing else "")),
        ("precision", setup.precision + (say("report.pure", lang) if setup.pure_bf16 else "")),
        ("optimizer", setup.optimizer),
        ("memory", ", ".join(show(m, lang) for m in memory)),
    ]
    return [(say(f"report.row.{label}", lang), value) for label, value in rows]


def framework_name(s: TrainingSetup) -> str:
    """The framework and release a report names: a tool read over another framework's regime (xtuner over
    transformers, AutoTrain over TRL) has no release of that framework, and names itself and its own release."""
    if s.framework_version or not s.defaults_of:
        return f"{s.framework} {s.framework_version}".strip()
    return s.defaults_of


def read_as_line(s: TrainingSetup, lang: str = "en") -> str:
    """Which framework the config was read as and why, and whose release's defaults filled the rest."""
    parts = []
    if s.framework_reason is not None:
        parts.append(say("report.read_as", lang, framework=s.defaults_of or s.framework,
                         why=s.framework_reason))
    if s.version_reason is not None:
        parts.append(say("report.release", lang, why=s.version_reason))
    return say("report.change_sep", lang).join(parts)


def model_lines(shape: ModelShape, lang: str = "en") -> tuple[str, list[str]]:
    """The model's headline (name, size, where the shape came from) and its notes (Llama-style guess, ...)."""
    from oomdoctor.memory import count_params
    from oomdoctor.models import confidence_msg, shape_notes, shape_warnings, source_msg

    summary = say("model.summary", lang, params_b=count_params(shape).total / 1e9, layers=shape.num_layers,
                  hidden=shape.hidden_size, vocab=shape.vocab_size)
    source = say("report.model_source", lang, source=source_msg(shape), confidence=confidence_msg(shape))
    warns = shape_warnings(shape)
    return say("report.model_head", lang, name=shape.name, summary=summary, source=source), [
        say(n, lang) for n in shape_notes(shape) if n not in warns]


def model_warning_lines(shape: ModelShape, lang: str = "en") -> list[str]:
    """The warning lines of a guessed shape (empty for an exact or derived one)."""
    from oomdoctor.models import shape_warnings

    return [say(n, lang) for n in shape_warnings(shape)]


# ---------------------------------------------------------------- estimates and steps

def fit_verdict(est: Estimate, lang: str = "en") -> str:
    """'fits, 8.8 GiB spare' / 'over by 14.2 GiB' against capacity less headroom."""
    limit = est.capacity_gib * (1.0 - est.headroom)
    if est.fits:
        return say("report.fits_spare", lang, spare=gib(limit - est.peak_gib))
    if est.length_bound_gib > 0:        # counted at a padded length the run packs away: an upper bound
        return say("report.over_by_at_most", lang, over=gib(est.peak_gib - limit))
    return say("report.over_by", lang, over=gib(est.peak_gib - limit))


def step_costs(step: Step, lang: str = "en") -> str:
    """'slower, asks consent' / 'free'."""
    words: list[Msg] = [msg(f"report.cost.{c}") for c in step.costs if c != "none" and has(f"report.cost.{c}")]
    if not words:
        words.append(msg("report.cost.none"))
    if step.applicability != "safe":
        words.append(msg("report.asks_consent"))
    return join(words, lang)


def value_words(value: object, lang: str = "en") -> str:
    """A setup value as a person reads it: on/off, none, 8."""
    if value is None:
        return say("common.none", lang)
    if isinstance(value, bool):
        return say("common.on" if value else "common.off", lang)
    return str(value)


def change_words(step: Step, lang: str = "en") -> str:
    """'per_device_train_batch_size 4 → 2; gradient_accumulation_steps 2 → 4': each change under the
    key its config file gives it (sequence_len in axolotl, max_seq_len in torchtune) where that key
    takes the value as it is, else under the field's own name (grad_ckpt off → on, not LLaMA-Factory's
    inverted disable_gradient_checkpointing)."""
    return say("report.change_sep", lang).join(
        say("report.change", lang, field=setting_name(step.setup, c), before=value_words(c.before, lang),
            after=value_words(c.after, lang))
        for c in step.changes)


def setting_name(setup: TrainingSetup, change: Change) -> str:
    """The one config key a patch writes `change.after` to, as it is; else the setup field's name (a
    launcher flag, an environment variable, an inverted or derived key, several keys)."""
    from oomdoctor.configs import edits_for

    edits = edits_for(setup, [change])
    if len(edits) == 1 and edits[0].key_path and not edits[0].create and edits[0].value == change.after \
            and type(edits[0].value) is type(change.after):
        return ".".join(edits[0].key_path)
    return override_key(setup, change.field) or change.field


def override_key(setup: TrainingSetup, field: str) -> str | None:
    """The Hydra key a verl run sets `field` with (a verl script is not patched: the plan's values are shown as
    `key=value` overrides); None for any other framework or a derived field (grad_accum)."""
    if setup.framework != "verl":
        return None
    from oomdoctor.configs.verl import override_key as verl_key

    key = verl_key(setup, field)
    return key.name if key is not None else None


def override_of(setup: TrainingSetup, change: Change) -> tuple[str, Any] | None:
    """(Hydra key, value) that make `change` in a verl run; None for any other framework or a derived field."""
    if setup.framework != "verl":
        return None
    from oomdoctor.configs.verl import override

    kv = override(setup, change)
    return (kv[0].name, kv[1]) if kv is not None else None


def override_lines(before: TrainingSetup, after: TrainingSetup, fields: Sequence[str]) -> list[str]:
    """`key=value` lines to paste into a verl launch command, one per changed field verl has a key for."""
    if before.framework != "verl":
        return []
    from oomdoctor.planner.registry import value_of

    out: list[str] = []
    for field in fields:
        if field == "method" and after.method in ("lora", "qlora"):
            field = "lora_rank"         # verl turns LoRA on with model.lora_rank > 0 (hf_model.yaml lora_rank: 0)
        was, now = value_of(before, field), value_of(after, field)
        kv = override_of(before, Change(field, was, now)) if now != was else None
        if kv is None:
            continue
        key, value = kv
        text = ("True" if value else "False") if isinstance(value, bool) else str(value)
        line = f"{key}={text}"
        if line not in out:
            out.append(line)
    return out


def override_block(before: TrainingSetup | None, after: TrainingSetup | None, plan: Plan, patched: bool,
                   lang: str) -> tuple[str, list[str]]:
    """The sentence and `key=value` lines that take a verl run from `before` to `after` (the plan's final setup, or
    the steps a user kept) to paste into the launch command, the same in every view; ("", []) when the run is not
    verl, its YAML config is patched (the diff holds the keys), or no field the plan changes has a verl key."""
    if before is None or after is None or patched:
        return "", []
    lines = override_lines(before, after, [c.field for step in plan.steps for c in step.changes])
    if not lines:
        return "", []
    from oomdoctor.planner.registry import value_of

    if value_of(before, "micro_batch") == value_of(after, "micro_batch"):
        return say("report.verl_overrides", lang), lines
    # the batch an optimizer step takes stays: ppo_mini_batch_size (actor.yaml), the SFT trainer's
    # data.train_batch_size (sft_trainer.yaml); accumulation is what rises
    batch = "data.train_batch_size" if before.stage == "sft" else "ppo_mini_batch_size"
    return say("report.verl_overrides_accum", lang, batch=batch), lines


# Packages a planned setting needs that a plain HF/LLaMA-Factory install lacks: without them the patched run
# stops at start (LLaMA-Factory checks liger-kernel when enable_liger_kernel is on, the Trainer bitsandbytes
# for 8-bit optimizers, accelerate DeepSpeed for a deepspeed config).
def install_commands(before: TrainingSetup, after: TrainingSetup) -> list[str]:
    """`pip install ...` lines for what the change from `before` to `after` needs, in a stable order."""
    out: list[str] = []
    if after.fused_ce and not before.fused_ce:
        out.append("pip install liger-kernel")
    eight_bit = ("8bit" in after.optimizer and "8bit" not in before.optimizer)
    quantised = after.method == "qlora" and before.method != "qlora"
    if eight_bit or quantised:
        out.append("pip install bitsandbytes")
    sharded = (after.zero_stage and not before.zero_stage) or (after.offload_optimizer and not before.offload_optimizer) \
        or (after.offload_params and not before.offload_params)
    if sharded and not after.fsdp:
        out.append("pip install deepspeed")
    if after.attention == "fa2" and before.attention != "fa2":
        out.append("pip install flash-attn --no-build-isolation")
    return out
