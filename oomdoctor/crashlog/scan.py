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

Hits are capped before they are collected: of each marker only the first and the last `keep` are
kept, and a marker on every line costs no more than a rare one. A tiered anchor is searched by
`grep -m keep` (which stops at the keep-th matching line) and, when it stopped early, backwards from
the end of the file in-process until the last `keep` are found; its total is then "more than
2 * keep", not counted. Hits carry byte offsets (`grep -b`); only the traceback pass numbers its lines
(`-n`), and the few lines reported are numbered from the nearest of those (source.py: each stretch
counted once, long ones by `wc -l`).

Two engines do the whole-file passes: the system grep (`grep -a -b -o -F`, LC_ALL=C; one process
per anchor, side by side) and in-process bytes.find / bytes.count (no grep on the system, or small
logs where starting a process costs more than it saves). Both give the same hits; any surprise from
grep (a foreign grep, a changed file, a line over its memory cap) falls back to the in-process pass.
Timings in benchmarks/logscan.py.
"""
from __future__ import annotations

import os
import shutil
from collections import deque

from oomdoctor.crashlog.source import LogSource
from oomdoctor.interrupts import deferred
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
BACKWARD_BLOCK_BYTES = 4 << 20      # the backward search for the last hits reads this much at a time
RESTART_WITHIN_S = 0.1              # a dense anchor found this soon restarts the traceback pass unnumbered


@record(frozen=False)
class MarkerScan:
    """Where the marker strings occur in the log, and how they were searched."""

    offsets: list[int]                  # sorted byte offsets of kept marker hits
    dropped: dict                       # marker -> hits left out (beyond the first and last `keep`); None: not counted
    kept_each_end: int
    method: str                         # "grep" | "python": who did the whole-file passes
    everywhere: tuple[bytes, ...] = ()  # tiered: the strings searched in every byte (else: every marker)
    tracebacks: int | None = 0          # tiered: tracebacks seen (None: more than 2 * AROUND_KEEP, not counted)


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
    use_grep = engine == "grep" or (engine == "auto" and src.size >= GREP_MIN_BYTES and not _long_lines(src))
    try:
        if not anchors or src.size <= FULL_SCAN_BYTES:
            kept, method = _finish(src, {markers: _GrepPass.start(src, markers, keep) if use_grep else None}, keep)
            return _collect(kept, keep, method)
        return _tiered(src, markers, keep, anchors, around, narrower or {}, use_grep)
    except BaseException:
        _kill_children()            # Ctrl-C, SIGTERM, SIGHUP: no grep or wc left reading the log
        raise


LINE_SAMPLE_BYTES = 1 << 20         # the start, middle and end of a log are sampled for line length ...
LONG_LINE_BYTES = 256 << 10         # ... and fewer newlines than one per this many bytes means giant lines


def _long_lines(src: LogSource) -> bool:
    """A log of giant lines (tqdm redraws glued by carriage returns, a JSON dump on one line): grep must
    hold each line whole and finds nothing faster than the in-process search, which cuts lines."""
    for lo in (0, src.size // 2, max(0, src.size - LINE_SAMPLE_BYTES)):
        block = src.mm[lo:lo + LINE_SAMPLE_BYTES]
        if len(block) >= LONG_LINE_BYTES and block.count(b"\n") * LONG_LINE_BYTES < len(block):
            return True
    return False


def _tiered(src: LogSource, markers: tuple[bytes, ...], keep: int, anchors: tuple[bytes, ...],
            around: tuple[bytes, ...], narrower: dict[bytes, tuple[bytes, ...]], use_grep: bool) -> MarkerScan:
    rest = tuple(m for m in markers if not any(a in m for a in anchors))
    # One capped grep per anchor, side by side (several needles in one grep cost several times more).
    # The traceback pass, the cheaper one (a long needle), numbers its lines (-n): every failure of a
    # Python program sits a few lines after its traceback, so its line is counted from there, and the
    # memory pass, the critical path, stays unnumbered (measured: 10-15% less wall time than numbering it).
    import time

    started = time.monotonic()
    runs = {(a,): _GrepPass.start(src, (a,), keep, cap=keep, numbered=a in around) if use_grep else None
            for a in anchors}
    # While they read the file, search the head and the tail here.
    edges = merge_ranges([(0, HEAD_SCAN_BYTES), (src.size - TAIL_SCAN_BYTES, src.size)])
    found = {m: _find_in(src, m, edges) for m in rest}
    plain = {n: r for n, r in runs.items() if n[0] not in around}
    kept, method = _finish(src, plain, keep)
    dense = any(kept[a].dropped != 0 for (a,) in plain)
    if dense and use_grep and time.monotonic() - started < RESTART_WITHIN_S:
        # A marker on every line, seen at once: its narrower passes come next, and numbering the
        # traceback pass would only add to them; the newline count numbers what is found instead.
        for needles in runs.keys() - plain.keys():
            run = runs[needles]
            if run is not None:
                run.stop()
                runs[needles] = _GrepPass.start(src, needles, keep, cap=keep)
    more, how = _finish(src, {n: r for n, r in runs.items() if n not in plain}, keep)
    kept.update(more)
    method = how if how == "python" else method
    whole = tuple(m for a in anchors if kept[a].dropped != 0 for m in narrower.get(a, ()))
    if whole and use_grep:
        # a dense anchor: its last hits came from the backward search, unnumbered; the file's newline
        # count (read beside the narrower pass) numbers them back from the end
        src.count_all_in_background()
    if whole:
        # One grep for the narrower markers together: they are rare (the failures themselves), so a
        # second process would only add a pass. Should they be dense too, each gets its capped grep.
        both = _GrepPass.start(src, whole, keep, cap=keep) if use_grep and len(whole) > 1 else None
        together = both.result() if both is not None else None
        if together is None:
            together, how = _finish(src, {(m,): _GrepPass.start(src, (m,), keep, cap=keep) if use_grep else None
                                          for m in whole}, keep)
            method = how if how == "python" else method
        kept.update(together)
    windows: list[tuple[int, int]] = []
    seen: int | None = 0
    for a in around:                    # these hits only place windows; they are not failures
        k = kept.pop(a)
        seen = None if seen is None or k.total is None else seen + k.total
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
    if found.tracebacks is not None and found.tracebacks <= 2 * AROUND_KEEP:
        which = msg("crash.note.each_traceback")
    elif found.tracebacks is None:
        which = msg("crash.note.many_tracebacks", keep=AROUND_KEEP, total=2 * AROUND_KEEP)
    else:
        which = msg("crash.note.some_tracebacks", keep=AROUND_KEEP, total=found.tracebacks)
    return msg("crash.note.big_log", names=names, head=_size(HEAD_SCAN_BYTES), tail=_size(TAIL_SCAN_BYTES),
               around=_size(AROUND_BYTES), which=which)


def _finish(src: LogSource, runs: dict, keep: int) -> tuple[dict[bytes, _Kept], str]:
    """Wait for the passes started; any that did not start or failed is done in-process."""
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


_CHILDREN: set = set()              # grep and wc processes started and not yet waited for


def _kill_children() -> None:
    for proc in list(_CHILDREN):
        try:
            proc.kill()
            proc.wait(timeout=5)
        except Exception:           # already gone, or not ours to wait for
            pass
        _CHILDREN.discard(proc)


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


def _python_pass(src: LogSource, needles: tuple[bytes, ...], keep: int) -> dict[bytes, _Kept]:
    """Read the file window by window into one reused buffer (one copy from the page cache, no page
    faults on the map). Per needle a window costs one bytes.count (C speed); hits are looked up only
    while the first `keep` are not all found, and the last `keep` are found afterwards by a backward
    search, so a marker on every line costs what a rare one does. The window's newlines are counted
    while hot, leaving a line-number checkpoint at each window's end."""
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
                # hits starting before `body` end by body + len - 1: count them, look up only the first ones
                count = buf.count(needle, 0, min(n, body + len(needle) - 1))
                if not count:
                    continue
                k = kept[needle]
                if len(k.first) < keep:
                    pos = buf.find(needle, 0, n)
                    while 0 <= pos < body and len(k.first) < keep:
                        k.first.append((lo + pos, None))
                        pos = buf.find(needle, pos + len(needle), n)
                k.total = (k.total or 0) + count
            newlines += buf.count(b"\n", 0, body)
            src.checkpoint(hi, newlines)
            lo = hi
    view.release()
    for needle, k in kept.items():
        want = min(keep, (k.total or 0) - len(k.first))
        if want > 0:
            last, _complete = _find_backward(src, needle, k.first[-1][0] + len(needle), want)
            k.last = deque(((off, None) for off in last), maxlen=keep)
    return kept


