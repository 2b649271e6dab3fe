"""What only the user knows (the questions and their answers), and the plan those answers ask for.

The answers are choices of the same kind as the command line's: `--gpus`, `--accept` and `--skip`. They are
turned into pipeline Options and planned through the session (the run's rule book and calibrated estimator),
so the guide's plan is the one `oomdoctor ... --gpus N --accept ... --skip ... --export plan.diff` writes,
and the one the app keeps when the guide closes. Where the rules' metadata cannot say what a step does (a
custom rule that changes the method or the batch), the plan's own steps are checked too.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from oomdoctor.facts import Msg, Report, Skipped, Step, msg
from oomdoctor.words import join, say

if TYPE_CHECKING:
    from oomdoctor.pipeline import Options
    from oomdoctor.planner import RuleBook
    from oomdoctor.session import Session

# Why a rule is left out because of an answer: the Skipped reason the guide (and every view) shows.
SKIP_REASONS: Mapping[str, Msg] = {
    "method": msg("guide.skip_method"),
    "batch": msg("guide.skip_batch"),
    "speed": msg("guide.skip_speed"),
}
_METHOD_FIELDS = ("method", "quant_bits", "use_dora")
# --accept words that give consent to every rung that changes the experiment (planner.walk.ACCEPT_ALL)
_ACCEPT_ALL = ("quality", "all")


@dataclass(frozen=True)
class Answers:
    """What only the user knows. None for n_gpus means "as many as the report says"."""

    n_gpus: int | None = None
    keep_effective_batch: bool = True
    allow_method_change: bool = False     # "may the plan change the experiment": --accept quality
    prefer: Literal["memory", "speed"] = "memory"


@dataclass(frozen=True)
class Question:
    key: str                                  # the Answers field it sets
    kind: str                                 # "choice" | "bool"
    prompt: str
    help: str                                 # one or two sentences: why it matters, with their numbers
    default: Any
    choices: tuple[tuple[Any, str], ...] = ()  # (value, label) for "choice"


def default_answers(report: Report, options: Any = None) -> Answers:
    """The answers the walkthrough starts from: the GPU count and the consent the choices so far carry
    (`options`, the app's or the command line's), everything else conservative."""
    accept = tuple(getattr(options, "accept", ()) or ())
    return Answers(n_gpus=n_gpus_of(report), allow_method_change=any(a.lower() in _ACCEPT_ALL for a in accept))


def n_gpus_of(report: Report) -> int:
    """The GPUs this run can use: what the card count says (--gpus), else the run's own."""
    if report.hardware is not None and report.setup is not None:
        return max(1, report.hardware.n_gpus, report.setup.n_gpus)
    if report.setup is not None and report.setup.n_gpus:
        return max(1, report.setup.n_gpus)
    if report.hardware is not None:
        return max(1, report.hardware.n_gpus)
    return 1


def method_name(method: str, lang: str) -> str:
    code = f"guide.method.{method}"
    return say(code, lang) if method in ("full", "lora", "qlora", "freeze") else method


def _named(report: Report) -> bool:
    """The inputs say how many GPUs the run used (a launcher, the log's ranks), not a framework default."""
    return report.setup is not None and report.setup.stated("n_gpus")


def consent_titles(report: Report, rules: RuleBook | None, lang: str) -> str:
    """The rungs that would change this experiment, as their rule titles with the settings each changes
    ("Cut the sequence length to 512 tokens (cutoff_len 4096 → 512)"): what the consent question is about.
    The plan's proposed rungs first; else the rule book's consent rungs whose condition this run meets."""
    from oomdoctor.views.describe import change_words

    steps = list(report.plan.proposed) + [st for st in report.plan.steps if st.applicability == "needs-consent"]
    titles = list(dict.fromkeys(say("guide.step_and_changes", lang, title=say(st.title, lang),
                                    changes=change_words(st, lang)) if st.changes else say(st.title, lang)
                                for st in steps))
    if not titles and rules is not None and report.setup is not None and report.shape is not None \
            and report.hardware is not None and report.estimate is not None:
        from oomdoctor.planner import holds
        from oomdoctor.planner.registry import gather

        facts = gather(report.setup, report.shape, report.hardware, report.crash, report.estimate)
        titles = [say(r.title, lang) for r in rules if r.applicability == "needs-consent" and holds(r.when, facts)]
    return join(titles, lang)


