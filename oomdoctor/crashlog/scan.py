"""Find where the marker strings sit in a log: the only stage that reads the whole file.

Two policies, chosen by size:

- whole (logs up to FULL_SCAN_BYTES): every marker is searched in every byte.
- tiered (bigger logs): the anchors are searched in every byte; they are the few strings that every
  memory-failure line of a GPU, accelerator or allocator ("memory"/"Memory") and every Python
  exception ("Traceback (most recent call last)") contains. The other markers (launcher and shell
  kill lines, exit codes, cuBLAS/NCCL/XLA codes, std::bad_alloc) are searched in the first
  HEAD_SCAN_BYTES, the last TAIL_SCAN_BYTES and AROUND_BYTES either side of each traceback: a kill
  ends its run, so it sits at the end of the log or next to the launcher's traceback. What this
  leaves out is said by coverage().

Two engines do the whole-file passes: the system grep (`grep -a -b -o -F`, LC_ALL=C; one process
per anchor, side by side; `-n` gives line numbers where hits are read) and in-process bytes.find (no grep on the
system, or small logs where starting a process costs more than it saves). Both give the same hits;
any surprise from grep (a foreign grep, a changed file, a line over its memory cap) falls back to the
in-process pass. Timings in benchmarks/logscan.py.
"""
from __future__ import annotations

import os
import shutil
from collections import deque

from oomdoctor.crashlog.source import LogSource
from oomdoctor.records import record

SCAN_ENGINE = "auto"                # auto | grep | python: who does the whole-file passes (tests force each)
GREP_MIN_BYTES = 4 << 20            # below this an in-process scan is quicker than starting grep
GREP_MEMORY_BYTES = 256 << 20       # address-space cap of a grep child (it holds one whole line)
FULL_SCAN_BYTES = 32 << 20          # logs up to this size have every marker searched in every byte
HEAD_SCAN_BYTES = 256 << 10         # tiered: every marker is searched in the first ...
TAIL_SCAN_BYTES = 1 << 20           # ... and the last bytes of the log,
AROUND_BYTES = 256 << 10            # and this far either side of a traceback
AROUND_KEEP = 16                    # around the first and the last this many tracebacks
SCAN_WINDOW_BYTES = 1 << 20         # in-process searches walk the file in windows of this size (cache-sized)
READ_CHUNK_BYTES = 1 << 20          # grep's output is read this much at a time


@record(frozen=False)
class MarkerScan:
    """Where the marker strings occur in the log, and how they were searched."""

    offsets: list[int]                  # sorted byte offsets of kept marker hits
    dropped: dict[bytes, int]           # marker -> hits left out (beyond the first and last `keep`)
    kept_each_end: int
    method: str                         # "grep" | "python": who did the whole-file passes
    everywhere: tuple[bytes, ...] = ()  # tiered: the strings searched in every byte (else: every marker)
    tracebacks: int = 0                 # tiered: tracebacks seen (each gets a window, up to AROUND_KEEP each end)


def scan(src: LogSource, markers: tuple[bytes, ...], keep: int, anchors: tuple[bytes, ...] = (),
         around: tuple[bytes, ...] = (), narrower: dict[bytes, tuple[bytes, ...]] | None = None,
         engine: str | None = None) -> MarkerScan:
    """Offsets of the markers in `src`, at most `keep` first and `keep` last per marker.

    With `anchors` and a log over FULL_SCAN_BYTES the scan is tiered (see the module text): `around`
    names the anchors whose hits get a window searched for every marker (and are not returned);
    hits of markers that hold an anchor are found through the anchor; and when an anchor occurs more
    often than its first and last `keep` can hold, its `narrower` markers are searched in every byte
    as well, so one failure among thousands of mentions of memory is not lost. Leaves line-number
    checkpoints in `src` as it goes.
    """
    engine = engine or SCAN_ENGINE
    use_grep = engine == "grep" or (engine == "auto" and src.size >= GREP_MIN_BYTES)
    if not anchors or src.size <= FULL_SCAN_BYTES:
        kept, method = _finish(src, _start(src, (markers,), keep, use_grep), keep)
        return _collect(kept, keep, method)
    return _tiered(src, markers, keep, anchors, around, narrower or {}, use_grep)


