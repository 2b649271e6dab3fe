"""Scan a crash log for memory failures and the facts around them.

scan.py finds the marker strings (MARKERS; on big logs through the ANCHORS, see there); only the
lines around each hit are decoded and parsed. Context (versions, arguments, memory samples,
progress) is read from windows: the head, the stretch before the crash and the tail. A marker
repeated more than 2 * KEEP_PER_MARKER times keeps its first and last hits and the report says so
in `notes`.
"""
from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import cast

from oomdoctor.crashlog import formats as F
from oomdoctor.crashlog.context import Context
from oomdoctor.crashlog.paste import PASTE_MAX_BYTES, normalise
from oomdoctor.crashlog.phase import (
    LEVEL_ONLY,
    LUA_FRAME,
    OUTER,
    STEP,
    TRACEBACK_HEAD,
    banner_phase,
    bar_after,
    before_launcher,
    frame_phase,
    is_frame,
    lexical_phase,
    line_phase,
    looks_like_code,
    message_phase,
    prose_phase,
    taxonomy_line,
)
from oomdoctor.crashlog.scan import MarkerScan, coverage, merge_ranges, scan
from oomdoctor.crashlog.source import LogSource, open_log, spool
from oomdoctor.facts import CrashEvent, CrashKind, CrashReport, Evidence, MemorySample, Msg, Phase, msg
from oomdoctor.lazyre import lazy_re
from oomdoctor.records import record

# Between them the markers catch every memory-failure shape of oom-log-formats.md: the first three
# GPU OOMs, the rest rarer failures and host kills. Logs up to scan.FULL_SCAN_BYTES have every marker
# searched in every byte.
GPU_MARKERS = (b"ut of mem", b"OutOfMemory")    # "out of memory" in any case, the OutOfMemoryError classes
PRIMARY_MARKERS = GPU_MARKERS + (b"_ALLOC_FAILED",)
SECONDARY_MARKERS = (
    b"CUDA calloc", b"DefaultCPUAllocator", b"PT_DEVMEM", b"exitcode", b"Signal 9", b"Killed",
    b"return code = -9", b"code 137", b"code: 137", b"RESOURCE_EXHAUSTED", b"OOM when allocating",
    b"cache blocks", b"Free memory on device", b"No executable batch size", b"Failed to clone() tensor",
    b"Insufficient Memory", b"memory pressure", b"Cannot allocate memory", b"bad_alloc", b"low on memory",
    b"cudaErrorMemoryAllocation", b"Resource exhausted",
    # kills whose cause the log does not state (tests/data/logs/real/SOURCES.md lists where each was seen)
    b"Killing subprocess", b"died or was killed", b"OOM killer", b"unexpectedly exits", b"SIGKILL",
    b"killed by signal", b"oom-kill", b"oom_kill", b"OUT_OF_MEMORY", b"Out Of Memory", b": killed",
    b"ResourceExhaustedError",
    b"total capacity;", b"has a total capac",     # a torch OOM's statistics pasted without its first words
    # allocators and supervisors whose words hold none of the above (fresh/SOURCES.md lists where each was seen)
    b"Malloc failed: out of", b"unable to allocate", b"memory block with size larger than", b"out of device memory", b"illed  ",
    b"ode: 137", b"xitCode\": 137", b") from device: ", b"Cuda failure", b"systemd-oomd",
    # ... and audit3/SOURCES.md
    b"Not enough memory to handle", b"low on resource: memory", "已杀死".encode(), b"Terminado (killed)",
    # ... and audit6/SOURCES.md
    b"OUT_OF_DEVICE_MEMORY", b"you tried to allocate", b"Killed process",
    # ... and audit7/SOURCES.md
    b"tried to reallocate", b"ut of Mem", b"bytes on host: ", b"B from device: ", b"G from device: ", b"M from device: ",
    # the grammar of a failure no family names (formats._read_grammar): its words in the cases they are printed in
    b"UT OF MEM", b"OOM", b"llocation failed", b"ailed to allocate", b"annot allocate", b"an't allocate",
    b"nable to allocate", b"nsufficient", b"ot enough ", b"ould not alloc", b"_OUT_OF_",
    # ... and audit8/SOURCES.md (macOS's `Killed: 9` holds `Killed`, SGLang's refusal `ot enough `)
    b"did not even succeed with", b"ut-of-mem", b"ut-of-Mem", b"UT-OF-MEM",
    # ... and audit9/SOURCES.md (MPS's buffer-size refusal, torch's test harness, the JVM, vLLM v1's cache check)
    b"Invalid buffer size", b"exit code but got", b"Native memory allocation", b"available KV cache memory",
    # ... and audit10/SOURCES.md (Rust's abort, vLLM 0.2's cache check, XLA's TPU report, CANN, supervisors' kills)
    b"memory allocation of ", b"stored in KV cache", b"memory space hbm", b"enough memory. Requires", b"Total hbm usage",
    b"Memory_Allocation_Failure", b"apply for memory", b"signal: killed", b"all available RAM",
    # ... and audit11/SOURCES.md (GNU MP's reallocation report, which `annot allocate` does not hold)
    b"GNU MP: Cannot",
    # ... and audit12/SOURCES.md (cudaMallocAsync's first words, a signal as a negative exit code, CPython's bare
    # MemoryError, DirectML's refusal)
    b"Allocation on device", b"code -9", b"ode: -9", b"MemoryError", b"llocate tensor with",
    # ... and audit13/SOURCES.md (TensorFlow's status words as a title capitalises them, `Resource Exhausted Error`)
    b"esource Exhausted",
    # ... and audit15/SOURCES.md (MLX's refusal of a buffer over the device's limit)
    b"ttempting to allocate",
    # ... and audit16/SOURCES.md (IOGPU's command-buffer error code quoted without MLX's line)
    b"CallbackErrorOutOfMemory",
    # ... and audit17/SOURCES.md (ollama's refusal to start a model the host's free RAM cannot hold)
    b"requires more system memory",
)
MARKERS = PRIMARY_MARKERS + SECONDARY_MARKERS
# On logs too big for every marker to be searched everywhere, these two are: every memory-failure
# line of a GPU, accelerator or allocator says "memory" or "Memory", and every Python exception
# prints a traceback header; the other markers are searched around the tracebacks, in the head and
# in the tail (scan.py).
MEMORY_ANCHOR = b"emory"
TRACEBACK_ANCHOR = b"Traceback (most recent call last)"
ANCHORS = (MEMORY_ANCHOR, TRACEBACK_ANCHOR)
_ANCHOR_WORDS = {MEMORY_ANCHOR: "memory", TRACEBACK_ANCHOR: "Traceback", b"ut of mem": "out of mem"}
KEEP_PER_MARKER = 1000             # first and last hits kept per marker: a million `Killed` lines still parse fast
JOIN_LINES = 6                     # a wrapped message spans at most this many physical lines
TRACEBACK_LINES = 400
# Context is read line by line (a few µs a line), so only from windows on logs over CONTEXT_WHOLE_BYTES:
CONTEXT_WHOLE_BYTES = 1 << 20
CONTEXT_HEAD_BYTES = 2 << 20       # the start-up (banners, arguments, parameter counts), cut at the first loss line
CONTEXT_BEFORE_BYTES = 512 << 10   # memory samples and the failing batch, just before the crash
CONTEXT_TAIL_BYTES = 256 << 10     # summaries and pasted environment reports after it
TRAINING_STARTED = b"{'loss': "     # the HF Trainer's first logged loss: the start-up is over
PROGRESS_BYTES = 256 << 10         # the latest training progress: this much before the crash, ...
PROGRESS_MAX_BYTES = 4 << 20       # ... widened up to this when it holds none
LINE_START_BACK_BYTES = 1 << 20    # how far back a context region looks for its line's start

