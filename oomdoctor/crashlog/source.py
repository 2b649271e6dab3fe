"""Open a crash log for scanning: a mapped file, with lines read on demand around byte offsets.

stdin and .gz logs are streamed into a temporary file first, so every log is scanned the same way
and memory stays bounded whatever the size.

Finding the markers is the only whole-file pass. On logs of GREP_MIN_BYTES or more it is handed to
the system grep (`grep -a -b -n -o -F -e M1 ...`, LC_ALL=C): one pass for all markers, output read
as it streams, line numbers from grep. GNU grep's multi-string search costs about 2.5 s of CPU per
GiB (measured on a busy 2-core machine), several times a single-string `grep -c`; the in-process
fallback costs one bytes.find pass per marker (about 12 s/GiB). Both give the same hits; figures in
benchmarks/logscan.py.
"""
from __future__ import annotations

import bisect
import mmap
import os
import shutil
import sys
import zlib
from collections import deque

from oomdoctor.errors import InputError
from oomdoctor.records import record

LINE_CAP_BYTES = 16 * 1024          # longer lines (a whole tqdm run glued by \r) are cut to this
COPY_CHUNK_BYTES = 1 << 20
SCAN_WINDOW_BYTES = 64 << 20       # byte searches walk the map in windows of this size
COUNT_CHUNK_BYTES = 16 << 20        # newline counting copies this much at a time (bounded RSS)
SCAN_ENGINE = "auto"                # auto | grep | python: who searches the markers (tests force each)
GREP_MIN_BYTES = 4 << 20           # below this an in-process scan is quicker than starting grep
GREP_MEMORY_BYTES = 256 << 20      # address-space cap of the grep child (it holds one whole line)
WC_MIN_BYTES = 16 << 20            # counting a longer stretch up to the end of file goes to wc -l

# Magic numbers of files people attach by mistake instead of the text log.
_BINARY_MAGIC = (b"\x7fELF", b"PK\x03\x04", b"\x89PNG", b"%PDF", b"\xff\xd8\xff", b"GIF8",
                 b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"PYTORCH", b"\x80\x02", b"\x80\x04")


