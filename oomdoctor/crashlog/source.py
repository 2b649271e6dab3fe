"""Open a crash log for scanning: a mapped file, with lines read on demand around byte offsets.

stdin and .gz logs are streamed into a temporary file first, so every log is scanned the same way
(mmap + byte searches) and memory stays bounded whatever the size.
"""
from __future__ import annotations

import gzip
import mmap
import os
import shutil
import sys
import tempfile
import zlib

from oomdoctor.errors import InputError

LINE_CAP_BYTES = 16 * 1024          # longer lines (a whole tqdm run glued by \r) are cut to this
COPY_CHUNK_BYTES = 1 << 20
SCAN_WINDOW_BYTES = 64 << 20       # byte searches walk the map in windows of this size
COUNT_CHUNK_BYTES = 16 << 20        # newline counting copies this much at a time (bounded RSS)

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
    def find_all(self, needle: bytes, start: int = 0, end: int | None = None, limit: int = 100_000) -> list[int]:
        """Offsets of `needle` in [start, end), searched window by window so mapped pages can be dropped."""
        end = self.size if end is None else min(end, self.size)
        out: list[int] = []
        lo = start
        while lo < end and len(out) < limit:
            hi = min(end, lo + SCAN_WINDOW_BYTES)
            stop = min(end, hi + len(needle) - 1)        # a match may straddle the window edge
            pos = self.mm.find(needle, lo, stop)
            while pos >= 0 and len(out) < limit:
                out.append(pos)
                pos = self.mm.find(needle, pos + len(needle), stop)
            self.release(lo, hi)
            lo = hi
        return out

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

    def scan(self, markers: tuple[bytes, ...], limit: int) -> list[int]:
        """One pass over the file: offsets of every marker, plus newline checkpoints for line numbers.

        The file is read window by window into one reused buffer (a single copy from the page cache,
        no page faults on the map); each window is searched for all markers and counted while hot.
        """
        out: list[int] = []
        overlap = max(len(m) for m in markers) - 1
        buf = bytearray(min(self.size, SCAN_WINDOW_BYTES) + overlap)
        view = memoryview(buf)
        lo = 0
        with open(self._path, "rb", buffering=0) as fh:
            while lo < self.size:
                fh.seek(lo)
                n = fh.readinto(view)
                if not n:
                    break
                hi = min(self.size, lo + SCAN_WINDOW_BYTES)
                body = min(n, hi - lo)          # bytes that belong to this window; the rest is overlap
                for needle in markers:
                    pos = buf.find(needle, 0, n)
                    while 0 <= pos < body and len(out) < limit:
                        out.append(lo + pos)
                        pos = buf.find(needle, pos + len(needle), n)
                self._newlines_at[hi] = self._newlines_at[lo] + buf.count(b"\n", 0, body)
                lo = hi
        view.release()
        return out

    def line_number(self, offset: int) -> int:
        """1-based line of byte `offset`, counted from the nearest known checkpoint below it."""
        base = max((k for k in self._newlines_at if k <= offset), default=0)
        n = self._newlines_at.get(base, 0) + self.count_newlines(base, offset)
        self._newlines_at[offset] = n
        return n + 1

    def count_newlines(self, start: int, end: int) -> int:
        total = 0
        pos = start
        while pos < end:
            stop = min(end, pos + COUNT_CHUNK_BYTES)
            total += self.mm[pos:stop].count(b"\n")
            self.release(pos, stop)
            pos = stop
        return total


def decode(raw: bytes) -> str:
    """Text of a log slice: UTF-8 where valid, Latin-1 for stray bytes (never fails)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace")


def _spool(stream, display: str) -> str:
    """Copy a stream to a temp file in chunks; return its path."""
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