GPU_KINDS = frozenset({"cuda_oom", "hip_oom", "npu_oom", "xpu_oom", "mps_oom", "cublas_alloc", "cudnn_alloc",
                       "nccl_oom", "xla_oom", "tf_oom", "hpu_oom", "vllm_cache", "bnb_alloc", "batch_size_exhausted",
                       "save_clone_oom", "mlx_oom"})


@record(frozen=False)
class _Hit:
    """A memory-failure message found in the log, where it sits and what it says."""

    start: int                 # byte offset of the message's first line
    end: int                   # end of its last line
    parsed: F.Parsed
    rank: int | None
    message: str
    at: int = 0                # byte offset of the marker that found it (a kill glued to a progress bar)
    line: int = 0
    phase: str | None = None
    cue: tuple | None = None   # (byte offset of the evidence line, its text, source) when phase is known
    phase_known: bool = False


def parse_log(path: str, spooled: str | None = None) -> CrashReport:
    """Read a crash log ("-" = stdin, .gz accepted) and return every memory failure and its context.

    Raises InputError for a missing, unreadable, empty or binary file. A log without any memory
    failure returns a CrashReport whose `events` is empty. `spooled`: the spool of a stream `path` that was
    read already (see open_log).
    """
    with open_log(path, spooled) as src:
        pasted = _unpasted(src)
        if pasted is None:
            return _parse(src)
        clean_src, origin = pasted
        with clean_src:
            report = _parse(clean_src)
        return _remap(report, origin, _lines_total(src, []))


def _unpasted(src: LogSource) -> tuple[LogSource, list[int]] | None:
    """A small log with a paste's marks (fences, quotes, a gutter, collector prefixes, colour, a hard
    wrap; paste.py) as a cleaned copy, and the original line of each of its lines; None when it has none."""
    if src.size > PASTE_MAX_BYTES:
        return None
    found = normalise(src.text(0, src.size))
    if found is None:
        return None
    text, origin = found
    import io

    return LogSource(src.display, spool(io.BytesIO(text.encode("utf-8")).read, src.display), temp=True), origin


def _remap(report: CrashReport, origin: list[int], lines_total: int | None) -> CrashReport:
    """Line numbers of the cleaned copy back to the lines of the log the user gave."""
    def line(n: int) -> int:
        return origin[min(max(n, 1), len(origin)) - 1] if origin else n

    events = tuple(replace(e, line=line(e.line), phase_evidence=replace(e.phase_evidence, line=line(e.phase_evidence.line))
                           if e.phase_evidence is not None else None) for e in report.events)
    samples = tuple(replace(s, line=line(s.line)) for s in report.memory_samples)
    return replace(report, events=events, memory_samples=samples, lines_total=lines_total)


def _parse(src: LogSource) -> CrashReport:
    found = scan(src, MARKERS, KEEP_PER_MARKER, anchors=ANCHORS, around=(TRACEBACK_ANCHOR,),
                 narrower={MEMORY_ANCHOR: GPU_MARKERS})
    hits = _read_hits(src, found.offsets)
    hits = [h for h in hits if not h.parsed.extra.get("launcher_only") or _launcher_kill_stands(src, h)]
    hits = [h for h in hits if not (h.parsed.extra.get("grammar") and _in_expected_section(src, h))]
    _number_lines(src, hits)
    rocm = None
    for h in hits:
        if h.parsed.kind == "cuda_oom" and "bitsandbytes" in _innermost_file(src, h):
            h.parsed.kind = "bnb_alloc"
        if h.parsed.kind == "cuda_oom" and h.parsed.extra.get("ggml"):
            # ggml's HIP backend is ggml-cuda built with CUDA names mapped to HIP (vendors/hip.h): it
            # says `cudaMalloc` on an AMD GPU; its devices and buffers are named ROCm (ROCm0, ROCm_Host)
            if rocm is None:
                rocm = _mentions(src, b"ROCm", h.start)
            if rocm:
                h.parsed.kind = "hip_oom"
    # Phases read up to TRACEBACK_LINES lines each: only for hits that survive merging (and the
    # few merging itself asks about), so thousands of repeats cost no traceback walks.
    hits = _merge(hits, lambda h: _known_phase(src, h))
    for h in hits:
        _known_phase(src, h)
    ctx = _context(src, hits)
    events = tuple(CrashEvent(kind=cast(CrashKind, h.parsed.kind), line=h.line, tried_gib=_r(h.parsed.tried_gib),
                              capacity_gib=_r(h.parsed.capacity_gib), free_gib=_r(h.parsed.free_gib),
                              allocated_gib=_r(h.parsed.allocated_gib),
                              reserved_unallocated_gib=_r(h.parsed.reserved_unallocated_gib),
                              reserved_gib=_r(h.parsed.reserved_gib), process_gib=_r(h.parsed.process_gib),
                              other_processes_gib=_r(h.parsed.other_processes_gib), device=h.parsed.device,
                              rank=h.rank, phase=cast("Phase | None", h.phase), message=h.message[:500], phase_evidence=_evidence(src, h),
                              confidence="likely" if h.parsed.extra.get("likely") or h.parsed.extra.get("grammar")
                              else "certain") for h in hits)
    failed = sorted({h.rank for h in hits if h.rank is not None}
                    | {h.parsed.extra["local_rank"] for h in hits if "local_rank" in h.parsed.extra})
    world = ctx.world_size
    if world is None and ctx.max_rank is not None:
        world = ctx.max_rank + 1
    report = CrashReport(
        file=src.display, events=events, versions=dict(ctx.versions), gpu_name=ctx.gpu_name, world_size=world,
        params_trainable=ctx.params_trainable, params_total=ctx.params_total, train_args=dict(ctx.train_args),
        step=ctx.final_step(), total_steps=ctx.final_total(), seq_len_failing=ctx.seq_len,
        failed_ranks=tuple(failed), memory_samples=tuple(_sample(s) for s in ctx.samples),
        lines_total=_lines_total(src, hits), host_ram_gib=_r(ctx.host_ram_gib),
        host_ram_used_pct=ctx.host_ram_used_pct if _r(ctx.host_ram_used_pct) is not None else None,
        notes=_scan_notes(found), checks=_checks(events),
    )
    return replace(report, diagnoses=diagnose(report))


# torch formats a uint64 byte count (c10's format_size): every size below 2**63 bytes is a reading, however absurd
# the request (a corrupted shape asking for 538976288.13 GiB); past it sits a difference that went below zero
# (the 17179869184 GiB "free" of an underflow) or a 400-digit number pasted into a log.
_MAX_GIB = float(1 << 33)