def _tiered(src: LogSource, markers: tuple[bytes, ...], keep: int, anchors: tuple[bytes, ...],
            around: tuple[bytes, ...], narrower: dict[bytes, tuple[bytes, ...]], use_grep: bool) -> MarkerScan:
    rest = tuple(m for m in markers if not any(a in m for a in anchors))
    # One grep per anchor, side by side; line numbers only for the anchors whose hits are read.
    runs = _start(src, tuple((a,) for a in anchors), keep, use_grep, unnumbered=around)
    # While grep reads the file, search the head and the tail here.
    edges = merge_ranges([(0, HEAD_SCAN_BYTES), (src.size - TAIL_SCAN_BYTES, src.size)])
    found = {m: _find_in(src, m, edges) for m in rest}
    kept, method = _finish(src, runs, keep)
    whole = tuple(m for a in anchors if kept[a].dropped for m in narrower.get(a, ()))
    if whole:
        more, how = _finish(src, _start(src, tuple((m,) for m in whole), keep, use_grep), keep)
        kept.update(more)
        method = how if how == "python" else method
    windows: list[tuple[int, int]] = []
    seen = 0
    for a in around:                    # these hits only place windows; they are not failures
        k = kept.pop(a)
        seen += k.total
        hits = [x[0] if isinstance(x, tuple) else x for x in k.items()]
        for pos in hits[:AROUND_KEEP] + hits[-AROUND_KEEP:]:
            windows.append((pos - AROUND_BYTES, pos + AROUND_BYTES))
    windows = _subtract(merge_ranges(windows), edges)
    for m in rest:
        if m in whole:
            continue
        kept[m] = _Kept(keep)
        for pos in sorted(set(found[m]) | set(_find_in(src, m, windows))):
            kept[m].add(pos)
    found_scan = _collect(kept, keep, method)
    found_scan.everywhere = anchors + whole
    found_scan.tracebacks = seen
    return found_scan


def coverage(found: MarkerScan, words: dict[bytes, str]) -> str:
    """What a tiered scan searched where, in words ("" after a full scan); `words` names the strings."""
    if not found.everywhere:
        return ""
    names = ", ".join(repr(words.get(m, m.decode())) for m in found.everywhere)
    which = ("each traceback" if found.tracebacks <= 2 * AROUND_KEEP else
             f"the first and the last {AROUND_KEEP} of {found.tracebacks} tracebacks")
    return (f"{names} searched in every line; the other markers in the first {_size(HEAD_SCAN_BYTES)}, "
            f"the last {_size(TAIL_SCAN_BYTES)} and {_size(AROUND_BYTES)} either side of {which}")


def _start(src: LogSource, groups: tuple[tuple[bytes, ...], ...], keep: int, use_grep: bool,
           unnumbered: tuple[bytes, ...] = ()) -> dict:
    """One whole-file pass per group of needles: a grep process each when `use_grep` (all running at
    once), else left for _finish to do in-process."""
    runs = {}
    for needles in groups:
        numbered = not any(n in unnumbered for n in needles)
        runs[needles] = _GrepPass.start(src, needles, keep, numbered) if use_grep else None
    return runs


def _finish(src: LogSource, runs: dict, keep: int) -> tuple[dict[bytes, "_Kept"], str]:
    """Wait for the passes _start began; any that did not start or failed is done in-process."""
    kept: dict[bytes, _Kept] = {}
    left: list[bytes] = []
    for needles, run in runs.items():
        got = run.result() if run is not None else None
        if got is None:
            left.extend(needles)
        else:
            kept.update(got)
    if left:                            # one in-process pass for all of them
        kept.update(_python_pass(src, tuple(left), keep))
    return kept, "python" if left else "grep"