def questions(report: Report, lang: str, rules: RuleBook | None = None) -> list[Question]:
    """Only what the tool cannot know from the config and the log, each with a default from the report."""
    s = report.setup
    if s is None:
        return []
    n = n_gpus_of(report)
    hw = report.hardware
    named = hw is not None and hw.gpu not in ("", "unknown")
    ran = max(1, s.n_gpus)
    # When the inputs name the run's GPU count, fewer would change the effective batch: only as many or more.
    counts = sorted({c for c in (1, 2, 4, 8, n, ran) if not _named(report) or c >= ran})
    eb = s.effective_batch
    if named and hw is not None:
        prompt = say("guide.q_gpus", lang, gpu=hw.gpu)
    else:
        prompt = say("guide.q_gpus_unnamed", lang, cap=f"{hw.gpu_gib:.1f} GiB" if hw else "?")
    gpus_help = say("guide.q_gpus_help_named" if _named(report) else "guide.q_gpus_help", lang, n=ran,
                    mb=s.micro_batch, ga=s.grad_accum)
    what = consent_titles(report, rules, lang)
    method_q = (Question("allow_method_change", "bool", say("guide.q_method", lang),
                         say("guide.q_method_help", lang, what=what, method=method_name(s.method, lang)), False)
                if what else
                Question("allow_method_change", "bool", say("guide.q_method_none", lang),
                         say("guide.q_method_none_help", lang), False))
    return [
        Question("n_gpus", "choice", prompt, gpus_help, n,
                 tuple((c, say("guide.n_gpus_label", lang, n=c)) for c in counts)),
        Question("keep_effective_batch", "bool", say("guide.q_batch", lang, eb=eb),
                 say("guide.q_batch_help", lang, eb=eb, mb=s.micro_batch, ga=s.grad_accum, n=ran), True),
        method_q,
        Question("prefer", "choice", say("guide.q_prefer", lang), say("guide.q_prefer_help", lang),
                 "memory", (("memory", say("guide.prefer_memory", lang)), ("speed", say("guide.prefer_speed", lang)))),
    ]


def is_answer_skip(skipped: Skipped) -> bool:
    """A rung the user's answers left out (not one the planner passed over)."""
    return skipped.reason.code.startswith("guide.skip_")


def _is_method_change(step: Step) -> bool:
    return step.applicability == "needs-consent" or any(c.field in _METHOD_FIELDS for c in step.changes)


def _fits(report: Report) -> bool:
    return bool(report.plan.fits or (report.estimate is not None and report.estimate.fits))


def plan_with_answers(session: Session, answers: Answers, base: Options | None = None) -> Report:
    """The session's report re-planned as the answers ask (the session: oomdoctor.session.Session)."""
    return options_with_answers(session, answers, base)[1]


def options_with_answers(session: Session, answers: Answers, base: Options | None = None) -> tuple[Options, Report]:
    """(the choices, the plan) the answers ask for, starting from `base` (the choices so far: the app's or the
    command line's; the session's own when None). The choices are pipeline Options: --gpus, --accept, --skip."""
    report, book = session.report, session.rules
    base = base if base is not None else session.options
    if report.setup is None or report.shape is None or report.hardware is None or report.estimate is None:
        return base, report
    read = session.read or report
    accept = tuple(a for a in base.accept if a.lower() not in _ACCEPT_ALL)
    if answers.allow_method_change:
        accept += ("quality",)
    else:
        # "keep the experiment": no consent carried over from before either
        consent = {r.id.lower() for r in book if r.applicability == "needs-consent"} | {
            r.slug.lower() for r in book if r.applicability == "needs-consent"}
        accept = tuple(a for a in accept if a.lower() not in consent)
    n = answers.n_gpus
    read_n = n_gpus_of(read)
    gpus = None if n is None or (n == read_n and not base.gpus) else n
    skip: dict[str, str] = {}     # rule id -> why (a key of SKIP_REASONS)
    own_skip = tuple(s for s in base.skip)

    def options(extra: Mapping[str, str]) -> Options:
        return replace(base, accept=accept, gpus=gpus, skip=own_skip + tuple(r for r in extra if r not in own_skip))

    def run(extra: Mapping[str, str]) -> Report:
        return session.replan(options(extra))

    out = run(skip)
    # The rules' metadata cannot say everything (a custom rule may change the method or the batch):
    # look at what the plan really did and leave out the offending rungs until none is left.
    start = out.setup
    for _ in range(8):
        found: dict[str, str] = {}
        before = start
        for step in out.plan.steps:
            if not answers.allow_method_change and _is_method_change(step):
                found[step.rule] = "method"
            elif (answers.keep_effective_batch and before is not None
                  and step.setup.effective_batch != before.effective_batch):
                found[step.rule] = "batch"
            before = step.setup
        if not found:
            break
        skip.update(found)
        out = run(skip)

    if answers.prefer == "speed" and _fits(out):
        skip, out = _fastest(session, out, skip, run)

    if skip:
        skipped = [Skipped(sk.rule, SKIP_REASONS[skip[sk.rule]]) if sk.rule in skip else sk
                   for sk in out.plan.skipped]
        listed = {sk.rule for sk in skipped}
        skipped += [Skipped(r, SKIP_REASONS[why]) for r, why in skip.items()
                    if r not in listed and book.get(r) is not None]
        rungs = tuple(replace(r, reason=SKIP_REASONS[skip[r.rule]]) if r.rule in skip and r.state == "skipped"
                      else r for r in out.plan.rungs)
        out = replace(out, plan=replace(out.plan, skipped=tuple(skipped), rungs=rungs))
    return options(skip), out