def _r(x: float | None) -> float | None:
    """A size the log printed, or None when it cannot be one (inf, nan, absurdly large)."""
    if x is None or not math.isfinite(x) or abs(x) > _MAX_GIB:
        return None
    return x


def _sample(s: MemorySample) -> MemorySample:
    return replace(s, allocated_gib=_r(s.allocated_gib), reserved_gib=_r(s.reserved_gib),
                   max_allocated_gib=_r(s.max_allocated_gib), max_reserved_gib=_r(s.max_reserved_gib))


# ------------------------------------------------------------------ finding hits

def _scan_notes(found: MarkerScan) -> tuple[Msg, ...]:
    notes = [msg("crash.note.repeats", marker=_ANCHOR_WORDS.get(m, m.decode()),
                 count=found.dropped[m] + 2 * found.kept_each_end, keep=found.kept_each_end)
             if found.dropped[m] is not None else
             msg("crash.note.repeats_many", marker=_ANCHOR_WORDS.get(m, m.decode()), more=2 * found.kept_each_end,
                 keep=found.kept_each_end)
             for m in sorted(found.dropped)]
    if found.everywhere:
        notes.append(coverage(found, _ANCHOR_WORDS))
    return tuple(notes)


def _checks(events: tuple[CrashEvent, ...]) -> tuple[Msg, ...]:
    """What to look at outside the log: a kill's cause is in the kernel's log, not the run's."""
    if any(e.kind == "host_oom" and e.confidence == "likely" for e in events):
        return (msg("crash.check.host_kill"),)
    return ()


def _evidence(src: LogSource, h: _Hit) -> Evidence | None:
    if h.cue is None or h.phase is None:
        return None
    offset, text, source = h.cue
    text = " ".join(text.split())
    return Evidence(line=src.line_number(offset), text=text[:200] + ("…" if len(text) > 200 else ""), source=source)


# A Python exception line, bare or with a rank prefix already cleaned off: "RuntimeError: ...".
_PY_ERROR = lazy_re(r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception)\b(?::|\s*$)")
KILL_LOOKAHEAD_LINES = 30
KILL_LOOKBACK_LINES = 80


def _launcher_kill_stands(src: LogSource, h: _Hit) -> bool:
    """DeepSpeed's `Killing subprocess` alone is a host-RAM kill only when no return code follows
    (that line decides) and no Python error came before (the launcher was cleaning up after it).
    The launcher prints one return code per failure (deepspeed/launcher/launch.py sigkill_handler): one
    quoted above (an issue's title) that is not -9 says the child died of something else."""
    for _s, _e, raw in src.lines_after(h.end, KILL_LOOKAHEAD_LINES):
        # the handler's error line is the one that carries the code (launch.py sigkill_handler: `{cmd} exits with
        # return code = N` after the argv list); cut before its code, the child's fate is not in the paste
        if "exits with return code" in raw or "sigkill_handler]" in raw and "[ERROR]" in raw:
            return False
    for _s, _e, raw in src.lines_before(h.start, KILL_LOOKBACK_LINES):
        t = F.clean(raw).text
        if TRACEBACK_HEAD.search(t) or _PY_ERROR.search(t) or _C_ASSERT.search(t):
            return False
        rc = _RETURN_CODE.search(t)
        if rc and rc.group(1) != "-9":
            return False
    return True


# An issue template's section for what the reporter wanted, as GitHub's default bug report names it ("**Expected
# behavior** A clear and concise description of what you expected to happen.", .github/ISSUE_TEMPLATE/bug_report.md)
# and issue forms print it (`### Expected Behavior`): an error-shaped line there is a wish (a proposed message), not
# what the run printed. Only the grammar's guesses are dropped; an allocator's own words stay a failure anywhere.
_SECTION_HEAD = lazy_re(r"^\s*(?:#{1,6}\s+|\*\*)(?P<title>[^#*\n]{1,60}?)(?:\*\*)?\s*:?\s*$")
_EXPECTED = lazy_re(r"^(?:expected|desired|proposed)\b", re.I)
SECTION_LOOKBACK_LINES = 60


def _in_expected_section(src: LogSource, h: _Hit) -> bool:
    for _s, _e, raw in src.lines_before(h.start, SECTION_LOOKBACK_LINES):
        m = _SECTION_HEAD.match(raw)
        if m and not _TITLE_LINE.match(raw):
            return bool(_EXPECTED.match(m.group("title").strip()))
    return False


_TITLE_LINE = lazy_re(r"^# ")        # an issue's title heads the whole paste, not a section of it


_RETURN_CODE = lazy_re(r"exits with return code = (-?\d+)", needs=("exits with return code",))
# a C/C++ assert() that aborted the child: glibc's __assert_fail prints "file:line: function: Assertion `expr' failed."
# (assert/assert.c), so the launcher was cleaning up after an abort, not after a kill
_C_ASSERT = lazy_re(r"Assertion `.*' failed\.", needs=("Assertion `",))


def _read_hits(src: LogSource, offsets: list[int]) -> list[_Hit]:
    hits: list[_Hit] = []
    consumed_until = -1
    last_start = -1
    for pos in offsets:
        if pos <= consumed_until:
            continue
        start, end = src.line_span(pos)
        if start == last_start:
            continue
        last_start = start
        hit = _read_hit(src, pos, start, end)
        if hit is not None:
            hits.append(hit)
            consumed_until = hit.end
    return hits


def _read_hit(src: LogSource, pos: int, start: int, end: int) -> _Hit | None:
    """The failure message on the line at `start` (joined with the lines it wraps onto), or None."""
    raw = src.text(start, end)
    needle = src.text(pos, min(end, pos + 8)) or "\n"
    cl = F.clean_segment(raw, needle[:4])
    text = cl.text
    if F.LOOKALIKE.search(text) and not ("out of memory" in text and "OutOfResources" not in text):
        return None
    if _RAISE.search(text):
        return None                    # source code quoting the message it raises (vLLM's `raise ValueError("No available memory ...`)
    read = _read_message(src, end, cl.rank, text)
    if read is None:
        return None
    parsed, text, msg_end = read
    rank = cl.rank
    if rank is None and parsed.extra.get("rank"):
        rank = int(parsed.extra["rank"])
    return _Hit(start, msg_end, parsed, rank, text.strip(), at=pos)


def _read_message(src: LogSource, end: int, rank: int | None, text: str) -> tuple[F.Parsed, str, int] | None:
    """(what the message says, its whole text, where it ends): a cut message joined with the lines after
    it, a headless or class-only one read for what is left, a torch message completed by its wrap."""
    parsed = F.parse_message(text)
    msg_end = end
    if parsed is None and _CUT.search(text):
        joined = _better_joined(src, end, rank, text)   # "Resource exhausted: Out" / "of memory while trying ..."
        if joined is not None:
            parsed, text, msg_end = joined
    if parsed is None:
        parsed = F.parse_headless(text)
    if parsed is None:
        parsed = F.parse_class_only(text)
        if parsed is not None and parsed.kind == "cuda_oom":
            # the full message may follow on the next lines (IPython header, garbled ranks)
            joined = _better_joined(src, end, rank, text)
            if joined is not None and joined[0].kind != "host_oom":
                parsed, text, msg_end = joined
    elif parsed.kind in ("cuda_oom", "hip_oom", "npu_oom", "xpu_oom") and _incomplete(text):
        parsed, text, msg_end = _completed(src, end, rank, (parsed, text, end))
    return None if parsed is None else (parsed, text, msg_end)


