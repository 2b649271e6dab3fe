"""Whether the training config explains the crash, and when it does not, what in the log can.

The config's own estimate of the phase that crashed is set against what the crash measured (memory/crashfloor.py's
floor). When the estimate is well below it, more memory was taken than this config asks for, and the answer is a
finding, with the lines of the log that point at the cause:

- several ranks on one device: the failure message lists several processes on the card, ranks report the same
  device index, the log sets CUDA_VISIBLE_DEVICES, or a launcher started copies that each say they are not
  distributed (every copy then trains the whole run on the same first GPU);
- one process over several GPUs: the HF Trainer's "Training with DataParallel" line (transformers trainer.py,
  _inner_training_loop, logged when args.n_gpu > 1, i.e. plain python with several visible cards): nn.DataParallel
  replicates the model on every card each step and gathers the outputs on the first;
- memory outside PyTorch: the process's in-use figure well above what PyTorch holds (torch's message: "this process
  has X in use ... of the allocated memory Y is allocated by PyTorch"), or other processes on the card;
- growth over steps: memory lines the log printed that rise from step to step;
- evaluation or generation, which has its own batch (per_device_eval_batch_size) and keeps logits;
- fragmentation: a large "reserved by PyTorch but unallocated" figure (PYTORCH_CUDA_ALLOC_CONF=expandable_segments);
- a framework version with a known memory bug (oomdoctor/data/memory_bugs.yaml, each entry with its source).

The plan is still built on the crash's floor; the checks come first.

Public API::

    find(setup, estimate, floor, crash, hw) -> Finding | None
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from oomdoctor.facts import (
    Clue,
    CrashEvent,
    CrashReport,
    Estimate,
    Evidence,
    Finding,
    Floor,
    Hardware,
    TrainingSetup,
    msg,
)

# The config's estimate is "well below" the crash when the crash shows this much more: the estimator's own error
# on measured runs stays inside +-30% (benchmarks/accuracy.py), so a gap of half the estimate again is not its error.
BEYOND_RATIO = 1.5
BEYOND_MIN_GIB = 2.0
# With a clue in the log that the config cannot cause (several ranks on a card, memory outside PyTorch, another
# process), a smaller gap is enough.
CLUE_RATIO = 1.2
STRONG = ("shared_device", "other_process", "outside_pytorch", "data_parallel")
# Memory outside PyTorch, or held by other processes, counts when it is at least this share of the card (and 1 GiB).
OUTSIDE_SHARE = 0.08
# Fragmentation: reserved but unallocated at least this share of the card (and 1 GiB).
FRAGMENTED_SHARE = 0.10
# Growth: the last memory line at least this much above the first, over three lines or more.
GROWTH_SHARE = 0.10
GROWTH_MIN_GIB = 1.0

_PROCESS = re.compile(r"Process \d+ has [\d.]+ [KMGT]?i?B memory in use", re.IGNORECASE)
_VISIBLE = re.compile(rb"CUDA_VISIBLE_DEVICES\s*=\s*[\"']?([\d, ]*)")
# transformers trainer.py logs this when one process drives several GPUs (args.n_gpu > 1 -> nn.DataParallel)
_DATA_PARALLEL = re.compile(rb"Training with DataParallel so batch size has been adjusted to:?\s*(\d+)?")
_NOT_DISTRIBUTED = re.compile(rb"distributed training: False|world[_ ]size[:=]\s*1\b|Distributed environment: NO", re.IGNORECASE)
SCAN_BYTES = 4 << 20      # the head and the tail of a log are read for launcher lines


def find(setup: TrainingSetup | None, est: Estimate | None, fl: Floor | None, crash: CrashReport | None,
         hw: Hardware | None) -> Finding | None:
    """The finding for a log that shows a memory failure (None without one)."""
    if crash is None or not crash.events:
        return None
    cap = (hw.gpu_gib if hw is not None and hw.gpu_gib else None) or _capacity(crash) or 0.0
    clues = tuple(_clues(setup, crash, cap))
    kinds = {c.kind for c in clues}
    ratio = None
    beyond = False
    if fl is not None and fl.kind == "gpu" and fl.estimate_gib > 0:
        ratio = fl.observed_gib / fl.estimate_gib
        gap = fl.observed_gib - fl.estimate_gib
        beyond = (ratio >= BEYOND_RATIO and gap >= BEYOND_MIN_GIB) or (ratio >= CLUE_RATIO and bool(kinds & set(STRONG)))
    if not beyond and est is not None and cap:
        # another process (or memory outside PyTorch) took what this config's own figure would have left free
        taken = sum(_taken(ev) for ev in crash.events[:1])
        beyond = bool(kinds & set(STRONG)) and taken >= OUTSIDE_SHARE * cap and est.fits
    if beyond:
        if fl is not None and fl.kind == "gpu" and ratio is not None:
            message = msg("finding.beyond", observed=fl.observed_gib, estimate=fl.estimate_gib, ratio=ratio,
                          moment=fl.message.values.get("moment") or msg("memory.floor.peak"))
        else:
            message = msg("finding.beyond_taken")
        return Finding(cause="beyond_config", message=message, floor=fl, clues=clues)
    if fl is not None and fl.kind == "gpu":
        message = msg("finding.config", observed=fl.observed_gib, estimate=fl.estimate_gib)
    else:
        message = msg("finding.config_plain")
    return Finding(cause="config", message=message, floor=fl, clues=clues)


def _capacity(crash: CrashReport) -> float | None:
    for ev in crash.events:
        if ev.capacity_gib:
            return ev.capacity_gib
    return None


def _taken(ev: CrashEvent) -> float:
    """GiB on the card that this process's PyTorch does not hold: other processes, and non-PyTorch memory."""
    taken = ev.other_processes_gib or 0.0
    if ev.process_gib is not None and ev.allocated_gib is not None:
        taken += max(0.0, ev.process_gib - ev.allocated_gib - (ev.reserved_unallocated_gib or 0.0))
    return taken