# ------------------------------------------------------------------ in-process

def _find_in(src: LogSource, needle: bytes, ranges: list[tuple[int, int]]) -> list[int]:
    """Hits that start inside the ranges (and may run past a range's end)."""
    out: list[int] = []
    for lo, hi in ranges:
        stop = hi + len(needle) - 1
        pos = src.mm.find(needle, lo, stop)
        while pos >= 0:
            out.append(pos)
            pos = src.mm.find(needle, pos + len(needle), stop)
    return out


def _python_pass(src: LogSource, needles: tuple[bytes, ...], keep: int) -> dict[bytes, "_Kept"]:
    """Read the file window by window into one reused buffer (one copy from the page cache, no page
    faults on the map); search each window for every needle and count its newlines while hot, leaving
    a line-number checkpoint at each window's end. One bytes.find pass per needle."""
    kept = {m: _Kept(keep) for m in needles}
    overlap = max(len(m) for m in needles) - 1
    buf = bytearray(min(src.size, SCAN_WINDOW_BYTES) + overlap)
    view = memoryview(buf)
    lo = 0
    newlines = 0
    with open(src.path, "rb", buffering=0) as fh:
        while lo < src.size:
            fh.seek(lo)
            n = fh.readinto(view)
            if not n:
                break
            hi = min(src.size, lo + SCAN_WINDOW_BYTES)
            body = min(n, hi - lo)          # bytes that belong to this window; the rest is overlap
            for needle in needles:
                k = kept[needle]
                pos = buf.find(needle, 0, n)
                while 0 <= pos < body:
                    k.add(lo + pos)
                    pos = buf.find(needle, pos + len(needle), n)
            newlines += buf.count(b"\n", 0, body)
            src.checkpoint(hi, newlines)
            lo = hi
    view.release()
    return kept


# ------------------------------------------------------------------ grep

class _GrepPass:
    """One `grep -a -b -o -F [-n] -e M1 -e M2 ...` process; each output row is `[line:]offset:marker`.

    GNU grep finds one fixed string at about page-cache speed; several at once (Aho-Corasick) cost
    several times more, so the tiered scan starts one process per anchor. The output is read by a
    thread as it comes, in chunks; only the kept rows are parsed. Every kept hit is checked against
    the map, so a grep that prints something else is never trusted: result() returns None and the
    caller searches in-process.
    """

    def __init__(self, src: LogSource, needles: tuple[bytes, ...], keep: int, proc, numbered: bool) -> None:
        import threading

        self.src, self.needles, self.keep, self.proc, self.numbered = src, needles, keep, proc, numbered
        self.kept: dict[bytes, _Kept] | None = None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, src: LogSource, needles: tuple[bytes, ...], keep: int, numbered: bool = True) -> "_GrepPass | None":
        """Start grep on the whole file; `numbered`: with line numbers (grep -n costs about a third more)."""
        grep = shutil.which("grep")
        if grep is None:
            return None
        cmd = [grep, "-a", "-b", "-o", "-F", "--color=never"] + (["-n"] if numbered else [])
        for m in needles:
            cmd += ["-e", m.decode("ascii")]
        cmd += ["--", src.path]
        env = {k: v for k, v in os.environ.items() if not k.startswith("GREP_")}
        env["LC_ALL"] = "C"             # bytes, not characters: no UTF-8 decoding cost, no encoding errors
        import subprocess  # here, not at the top: only big logs start a process

        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    env=env, preexec_fn=_limit_grep_memory if os.name == "posix" else None)
        except OSError:
            return None
        return cls(src, needles, keep, proc, numbered)

    def _read(self) -> None:
        kept = {m: _Kept(self.keep) for m in self.needles}
        single = kept[self.needles[0]] if len(self.needles) == 1 else None
        tail = b""
        ok = True
        stream = self.proc.stdout
        while ok:
            chunk = stream.read(READ_CHUNK_BYTES)
            if not chunk:
                break
            rows = (tail + chunk).split(b"\n")
            tail = rows.pop()
            if single is not None and len(single.first) >= self.keep:
                single.add_raw(rows)            # only the last `keep` can still be kept: no parsing
                continue
            for row in rows:
                try:
                    off, line, text = _row(row, self.numbered)
                    kept[text].add((off, line))
                except (ValueError, KeyError):
                    ok = False
                    break
        if ok and tail:
            ok = False                          # output cut mid-row
        if ok:
            try:
                for k in kept.values():
                    k.parse_raw(self.numbered)
            except (ValueError, KeyError):
                ok = False
        if not ok:
            self.proc.kill()
            stream.read()
        self.kept = kept if ok else None

    def result(self) -> "dict[bytes, _Kept] | None":
        self.thread.join()
        rc = self.proc.wait()
        self.proc.stdout.close()
        kept = self.kept
        if kept is None or rc not in (0, 1):    # 2: grep's own error, e.g. a line longer than its memory cap
            return None
        for m, k in kept.items():
            for off, line in k.items():
                if self.src.mm[off:off + len(m)] != m:
                    return None
                if line is not None:
                    self.src.checkpoint(off, line - 1)
        return kept