def _better_joined(src: LogSource, end: int, rank: int | None, text: str) -> tuple[F.Parsed, str, int] | None:
    nxt = _join_following(src, end, rank, text)
    better = F.parse_message(nxt[0]) if nxt else None
    return (better, nxt[0], nxt[1]) if better is not None and nxt is not None else None


def _completed(src: LogSource, end: int, rank: int | None, best: tuple[F.Parsed, str, int]) -> tuple[F.Parsed, str, int]:
    """A torch message whose clauses stop early, joined with the lines its wrap put them on (by a space,
    by nothing, or line by line), whichever reads the most numbers."""
    text = best[1]
    for joiner in (" ", "", None):
        nxt = _join_following(src, end, rank, text, joiner)
        if nxt:
            p2 = F.parse_message(nxt[0])
            if p2 is not None and p2.fields > best[0].fields:
                best = (p2, nxt[0], nxt[1])
    return best


_RAISE = lazy_re(r"^\s*(?:-+>\s*\d+\s+)?raise [\w.]+\(", needs=("raise ",))
# A line that stops in the middle of a failure message (a hard wrap, a narrow terminal).
_CUT = lazy_re(r"(?:\b[Oo]ut|\bof|\b[Mm]emory|exhausted:?|allocate|Tried to|Out of)\s*$|"
               r"DefaultCPUAllocator: (?!.*\bbytes\b).*$")     # "... can't allocate memory: you" / "tried to allocate N bytes"


def _incomplete(text: str) -> bool:
    """A torch message whose clauses stop early (wrapped or cut)."""
    if "out of memory" not in text:
        return False
    if F.F_FRACTION.search(text):
        return "Requested" not in text       # its figures follow on lines of their own
    if F.F02_HEAD.search(text):
        return not F.F02.search(text)
    if "Tried to allocate" not in text:
        return text.rstrip().endswith(("memory", "memory."))   # bare 'CUDA out of memory.' may wrap
    return not ("reserved by PyTorch but unallocated" in text or "See documentation" in text
                or "PYTORCH_" in text or "max_split_size_mb" in text)


_NEW_RECORD = ("Traceback", "File \"", "During handling", "The above exception", "[rank", "[default", "  File")


def _join_following(src: LogSource, end: int, rank: int | None, text: str, joiner: str | None = " ") -> tuple[str, int] | None:
    """The message on the hit's line joined with the lines that continue it, and where they end.

    `joiner` goes between the lines; None joins them as printed: a space where the wrap fell on one
    (the next line starts with a blank, or the line before ends with one), none inside a word
    (`this process has` / ` 22.10 GiB` and `1.80 GiB i` / `s reserved` in one message)."""
    joined = text.rstrip()
    lines = 1
    blank_before = False
    last_end = end
    for s, e, raw in src.lines_after(end, JOIN_LINES * 2):
        cl = F.clean(raw)
        if rank is not None and cl.rank is not None and cl.rank != rank:
            continue                   # another rank's line interleaved in the middle
        t = cl.text.strip()
        if not t:
            continue                   # double-spaced paste
        if t.startswith(_NEW_RECORD) or is_frame(t) or TRACEBACK_HEAD.search(t):
            break
        if joiner is None:
            joined += (" " if blank_before or cl.text[:1].isspace() else "") + t
            blank_before = raw.rstrip("\r\n")[-1:].isspace()
        else:
            joined += joiner + t
        lines += 1
        last_end = e
        if lines > JOIN_LINES:
            break
        if not _incomplete(joined):
            return joined, last_end
    if lines == 1:
        return None
    return joined, last_end


# ------------------------------------------------------------------ line numbers

def _number_lines(src: LogSource, hits: list[_Hit]) -> None:
    src.prefetch(h.start for h in hits)         # every stretch counted once, long ones by wc side by side
    for h in sorted(hits, key=lambda h: h.start):
        h.line = src.line_number(h.start)


def _lines_total(src: LogSource, hits: list[_Hit]) -> int | None:
    n = src.line_number(src.size) - 1
    return n + (0 if src.mm[src.size - 1:src.size] == b"\n" else 1)


# ------------------------------------------------------------------ phase

LINE_CUE_LINES = 40                # log lines read back from a traceback (or a message) for a progress cue
_FRAME_SPLIT = lazy_re(r'(?= File ")', needs=(' File "',))
# CPython's frame header (traceback.py StackSummary.format: `  File "{}", line {}, in {}`), anywhere on a line
_GLUED_FRAME = lazy_re(r'File "[^"]+", line \d+, in ', needs=('File "',))


def _phase(src: LogSource, h: _Hit) -> tuple | None:
    """(phase, byte offset of the evidence line, its text, source) or None; sources in phase.py's order."""
    if h.parsed.extra.get("save_clone"):
        return "save", h.start, h.message, "message"
    if h.parsed.extra.get("likely"):
        return _kill_phase(src, h)
    return (_special_form_phase(src, h) or _traceback_phase(src, h) or _lexical(src, h)
            or _excerpt_frames(src, h) or _prose(src, h))


def _frame_runs(lines, rank: int | None) -> list[list[tuple[int, str]]]:
    """The runs of traceback lines (a frame header and the source and carets under it, as is_frame and
    looks_like_code read them) among `lines`, in the order given; another rank's lines are skipped."""
    runs: list[list[tuple[int, str]]] = []
    cur: list[tuple[int, str]] = []
    for s, _e, raw in lines:
        cl = F.clean(raw)
        if rank is not None and cl.rank is not None and cl.rank != rank:
            continue
        if is_frame(cl.text) or cur and looks_like_code(cl.text):
            cur.append((s, cl.text))
            continue
        if cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return runs


def _excerpt_frames(src: LogSource, h: _Hit) -> tuple | None:
    """Last, when nothing near the message named the phase: every traceback of the excerpt, wherever a paste put it
    (a sentence reporting the failure thirty lines above its traceback, a reply quoting the frames under prose, the
    stack printed again after other output), the run of frames nearest to the message first and, at equal distance,
    the one above it (CPython prints the stack before the message: traceback.py TracebackException.format). Each run
    is read as frame_phase reads a traceback; forward's words after the message count only under an issue's title,
    as _after_phase reads them (another report's frames may follow)."""
    above = [run for run in _frame_runs(src.lines_before(h.start, TRACEBACK_LINES), h.rank)]
    below = _frame_runs(src.lines_after(h.end, TRACEBACK_LINES), h.rank)
    order = sorted([(d, 0, run[::-1]) for d, run in enumerate(above)] + [(d, 1, run) for d, run in enumerate(below)],
                   key=lambda c: (c[0], c[1]))
    titled = _stands_over(h.message)
    for _d, side, run in order:
        found = _run_phase([t for _, t in run])
        if found is None or found[0] == "forward" and side == 1 and not titled:
            continue
        return found[0], run[found[1]][0], run[found[1]][1], "frame"
    return None