def _said(ev: CrashEvent) -> Evidence:
    return Evidence(line=ev.line, text=ev.message, source="message")


def _clues(setup: TrainingSetup | None, crash: CrashReport, cap: float) -> Iterable[Clue]:
    gpu = [ev for ev in crash.events if ev.capacity_gib is not None or ev.allocated_gib is not None]
    # several ranks on one device
    shared: list[Evidence] = []
    by_device: dict[int, set] = {}
    for ev in gpu:
        if ev.device is not None and ev.rank is not None:
            by_device.setdefault(ev.device, set()).add(ev.rank)
    same = {d: r for d, r in by_device.items() if len(r) > 1}
    if same:
        shared += [_said(ev) for ev in gpu if ev.device in same][:3]
    many = [ev for ev in gpu if len(_PROCESS.findall(ev.message)) >= 2]
    if many:
        shared.append(_said(many[0]))
    visible, copies, parallel = _launcher_lines(crash)
    # CUDA_VISIBLE_DEVICES alone is how every multi-GPU launcher starts its ranks: it only supports a clue
    if shared or copies:
        launcher = copies + visible
        device = next(iter(same)) if same else (gpu[0].device if gpu and gpu[0].device is not None else 0)
        yield Clue(kind="shared_device", message=msg("finding.clue.shared_device", device=device),
                   check=msg("finding.check.shared_device"), evidence=tuple(_dedupe(shared + launcher))[:4])
    if parallel:
        found = re.search(r"adjusted to:?\s*(\d+)", parallel[0].text)
        per_device = setup.micro_batch if setup is not None and setup.micro_batch else 1
        gpus = int(found.group(1)) // max(1, per_device) if found else "?"
        yield Clue(kind="data_parallel", message=msg("finding.clue.data_parallel", gpus=gpus),
                   check=msg("finding.check.data_parallel"), evidence=tuple(parallel[:1] + visible[:1]))
    first = gpu[0] if gpu else None
    if first is not None:
        outside = None
        torch_gib = 0.0
        if first.process_gib is not None and first.allocated_gib is not None:
            outside = first.process_gib - first.allocated_gib - (first.reserved_unallocated_gib or 0.0)
            torch_gib = first.allocated_gib + (first.reserved_unallocated_gib or 0.0)
        limit = max(1.0, OUTSIDE_SHARE * cap)
        if outside is not None and outside >= max(2.0, OUTSIDE_SHARE * cap):
            yield Clue(kind="outside_pytorch",
                       message=msg("finding.clue.outside_pytorch", gib=outside, in_use=first.process_gib,
                                   torch=torch_gib),
                       check=msg("finding.check.outside_pytorch"), evidence=(_said(first),))
        if (first.other_processes_gib or 0.0) >= limit and not many:
            yield Clue(kind="other_process", message=msg("finding.clue.other_process", gib=first.other_processes_gib),
                       check=msg("finding.check.other_process"), evidence=(_said(first),))
        ru = first.reserved_unallocated_gib
        if ru is None and first.reserved_gib is not None and first.allocated_gib is not None:
            ru = first.reserved_gib - first.allocated_gib
        if ru is not None and ru >= max(1.0, FRAGMENTED_SHARE * cap):
            yield Clue(kind="fragmentation", message=msg("finding.clue.fragmentation", gib=ru),
                       check=msg("finding.check.fragmentation"), evidence=(_said(first),))
    rising = _growth(crash)
    if rising:
        lo, hi = rising
        yield Clue(kind="growth", message=msg("finding.clue.growth", first=lo[1], last=hi[1], steps=len(crash.memory_samples)),
                   check=msg("finding.check.growth"),
                   evidence=(Evidence(line=lo[0], text=lo[2], source="progress"),
                             Evidence(line=hi[0], text=hi[2], source="progress")))
    at_eval = [ev for ev in crash.events if ev.phase in ("eval", "generate")]
    if at_eval:
        ev = at_eval[0]
        batch = setup.eval_batch if setup is not None else None
        yield Clue(kind="eval", message=msg("finding.clue.eval", phase=msg("finding.phase." + str(ev.phase)),
                                            batch=batch if batch is not None else "?"),
                   check=msg("finding.check.eval"),
                   evidence=tuple(e for e in (ev.phase_evidence, _said(ev)) if e is not None))
    yield from _version_bugs(crash)


