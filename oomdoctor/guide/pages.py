"""The walkthrough's pages for one report, in English or Chinese: every sentence quotes the user's own numbers.

Pure content (no rich, no textual): the app's guide screen and the plain document (guide/plain.py) only
arrange what these pages hold. The words live in oomdoctor/words/guide.py.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oomdoctor.facts import COMPONENTS, GIB, Change, Estimate, Report, Skipped, Step, TrainingSetup
from oomdoctor.guide.answers import Answers, is_answer_skip, method_name, questions, reproduce_flags
from oomdoctor.shellsafe import export_line
from oomdoctor.views.describe import install_commands, override_block, phase_words
from oomdoctor.words import count_words, has, say

if TYPE_CHECKING:
    from oomdoctor.planner import RuleBook

# LLaMA-Factory key of each field, used when the config did not name it (the value was a default).
_LF_KEYS = {
    "micro_batch": "per_device_train_batch_size", "grad_accum": "gradient_accumulation_steps",
    "seq_len": "cutoff_len", "method": "finetuning_type", "lora_rank": "lora_rank", "lora_targets": "lora_target",
    "quant_bits": "quantization_bit", "pure_bf16": "pure_bf16", "optimizer": "optim",
    "grad_ckpt": "disable_gradient_checkpointing", "attention": "flash_attn", "fused_ce": "enable_liger_kernel",
    "packing": "packing", "eval_batch": "per_device_eval_batch_size", "eval_accum": "eval_accumulation_steps",
    "zero_stage": "deepspeed", "use_unsloth": "use_unsloth",
}


def _g(gib: float | None) -> str:
    return "?" if gib is None else f"{gib:.1f} GiB"


def value_text(fld: str, value: Any, lang: str) -> str:
    """A setting's value in a sentence: on/off, a method's name, a list, '—' when unset."""
    if isinstance(value, bool):
        return say("guide.value_on" if value else "guide.value_off", lang)
    if value is None:
        return "—"
    if fld == "method":
        return method_name(str(value), lang)
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value)


@dataclass(frozen=True)
class Bar:
    """One stacked memory bar: GiB per component against one GPU's capacity."""

    label: str
    segments: tuple[tuple[str, str, float], ...]   # (component, localized name, GiB)
    peak_gib: float
    capacity_gib: float
    fits: bool
    short: str = ""                                # a label of a few cells, for narrow screens


@dataclass(frozen=True)
class Page:
    key: str                                 # error | memory | questions | plan | step-N | apply | watch | nofit
    title: str
    paragraphs: tuple[str, ...]
    bars: tuple[Bar, ...] = ()
    code: str = ""                           # commands or a diff, shown verbatim

    @property
    def bar(self) -> Bar | None:
        return self.bars[0] if self.bars else None


def pages(report: Report, answers: Answers, lang: str, rules: RuleBook | None = None, options: Any = None, *,
          interactive: bool = True) -> list[Page]:
    """The walkthrough, page by page, for `report` (already re-planned with `answers` when it should be).
    `rules`: the run's rule book, for the titles of skipped rungs and the rules' own cost texts; `options`:
    the choices that plan comes from (--gpus, --skip, --accept), for the command line that reproduces it.
    The last page is the plan itself: its diff, what to install, and how to get it without the guide."""
    lang = "zh" if lang == "zh" else "en"
    w = _Writer(report, answers, lang, rules, options)
    w.interactive = interactive
    out = [w.error_page()]
    if report.estimate is None or report.setup is None:
        out.append(w.no_config_page())
        return out
    out.append(w.memory_page())
    out.append(w.questions_page())
    out.append(w.plan_page())
    steps = report.plan.steps
    for i, step in enumerate(steps):
        out.append(w.step_page(i, step))
    out.append(w.watch_page())
    if steps:
        out.append(w.apply_page())
    return out



