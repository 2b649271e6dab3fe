"""What the terminal app says, as plain strings and cell counts.

Kept free of Textual (and of Rich) so the wording and the bar arithmetic are testable on their own
and so the plain views could borrow them.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from oomdoctor.facts import COMPONENTS, CrashEvent, CrashReport, Estimate, Hardware, Step, TrainingSetup

# One glyph per component: the bar still reads with NO_COLOR or on a monochrome terminal.
GLYPHS: Mapping[str, str] = {
    "weights": "█", "gradients": "▓", "optimizer": "▒",
    "activations": "░", "logits": "≡", "overhead": "·", "reserve": ":",
}
# The 16 ANSI colours only, so a 16-colour terminal over SSH shows every segment distinctly.
COLOURS: Mapping[str, str] = {
    "weights": "blue", "gradients": "magenta", "optimizer": "yellow",
    "activations": "green", "logits": "cyan", "overhead": "bright_black", "reserve": "white",
}
SHORT_NAMES: Mapping[str, str] = {
    "weights": "weights", "gradients": "grads", "optimizer": "optimizer",
    "activations": "activations", "logits": "logits", "overhead": "overhead", "reserve": "reserve",
}

PHASES: Mapping[str, str] = {
    "load": "while loading the model",
    "forward": "in the forward pass",
    "loss": "while computing the loss",
    "backward": "in the backward pass",
    "optimizer": "in the optimizer step",
    "zero_init": "while DeepSpeed ZeRO partitioned the model",
    "eval": "during evaluation",
    "save": "while saving a checkpoint",
    "generate": "while generating",
}

KINDS: Mapping[str, str] = {
    "cuda_oom": "CUDA ran out of GPU memory",
    "host_oom": "the machine ran out of host RAM and the kernel killed the process",
    "nccl_oom": "NCCL could not allocate its communication buffers",
    "cublas_alloc": "cuBLAS could not allocate its workspace (the GPU was already full)",
    "cudnn_alloc": "cuDNN could not allocate its workspace (the GPU was already full)",
    "mps_oom": "the Apple GPU (MPS) ran out of memory",
    "hip_oom": "the AMD GPU (HIP) ran out of memory",
    "xla_oom": "the XLA device ran out of memory",
    "vllm_cache": "vLLM could not fit its KV cache",
    "bnb_alloc": "bitsandbytes could not allocate GPU memory",
}

DIAGNOSES: Mapping[str, str] = {
    "fragmentation": "Fragmentation: PyTorch had reserved memory it could not use for this request. "
                     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True usually gives it back.",
    "other_process": "Other processes held memory on this GPU, so the run had less than the card's capacity.",
    "eval": "It died in evaluation: the eval batch (and its logits) can be larger than the training one.",
    "save": "It died while saving: gathering the full weights for the checkpoint needs room of its own.",
    "long_samples": "A long sample reached the GPU: the peak follows the longest sequence, not the average one.",
    "host_ram": "Host RAM ran out: offloading and data loading live in the machine's memory, not the GPU's.",
}

COSTS: Mapping[str, str] = {"throughput": "slower", "quality": "quality", "none": "free"}


def gib(value: float | None, digits: int = 1) -> str:
    return "?" if value is None else f"{value:.{digits}f} GiB"


def card_phrase(capacity_gib: float | None, hw: Hardware | None) -> str:
    """'the A100-SXM4-80GB (79.2 GiB)' / 'a 24.0 GiB GPU'."""
    cap = capacity_gib if capacity_gib is not None else (hw.gpu_gib if hw and hw.gpu_gib else None)
    named = hw is not None and hw.gpu not in ("", "unknown")
    if named and cap is not None:
        return f"the {hw.gpu} ({cap:.1f} GiB)"
    if named:
        return f"the {hw.gpu}"
    if cap is not None:
        return f"{'an' if f'{cap:.0f}'.startswith('8') else 'a'} {cap:.1f} GiB GPU"
    return "the GPU"


def crash_numbers(event: CrashEvent, hw: Hardware | None) -> str:
    """The crash's numbers in one plain sentence."""
    card = card_phrase(event.capacity_gib, hw)
    if event.tried_gib is not None and event.free_gib is not None:
        text = f"The run asked for {gib(event.tried_gib)} more while {gib(event.free_gib)} was free on {card}."
    elif event.tried_gib is not None:
        text = f"The run asked for {gib(event.tried_gib)} more and {card} could not give it."
    else:
        what = KINDS.get(event.kind, event.kind.replace("_", " "))
        text = what[0].upper() + what[1:] + "."
    held = []
    if event.allocated_gib is not None:
        held.append(f"{gib(event.allocated_gib)} in live tensors")
    if event.reserved_unallocated_gib is not None:
        held.append(f"{gib(event.reserved_unallocated_gib)} reserved but unused")
    if held:
        text += " PyTorch held " + " and ".join(held) + "."
    if event.other_processes_gib:
        text += f" Other processes held {gib(event.other_processes_gib)}."
    return text