def _dedupe(items: list[Evidence]) -> list[Evidence]:
    seen, out = set(), []
    for e in items:
        if e.line not in seen:
            seen.add(e.line)
            out.append(e)
    return out


def _growth(crash: CrashReport):
    """((line, GiB, text) of the first and the last reading) when the memory lines rise over the run."""
    readings = []
    for s in sorted(crash.memory_samples, key=lambda s: s.line):
        gib = s.max_allocated_gib if s.max_allocated_gib is not None else s.allocated_gib
        if gib is None:
            gib = s.max_reserved_gib if s.max_reserved_gib is not None else s.reserved_gib
        if gib is not None:
            readings.append((s.line, gib, s.label or f"{gib:.2f} GiB"))
    if len(readings) < 3:
        return None
    lo, hi = readings[0], readings[-1]
    rises = sum(1 for a, b in zip(readings, readings[1:]) if b[1] > a[1] + 0.01)
    if hi[1] - lo[1] >= max(GROWTH_MIN_GIB, GROWTH_SHARE * lo[1]) and rises >= (len(readings) - 1) / 2:
        return lo, hi
    return None


def _launcher_lines(crash: CrashReport) -> tuple[list[Evidence], list[Evidence], list[Evidence]]:
    """(CUDA_VISIBLE_DEVICES lines, copies, DataParallel lines) of the log: copies are two or more lines of
    processes that each say they are not distributed (a launcher started N copies of a single-GPU run)."""
    try:
        from oomdoctor.crashlog.source import open_log

        with open_log(crash.file) as src:
            size = src.size
            spans = [(0, min(size, SCAN_BYTES))]
            if size > SCAN_BYTES:
                spans.append((max(SCAN_BYTES, size - SCAN_BYTES), size))
            found_visible: list[Evidence] = []
            alone: list[Evidence] = []
            parallel: list[Evidence] = []
            for lo, hi in spans:
                blob = bytes(src.mm[lo:hi])
                for pattern, out in ((_VISIBLE, found_visible), (_NOT_DISTRIBUTED, alone), (_DATA_PARALLEL, parallel)):
                    for m in pattern.finditer(blob):
                        start, end = src.line_span(lo + m.start())
                        line = blob.count(b"\n", 0, m.start()) + 1 if lo == 0 else 0
                        out.append(Evidence(line=line, text=src.text(start, end).strip()[:200], source="progress"))
                        if len(out) >= 8:
                            break
    except Exception:       # the log was read once already; a second look that fails only loses evidence
        return [], [], []
    return found_visible[:2], alone[:2] if len(alone) >= 2 else [], parallel[:1]


def _version_bugs(crash: CrashReport) -> Iterable[Clue]:
    versions = dict(crash.versions or {})
    if not versions:
        return
    from oomdoctor.knownbugs import matching

    for bug in matching(versions):
        yield Clue(kind="version_bug", message=msg("finding.clue.version_bug", package=bug.package,
                                                   version=versions[bug.package], what=bug.what),
                   check=msg("finding.check.version_bug", fixed=bug.fixed or "?", source=bug.source))