def _run_phase(texts: list[str]) -> tuple[str, int] | None:
    """(phase, index) of one run of traceback lines: its call sites (phase.frame_phase), else the words of its frames
    (phase.lexical_phase), as the traceback right above a message is read (_traceback_phase, then _lexical)."""
    found = frame_phase(texts)
    if found is None:
        lex = lexical_phase(texts)
        found = (lex[0], lex[1]) if lex else None
    return found


PROSE_LINES = 12                   # lines read either side of a message for the reporter's words


_LOG_MARKS = frozenset(":|[]{}=")


def _is_sentence(text: str) -> bool:
    """A reporter's sentence, as _SENTENCE reads one (eight or more words, none of a log line's marks), by counting:
    any line near a message may be read here, and a long one must not cost the regex's backtracking."""
    return len(text) <= 500 and not _LOG_MARKS.intersection(text) and len(text.split()) >= 8


def _prose(src: LogSource, h: _Hit) -> tuple | None:
    """Last of all, when nothing the tools printed named the phase: the reporter's own words, an issue's title quoting
    the failure and the sentences around it (`CUDA out of memory when saving the model`), the nearest first and, at
    equal distance, the one above. Only a title or a sentence counts (phase.prose_phase's grammar), not a log line."""
    own = h.message
    if _HEADING.search(own) or _is_sentence(own):
        found = prose_phase(own)
        if found:
            return found, h.start, own.strip()[:200], "prose"
    above = list(src.lines_before(h.start, PROSE_LINES))      # nearest first
    below = list(src.lines_after(h.end, PROSE_LINES))
    for d in range(max(len(above), len(below))):
        for side in (above, below):
            if d >= len(side):
                continue
            s, _e, raw = side[d]
            text = F.clean(raw).text
            if not (_HEADING.search(text) or _is_sentence(text)):
                continue
            found = prose_phase(text)
            if found:
                return found, s, text.strip()[:200], "prose"
    return None


def _lexical(src: LogSource, h: _Hit) -> tuple | None:
    """No cue named the phase: the words of the traceback around the message (phase.lexical_phase), the
    frames above it first (the raise's own stack), then the frames a paste printed after it."""
    block, _head = _frames_above(src, h)
    found = lexical_phase([t for _, t in block]) if block else None
    if found is not None:
        return found[0], block[found[1]][0], block[found[1]][1], "frame"
    after: list[tuple[int, str]] = []
    for n, (s, _e, raw) in enumerate(src.lines_after(h.end, TRACEBACK_LINES)):
        cl = F.clean(raw)
        if h.rank is not None and cl.rank is not None and cl.rank != h.rank:
            continue
        again = F.parse_message(cl.text)
        if again is not None and again.kind == h.parsed.kind and not after:
            continue                         # the same failure raised again (IPython's `OutOfMemoryError  Traceback`)
        code = looks_like_code(cl.text)
        if after and not code or again is not None:
            break                            # the traceback ended, or the next failure's own lines begin
        if code:
            after.append((s, cl.text))
        elif n >= AFTER_LINES:
            break                            # prose between a title and its traceback, not a whole log
    # a traceback's frames, not the user's code quoted after the message (a training loop's `loss.backward()`)
    found = lexical_phase([t for _, t in after]) if any(is_frame(t) for _, t in after) else None
    # forward's words after the message may be another report's frames (pytest's long form after its summary
    # line), as _after_phase reads them; under an issue's title (or a sentence announcing it) the traceback is its own
    if found is not None and (found[0] != "forward" or _stands_over(h.message)):
        return found[0], after[found[1]][0], after[found[1]][1], "frame"
    return None


def _special_form_phase(src: LogSource, h: _Hit) -> tuple | None:
    """The phase of a message in a form that places its cue elsewhere: an IPython header (the frames
    follow the class name), an issue's title, a traceback that lost its newlines on the message's line."""
    if h.parsed.fields == 0 and "Traceback" in h.message:
        found = _phase_forward(src, h)       # IPython header: the frames follow the class name
        if found:
            return found
    if _HEADING.search(h.message):
        # a Markdown heading quoting the failure (an issue's title): the log pasted under it is the same
        # failure's, so its traceback counts wherever it starts and whatever step it names
        after = _after_phase(src, h, TRACEBACK_LINES, step_frames=True)
        if after and after[4]:
            return after[:3] + ("frame",)
        # no traceback under it, only the run's log: its last lines are the nearest to the failure, as for a kill
        # quoted as a title (the log is pasted up to where the run stopped); the reporter's sentences around the
        # log are not the run's output
        under = [(s, t) for s, _e, raw in src.lines_after(h.end, KILL_LOOKBACK_LINES)
                 for t in (before_launcher(F.clean(raw).text),) if not _SENTENCE.search(t)]
        under.reverse()
        found = line_phase([t for _, t in under])
        if found:
            return found[0], under[found[1]][0], under[found[1]][1], "progress"
        if after:
            return after[:3] + ("progress",)
    own = F.clean(src.text(h.start, h.at)).text if h.at > h.start else ""
    head_here = TRACEBACK_HEAD.search(own)
    # a traceback that lost its newlines, on the message's own line: its `Traceback` header, or (a paste that began
    # below the header, in an inline code span) two or more frame headers before the message
    glued_from = head_here.end() if head_here else 0 if len(_GLUED_FRAME.findall(own)) >= 2 else None
    if glued_from is not None:
        pieces = [p for p in _FRAME_SPLIT.split(own[glued_from:]) if p.strip()]
        glued = frame_phase(pieces)
        if glued:
            return glued[0], h.start, pieces[glued[1]], "frame"
    return None


# a reporter's sentence: eight or more words and none of the marks a log line carries (a level's or a field's colon,
# a bar's pipe, brackets, braces, an equals sign)
_SENTENCE = lazy_re(r"^(?=(?:[^:|\[\]{}=]*\s){7})[^:|\[\]{}=]+$")


def _traceback_phase(src: LogSource, h: _Hit) -> tuple | None:
    """The phase from the traceback above the message, the cue printed after it, or the lines before."""
    block, head = _frames_above(src, h)
    found = frame_phase([t for _, t in block]) if block else None
    after = _after_phase(src, h)
    if found:
        phase, i = found
        # the failure's own report after it is nearer than its caller's frame; or it names the job the failed call
        # ran in (the A1111 web UI's `*** Error completing request` of a txt2img job under a layer's forward frames):
        # an outer phase encloses the step its frames show, as in one traceback (phase.frame_phase)
        if after is not None and not after[4] and (after[3] <= len(block) - i or phase in STEP and after[0] in OUTER):
            return after[:3] + ("progress",)
        return phase, block[i][0], block[i][1], "frame"
    if h.parsed.kind == "vllm_cache":
        # the engine sizes its cache while it starts; SGLang's request pool is filled batch by batch while it serves
        return ("generate" if h.parsed.extra.get("serving") else "load"), h.start, h.message, "message"
    return _lines_phase(src, h, block, head, after)