def step_seconds(report: Report) -> float | None:
    """Seconds per optimizer step of the report's planned setup on its card (advise.timing), None when the
    card's speed is not in the catalog."""
    from oomdoctor.advise.cards import spec_of
    from oomdoctor.advise.timing import step_time

    if report.setup is None or report.shape is None or report.hardware is None:
        return None
    spec = spec_of(report.hardware.gpu) if report.hardware.gpu else None
    final = report.plan.final_setup(report.setup)
    st = step_time(final, report.shape, spec, max(1, final.n_gpus))
    return st.step_s if st is not None else None


def _fastest(session: Session, out: Report, skip: dict[str, str], run: Any) -> tuple[dict[str, str], Report]:
    """"Prefer speed": of the plans that fit without more quality cost, the one whose step is fastest on this
    card (advise.timing: work per token over the card's speed, offload traffic on top). Candidates leave out
    the slow rungs of the plan: all of them, each one, and the last ones first."""
    from oomdoctor.planner import cost_by_kind

    book = session.rules
    slow = list(dict.fromkeys(st.rule for st in out.plan.steps if "throughput" in st.costs))
    if not slow:
        return skip, out
    quality = cost_by_kind(out.plan, book)["quality"]
    trials: list[Sequence[str]] = [slow, *([r] for r in slow), *(slow[i:] for i in range(1, len(slow)))]
    best_skip, best, best_s = skip, out, step_seconds(out)
    seen: set[tuple[str, ...]] = set()
    for leave_out in trials:
        key = tuple(sorted(leave_out))
        if key in seen:
            continue
        seen.add(key)
        extra = {**skip, **{r: "speed" for r in leave_out}}
        trial = run(extra)
        if not _fits(trial) or cost_by_kind(trial.plan, book)["quality"] > quality:
            continue
        secs = step_seconds(trial)
        if secs is not None and best_s is not None:
            better = secs < best_s - 1e-9
        else:       # no speed for this card: fewer throughput costs is faster
            better = cost_by_kind(trial.plan, book)["throughput"] < cost_by_kind(best.plan, book)["throughput"]
        if better:
            best_skip, best, best_s = extra, trial, secs
    return best_skip, best


def reproduce_flags(options: Any, read_gpus: int | None = None) -> list[str]:
    """The command-line flags that give the same plan: what the run was read with (--gpu, --model,
    --framework-version, --headroom, --rules), then the choices: --gpus, --skip, --accept."""
    import shlex

    flags = []
    for flag, value in (("--gpu", options.gpu), ("--model", options.model),
                        ("--framework-version", options.framework_version)):
        if value:
            flags.append(f"{flag} {shlex.quote(str(value))}")
    if abs(options.headroom - 0.10) > 1e-9:
        flags.append(f"--headroom {options.headroom:g}")
    flags += [f"--rules {shlex.quote(d)}" for d in options.rules_dirs]
    if options.gpus and options.gpus != read_gpus:
        flags.append(f"--gpus {options.gpus}")
    flags += [f"--skip {r}" for r in dict.fromkeys(options.skip)]
    if options.accept:
        flags.append("--accept " + ",".join(dict.fromkeys(options.accept)))
    return flags