class LogSource:
    """A read-only map of the log plus helpers that work in byte offsets."""

    def __init__(self, display: str, path: str, temp: bool) -> None:
        self.display = display
        self._path = path
        self._temp = temp
        self._fh = open(path, "rb")
        self.size = os.fstat(self._fh.fileno()).st_size
        self._newlines_at: dict[int, int] = {0: 0}     # byte offset -> newlines before it
        self._checkpoints: list[int] = [0]              # the keys of _newlines_at, sorted
        self.mm: mmap.mmap | bytes
        if self.size:
            self.mm = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
        else:
            self.mm = b""

    # -------------------------------------------------------------- lifetime
    def close(self) -> None:
        if isinstance(self.mm, mmap.mmap):
            self.mm.close()
        self._fh.close()
        if self._temp:
            try:
                os.unlink(self._path)
            except OSError:
                pass

    def __enter__(self) -> "LogSource":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- searching
    def scan_markers(self, markers: tuple[bytes, ...], keep: int, engine: str | None = None) -> "MarkerScan":
        """Offsets of every occurrence of every marker in the whole file, at most `keep` first and
        `keep` last per marker; also leaves newline checkpoints so hit lines are numbered cheaply.

        engine "grep" hands the search to the system grep (one pass, all markers, line numbers from
        grep -n); "python" searches in-process; None follows SCAN_ENGINE ("auto": grep for logs of
        GREP_MIN_BYTES or more when a working grep exists, else in-process). Both give the same hits
        (see tests/test_crashlog_speed.py); grep failing in any way falls back to the in-process scan.
        """
        engine = engine or SCAN_ENGINE
        if engine == "grep" or (engine == "auto" and self.size >= GREP_MIN_BYTES):
            grep = shutil.which("grep")
            if grep is not None:
                found = self._scan_grep(grep, markers, keep)
                if found is not None:
                    return found
        return self._scan_python(markers, keep)

    def _scan_python(self, markers: tuple[bytes, ...], keep: int) -> "MarkerScan":
        """Read the file window by window into one reused buffer (one copy from the page cache, no
        page faults on the map); search each window for every marker and count its newlines while hot.
        Costs one bytes.find pass per marker: about 25 passes, so this is the slow path on big logs."""
        kept = {m: _Kept(keep) for m in markers}
        overlap = max(len(m) for m in markers) - 1
        buf = bytearray(min(self.size, SCAN_WINDOW_BYTES) + overlap)
        view = memoryview(buf)
        lo = 0
        newlines = 0
        with open(self._path, "rb", buffering=0) as fh:
            while lo < self.size:
                fh.seek(lo)
                n = fh.readinto(view)
                if not n:
                    break
                hi = min(self.size, lo + SCAN_WINDOW_BYTES)
                body = min(n, hi - lo)          # bytes that belong to this window; the rest is overlap
                for needle in markers:
                    k = kept[needle]
                    pos = buf.find(needle, 0, n)
                    while 0 <= pos < body:
                        k.add(lo + pos)
                        pos = buf.find(needle, pos + len(needle), n)
                newlines += buf.count(b"\n", 0, body)
                self._checkpoint(hi, newlines)
                lo = hi
        view.release()
        return MarkerScan.of(kept, "python")

    def _scan_grep(self, grep: str, markers: tuple[bytes, ...], keep: int) -> "MarkerScan | None":
        """One `grep -a -b -n -o -F -e M1 -e M2 ...` pass: each output line is `line:offset:marker`.

        grep's multi-string search (Aho-Corasick, about 1 ns a byte) is the whole cost; its output is
        read as it comes and only the kept hits are held. Every kept hit is checked against the map,
        so a grep that prints something else (a foreign grep, a changed file) is never trusted: any
        surprise returns None and the caller scans in-process.
        """
        cmd = [grep, "-a", "-b", "-n", "-o", "-F", "--color=never"]
        for m in markers:
            cmd += ["-e", m.decode("ascii")]
        cmd += ["--", self._path]
        env = {k: v for k, v in os.environ.items() if not k.startswith("GREP_")}
        env["LC_ALL"] = "C"             # bytes, not characters: no UTF-8 decoding cost, no encoding errors
        kept = {m: _Kept(keep) for m in markers}
        bad = False
        import subprocess  # here, not at the top: only logs of GREP_MIN_BYTES or more start a process

        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    env=env, preexec_fn=_limit_grep_memory if os.name == "posix" else None)
        except OSError:
            return None
        with proc:
            assert proc.stdout is not None
            for row in proc.stdout:
                try:
                    line_s, off_s, text = row.rstrip(b"\n").split(b":", 2)
                    k = kept[text]
                    k.add((int(off_s), int(line_s)))
                except (ValueError, KeyError):
                    bad = True
                    break
            if bad:
                proc.kill()
            rc = proc.wait()
        if bad or rc not in (0, 1):     # 2: grep's own error, e.g. a line longer than its memory limit
            return None
        for m, k in kept.items():
            for off, line in k.items():
                if self.mm[off:off + len(m)] != m:
                    return None
                self._checkpoint(off, line - 1)
        return MarkerScan.of(kept, "grep")

    def release(self, lo: int, hi: int) -> None:
        """Tell the kernel we are done with these mapped pages, so RSS stays bounded on huge logs."""
        if self.size < SCAN_WINDOW_BYTES or not isinstance(self.mm, mmap.mmap) or not hasattr(self.mm, "madvise"):
            return
        page = mmap.PAGESIZE
        lo = (lo // page) * page
        length = min(hi, self.size) - lo
        if length > 0:
            try:
                self.mm.madvise(mmap.MADV_DONTNEED, lo, length)
            except (OSError, ValueError, AttributeError):
                pass

    def line_span(self, pos: int) -> tuple[int, int]:
        """Start and end (exclusive, without the newline) of the line holding byte `pos`."""
        lo = max(0, pos - LINE_CAP_BYTES)
        start = self.mm.rfind(b"\n", lo, pos) + 1
        if start == 0 and lo > 0:
            start = lo
        hi = min(self.size, pos + LINE_CAP_BYTES)
        end = self.mm.find(b"\n", pos, hi)
        if end < 0:
            end = hi
        return start, end

    def text(self, start: int, end: int) -> str:
        return decode(self.mm[start:end])

    def lines_after(self, end: int, count: int):
        """Yield (start, end, text) of up to `count` lines after the line that ends at `end`."""
        pos = end + 1
        for _ in range(count):
            if pos >= self.size:
                return
            s, e = self.line_span(pos)
            yield s, e, self.text(s, e)
            pos = e + 1

    def lines_before(self, start: int, count: int):
        """Yield (start, end, text) of up to `count` lines before the line starting at `start`, nearest first."""
        end = start - 1                      # the newline that ends the previous line
        for _ in range(count):
            if end < 0:
                return
            lo = max(0, end - LINE_CAP_BYTES)
            s = self.mm.rfind(b"\n", lo, end) + 1
            if s == 0 and lo > 0:
                s = lo
            yield s, end, self.text(s, end)
            end = s - 1

    def _checkpoint(self, offset: int, newlines: int) -> None:
        if offset not in self._newlines_at:
            bisect.insort(self._checkpoints, offset)
        self._newlines_at[offset] = newlines

    def line_number(self, offset: int) -> int:
        """1-based line of byte `offset`, counted from the nearer known checkpoint (below or above)."""
        i = bisect.bisect_right(self._checkpoints, offset)
        below = self._checkpoints[i - 1]
        above = self._checkpoints[i] if i < len(self._checkpoints) else None
        if offset == below:
            return self._newlines_at[below] + 1
        if above is not None and above - offset < offset - below:
            n = self._newlines_at[above] - self.count_newlines(offset, above)
        else:
            n = self._newlines_at[below] + self.count_newlines(below, offset)
        self._checkpoint(offset, n)
        return n + 1

    def count_newlines(self, start: int, end: int) -> int:
        """Newlines in [start, end). A long stretch that runs to the end of the file goes to `wc -l`
        (memchr speed, own process) when it exists; anything else is counted here in chunks."""
        if end >= self.size and end - start >= WC_MIN_BYTES:
            n = _wc_lines(self._path, start)
            if n is not None:
                return n
        total = 0
        pos = start
        while pos < end:
            stop = min(end, pos + COUNT_CHUNK_BYTES)
            total += self.mm[pos:stop].count(b"\n")
            self.release(pos, stop)
            pos = stop
        return total


class _Kept:
    """The first `keep` and the last `keep` items added, and how many were added in all."""

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

    def items(self) -> list:
        return self.first + list(self.last)

    @property
    def dropped(self) -> int:
        return self.total - len(self.first) - len(self.last)


@record(frozen=False)
class MarkerScan:
    """Where the marker strings occur in the log, and how they were searched."""

    offsets: list[int]                  # sorted byte offsets of kept marker hits
    dropped: dict[bytes, int]           # marker -> hits left out (beyond the first and last `keep`)
    kept_each_end: int
    method: str                         # "grep" | "python"

    @classmethod
    def of(cls, kept: dict[bytes, _Kept], method: str) -> "MarkerScan":
        offsets: set[int] = set()
        for k in kept.values():
            offsets.update(x[0] if isinstance(x, tuple) else x for x in k.items())
        keep = next(iter(kept.values())).keep if kept else 0
        return cls(sorted(offsets), {m: k.dropped for m, k in kept.items() if k.dropped}, keep, method)


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


def _wc_lines(path: str, start: int) -> int | None:
    """Newlines from byte `start` to the end of `path`, by `wc -l` reading a file already seeked there."""
    wc = shutil.which("wc")
    if wc is None:
        return None
    import subprocess

    try:
        with open(path, "rb") as fh:
            fh.seek(start)
            out = subprocess.run([wc, "-l"], stdin=fh, capture_output=True, env=dict(os.environ, LC_ALL="C"),
                                 check=False)
        if out.returncode != 0:
            return None
        return int(out.stdout.split()[0])
    except (OSError, ValueError, IndexError):
        return None


def decode(raw: bytes) -> str:
    """Text of a log slice: UTF-8 where valid, Latin-1 for stray bytes (never fails)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace")


def _spool(stream, display: str) -> str:
    """Copy a stream to a temp file in chunks; return its path."""
    import gzip
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix="oomdoctor-log-", suffix=".log")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(stream, out, COPY_CHUNK_BYTES)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as err:
        os.unlink(tmp)
        raise InputError(f"cannot read the log: {err}", display) from None
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def open_log(path: str) -> LogSource:
    """Open `path` ("-" = stdin, *.gz = gzip stream) as a LogSource, or raise InputError."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)
        src = LogSource("<stdin>", _spool(stream, "<stdin>"), temp=True)
    else:
        if not os.path.exists(path):
            raise InputError("no such file", path)
        if os.path.isdir(path):
            raise InputError("is a directory, not a log file", path)
        try:
            with open(path, "rb") as fh:
                head = fh.read(2)
        except OSError as err:
            raise InputError(f"cannot read the log: {err.strerror or err}", path) from None
        if head == b"\x1f\x8b":
            import gzip

            try:
                with gzip.open(path, "rb") as gz:
                    src = LogSource(path, _spool(gz, path), temp=True)
            except OSError as err:
                raise InputError(f"cannot read the gzip log: {err}", path) from None
        else:
            try:
                src = LogSource(path, path, temp=False)
            except OSError as err:
                raise InputError(f"cannot read the log: {err.strerror or err}", path) from None
    try:
        _check_text(src)
    except InputError:
        src.close()
        raise
    return src


def _check_text(src: LogSource) -> None:
    head = bytes(src.mm[: 1 << 16])
    if src.size == 0 or (src.size <= len(head) and not head.strip(b" \t\r\n\x00")):
        raise InputError("the log is empty", src.display)
    if head.startswith(_BINARY_MAGIC):
        raise InputError("is a binary file, not a text log", src.display)
    # Logs may hold a few NUL runs (a crash while the file system was flushing), but text never
    # has mostly control bytes.
    control = sum(head.count(bytes([c])) for c in range(0, 32) if c not in (9, 10, 12, 13, 27))
    if len(head) >= 64 and (control > len(head) * 0.10 or head.count(b"\x00") > len(head) * 0.01):
        raise InputError("is a binary file, not a text log", src.display)