def _lines_phase(src: LogSource, h: _Hit, block: list[tuple[int, str]], head: tuple[int, str] | None,
                 after: tuple | None) -> tuple | None:
    """No frame says it: what the run printed before the traceback (or after the message), nearest
    first, then the message's own words."""
    before: list[tuple[int, str]] = []
    if head is not None and head[1].strip():
        before.append(head)                  # "...0/30 [00:00<?, ?it/s]Traceback" glued to a bar
    start = head[0] if head is not None else (block[0][0] if block else h.start)
    for s, _e, raw in src.lines_before(start, LINE_CUE_LINES):
        cl = F.clean(raw)
        if h.rank is not None and cl.rank is not None and cl.rank != h.rank:
            continue
        before.append((s, cl.text))
    found = line_phase([t for _, t in before])
    if after is not None and (found is None or after[3] <= found[1] + 1):
        return after[:3] + ("frame" if after[4] else "progress",)
    said = message_phase(h.message)
    if found and not (found[0] == "train" and said):
        # a message that names its phase ("Error while evaluating ...") is more precise than the loss
        # lines that precede any evaluation or save
        phase, i = found
        return phase, before[i][0], before[i][1], "progress"
    if said:
        return said, h.start, h.message, "message"
    # nothing before it: the loop's bar, closed after the error report (phase.bar_after); under an issue's title the
    # lines after it are the log the title stands over, which _special_form_phase has read
    if not _HEADING.search(h.message):
        under = [(s, F.clean(raw).text) for s, _e, raw in src.lines_after(h.end, AFTER_LINES)]
        bar = bar_after([t for _, t in under])
        if bar:
            return bar[0], under[bar[1]][0], under[bar[1]][1], "progress"
    return None


def _frames_above(src: LogSource, h: _Hit) -> tuple[list[tuple[int, str]], tuple[int, str] | None]:
    """The traceback printed above a message (outermost first) and its `Traceback` header line, if any."""
    walked: list[tuple[int, str]] = []       # nearest first
    head: tuple[int, str] | None = None
    for s, _e, raw in src.lines_before(h.start, TRACEBACK_LINES):
        cl = F.clean(raw)
        if h.rank is not None and cl.rank is not None and cl.rank != h.rank:
            continue
        t = cl.text
        m = TRACEBACK_HEAD.search(t)
        if m:
            head = (s, t[:m.start()])
            rest = t[m.end():].lstrip(":").strip()
            if rest:                         # a traceback pasted onto one line
                walked.append((s, rest))
            break
        walked.append((s, t))
        if not t.strip() and len(walked) > 200 and not any(is_frame(x) for _, x in walked[-50:]):
            break
    block = walked[::-1] if head is not None else _trim_to_frames(walked[::-1]) or _fragment(walked)
    return block, head


AFTER_LINES = 12                   # lines read after a message for the cue printed after it
_HEADING = lazy_re(r"^#{1,6} ", needs=("# ",))
# A reporter's sentence that quotes the failure and ends with a colon (`and now I get `CUDA out of memory` error:`, `I got
# the CUDA error: out of memory right in the second epoch:`) announces what is pasted under it, as a title stands over
# its thread: the traceback below is that failure's. Four words at least, so a log's own `... out of memory:` head of
# a report is not one.
_ANNOUNCES = lazy_re(r"^(?:\S+\s+){3,}\S*:[\s`*]*$")


def _stands_over(message: str) -> bool:
    """The message heads the paste under it: an issue's title, or a sentence that announces it with a colon."""
    return bool(_HEADING.search(message) or _ANNOUNCES.search(message))


def _after_phase(src: LogSource, h: _Hit, lines: int = AFTER_LINES, step_frames: bool = False) -> tuple | None:
    """The cue printed after the message, nearest first: a library's own report of the failed call
    (llama.cpp's `llama_model_load: error loading model`), TensorFlow's node name, or a traceback
    printed after the message; (phase, offset, text, distance in lines, is_frame) or None."""
    frames: list[tuple[int, str]] = []
    held: tuple | None = None
    for n, (s, _e, raw) in enumerate(src.lines_after(h.end, lines), start=1):
        cl = F.clean(raw)
        if h.rank is not None and cl.rank is not None and cl.rank != h.rank:
            continue
        t = cl.text
        if not t.strip():
            continue
        again = F.parse_message(t)
        if again is not None:
            if again.kind != h.parsed.kind:
                break                         # the next failure's own lines
            found = frame_phase([x for _, x in frames]) if frames else None
            if found and held is None:        # the frames between are the traceback of its raise (torch 0.x's
                phase, i = found              # THCudaCheck warning, then the RuntimeError of the same call):
                held = (phase, frames[i][0], frames[i][1], len(frames), True)    # unless a nearer report follows
            frames = []                       # the same failure raised again (TF logs the op, then raises) ...
            named = taxonomy_line(t)          # ... or reported by its caller (llama_model_load: ...)
            if named is not None:
                return named, s, t, n, False
            continue
        if is_frame(t) or frames and looks_like_code(t):     # the source line's indent, after any rank prefix
            frames.append((s, t))
            continue
        if frames:
            break
        if TRACEBACK_HEAD.search(t):
            continue
        named = taxonomy_line(t)
        if named is not None:
            return named, s, t, n, False
    lua = any(LUA_FRAME.search(t) for _, t in frames)
    if lua:
        frames.reverse()                      # outermost first, as frame_phase reads them
    found = frame_phase([t for _, t in frames]) if frames else None
    if found and (found[0] != "forward" or step_frames or lua):
        # forward's words (train, model, _call_impl) are in every training traceback: after the message
        # they may be another report's (pytest's long form after its summary line), so they do not count;
        # a Lua traceback is always the failure's own, printed under its error
        phase, i = found
        return phase, frames[i][0], frames[i][1], len(frames), True
    return held


def _kill_phase(src: LogSource, h: _Hit) -> tuple | None:
    """A kill prints no traceback of the run: the phase is what the run printed last before it (a bar
    the kill is glued to, `Loading checkpoint from ...optim_states.pt`, DeepSpeed's ZeRO set-up)."""
    said = message_phase(h.message)
    if said:
        # the report names the process that died (`DataLoader worker (pid N) is killed by signal: Bus
        # error.`): its memory was spent on that process's work, wherever the main process was when the
        # SIGCHLD handler raised (torch/utils/data/_utils/signal_handling.py runs between any two lines)
        return said, h.start, h.message, "message"
    if _HEADING.search(h.message):
        # a kill quoted as an issue's title: the log pasted under it is the run that was killed, its last lines the
        # nearest to the kill (as a message's title takes its phase from the traceback under it)
        under = [(s, before_launcher(F.clean(raw).text)) for s, _e, raw in src.lines_after(h.end, KILL_LOOKBACK_LINES)]
        under.reverse()
        found = line_phase([t for _, t in under]) or banner_phase([t for _, t in under])
        if found:
            return found[0], under[found[1]][0], under[found[1]][1], "progress"
    before: list[tuple[int, str]] = []
    if h.at > h.start:
        glued = before_launcher(src.text(h.start, h.end))
        if not LEVEL_ONLY.search(glued):      # rich's and logging's level column before the launcher's words
            before.append((h.start, glued))
    own = len(before)                         # the kill's own line: a bar glued to it, never a banner
    for s, _e, raw in src.lines_before(h.start, KILL_LOOKBACK_LINES):
        before.append((s, before_launcher(F.clean(raw).text)))   # a bar with the launcher's words glued after it
    found = line_phase([t for _, t in before])
    if found is None:
        banner = banner_phase([t for _, t in before[own:]])
        found = (banner[0], banner[1] + own) if banner else None
    if found:
        phase, i = found
        return phase, before[i][0], before[i][1], "progress"
    return None


