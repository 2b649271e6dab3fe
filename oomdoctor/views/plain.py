"""The plain report: what a person reads in a terminal with no TUI, or in a pipe.

rich handles colour, NO_COLOR and width in a terminal. With no terminal rich would print plain text,
and print_report writes those same characters through views/plaintext.py without importing rich
(about 60 ms sooner); the helpers below build rich or plain look-alike objects from one `kit`.
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from oomdoctor.facts import COMPONENTS, CrashEvent, CrashReport, Estimate, Plan, Report, Step, TrainingSetup, msg
from oomdoctor.views.bars import COLOURS, GLYPHS, bar_cells

if TYPE_CHECKING:
    from rich.console import Console

PHASE_WORDS = {
    "load": "while loading the model", "forward": "in the forward pass", "loss": "computing the loss (logits)",
    "backward": "in the backward pass", "optimizer": "at the optimizer step", "zero_init": "while DeepSpeed ZeRO set up",
    "eval": "during evaluation", "save": "while saving a checkpoint", "generate": "while generating",
    "data": "while preparing the dataset", "train": "during a training step",
}

KIND_WORDS = {
    "cuda_oom": "CUDA out of memory", "host_oom": "the host ran out of RAM (process killed)",
    "nccl_oom": "NCCL could not allocate GPU memory", "cublas_alloc": "cuBLAS could not allocate its workspace",
    "cudnn_alloc": "cuDNN could not allocate memory", "mps_oom": "MPS (Apple GPU) out of memory",
    "hip_oom": "HIP (ROCm) out of memory", "xla_oom": "XLA/TPU resources exhausted",
    "vllm_cache": "vLLM found no memory for its KV cache", "bnb_alloc": "bitsandbytes could not allocate memory",
}


class Kit(NamedTuple):
    """The Text and Table classes a report is built from: rich's, or views/plaintext.py's look-alikes."""

    Text: Any
    Table: Any


def rich_kit() -> Kit:
    from rich.table import Table
    from rich.text import Text

    return Kit(Text, Table)


def _kit_of(console: Any) -> Kit:
    kit = getattr(console, "kit", None)
    return Kit(*kit) if kit is not None else rich_kit()


def _text(what: Any) -> str:
    """A sentence that is already text, or a words Msg rendered in English (views move to codes in #18)."""
    if isinstance(what, str):
        return what
    from oomdoctor.words import say

    return say(what, "en")


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def gib(x: float | None) -> str:
    return "?" if x is None else f"{x:.2f} GiB"


def describe_event(e: CrashEvent) -> str:
    what = KIND_WORDS.get(e.kind, e.kind.replace("_", " "))
    where = PHASE_WORDS.get(e.phase or "", "")
    who = []
    if e.rank is not None:
        who.append(f"rank {e.rank}")
    if e.device is not None:
        who.append(f"GPU {e.device}")
    parts = [what]
    if where:
        parts.append(where)
    if who:
        parts.append("(" + ", ".join(who) + ")")
    return " ".join(parts)


def crash_numbers(e: CrashEvent) -> str:
    bits = []
    if e.tried_gib is not None:
        bits.append(f"the run asked for {gib(e.tried_gib)} more")
    if e.free_gib is not None:
        bits.append(f"while {gib(e.free_gib)} was free")
    if e.capacity_gib is not None:
        bits.append(f"on a {gib(e.capacity_gib)} GPU")
    text = " ".join(bits)
    held = []
    if e.allocated_gib is not None:
        held.append(f"PyTorch held {gib(e.allocated_gib)} in tensors")
    if e.reserved_unallocated_gib is not None:
        held.append(f"{gib(e.reserved_unallocated_gib)} reserved but unused")
    if e.other_processes_gib:
        held.append(f"other processes held {gib(e.other_processes_gib)}")
    if held:
        text = (text + "; " if text else "") + ", ".join(held)
    return text


DIAGNOSIS_WORDS = {
    "fragmentation": "much memory was reserved but unused: the allocator is fragmented",
    "other_process": "another process holds memory on the same GPU",
    "eval": "it died during evaluation, not training",
    "save": "it died while saving a checkpoint",
    "long_samples": "it died after many good steps: a long batch (or evaluation) pushed it over",
    "host_ram": "this is host RAM, not GPU memory",
}


def setup_line(s: TrainingSetup) -> str:
    method = {"full": "full fine-tune", "lora": f"LoRA r={s.lora_rank}", "qlora": f"QLoRA {s.quant_bits or 4}-bit r={s.lora_rank}",
              "freeze": f"freeze ({s.freeze_trainable_layers} layers trainable)"}.get(s.method, s.method)
    prec = "pure bf16" if s.pure_bf16 else s.precision
    zero = f", ZeRO-{s.zero_stage}" if s.zero_stage else ""
    if s.offload_optimizer or s.offload_params:
        zero += " + CPU offload"
    fsdp = f", FSDP {s.fsdp}" if s.fsdp else ""
    ckpt = "grad ckpt on" if s.grad_ckpt else "grad ckpt off"
    return (f"{method}, micro-batch {s.micro_batch} × accum {s.grad_accum} × {s.n_gpus} GPU, seq {s.seq_len}, "
            f"{prec}, {s.optimizer}, {ckpt}, {s.attention}{zero}{fsdp}")


def bar(est: Estimate, width: int, kit: Kit | None = None):
    """A stacked bar of the components, scaled so the capacity line sits at a fixed column."""
    Text = (kit or rich_kit()).Text
    scale_gib = max(est.peak_gib, est.capacity_gib) or 1.0
    text = Text()
    cap_col = round(width * est.capacity_gib / scale_gib)
    used = 0
    parts = [(name, max(0.0, est.components.get(name, 0.0))) for name in COMPONENTS]
    for name, cells in bar_cells(parts, scale_gib, width):
        text.append(GLYPHS[name] * cells, style=COLOURS[name])
        used += cells
    if used < width:
        text.append(" " * (width - used))
    # Mark the capacity line at its column.
    if 0 < cap_col <= width:
        text = text[:cap_col] + Text("|", style="bold red") + text[cap_col:]
    return text


def memory_table(est: Estimate, title: str, kit: Kit | None = None):
    Text, Table = kit or rich_kit()
    table = Table(title=title, title_justify="left", show_header=True, box=None, pad_edge=False)
    table.add_column("component")
    table.add_column("GiB", justify="right")
    table.add_column("share", justify="right")
    total = sum(est.components.values()) or 1.0
    for name in COMPONENTS:
        v = est.components.get(name, 0.0)
        table.add_row(Text(f"{GLYPHS[name]} {name}", style=COLOURS[name]), f"{v:.2f}", f"{100 * v / total:.0f}%")
    table.add_row("allocated (torch max)", f"{est.allocated_gib:.2f}", "")
    table.add_row(Text("peak on device", style="bold"), Text(f"{est.peak_gib:.2f}", style="bold"), "")
    return table


def verdict(est: Estimate, kit: Kit | None = None):
    Text = (kit or rich_kit()).Text
    pct = 100 * est.headroom
    if est.fits:
        return Text(f"fits: {est.peak_gib:.2f} of {est.capacity_gib:.2f} GiB ({est.headroom_gib:.2f} GiB free)", style="bold green")
    if est.peak_gib <= est.capacity_gib:
        return Text(f"too tight: {est.peak_gib:.2f} of {est.capacity_gib:.2f} GiB leaves less than {pct:.0f}% headroom",
                    style="bold yellow")
    return Text(f"does not fit: {est.peak_gib:.2f} GiB needed, {est.capacity_gib:.2f} GiB available", style="bold red")


def _saving(step: Step) -> str:
    """GiB a step saves, as −x; a step that costs GPU memory (giving back host RAM) shows +x."""
    return f"+{step.adds_gib:.2f}" if step.adds_gib else f"−{max(0.0, step.saved_gib):.2f}"


def plan_table(plan: Plan, start: Estimate, title: str, kit: Kit | None = None):
    Text, Table = kit or rich_kit()
    table = Table(title=title, title_justify="left", box=None, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("step")
    table.add_column("peak GiB", justify="right")
    table.add_column("saves", justify="right")
    table.add_column("costs")
    for i, step in enumerate(plan.steps, 1):
        title_text = Text(step.title)
        if step.applicability == "needs-consent":
            title_text.append(" (needs your consent)", style="yellow")
        changes = ", ".join(f"{c.field} {fmt(c.before)}→{fmt(c.after)}" for c in step.changes)
        if changes:
            title_text.append(f"\n   {changes}", style="dim")
        table.add_row(str(i), title_text, f"{step.estimate.peak_gib:.2f}", _saving(step),
                      ", ".join(step.costs) or "none")
    return table


def fmt(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    return str(value)


def _same_steps(a: Plan, b: Plan) -> bool:
    return [(s.rule, s.changes) for s in a.steps] == [(s.rule, s.changes) for s in b.steps]


def render(report: Report, console: Console, *, show_patch: bool = True) -> None:
    """Print the report on `console`: a rich Console, or a views.plaintext.PlainConsole."""
    from oomdoctor import __version__

    kit = _kit_of(console)
    Text = kit.Text
    s, est, crash, hw = report.setup, report.estimate, report.crash, report.hardware
    head = Text(f"oomdoctor {__version__}", style="bold")
    if s is not None:
        head.append(f" — {s.model} ({s.framework} {s.framework_version})".rstrip())
    console.print(head)
    if crash is not None:
        render_crash(crash, console)
    if hw is not None:
        others = f", {hw.other_procs_gib:.2f} GiB held by other processes" if hw.other_procs_gib else ""
        console.print(f"[bold]GPU[/]    {hw.gpu}: {hw.gpu_gib:.2f} GiB × {hw.n_gpus} (from {hw.source}){others}")
    if s is not None:
        console.print(f"[bold]Setup[/]  {setup_line(s)}")
    for w in report.warnings:
        console.print(Text(f"note: {_text(w)}", style="yellow"))
    if est is None:
        return
    console.print()
    console.print(memory_table(est, "Memory per GPU (estimate)", kit))
    width = max(20, min(60, console.width - 20))
    console.print(Text("  ") + bar(est, width, kit) + Text(f"  | = {est.capacity_gib:.1f} GiB"))
    console.print(verdict(est, kit))
    if crash is not None and crash.memory_samples:
        from oomdoctor.calibrate import measured_curve

        curve = measured_curve(crash)
        if curve:
            shown = ", ".join(f"{x}: {g:.1f}" for x, g in curve[-6:])
            console.print(Text(f"  measured by the run before the crash (step or line: GiB): {shown}", style="cyan"))
    for note in est.notes:
        console.print(Text(f"  · {note}", style="dim"))
    plan = report.plan
    if est.fits and not plan.steps:
        return
    console.print()
    if plan.steps:
        title = "Plan (the ladder, in order)" if not est.fits else "Plan (it fits; what the crash log points to)"
        console.print(plan_table(plan, est, title, kit))
        final = plan.steps[-1].estimate
        console.print(Text("  ") + bar(final, width, kit))
        console.print(verdict(final, kit))
    if report.least_cost is not None and report.least_cost.steps and not _same_steps(report.least_cost, plan):
        console.print()
        console.print(plan_table(report.least_cost, est, "Least-cost plan (fewest quality costs)", kit))
        console.print(verdict(report.least_cost.steps[-1].estimate, kit))
    if not plan.fits:
        console.print(Text("No plan on the ladder fits this GPU.", style="bold red"))
    for advice in plan.advice:
        console.print(Text(f"  → {advice}", style="yellow"))
    if plan.skipped:
        # Rungs skipped for the same reason are named together, so the reason is read once.
        by_reason: dict[str, list[str]] = {}
        for k in plan.skipped:
            by_reason.setdefault(k.reason, []).append(k.rule)
        for reason, rules in list(by_reason.items())[:8]:
            console.print(Text(f"skipped {', '.join(rules)}: {reason}", style="dim"))
    if report.env or report.notes:
        console.print()
        for name, value in report.env.items():
            console.print(f"export {name}={value}")
        for note in report.notes:
            console.print(f"# {note}")
    if show_patch and report.patch:
        console.print()
        console.print(Text("Patch (save with --export plan.diff, then: git apply plan.diff)", style="bold"))
        console.print(Text(report.patch), highlight=False, markup=False)


def render_crash(crash: CrashReport, console: Console) -> None:
    Text = _kit_of(console).Text
    e = crash.primary
    if e is None:
        console.print(f"[bold]Log[/]    no out-of-memory error found in {crash.file}")
        return
    console.print(Text.assemble(("Crash", "bold"), f"  {crash.file}:{e.line}  ", (describe_event(e), "bold red")))
    numbers = crash_numbers(e)
    if numbers:
        console.print(f"       {numbers}")
    ranks = sorted({ev.rank for ev in crash.events if ev.rank is not None})
    if len(ranks) > 1:
        console.print(f"       {len(crash.events)} events on ranks {', '.join(map(str, ranks))}")
    if e.phase_evidence is not None:
        ev = e.phase_evidence
        console.print(Text(f"       {_text(msg('crash.evidence.line', line=ev.line, text=_short(ev.text, 70)))}",
                           style="dim"))
    if e.confidence != "certain":
        console.print(Text(f"       {_text(msg('crash.confidence.' + e.confidence))}", style="yellow"))
    for d in crash.diagnoses:
        console.print(Text(f"       · {DIAGNOSIS_WORDS.get(d, d)}", style="yellow"))
    for check in crash.checks:
        console.print(Text(f"       · {_text(check)}", style="yellow"))
    if crash.host_ram_gib:
        full = f", {crash.host_ram_used_pct:.1f}% in use at its last reading" if crash.host_ram_used_pct else ""
        console.print(f"       host RAM {crash.host_ram_gib:.1f} GiB (from the log){full}")


def print_report(report: Report, *, show_patch: bool = True) -> None:
    """The plain report on stdout: rich in a terminal, the same characters without rich in a pipe or file."""
    # In a pipe rich would wrap at 80 columns; a report read in a file or a CI log reads better wider.
    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 100
    if width is not None and _rich_writes_plain_text():
        from oomdoctor.views.plaintext import NeedsRich, PlainConsole

        plain = PlainConsole(width)
        try:
            render(report, plain, show_patch=show_patch)
        except NeedsRich:
            pass        # something rich lays out its own way: let rich write it all
        else:
            sys.stdout.write(plain.text())
            return
    from rich.console import Console

    render(report, Console(highlight=False, width=width), show_patch=show_patch)


def _rich_writes_plain_text() -> bool:
    """True when rich.console.Console would see no terminal and write no escape codes (rich 15 rules)."""
    env = os.environ
    if env.get("TTY_COMPATIBLE") == "1" or env.get("FORCE_COLOR"):
        return False
    if getattr(sys.stdin, "__module__", "").startswith("idlelib"):
        return False
    # rich reports a UnicodeEncodeError its own way; only UTF-8 streams take the plain path.
    return (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "").replace("_", "") == "utf8"


def render_to_string(report: Report, width: int = 100, show_patch: bool = True) -> str:
    from rich.console import Console

    console = Console(width=width, record=True, force_terminal=False, color_system=None, file=_Null())
    render(report, console, show_patch=show_patch)
    return console.export_text()


class _Null:
    def write(self, _s: str) -> int:
        return 0

    def flush(self) -> None:
        pass