def _find_backward(src: LogSource, needle: bytes, stop: int, want: int) -> tuple[list[int], bool]:
    """Up to `want` hits starting at or after byte `stop`, searched from the end of the file backwards,
    in file order; and whether they are all the hits there (True) or more were left (False)."""
    found: list[int] = []
    hi = src.size
    while hi > stop:
        lo = max(stop, hi - BACKWARD_BLOCK_BYTES)
        end = hi + len(needle) - 1 if hi < src.size else hi      # a hit starting before hi may run past it
        pos = src.mm.rfind(needle, lo, end)
        while pos >= 0:
            if len(found) == want:
                return found[::-1], False
            found.append(pos)
            pos = src.mm.rfind(needle, lo, pos)
        src.release(lo, hi)
        hi = lo
    return found[::-1], True


# ------------------------------------------------------------------ grep

class _GrepPass:
    """One `grep -a -b -o -F [-m cap] -e M1 -e M2 ...` process; each output row is `offset:marker`.

    GNU grep finds one fixed string at about page-cache speed; several at once (Aho-Corasick) cost
    several times more, so the tiered scan starts one process per anchor. With `cap`, grep stops at
    the cap-th matching line and the last hits are searched backwards in-process (result()). The
    output is read by a thread as it comes, in chunks; past the first `keep` rows of one needle the
    rows are held unparsed, the last `keep` of them. Every kept hit is checked against the map, so a
    grep that prints something else is never trusted: result() returns None and the caller searches
    in-process.
    """

    def __init__(self, src: LogSource, needles: tuple[bytes, ...], keep: int, proc, cap: int | None,
                 numbered: bool) -> None:
        import threading

        self.src, self.needles, self.keep, self.proc, self.cap = src, needles, keep, proc, cap
        self.numbered = numbered
        self.kept: dict[bytes, _Kept] | None = None
        self.lines = 0                          # output rows (a capped grep stops at `cap` matching lines)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @classmethod
    def start(cls, src: LogSource, needles: tuple[bytes, ...], keep: int, cap: int | None = None,
              numbered: bool = False) -> _GrepPass | None:
        """Start grep on the file; `cap`: stop after that many matching lines; `numbered`: with line
        numbers (-n costs about half a pass more)."""
        grep = shutil.which("grep")
        if grep is None:
            return None
        cmd = [grep, "-a", "-b", "-o", "-F", "--color=never"] + (["-m", str(cap)] if cap else []) + \
            (["-n"] if numbered else [])
        for m in needles:
            cmd += ["-e", os.fsdecode(m)]   # argv is bytes again (os.fsencode): a UTF-8 marker stays its bytes
        cmd += ["--", src.path]
        env = {k: v for k, v in os.environ.items() if not k.startswith("GREP_")}
        env["LC_ALL"] = "C"             # bytes, not characters: no UTF-8 decoding cost, no encoding errors
        import subprocess  # here, not at the top: only big logs start a process

        try:
            with deferred():            # an interrupt inside Popen, after the fork, would leave a grep unkilled
                proc = subprocess.Popen(_with_memory_cap(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
                _CHILDREN.add(proc)
        except OSError:
            return None
        return cls(src, needles, keep, proc, cap, numbered)

    def stop(self) -> None:
        """Kill this grep and wait for its reader (its result is then None)."""
        self.proc.kill()
        self.thread.join()
        self.proc.wait()
        _CHILDREN.discard(self.proc)
        self.proc.stdout.close()

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
            self.lines += len(rows)
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

    def result(self) -> dict[bytes, _Kept] | None:
        """The kept hits, checked against the map; for a capped grep that stopped early, completed by
        the backward search for the last hits."""
        self.thread.join()
        rc = self.proc.wait()
        _CHILDREN.discard(self.proc)
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
        if self.cap and self.lines >= self.cap:
            if len(kept) > 1:
                return None                     # several needles, capped: the caller searches each on its own
            # grep may have stopped at its cap: the hits after the last one it printed, from the end
            (needle, k), = kept.items()
            stop = max(off for off, _line in k.items()) + len(needle)
            last, complete = _find_backward(self.src, needle, stop, self.keep)
            if complete:
                for off in last:
                    k.add((off, None))
            else:
                k.cut((off, None) for off in last)
        return kept


def _row(row: bytes, numbered: bool = False) -> tuple[int, int | None, bytes]:
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
    """The first `keep` and the last `keep` hits of one marker, and how many there were in all (None
    when a capped search did not count them). A hit is (byte offset, line number or None)."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.first: list = []
        self.last: deque = deque(maxlen=keep)
        self.total: int | None = 0

    def add(self, item) -> None:
        self.total = (self.total or 0) + 1
        if len(self.first) < self.keep:
            self.first.append(item)
        else:
            self.last.append(item)

    def add_raw(self, rows: list[bytes]) -> None:
        """Unparsed grep rows past the first `keep`: held as they are, parsed by parse_raw()."""
        self.total = (self.total or 0) + len(rows)
        self.last.extend(rows)

    def parse_raw(self, numbered: bool = False) -> None:
        """The rows add_raw held, as (offset, line or None) hits."""
        if any(isinstance(x, bytes) for x in self.last):
            self.last = deque((_row(x, numbered)[:2] if isinstance(x, bytes) else x for x in self.last), maxlen=self.keep)

    def cut(self, last) -> None:
        """The last hits of a search that stopped counting: between them and the first ones, an unknown number."""
        self.last = deque(last, maxlen=self.keep)
        self.total = None

    def items(self) -> list:
        return self.first + list(self.last)

    @property
    def dropped(self) -> int | None:
        """Hits left out: 0 when all are kept, None when some are and nobody counted them."""
        return None if self.total is None else self.total - len(self.first) - len(self.last)


def _collect(kept: dict[bytes, _Kept], keep: int, method: str) -> MarkerScan:
    offsets: set[int] = set()
    for k in kept.values():
        offsets.update(off for off, _line in k.items())
    return MarkerScan(sorted(offsets), {m: k.dropped for m, k in kept.items() if k.dropped != 0}, keep, method)


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
