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
per anchor, side by side, each split across cores on a big log when the machine has four or more;
`-n` gives line numbers where hits are read) and in-process bytes.find (no grep on the
system, or small logs where starting a process costs more than it saves). Both give the same hits;
any surprise from grep (a foreign grep, a changed file, a line over its memory cap) falls back to the
in-process pass. Timings in benchmarks/logscan.py.
"""
from __future__ import annotations

import os
import shutil
import sys
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
SPLIT_MIN_BYTES = 256 << 20         # a numbered anchor pass over a log this big is split across cores ...
SPLIT_PARTS: int | None = None      # ... into this many parts (None: half the cores, at most MAX_SPLIT_PARTS)
MAX_SPLIT_PARTS = 8
PIPE_BYTES = 1 << 20               # pipe size asked for a part's feed (the Linux default maximum)
SENTINEL = b"\x00oomdoctor: end of part \x00"   # ends a part fed to grep; the needle follows it
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
    try:
        if not anchors or src.size <= FULL_SCAN_BYTES:
            kept, method = _finish(src, _start(src, (markers,), keep, use_grep), keep)
            return _collect(kept, keep, method)
        return _tiered(src, markers, keep, anchors, around, narrower or {}, use_grep)
    except BaseException:
        _kill_children()            # Ctrl-C, SIGTERM, SIGHUP: no grep left reading the log
        raise


_CHILDREN: set = set()              # grep processes started and not yet waited for


def _kill_children() -> None:
    for proc in list(_CHILDREN):
        try:
            proc.kill()
            proc.wait(timeout=5)
        except Exception:           # already gone, or not ours to wait for
            pass
        _CHILDREN.discard(proc)


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
        hits = [off for off, _line in k.items()]
        for pos in hits[:AROUND_KEEP] + hits[-AROUND_KEEP:]:
            windows.append((pos - AROUND_BYTES, pos + AROUND_BYTES))
    windows = _subtract(merge_ranges(windows), edges)
    for m in rest:
        if m in whole:
            continue
        kept[m] = _Kept(keep)
        for pos in sorted(set(found[m]) | set(_find_in(src, m, windows))):
            kept[m].add((pos, None))
    found_scan = _collect(kept, keep, method)
    found_scan.everywhere = anchors + whole
    found_scan.tracebacks = seen
    return found_scan


def coverage(found: MarkerScan, words: dict[bytes, str]):
    """What a tiered scan searched where, as a words Msg (None after a full scan); `words` names the strings."""
    if not found.everywhere:
        return None
    from oomdoctor.facts import msg

    names = ", ".join(repr(words.get(m, m.decode())) for m in found.everywhere)
    which = (msg("crash.note.each_traceback") if found.tracebacks <= 2 * AROUND_KEEP else
             msg("crash.note.some_tracebacks", keep=AROUND_KEEP, total=found.tracebacks))
    return msg("crash.note.big_log", names=names, head=_size(HEAD_SCAN_BYTES), tail=_size(TAIL_SCAN_BYTES),
               around=_size(AROUND_BYTES), which=which)


def _start(src: LogSource, groups: tuple[tuple[bytes, ...], ...], keep: int, use_grep: bool,
           unnumbered: tuple[bytes, ...] = ()) -> dict:
    """One whole-file pass per group of needles: a grep process each when `use_grep` (all running at
    once), else left for _finish to do in-process."""
    runs = {}
    parts = _split_parts() if src.size >= SPLIT_MIN_BYTES else 1
    for needles in groups:
        numbered = not any(n in unnumbered for n in needles)
        if not use_grep:
            runs[needles] = None
        elif parts > 1 and len(needles) == 1:
            runs[needles] = (_SplitPass.start(src, needles, keep, parts, numbered)
                             or _GrepPass.start(src, needles, keep, numbered))
        else:
            runs[needles] = _GrepPass.start(src, needles, keep, numbered)
    return runs


def _split_parts() -> int:
    """How many greps share one anchor's pass: half the cores this process may use (the two anchors
    run side by side), on Linux only (the pipes are filled with os.sendfile). Two cores: no split;
    splitting there measured no faster (benchmarks/logscan.py)."""
    if SPLIT_PARTS is not None:
        return SPLIT_PARTS
    if not sys.platform.startswith("linux") or not hasattr(os, "sendfile"):
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_SPLIT_PARTS, cores // 2))


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
                    k.add((lo + pos, None))
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

    A pass over part of the file, [lo, hi), reads it from a pipe that a thread fills with
    os.sendfile; offsets and line numbers then count from lo. When the part stops short of the end,
    a sentinel line holding the needle follows it, so grep's own number for that line tells how many
    lines the part has (see _SplitPass).
    """

    def __init__(self, src: LogSource, needles: tuple[bytes, ...], keep: int, proc, numbered: bool,
                 lo: int, hi: int, feeder) -> None:
        import threading

        self.src, self.needles, self.keep, self.proc, self.numbered = src, needles, keep, proc, numbered
        self.lo, self.hi, self.feeder = lo, hi, feeder
        self.kept: dict[bytes, _Kept] | None = None
        self.lines: int | None = None           # newlines in [lo, hi), from the sentinel's line number
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, src: LogSource, needles: tuple[bytes, ...], keep: int, numbered: bool = True,
              lo: int = 0, hi: int | None = None) -> "_GrepPass | None":
        """Start grep on [lo, hi) of the file (the whole file by default); `numbered`: with line
        numbers (grep -n costs about a third more)."""
        grep = shutil.which("grep")
        if grep is None:
            return None
        hi = src.size if hi is None else hi
        whole = lo == 0 and hi == src.size
        cmd = [grep, "-a", "-b", "-o", "-F", "--color=never"] + (["-n"] if numbered else [])
        for m in needles:
            cmd += ["-e", m.decode("ascii")]
        cmd += ["--", src.path] if whole else []
        env = {k: v for k, v in os.environ.items() if not k.startswith("GREP_")}
        env["LC_ALL"] = "C"             # bytes, not characters: no UTF-8 decoding cost, no encoding errors
        import subprocess  # here, not at the top: only big logs start a process

        read_end = write_end = None
        if not whole:
            read_end, write_end = os.pipe()
            _widen_pipe(write_end)
        try:
            proc = subprocess.Popen(_with_memory_cap(cmd), stdin=subprocess.DEVNULL if whole else read_end,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            _CHILDREN.add(proc)
        except OSError:
            if not whole:
                os.close(read_end)
                os.close(write_end)
            return None
        feeder = None
        if not whole:
            import threading

            os.close(read_end)
            sentinel = SENTINEL + needles[0] + b"\n" if numbered and hi < src.size else b""
            feeder = threading.Thread(target=_feed, args=(src.path, lo, hi, sentinel, write_end), daemon=True)
            feeder.start()
        return cls(src, needles, keep, proc, numbered, lo, hi, feeder)

    def _read(self) -> None:
        kept = {m: _Kept(self.keep) for m in self.needles}
        single = kept[self.needles[0]] if len(self.needles) == 1 else None
        end = self.hi - self.lo                 # rows at or past this are the sentinel
        tail = b""
        ok = True
        stream = self.proc.stdout
        while ok:
            chunk = stream.read(READ_CHUNK_BYTES)
            if not chunk:
                break
            rows = (tail + chunk).split(b"\n")
            tail = rows.pop()
            sentinel = self.numbered and self.hi < self.src.size
            if single is not None and len(single.first) >= self.keep and (not sentinel or len(rows) > 1):
                # only the last `keep` can still be kept: no parsing (the sentinel is the very last row)
                last = rows.pop() if sentinel else None
                single.add_raw(rows)
                rows = [last] if last is not None else []
            for row in rows:
                try:
                    off, line, text = _row(row, self.numbered)
                    if off >= end:
                        self.lines = line - 1 if line is not None else None
                        continue
                    kept[text].add((off + self.lo, line))
                except (ValueError, KeyError):
                    ok = False
                    break
        if ok and tail:
            ok = False                          # output cut mid-row
        if ok:
            try:
                for k in kept.values():
                    k.parse_raw(self.numbered, self.lo)
            except (ValueError, KeyError):
                ok = False
        if ok and self.numbered and self.hi < self.src.size and self.lines is None:
            ok = False                          # the sentinel never came: the part's line count is unknown
        if not ok:
            self.proc.kill()
            stream.read()
        self.kept = kept if ok else None

    def result(self, line_base: int = 0) -> "dict[bytes, _Kept] | None":
        """The kept hits, checked against the map; line numbers shifted by `line_base` (the newlines
        before lo) and left as checkpoints."""
        self.thread.join()
        rc = self.proc.wait()
        _CHILDREN.discard(self.proc)
        self.proc.stdout.close()
        if self.feeder is not None:
            self.feeder.join()
        kept = self.kept
        if kept is None or rc not in (0, 1):    # 2: grep's own error, e.g. a line longer than its memory cap
            return None
        for m, k in kept.items():
            if line_base:
                k.shift_lines(line_base)
            for off, line in k.items():
                if self.src.mm[off:off + len(m)] != m:
                    return None
                if line is not None:
                    self.src.checkpoint(off, line - 1)
        return kept


class _SplitPass:
    """One needle over the whole file as several greps side by side, each on a part ending at a line
    end; when numbered, a part's line count comes from its sentinel, so every hit is numbered as one
    pass would number it. Used on big logs when the machine has the cores."""

    def __init__(self, passes: list[_GrepPass]) -> None:
        self.passes = passes

    @classmethod
    def start(cls, src: LogSource, needles: tuple[bytes, ...], keep: int, parts: int,
              numbered: bool = True) -> "_SplitPass | None":
        cuts = [0]
        for i in range(1, parts):
            nl = src.mm.find(b"\n", max(cuts[-1], src.size * i // parts))
            if nl < 0 or nl + 1 >= src.size:
                break
            cuts.append(nl + 1)
        cuts.append(src.size)
        passes = []
        for lo, hi in zip(cuts, cuts[1:]):
            run = _GrepPass.start(src, needles, keep, numbered, lo, hi)
            if run is None:
                for started in passes:
                    started.proc.kill()
                    started.result()
                return None
            passes.append(run)
        return cls(passes)

    def result(self) -> "dict[bytes, _Kept] | None":
        merged: dict[bytes, _Kept] = {}
        base = 0
        failed = False
        for run in self.passes:
            kept = run.result(base)
            if kept is None or failed:
                failed = True
                continue
            base += run.lines or 0
            for m, k in kept.items():
                merged.setdefault(m, _Kept(k.keep)).absorb(k)
        return None if failed else merged


def _widen_pipe(fd: int) -> None:
    """A 1 MiB pipe instead of 64 KiB: grep then reads in big blocks, with fewer wake-ups (Linux)."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


def _feed(path: str, lo: int, hi: int, sentinel: bytes, fd: int) -> None:
    """Copy [lo, hi) of the file into a pipe (os.sendfile: no copy through Python), then the sentinel."""
    try:
        with open(path, "rb") as fh:
            pos = lo
            while pos < hi:
                sent = os.sendfile(fd, fh.fileno(), pos, min(hi - pos, 1 << 30))
                if sent <= 0:
                    break
                pos += sent
        if sentinel:
            os.write(fd, sentinel)
    except OSError:
        pass                                    # grep was killed, or the pipe broke: result() says so
    finally:
        os.close(fd)


def _row(row: bytes, numbered: bool) -> tuple[int, int | None, bytes]:
    """One grep output row, `line:offset:marker` (or `offset:marker`): (offset, line or None, marker)."""
    if numbered:
        line_s, off_s, text = row.split(b":", 2)
        return int(off_s), int(line_s), text
    off_s, text = row.split(b":", 1)
    return int(off_s), None, text


def _with_memory_cap(cmd: list[str]) -> list[str]:
    """`cmd` run under an address-space cap, so one giant line cannot take the machine's RAM (grep
    holds a whole line); grep then fails and the in-process scan, which cuts lines, takes over.

    The cap is set by `ulimit -v` in a /bin/sh that then execs grep, not by a preexec_fn: this runs
    while reader threads are alive, and forking a threaded Python to run Python code in the child can
    deadlock."""
    if os.name != "posix" or not os.path.exists("/bin/sh"):
        return cmd
    return ["/bin/sh", "-c", 'ulimit -v "$0" 2>/dev/null; exec "$@"', str(GREP_MEMORY_BYTES // 1024)] + cmd


# ------------------------------------------------------------------ keeping hits

class _Kept:
    """The first `keep` and the last `keep` hits of one marker, and how many there were in all.
    A hit is (byte offset, line number or None when the search gave none)."""

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

    def parse_raw(self, numbered: bool, lo: int = 0) -> None:
        """The rows add_raw held, as (offset, line) hits; offsets count from `lo`."""
        def hit(x):
            if not isinstance(x, bytes):
                return x
            off, line, _text = _row(x, numbered)
            return off + lo, line
        if any(isinstance(x, bytes) for x in self.last):
            self.last = deque(map(hit, self.last), maxlen=self.keep)

    def shift_lines(self, base: int) -> None:
        """Line numbers counted from a part's start made absolute."""
        def shift(x):
            return (x[0], x[1] + base) if x[1] is not None else x
        self.first = [shift(x) for x in self.first]
        self.last = deque((shift(x) for x in self.last), maxlen=self.keep)

    def absorb(self, other: "_Kept") -> None:
        """Add the hits of the part that follows: its first ones, its dropped middle, its last ones."""
        for item in other.first:
            self.add(item)
        self.total += other.dropped
        for item in other.last:
            self.add(item)

    def items(self) -> list:
        return self.first + list(self.last)

    @property
    def dropped(self) -> int:
        return self.total - len(self.first) - len(self.last)


def _collect(kept: dict[bytes, _Kept], keep: int, method: str) -> MarkerScan:
    offsets: set[int] = set()
    for k in kept.values():
        offsets.update(off for off, _line in k.items())
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