def _phase_forward(src: LogSource, h: _Hit) -> tuple | None:
    block: list[tuple[int, str]] = []
    for s, _e, raw in src.lines_after(h.end, TRACEBACK_LINES):
        cl = F.clean(raw)
        if h.rank is not None and cl.rank is not None and cl.rank != h.rank:
            continue
        if "out of memory" in cl.text or F.F28.search(cl.text):
            break
        block.append((s, cl.text))
    found = frame_phase([t for _, t in block])
    if found:
        phase, i = found
        return phase, block[i][0], block[i][1], "frame"
    return None


# A source line of a traceback fragment: a call, a return or an assignment (not a YAML or table line).
_BOX_BORDER = lazy_re(r"^[\s╭╮╰╯─│]+$")
# A piece of a rich traceback box: its source arrow, a `path.py:123` header, or a header wrapped to `0 in func`.
_RICH_PIECE = lazy_re(r"❱|\S\.py:\d+\b|^\s*\d* ?in [\w<>.]+\s*$")
# rich's code rows under a frame header (rich/syntax.py with line_numbers: `❱ 629 │ ...` on the line that ran, the
# context rows around it numbered alone), as they stand once the box's left edge is cut
_RICH_CODE = lazy_re(r"^\s*(?:❱\s*)?\d+\s*│", needs=("│",))
# The last row of rich's frame header over them: rich/traceback.py _render_stack prints `path:line in name`, wraps it
# at the box's width, then a blank row and the code; a header whose path rows were cut keeps the name alone (`in name`)
_RICH_HEADER_TAIL = lazy_re(r"^\s*(?:in\s+)?[A-Za-z_<][\w<>.]*\s*$")
_SOURCE_SHAPE = lazy_re(r"[\w\])]\s*\(|\breturn\b|\w\s*=\s*\S|^\s*\^+\s*$")
_CARETS = lazy_re(r"^\s*[\^~]+\s*$")
# an assignment from a call, `name = f(...)` or `a, b = obj.f(...)`, or a `return f(...)`, alone on its line (no prose
# before it): CPython's traceback prints the frame's source line stripped and indented by four (traceback.py
# FrameSummary.line); a paste that kept two or more of those spaces is code to _fragment already, one or none is this
_BARE_STATEMENT = lazy_re(r"^[ \t]?`?(?:[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[^=\s]|return\s+[A-Za-z_]).*[\w\])]\s*\(.*$")