def _row(row: bytes, numbered: bool) -> tuple[int, int | None, bytes]:
    """One grep output row, `line:offset:marker` (or `offset:marker`): (offset, line or None, marker)."""
    if numbered:
        line_s, off_s, text = row.split(b":", 2)
        return int(off_s), int(line_s), text
    off_s, text = row.split(b":", 1)
    return int(off_s), None, text


def _limit_grep_memory() -> None:
    """Runs in the grep child: cap its address space so one giant line cannot take the machine's RAM
    (grep holds a whole line); grep then fails and the in-process scan, which cuts lines, takes over."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = GREP_MEMORY_BYTES if hard == resource.RLIM_INFINITY else min(GREP_MEMORY_BYTES, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass


# ------------------------------------------------------------------ keeping hits

class _Kept:
    """The first `keep` and the last `keep` hits of one marker, and how many there were in all."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.first: list = []
        self.last: deque = deque(maxlen=keep)
        self.total = 0

    def add(self, item) -> None:
        self.total += 1
        if len(self.first) < self.keep:
            self.first.append(item)
        else:
            self.last.append(item)

    def add_raw(self, rows: list[bytes]) -> None:
        """Unparsed grep rows past the first `keep`: held as they are, parsed by parse_raw()."""
        self.total += len(rows)
        self.last.extend(rows)

    def parse_raw(self, numbered: bool) -> None:
        if any(isinstance(x, bytes) for x in self.last):
            rows = (_row(x, numbered)[:2] if isinstance(x, bytes) else x for x in self.last)
            self.last = deque(rows, maxlen=self.keep)

    def items(self) -> list:
        return self.first + list(self.last)

    @property
    def dropped(self) -> int:
        return self.total - len(self.first) - len(self.last)


def _collect(kept: dict[bytes, _Kept], keep: int, method: str) -> MarkerScan:
    offsets: set[int] = set()
    for k in kept.values():
        offsets.update(x[0] if isinstance(x, tuple) else x for x in k.items())
    return MarkerScan(sorted(offsets), {m: k.dropped for m, k in kept.items() if k.dropped}, keep, method)


# ------------------------------------------------------------------ byte ranges

def merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, overlapping or touching ranges joined, empty ones dropped."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted((max(0, lo), hi) for lo, hi in ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        elif hi > lo:
            out.append((lo, hi))
    return out


def _subtract(ranges: list[tuple[int, int]], taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of `ranges` outside every range of `taken` (both sorted and merged)."""
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        for tlo, thi in taken:
            if thi <= lo or tlo >= hi:
                continue
            if tlo > lo:
                out.append((lo, tlo))
            lo = max(lo, thi)
            if lo >= hi:
                break
        if lo < hi:
            out.append((lo, hi))
    return out


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"