def crash_where(event: CrashEvent, crash: CrashReport) -> str:
    """'It died in the backward pass on rank 0 (cuda:0), at step 12 of 500; log line 1234.'"""
    what = KINDS.get(event.kind, event.kind.replace("_", " "))
    parts = [f"{what[0].upper()}{what[1:]}"]
    if event.phase:
        parts.append(PHASES.get(event.phase, f"during {event.phase}"))
    place = []
    if event.rank is not None:
        place.append(f"rank {event.rank}")
    if event.device is not None:
        place.append(f"cuda:{event.device}")
    if place:
        parts.append("on " + (f"{place[0]} ({place[1]})" if len(place) == 2 else place[0]))
    if crash.step is not None:
        parts.append(f"at step {crash.step}" + (f" of {crash.total_steps}" if crash.total_steps else ""))
    text = " ".join(parts) + f"; {crash.file} line {event.line}."
    others = [r for r in crash.failed_ranks if r != event.rank]
    if others:
        text += f" Ranks {', '.join(str(r) for r in others)} failed too."
    return text


def diagnosis_lines(codes: Sequence[str]) -> list[str]:
    return [DIAGNOSES.get(code, code.replace("_", " ").capitalize() + ".") for code in codes]


def setup_lines(setup: TrainingSetup) -> list[tuple[str, str]]:
    """(label, value) pairs that say what the run is, in the order a person reads a config."""
    method = setup.method + (f" (rank {setup.lora_rank})" if setup.method in ("lora", "qlora") else "")
    batch = (f"{setup.micro_batch} per GPU × {setup.grad_accum} accumulation × {setup.n_gpus} GPU"
             f"{'s' if setup.n_gpus != 1 else ''} = {setup.effective_batch}")
    parallel = []
    if setup.zero_stage:
        parallel.append(f"ZeRO-{setup.zero_stage}")
    if setup.fsdp:
        parallel.append(f"FSDP {setup.fsdp}")
    if setup.offload_optimizer:
        parallel.append("optimizer offload")
    if setup.offload_params:
        parallel.append("parameter offload")
    return [
        ("model", setup.model or "?"),
        ("method", f"{setup.stage} · {method}"),
        ("batch", batch),
        ("sequence", f"{setup.seq_len} tokens" + (" (packed)" if setup.packing else "")),
        ("precision", setup.precision + (" (pure)" if setup.pure_bf16 else "")),
        ("optimizer", setup.optimizer),
        ("memory", ", ".join(
            ["grad checkpointing " + ("on" if setup.grad_ckpt else "off"), f"attention {setup.attention}"]
            + parallel)),
    ]


def segments(est: Estimate) -> list[tuple[str, float]]:
    """(component, GiB) in drawing order; peak above the summed components shows as allocator reserve."""
    parts = [(name, max(0.0, float(est.components.get(name, 0.0)))) for name in COMPONENTS]
    rest = est.peak_gib - sum(v for _, v in parts)
    if rest > 0.05:
        parts.append(("reserve", rest))
    return parts


def bar_cells(parts: Sequence[tuple[str, float]], scale_gib: float, width: int) -> list[tuple[str, int]]:
    """Cells per segment on a bar `width` cells wide for `scale_gib`.

    Rounds the running total, not each part, so the bar's length is always round(total/scale*width)
    and no segment drifts by more than one cell.
    """
    if scale_gib <= 0 or width <= 0:
        return [(name, 0) for name, _ in parts]
    out: list[tuple[str, int]] = []
    running = 0.0
    drawn = 0
    for name, value in parts:
        running += value
        end = min(width, round(running / scale_gib * width))
        out.append((name, max(0, end - drawn)))
        drawn = max(drawn, end)
    return out


def verdict(est: Estimate) -> str:
    """'fits, 8.8 GiB spare' / 'over by 14.2 GiB' against capacity less headroom."""
    limit = est.capacity_gib * (1.0 - est.headroom)
    if est.fits:
        return f"fits, {gib(limit - est.peak_gib)} spare"
    return f"over by {gib(est.peak_gib - limit)}"


def step_costs(step: Step) -> str:
    costs = [c for c in step.costs if c != "none"]
    words = ", ".join(COSTS.get(c, c) for c in costs) or "free"
    if step.applicability != "safe":
        words += ", asks consent"
    return words


def change_words(step: Step) -> str:
    return "; ".join(f"{c.field} {_show(c.before)} → {_show(c.after)}" for c in step.changes)


def _show(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
