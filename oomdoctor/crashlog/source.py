"""Open a crash log: a read-only map, with lines read on demand around byte offsets and numbered
from the nearest known checkpoint.

stdin and .gz logs are streamed into a temporary file first, so every log is scanned the same way
and memory stays bounded whatever the size. Finding the markers is scan.py's job.
"""
from __future__ import annotations

import bisect
import mmap
import os
import shutil
import sys
import zlib

from oomdoctor.errors import InputError

LINE_CAP_BYTES = 16 * 1024          # longer lines (a whole tqdm run glued by \r) are cut to this
COPY_CHUNK_BYTES = 1 << 20
RELEASE_MIN_BYTES = 64 << 20       # maps smaller than this are not trimmed with madvise
COUNT_CHUNK_BYTES = 16 << 20        # newline counting copies this much at a time (bounded RSS)
WC_MIN_BYTES = 16 << 20             # counting a longer stretch up to the end of file goes to wc -l

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

    @property
    def path(self) -> str:
        """The file on disk that is mapped (a temporary copy for stdin and .gz logs)."""
        return self._path

    # -------------------------------------------------------------- lines
    def release(self, lo: int, hi: int) -> None:
        """Tell the kernel we are done with these mapped pages, so RSS stays bounded on huge logs."""
        if self.size < RELEASE_MIN_BYTES or not isinstance(self.mm, mmap.mmap) or not hasattr(self.mm, "madvise"):
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

    def checkpoint(self, offset: int, newlines: int) -> None:
        """Remember that `newlines` newlines come before byte `offset` (line numbers count from here)."""
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
        if above is None and offset - below >= WC_MIN_BYTES and self.size - offset < offset - below:
            # nearer the end than any checkpoint: count to the end once (wc -l), then back from there
            self.checkpoint(self.size, self._newlines_at[below] + self.count_newlines(below, self.size))
            above = self.size
        if above is not None and above - offset < offset - below:
            n = self._newlines_at[above] - self.count_newlines(offset, above)
        else:
            n = self._newlines_at[below] + self.count_newlines(below, offset)
        self.checkpoint(offset, n)
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