class _Writer:
    """Builds the pages for one report in one language."""

    def __init__(self, report: Report, answers: Answers, lang: str, rules: RuleBook | None = None, options: Any = None) -> None:
        self.r = report
        self.a = answers
        self.lang = lang
        self.rules = rules
        self.options = options
        self.interactive = True     # the app's screen: its keys can be named
        self.s = report.setup
        self.est = report.estimate
        self.cap = report.estimate.capacity_gib if report.estimate else (report.hardware.gpu_gib if report.hardware else 0.0)
        hw = report.hardware
        # A card the log does not name is its size, never a placeholder in a sentence.
        if hw is not None and hw.gpu not in ("", "unknown"):
            self.gpu = hw.gpu
        else:
            self.gpu = say("report.card_size_bare", lang, gib=hw.gpu_gib if hw else self.cap)

    def tr(self, msg: str, /, **values: Any) -> str:
        return say(f"guide.{msg}", self.lang, **values)

    def rule_title(self, rule_id: str) -> str:
        rule = self.rules.get(rule_id) if self.rules is not None else None
        return say(rule.title, self.lang) if rule is not None else rule_id

    def cost_text(self, step: Step) -> str:
        """The rule file's own words on what the step costs; the generic ones by cost kind otherwise."""
        rule = self.rules.get(step.rule) if self.rules is not None else None
        if rule is not None:
            return " ".join(say(c.text, self.lang) for c in rule.costs)
        return " ".join(say(f"guide.cost.{c}", self.lang) for c in step.costs if c in ("throughput", "quality", "none"))

    # ---------------------------------------------------------------- 1. the error

    def error_page(self) -> Page:
        crash = self.r.crash
        ev = crash.primary if crash else None
        paras: list[str] = []
        if ev is None:
            if self.est is not None:
                key = "err_nocrash_fits" if self.est.fits else "err_nocrash"
                paras.append(self.tr(key, peak=_g(self.est.peak_gib), cap=_g(self.cap), gpu=self.gpu))
            return Page("error", self.tr("t_error"), tuple(paras))
        log = os.path.basename(crash.file) if crash and crash.file else "log"
        if ev.kind in ("cuda_oom", "hip_oom", "mps_oom", "xla_oom"):
            if ev.phase:
                paras.append(self.tr("err_lead", phase=phase_words(ev.phase), line=ev.line, log=log))
            else:
                paras.append(self.tr("err_lead_nophase", line=ev.line, log=log))
        else:
            paras.append(self.tr("err_kind", kind=ev.kind, line=ev.line, log=log))
        dev = ev.device if ev.device is not None else 0
        cap = ev.capacity_gib or (self.r.hardware.gpu_gib if self.r.hardware else None)
        named = self.r.hardware is not None and self.r.hardware.gpu not in ("", "unknown")
        cap_text = self.tr("card_cap", cap=_g(cap), gpu=self.gpu) if named else _g(cap)
        if ev.tried_gib is not None:
            if ev.free_gib is not None:
                paras.append(self.tr("err_numbers", dev=dev, tried=_g(ev.tried_gib), cap=cap_text, free=_g(ev.free_gib)))
            else:
                paras.append(self.tr("err_numbers_nofree", dev=dev, tried=_g(ev.tried_gib), cap=cap_text))
        alloc = ev.allocated_gib if ev.allocated_gib is not None else ev.process_gib
        if alloc is not None:
            ru = self.tr("err_ru", ru=_g(ev.reserved_unallocated_gib)) if ev.reserved_unallocated_gib else ""
            paras.append(self.tr("err_held", alloc=_g(alloc), ru=ru))
        if crash and crash.step is not None:
            paras.append(self.tr("err_step", step=crash.step) if crash.step > 0 else self.tr("err_step0"))
        if ev.phase and has(f"guide.phase_meaning.{ev.phase}"):
            paras.append(self.tr(f"phase_meaning.{ev.phase}"))
        for diag in (crash.diagnoses if crash else ()):
            if has(f"guide.diagnosis.{diag}"):
                paras.append(self.tr(f"diagnosis.{diag}", ru=_g(ev.reserved_unallocated_gib),
                                     other=_g(ev.other_processes_gib),
                                     seq=(crash.seq_len_failing if crash else None)
                                     or (self.s.seq_len if self.s else "?")))
        paras.append(self.tr("err_meaning"))
        return Page("error", self.tr("t_error"), tuple(paras))

    # ---------------------------------------------------------------- 2. the memory

    def bar(self, est: Estimate, which: str) -> Bar:
        segs = tuple((c, say(f"memory.component_long.{c}", self.lang), float(est.components.get(c, 0.0)))
                     for c in COMPONENTS)
        return Bar(self.tr(which), segs, est.peak_gib, est.capacity_gib, est.fits, short=self.tr(which + "_short"))

    def params_total(self) -> int | None:
        shape = self.r.shape
        if shape is None:
            return self.r.crash.params_total if self.r.crash else None
        try:
            from oomdoctor.memory.params import count_params

            return int(count_params(shape).total)
        except Exception:  # noqa: BLE001 - the memory model is optional for the wording
            return shape.params_total or (self.r.crash.params_total if self.r.crash else None)

    def params_trainable(self, setup: TrainingSetup) -> int | None:
        shape = self.r.shape
        if shape is not None:
            try:
                from oomdoctor.memory.params import trainable_params

                return int(trainable_params(setup, shape))
            except Exception:  # noqa: BLE001
                pass
        if setup.method == "full":
            return self.params_total()
        return self.r.crash.params_trainable if self.r.crash else None

    def memory_page(self) -> Page:
        s, est, lang = self.s, self.est, self.lang
        assert s is not None and est is not None
        comp = est.components
        total = self.params_total()
        trainable = self.params_trainable(s)
        config = os.path.basename(s.config_file) if s.config_file else "config"
        model = s.model or (self.r.shape.name if self.r.shape else "?")
        n = max(1, s.n_gpus)
        tokens = s.micro_batch * s.seq_len
        paras = [self.tr("mem_lead", config=config, model=model, params=count_words(total, lang),
                         method=method_name(s.method, lang), precision=s.precision, mb=s.micro_batch,
                         seq=s.seq_len, optim=s.optimizer, n=n, gpu=self.gpu)]
        shape = self.r.shape
        if shape is not None:
            from oomdoctor.models import confidence_msg, source_msg
            from oomdoctor.views.describe import model_warning_lines

            paras.append(self.tr("mem_shape", source=source_msg(shape), confidence=confidence_msg(shape)))
            paras += [say("report.model_warning", lang, text=w) for w in model_warning_lines(shape, lang)]
        w = comp.get("weights", 0.0)
        bpp = w * GIB / total if total else 0.0
        if s.zero_stage >= 3 or s.offload_params:
            bpp *= n if s.zero_stage >= 3 else 1
        paras.append(self.tr("mem_weights", gib=_g(w), params=count_words(total, lang), bpp=f"{bpp:.1f}"))
        paras.append(self.tr("mem_grads", gib=_g(comp.get("gradients", 0.0)), trainable=count_words(trainable, lang)))
        o = comp.get("optimizer", 0.0)
        obpp = o * GIB / trainable if trainable else 0.0
        if s.zero_stage >= 1 and not s.offload_optimizer:
            obpp *= n
        paras.append(self.tr("mem_optim", gib=_g(o), optim=s.optimizer, bpp=f"{obpp:.1f}"))
        layers = self.r.shape.num_layers if self.r.shape else "?"
        paras.append(self.tr("mem_acts", gib=_g(comp.get("activations", 0.0)), mb=s.micro_batch, seq=s.seq_len,
                             tokens=tokens, layers=layers, ckpt=self.tr("ckpt_on" if s.grad_ckpt else "ckpt_off")))
        if comp.get("activations", 0.0) < 0.05 and comp.get("logits", 0.0) < 0.05:
            paras.append(self.tr("mem_acts_freed"))
        vocab = self.r.shape.vocab_size if self.r.shape else "?"
        paras.append(self.tr("mem_logits", gib=_g(comp.get("logits", 0.0)), vocab=vocab, tokens=tokens))
        d = est.details
        fixed = d.get("cuda_context_gib", 0.0) + d.get("cublas_workspace_gib", 0.0)
        reserve = max(0.0, comp.get("overhead", 0.0) - fixed - d.get("measured_correction_gib", 0.0))
        paras.append(self.tr("mem_overhead", gib=_g(comp.get("overhead", 0.0)), fixed=_g(fixed), reserve=_g(reserve)))
        if est.fits:
            paras.append(self.tr("mem_total_fits", peak=_g(est.peak_gib), cap=_g(est.capacity_gib),
                                 free=_g(est.headroom_gib)))
        else:
            target = est.capacity_gib * (1.0 - est.headroom)
            paras.append(self.tr("mem_total", peak=_g(est.peak_gib), cap=_g(est.capacity_gib),
                                 head=round(est.headroom * 100), target=_g(target), need=_g(est.peak_gib - target)))
        ev = self.r.crash.primary if self.r.crash else None
        if ev is not None and ev.allocated_gib is not None and ev.tried_gib is not None:
            paras.append(self.tr("mem_crash_check", alloc=_g(ev.allocated_gib), tried=_g(ev.tried_gib),
                                 sum=_g(ev.allocated_gib + ev.tried_gib)))
        return Page("memory", self.tr("t_memory"), tuple(paras), (self.bar(est, "bar_now"),))

    # ---------------------------------------------------------------- 3. questions

    def questions_page(self) -> Page:
        paras = [self.tr("qp_lead")]
        yes, no = say("common.yes", self.lang), say("common.no", self.lang)
        for q in questions(self.r, self.lang, self.rules):
            value = getattr(self.a, q.key)
            if q.key == "n_gpus" and value is None:
                value = q.default
            if isinstance(value, bool):
                shown = yes if value else no
            else:
                shown = dict(q.choices).get(value, str(value))
            paras.append(f"• {q.prompt} {self.tr('qp_answer', value=shown)}")
            paras.append(f"  {q.help}")
        return Page("questions", self.tr("t_questions"), tuple(paras))

    # ---------------------------------------------------------------- 4. plan

    def plan_page(self) -> Page:
        est, plan, lang = self.est, self.r.plan, self.lang
        assert est is not None
        paras: list[str] = []
        bars = [self.bar(est, "bar_now")]
        if est.fits and not plan.steps:
            paras.append(self.tr("plan_fits_as_is", peak=_g(est.peak_gib), cap=_g(est.capacity_gib)))
        elif plan.steps:
            final = plan.steps[-1].estimate
            if est.fits:        # the estimate fits, but the log is evidence for some steps
                paras.append(self.tr("plan_fits_crashed", n=len(plan.steps), peak=_g(est.peak_gib),
                                     cap=_g(est.capacity_gib)))
            else:
                paras.append(self.tr("plan_lead", n=len(plan.steps), before=_g(est.peak_gib),
                                     after=_g(final.peak_gib), cap=_g(final.capacity_gib)))
            for st in plan.steps:
                title = say(st.title, lang)
                if not st.changes:          # advice or an environment variable: no GiB to quote
                    paras.append(f"• {title}")
                elif st.adds_gib:
                    paras.append(self.tr("plan_line_more", title=title, more=_g(st.adds_gib),
                                         peak=_g(st.estimate.peak_gib)))
                else:
                    paras.append(self.tr("plan_line", title=title, saved=_g(st.saved_gib),
                                         peak=_g(st.estimate.peak_gib)))
            paras.append(self.tr("plan_fits", free=_g(final.headroom_gib)) if plan.fits else self.tr("plan_nofit"))
            bars.append(self.bar(final, "bar_final"))
        else:
            paras.append(self.tr("plan_nofit"))
        proposed = plan.proposed
        if proposed:
            paras.append(self.tr("plan_proposed_head"))
            paras.extend(self.tr("plan_proposed", title=say(st.title, lang), saved=_g(st.saved_gib),
                                 peak=_g(st.estimate.peak_gib)) for st in proposed)
        dropped = plan.rungs_in("dropped")
        if dropped:
            paras.append(self.tr("plan_dropped", titles=tuple(say(r.steps[0].title, lang) for r in dropped if r.steps)))
        if plan.skipped:
            lines = [self.skipped_line(sk) for sk in plan.skipped]
            lines = [ln for ln in lines if ln]
            if lines:
                paras.append(self.tr("plan_skipped_head"))
                paras.extend(lines)
        if not est.fits and not plan.fits:
            paras.append(self.tr("plan_advice_head"))
            paras.extend(f"• {say(a, lang)}" for a in plan.advice)
            if not self.a.allow_method_change and proposed:
                paras.append(self.tr("plan_try_method"))
            paras.append(self.tr("plan_try_gpus"))
        return Page("plan", self.tr("t_plan"), tuple(paras), tuple(bars))

    def skipped_line(self, sk: Skipped) -> str:
        return self.tr("plan_skipped", title=self.rule_title(sk.rule), reason=say(sk.reason, self.lang))

    # ---------------------------------------------------------------- 5. each rung

    def step_page(self, i: int, step: Step) -> Page:
        lang = self.lang
        steps = self.r.plan.steps
        prev_setup = steps[i - 1].setup if i else self.s
        prev_est = steps[i - 1].estimate if i else self.est
        assert prev_setup is not None and prev_est is not None
        title = say(step.title, lang)
        paras = self._step_changes(step, prev_setup)
        paras.append(self._step_numbers(step, prev_est))
        shrunk = []
        for c in COMPONENTS:
            a, b = prev_est.components.get(c, 0.0), step.estimate.components.get(c, 0.0)
            if a - b >= 0.05:
                shrunk.append(f"{say(f'memory.component_long.{c}', lang)} {a:.1f} → {b:.1f} GiB")
        if shrunk:
            paras.append(self.tr("st_parts", parts=tuple(shrunk)))
        installs = install_commands(prev_setup, step.setup)
        if installs:
            paras.append(self.tr("st_install", cmds=" ; ".join(installs)))
        cost_text = self.cost_text(step)
        if cost_text:
            paras.append(self.tr("st_cost", cost=cost_text))
        old_eb, new_eb = prev_setup.effective_batch, step.setup.effective_batch
        if any(c.field in ("micro_batch", "grad_accum", "n_gpus") for c in step.changes):
            if old_eb == new_eb:
                s2 = step.setup
                paras.append(self.tr("st_eb_same", eb=new_eb, mb=s2.micro_batch, ga=s2.grad_accum, n=max(1, s2.n_gpus)))
            else:
                paras.append(self.tr("st_eb_changed", old=old_eb, new=new_eb))
        if step.applicability == "needs-consent":
            paras.append(self.tr("st_consent", flag=f"--skip {step.rule}"))
        for note in step.notes:
            paras.append(self.tr("st_notes", note=say(note, lang)))
        bars = (self.bar(prev_est, "bar_before"), self.bar(step.estimate, "bar_after"))
        return Page(f"step-{i + 1}", self.tr("t_step", i=i + 1, n=len(steps), title=title), tuple(paras), bars)

    def _step_changes(self, step: Step, prev_setup: TrainingSetup) -> list[str]:
        """What the rung changes (settings, environment), why, and what each change teaches."""
        paras: list[str] = []
        src_file = self._file_of(step)
        paras.append(self.tr("st_change_head", file=src_file) if src_file else self.tr("st_change_head_nofile"))
        for ch in step.changes:
            paras.append(self._change_line(ch))
        for name, value in step.env.items():
            paras.append(self.tr("st_env", line=export_line(name, value)))
        why = say(step.why, self.lang)
        if why:
            paras.append(self.tr("st_why", why=why))
        for ch in step.changes:
            teach = self._teach(ch, prev_setup, step.setup)
            if teach:
                paras.append(teach)
        return paras

    def _step_numbers(self, step: Step, prev_est: Estimate) -> str:
        """The peak before and after the rung, against the card, and whether it fits now."""
        if step.estimate.fits:
            verdict = self.tr("st_verdict_still") if prev_est.fits else self.tr("st_verdict_fits")
        else:
            verdict = self.tr("st_verdict_not")
        numbers = dict(before=_g(prev_est.peak_gib), after=_g(step.estimate.peak_gib),
                       cap=_g(step.estimate.capacity_gib), verdict=verdict)
        if step.adds_gib:
            return self.tr("st_uses", more=_g(step.adds_gib), **numbers)
        return self.tr("st_saves", saved=_g(step.saved_gib), **numbers)

    def _file_of(self, step: Step) -> str:
        s = self.s
        assert s is not None
        for ch in step.changes:
            src = s.sources.get(ch.field)
            if src is not None and src.file:
                return os.path.basename(src.file)
        if any(ch.field == "zero_stage" for ch in step.changes) and s.deepspeed_file:
            return os.path.basename(s.deepspeed_file)
        return os.path.basename(s.config_file) if s.config_file and step.changes else ""

    def _change_line(self, ch: Change) -> str:
        s = self.s
        assert s is not None
        label = self.tr(f"field.{ch.field}") if has(f"guide.field.{ch.field}") else ch.field
        src = s.sources.get(ch.field)
        key = src.key if src is not None and src.key else (_LF_KEYS.get(ch.field) if s.framework == "llamafactory" else None)
        old, new = value_text(ch.field, ch.before, self.lang), value_text(ch.field, ch.after, self.lang)
        if key:
            return self.tr("st_change", label=label, key=key, old=old, new=new)
        return self.tr("st_change_nokey", label=label, old=old, new=new)

    def _teach(self, ch: Change, before: TrainingSetup, after: TrainingSetup) -> str:
        lang, f = self.lang, ch.field
        shape = self.r.shape
        vals: dict[str, Any] = {"old": value_text(f, ch.before, lang), "new": value_text(f, ch.after, lang)}
        vals.update(ot=before.micro_batch * before.seq_len, nt=after.micro_batch * after.seq_len,
                    eb=after.effective_batch, seq=after.seq_len, tokens=after.micro_batch * after.seq_len,
                    layers=shape.num_layers if shape else "?", vocab=shape.vocab_size if shape else "?",
                    n=max(1, after.n_gpus), rank=after.lora_rank, params=count_words(self.params_total(), lang))
        if f == "micro_batch" and ch.before != ch.after:
            key = "micro_batch"
        elif f == "grad_accum":
            key = "grad_accum"
        elif f == "seq_len":
            key = "seq_len"
        elif f == "method":
            key = {"lora": "lora", "qlora": "qlora", "freeze": "freeze"}.get(str(ch.after), "")
            if key == "qlora":
                bits = after.quant_bits or 4
                vals.update(bits=bits, bytes=f"{bits / 8:.2g}")
        elif f in ("precision", "pure_bf16", "optimizer", "fused_ce", "offload_optimizer", "offload_params",
                   "lora_rank", "eval_batch", "eval_accum"):
            key = f
        elif f == "grad_ckpt" and ch.after:
            key = "grad_ckpt"
        elif f == "attention" and ch.after in ("sdpa", "fa2"):
            key = "attention"
            vals["new"] = {"sdpa": "SDPA", "fa2": "FlashAttention-2"}[str(ch.after)]
        elif f == "zero_stage" and has(f"guide.zero_what.{int(ch.after or 0)}"):
            key = "zero_stage"
            vals["what"] = self.tr(f"zero_what.{int(ch.after)}")
        elif f == "packing":
            key = "packing"
            vals["state"] = value_text(f, bool(ch.after), lang)
        else:
            return ""
        if not key:
            return ""
        return self.tr(f"teach.{key}", **vals)

    # ---------------------------------------------------------------- 6. apply, 7. watch

    def command(self, extra: str) -> str:
        """The command line that gives this plan without the guide: the same inputs, the answers as flags."""
        from oomdoctor.demo import DEMO_DIR

        inputs = list(self.r.inputs)
        demo = inputs and all(os.path.dirname(os.path.abspath(f)) == str(DEMO_DIR) for f in inputs)
        files = "--demo" if demo else (" ".join(_shell_quote(f) for f in inputs) or "run.log config.yaml")
        if self.options is not None:
            read_gpus = self.s.n_gpus if self.s is not None else None
            flags = reproduce_flags(self.options, read_gpus)
        else:       # no choices given: the answers as the guide read them
            flags = []
            n = self.a.n_gpus
            if n is not None and (n > 1 or (self.s is not None and self.s.n_gpus != n)):
                flags.append(f"--gpus {n}")
            flags += [f"--skip {sk.rule}" for sk in self.r.plan.skipped if is_answer_skip(sk)]
            if self.a.allow_method_change:
                flags.append("--accept quality")
        return " ".join(["oomdoctor", files, *flags, extra])

    def apply_page(self) -> Page:
        """The plan the guide built: what to install first, the command that writes it, and its diff."""
        r = self.r
        paras = [self.tr("ap_lead")]
        code: list[str] = []
        start = r.setup
        final = r.plan.final_setup(start) if start is not None else None
        installs = install_commands(start, final) if start is not None and final is not None else []
        if installs:
            # first and in full: without the package the patched run stops at its start
            paras.append(self.tr("ap_install", cmds=" ; ".join(installs)))
            code += [*installs, ""]
        if r.edits or r.patch:
            if self.interactive:
                paras.append(self.tr("ap_keys"))
            paras.append(self.tr("ap_export"))
            code += [self.command("--export plan.diff"), "git apply plan.diff"]
        else:
            paras.append(self.tr("ap_nofile"))
            # a verl script is not patched: the plan's values as Hydra overrides for its launch command
            head, overrides = override_block(start, final, r.plan, False, self.lang)
            if overrides:
                paras.append(head)
                code += overrides
        if r.env:
            paras.append(self.tr("ap_env", names=", ".join(r.env)))
            code += [export_line(k, v) for k, v in r.env.items()]
        if r.edits or r.patch:
            paras.append(self.tr("ap_write", cmd=self.command("--write fixed/")))
        for note in r.notes:
            paras.append(self.tr("ap_notes", note=say(note, self.lang)))
        if r.patch:
            paras.append(self.tr("ap_diff"))
            code += ["", "# plan.diff", *r.patch.rstrip("\n").splitlines()]
        return Page("apply", self.tr("t_apply"), tuple(paras), (), "\n".join(code))

    def watch_page(self) -> Page:
        r, s, est = self.r, self.s, self.est
        assert s is not None and est is not None
        plan = r.plan
        final_setup = plan.final_setup(s)
        final_est = plan.final_estimate(est)
        paras: list[str] = []
        if not (est.fits or plan.fits):
            paras.append(self.tr("wa_nofit"))
        paras.append(self.tr("wa_peak", peak=_g(final_est.peak_gib), alloc=_g(final_est.allocated_gib)))
        ev = r.crash.primary if r.crash else None
        if ev is not None and ev.phase == "optimizer" and final_setup.method == "full":
            paras.append(self.tr("wa_first_step"))
        else:
            paras.append(self.tr("wa_first_step_generic"))
        if final_setup.seq_len < s.seq_len:
            paras.append(self.tr("wa_seq", seq=final_setup.seq_len))
        if final_setup.effective_batch != s.effective_batch:
            paras.append(self.tr("wa_lr", old=s.effective_batch, new=final_setup.effective_batch))
        if s.method == "full" and final_setup.method in ("lora", "qlora"):
            paras.append(self.tr("wa_lora"))
        if any("throughput" in st.costs for st in plan.steps):
            paras.append(self.tr("wa_speed"))
        if final_setup.do_eval:
            paras.append(self.tr("wa_eval", eb=final_setup.eval_batch))
        if final_est.host_ram_gib > 0:
            paras.append(self.tr("wa_host", host=_g(final_est.host_ram_gib)))
        paras.append(self.tr("wa_again"))
        bars = (self.bar(final_est, "bar_final" if plan.steps else "bar_now"),)
        return Page("watch", self.tr("t_watch"), tuple(paras), bars)

    def no_config_page(self) -> Page:
        log = self.r.crash.file if self.r.crash else "run.log"
        return Page("noconfig", self.tr("t_noconfig"), (self.tr("nc_lead"), self.tr("nc_how")),
                    code=f"oomdoctor {_shell_quote(log)} config.yaml --walkthrough")


def _shell_quote(text: str) -> str:
    from oomdoctor.shellsafe import quote

    return quote(text)