def _fragment(walked: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The source lines pasted right above a message without their frame headers (or inside a rich
    box whose header was cut), outermost first."""
    block: list[tuple[int, str]] = []
    blanks = 0
    under_carets = False
    rich_code = False                        # the row below (nearer the message) is one of rich's code rows
    for s, t in walked:
        if not t.strip() or _BOX_BORDER.search(t):
            blanks += not t.strip()
            if blanks > 1:
                break
            continue
        if _RICH_CODE.search(t):
            rich_code, blanks = True, 0
            block.append((s, t))
            continue
        if rich_code and _RICH_HEADER_TAIL.search(t):
            # the frame header over rich's code rows, its path rows cut: the name is the frame's function
            rich_code, blanks = False, 0
            block.append((s, t))
            continue
        rich_code = False
        # Python 3.11+ underlines the failing expression of a frame's source line with carets
        # (traceback.py): the line above them is source however much of its indent the paste kept.
        source_above = under_carets and _SOURCE_SHAPE.search(t)
        if not block and not blanks and _BARE_STATEMENT.search(t):
            # the one source line right above the message, pasted without its indent (or opening an inline code
            # span, `denom = ...`): the statement that raised, as a traceback prints it under its frame
            block.append((s, t.strip().lstrip("`")))
            break
        if not (source_above or _RICH_PIECE.search(t) or looks_like_code(t) and (is_frame(t) or _SOURCE_SHAPE.search(t))):
            break
        under_carets = bool(_CARETS.search(t))
        blanks = 0
        block.append((s, t))
    return block[::-1]


ROCM_LOOK_BYTES = 1 << 20


def _mentions(src: LogSource, word: bytes, at: int) -> bool:
    """Whether `word` is in the log within ROCM_LOOK_BYTES of byte `at` (the whole of a small log)."""
    lo, hi = max(0, at - ROCM_LOOK_BYTES), min(src.size, at + ROCM_LOOK_BYTES)
    return src.mm.find(word, lo, hi) >= 0


def _innermost_file(src: LogSource, h: _Hit) -> str:
    for _s, _e, raw in src.lines_before(h.start, 6):
        t = F.clean(raw).text
        if 'File "' in t or ".py" in t:
            return t
    return ""


def _trim_to_frames(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Without a 'Traceback' header keep only the contiguous frame block nearest the message."""
    idx = [i for i, (_, t) in enumerate(lines) if is_frame(t)]
    if not idx:
        return []
    first = idx[0]
    for i in range(len(idx) - 1, 0, -1):
        if idx[i] - idx[i - 1] > 4:
            first = idx[i]
            break
    return lines[first:]


# ------------------------------------------------------------------ merging repeats

def _known_phase(src: LogSource, h: _Hit) -> str | None:
    if not h.phase_known:
        found = _phase(src, h)
        h.phase, h.cue = (found[0], found[1:]) if found else (None, None)
        h.phase_known = True
    return h.phase


def _merge(hits: list[_Hit], phase) -> list[_Hit]:
    out: list[_Hit] = []
    seen: set[tuple] = set()
    last_kill: _Hit | None = None
    for h in sorted(hits, key=lambda h: h.start):
        key = (h.parsed.kind, h.rank, h.message)
        if key in seen:
            continue                # the same rank's message printed again (elastic error summary)
        folded = _fold_unnamed(out, h, phase)
        if folded:
            seen.add(key)
            if folded == "later" and h.parsed.kind == "host_oom":
                last_kill = h
            continue
        if h.parsed.kind == "host_oom" and last_kill is not None and h.line - last_kill.line <= 60:
            at = next((i for i, x in enumerate(out) if x is last_kill), None)
            if at is not None and last_kill.parsed.fields == 0 and h.parsed.fields > 0 and not h.parsed.extra.get("likely"):
                # the allocator's words quoted bare (a title), then its message with the request: one failure, its figures
                out[at] = last_kill = h if phase(h) else _with_phase(h, last_kill)
                continue
            if phase(last_kill) is None and phase(h) is not None:
                _with_phase(last_kill, h)      # the launcher line glued to the run's last output shows where
            if "local_rank" in h.parsed.extra:
                last_kill.parsed.extra.setdefault("local_rank", h.parsed.extra["local_rank"])
            if not h.parsed.extra.get("likely"):
                last_kill.parsed.extra.pop("likely", None)     # the kernel's own line states the cause
            continue                # one kill reported by several launcher lines
        prev = out[-1] if out else None
        if prev is not None and h.parsed.fields == 0 and prev.parsed.kind == h.parsed.kind and prev.rank == h.rank \
                and h.line - prev.line <= 30:
            if prev.parsed.device is None:
                prev.parsed.device = h.parsed.device   # TF's op error names the device its BFC line did not
            if phase(prev) is None and phase(h) is not None:
                _with_phase(prev, h)   # an issue's title, then the same failure under the statement that raised it
            continue                # NCCL and similar print one failure on several lines
        seen.add(key)
        if h.parsed.kind == "host_oom":
            last_kill = h
        # a class-only line right before a full message of the same rank is the same failure
        if out and out[-1].parsed.fields == 0 and out[-1].rank == h.rank and h.parsed.kind == out[-1].parsed.kind \
                and h.line - out[-1].line <= TRACEBACK_LINES and h.parsed.fields > 0:
            out[-1] = h if phase(h) else _with_phase(h, out[-1])
            continue
        out.append(h)
    return out


def _fold_unnamed(out: list[_Hit], h: _Hit, phase) -> str | None:
    """Fold `h` into the failure just above it when one of the two names no device (one rank, within 30 lines,
    different kinds, no launcher's kill): "later" when `h` names the memory of the unnamed guess above it, "earlier"
    when `h` is an unnamed report of the failure above it; None when they are not one failure."""
    prev = out[-1] if out else None
    if prev is None or prev.parsed.kind == h.parsed.kind or prev.rank != h.rank or h.line - prev.line > 30:
        return None
    if prev.parsed.extra.get("unnamed") and not h.parsed.extra.get("likely"):
        # the grammar's guess named no device (an issue's title, `# [Bug]: Out of Memory`); the same failure's
        # report under it names the memory that ran out (`Out of Memory: Your device ran out of RAM.`)
        out[-1] = h if phase(h) else _with_phase(h, prev)
        return "later"
    if h.parsed.extra.get("unnamed") and h.parsed.fields == 0 and not prev.parsed.extra.get("likely"):
        # an app's report naming no device after the allocator's own message (ComfyUI's `Got an OOM, unloading all
        # loaded models.` under torch's `HIP out of memory. ...`)
        if phase(prev) is None and phase(h) is not None:
            _with_phase(prev, h)
        return "earlier"
    return None


def _with_phase(h: _Hit, donor: _Hit) -> _Hit:
    h.phase, h.cue = donor.phase, donor.cue
    h.phase_known = True
    return h


# ------------------------------------------------------------------ context

def _context(src: LogSource, hits: list[_Hit]) -> Context:
    ctx = Context()
    crash_at = min((h.start for h in hits), default=src.size)
    primary = _primary_hit(hits)
    if primary is not None:
        crash_at = primary.start
    if src.size <= CONTEXT_WHOLE_BYTES:
        regions = [(0, src.size)]
    else:
        head = min(src.size, CONTEXT_HEAD_BYTES)
        started = src.mm.find(TRAINING_STARTED, 0, head)
        regions = merge_ranges([(0, head if started < 0 else started),
                                (max(0, crash_at - CONTEXT_BEFORE_BYTES), crash_at + 4096),
                                (max(0, src.size - CONTEXT_TAIL_BYTES), src.size)])
    for lo, hi in regions:
        if lo > 0:
            # A region starts at its line's start, looked for within LINE_START_BACK_BYTES: in a log of
            # giant lines (a 150 MB JSON dump, tqdm redraws glued by CRs) an unbounded rfind read the whole
            # file back to byte 0. Ctx.feed reads a line's first 16 KiB only, so the next whole line will do.
            nl = src.mm.rfind(b"\n", max(0, lo - LINE_START_BACK_BYTES), lo)
            if nl < 0:
                nl = src.mm.find(b"\n", lo, hi)
                if nl < 0:
                    continue                 # all inside one giant line, whose start the head region read
            lo = nl + 1
        _feed_region(src, ctx, lo, hi, src.line_number(lo), crash_at)
    # only the latest progress matters: the last stretch before the crash
    span = PROGRESS_BYTES
    while True:
        lo = max(0, crash_at - span)
        if ctx.feed_progress(F_decode(src.mm[lo:crash_at])) or lo == 0 or span >= PROGRESS_MAX_BYTES:
            break
        span *= 4
    return ctx


def _feed_region(src: LogSource, ctx: Context, lo: int, hi: int, line_no: int, crash_at: int) -> None:
    chunk = 4 << 20
    pos = lo
    while pos < hi:
        stop = min(hi, pos + chunk)
        if stop < src.size:
            nl = src.mm.rfind(b"\n", pos, stop)
            stop = nl + 1 if nl > pos else min(src.size, stop)
        block = src.mm[pos:stop]
        text = F_decode(block)
        offset = pos
        for line in text.split("\n"):
            ctx.feed(line if len(line) <= 16384 else line[:16384], line_no, offset < crash_at)
            line_no += 1
            offset += len(line) + 1          # approximate for non-ASCII; only compared with crash_at
        pos = stop


def F_decode(block: bytes) -> str:
    from oomdoctor.crashlog.source import decode
    return decode(block)


def _primary_hit(hits: list[_Hit]) -> _Hit | None:
    with_numbers = [h for h in hits if h.parsed.capacity_gib is not None]
    if with_numbers:
        return with_numbers[0]
    # as CrashReport.primary: a failure the log states before the grammar's guess or an unexplained kill
    stated = [h for h in hits if not (h.parsed.extra.get("likely") or h.parsed.extra.get("grammar"))]
    return (stated or hits)[0] if hits else None


# ------------------------------------------------------------------ diagnoses

FRAGMENTATION_SHARE = 0.20
FRAGMENTATION_GIB = 2.0
OTHER_PROCESS_GIB = 0.5
LONG_RUN_STEPS = 10


def diagnose(report: CrashReport) -> tuple[str, ...]:
    """Plain labels for what the facts point to; order: most specific first."""
    out: list[str] = []
    ev = report.primary
    gpu_events = [e for e in report.events if e.kind in GPU_KINDS]
    if any(e.kind == "host_oom" for e in report.events):
        out.append("host_ram")
    if ev is not None:
        unalloc = ev.reserved_unallocated_gib
        reserved = ev.reserved_gib
        if unalloc is not None and (unalloc >= FRAGMENTATION_GIB or (reserved and unalloc >= FRAGMENTATION_SHARE * reserved)):
            out.append("fragmentation")
        if any((e.other_processes_gib or 0.0) >= OTHER_PROCESS_GIB for e in report.events):
            out.append("other_process")
    phases = [e.phase for e in (gpu_events or report.events)]
    if "eval" in phases:
        out.append("eval")
    if "save" in phases:
        out.append("save")
    if gpu_events and report.step is not None and report.step >= LONG_RUN_STEPS and not {"eval", "save"} & set(phases):
        out.append("long_samples")
    if ev is not None and ev.tried_gib and ev.capacity_gib and ev.tried_gib > ev.capacity_gib:
        out.append("request_exceeds_gpu")
    return tuple(out)
