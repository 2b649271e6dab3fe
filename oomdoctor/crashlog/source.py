"""Open a crash log: a read-only map, with lines read on demand around byte offsets and numbered
from the nearest known checkpoint.

A regular file (also one redirected to stdin) is mapped in place, whatever its size. A stream (a pipe
on stdin, a FIFO, `<(cat run.log)`, a .gz log) is copied once into a temporary file, within a cap
(SPOOL_MAX_BYTES, and the free space of the temporary folder): NUL bytes are dropped on the way
(crash-time NUL runs carry no text, and a gzip bomb of zeros then costs no disk), and a stream that
starts binary is refused after its first 64 KiB. The copy is removed when the log is closed, on
Ctrl-C, SIGTERM or SIGHUP (oomdoctor/interrupts.py), and at exit. Finding the markers is scan.py's job.
"""
from __future__ import annotations

import atexit
import bisect
import errno
import mmap
import os
import re
import shutil
import stat
import sys
import zlib

from oomdoctor import textcodec
from oomdoctor.errors import InputError
from oomdoctor.facts import msg

LINE_CAP_BYTES = 16 * 1024          # longer lines (a whole tqdm run glued by \r) are cut to this
COPY_CHUNK_BYTES = 1 << 20
RELEASE_MIN_BYTES = 64 << 20       # maps smaller than this are not trimmed with madvise
COUNT_CHUNK_BYTES = 16 << 20        # newline counting copies this much at a time (bounded RSS)
WC_MIN_BYTES = 16 << 20             # a longer stretch of newlines is counted by wc -l ...
WC_JOBS = 4                         # ... this many at a time
SPOOL_MAX_BYTES = 2 << 30           # a piped or compressed log is copied to a temporary file up to this size ...
SPOOL_FREE_SHARE = 0.75             # ... and to this share of the temporary folder's free space (a 64 MiB
                                    # tmpfs keeps 48 MiB of log, a roomy disk the whole SPOOL_MAX_BYTES)
SPARSE_MIN_HOLE_BYTES = 16 << 20    # a file with this much hole is copied without its holes
SPOOL_READ_FACTOR = 8               # bytes read (NUL runs included) may be this many times the cap
TEXT_SAMPLE_BYTES = 64 << 10        # whether a log is text is judged on this much of its non-NUL bytes
FIFO_WAIT_S = 5.0                   # how long a FIFO given as an input may take to get its writer

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
        self._total_job: _WcJob | None = None           # the whole file's newline count, under way
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

    def __enter__(self) -> LogSource:
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
        """Newlines in [start, end). A long stretch goes to `wc -l` (memchr speed, about 4x bytes.count,
        its own process); anything shorter, or where wc is missing, is counted here in chunks."""
        if end - start >= WC_MIN_BYTES:
            job = _WcJob.start(self._path, start, end, self.size)
            n = job.result() if job is not None else None
            if n is not None:
                return n
        return self._count_here(start, end)

    def _count_here(self, start: int, end: int) -> int:
        total = 0
        pos = start
        while pos < end:
            stop = min(end, pos + COUNT_CHUNK_BYTES)
            total += self.mm[pos:stop].count(b"\n")
            self.release(pos, stop)
            pos = stop
        return total

    def count_all_in_background(self) -> None:
        """Start counting the file's newlines (`wc -l`, reading the file itself) for the end-of-file
        checkpoint; prefetch() collects it."""
        if self._total_job is None and self.size not in self._newlines_at:
            self._total_job = _WcJob.start(self._path, 0, self.size, self.size)

    def prefetch(self, offsets) -> None:
        """Leave line-number checkpoints at `offsets` and at the end of the file, counting every stretch
        between checkpoints once: long stretches by `wc -l` processes side by side (a few at a time),
        short ones here. The scan gives byte offsets only; this numbers the few lines reported."""
        if self._total_job is not None:
            total = self._total_job.result()
            self._total_job = None
            if total is not None:
                self.checkpoint(self.size, total)
        wanted = sorted({o for o in offsets if 0 < o <= self.size} | {self.size})
        wanted = [o for o in wanted if o not in self._newlines_at]
        pieces: list[tuple[int, int]] = []
        back: list[int] = []                    # counted back from the end-of-file checkpoint instead
        for o in wanted:
            i = bisect.bisect_right(self._checkpoints, o)
            below = self._checkpoints[i - 1]
            lo = max(below, pieces[-1][1] if pieces else 0)
            above = self._checkpoints[i] if i < len(self._checkpoints) else None
            if above is not None and above - o < o - lo and above - o < WC_MIN_BYTES:
                back.append(o)
            else:
                pieces.append((lo, o))
        counts: dict[tuple[int, int], int] = {}
        far = [p for p in pieces if p[1] - p[0] >= WC_MIN_BYTES]
        for i in range(0, len(far), WC_JOBS):
            jobs = [(p, _WcJob.start(self._path, p[0], p[1], self.size)) for p in far[i:i + WC_JOBS]]
            for p, job in jobs:
                n = job.result() if job is not None else None
                if n is not None:
                    counts[p] = n
        for lo, hi in pieces:                   # ascending: each stretch starts at a known checkpoint
            n = counts.get((lo, hi))
            self.checkpoint(hi, self._newlines_at[lo] + (n if n is not None else self._count_here(lo, hi)))
        for o in back:
            self.line_number(o)


class _WcJob:
    """`wc -l` counting [start, end) of a file: from a descriptor seeked to `start` when the stretch runs
    to the end, else from a pipe that os.sendfile fills (Linux)."""

    def __init__(self, proc, feeder) -> None:
        self.proc, self.feeder = proc, feeder

    @classmethod
    def start(cls, path: str, start: int, end: int, size: int) -> _WcJob | None:
        wc = shutil.which("wc")
        to_end = end >= size
        if wc is None or not to_end and not (hasattr(os, "sendfile") and sys.platform.startswith("linux")):
            return None
        import subprocess
        import threading

        env = dict(os.environ, LC_ALL="C")
        try:
            if to_end:
                with open(path, "rb") as fh:
                    fh.seek(start)
                    proc = subprocess.Popen([wc, "-l"], stdin=fh, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, env=env)
                return cls(proc, None)
            read_end, write_end = os.pipe()
            try:
                proc = subprocess.Popen([wc, "-l"], stdin=read_end, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
            except OSError:
                os.close(write_end)
                raise
            finally:
                os.close(read_end)
        except OSError:
            return None
        feeder = threading.Thread(target=_send, args=(path, start, end, write_end), daemon=True)
        feeder.start()
        return cls(proc, feeder)

    def result(self) -> int | None:
        try:
            out, _err = self.proc.communicate()
        except BaseException:
            self.proc.kill()
            raise
        if self.feeder is not None:
            self.feeder.join()
        try:
            return int(out.split()[0]) if self.proc.returncode == 0 else None
        except (ValueError, IndexError):
            return None


def _send(path: str, start: int, end: int, fd: int) -> None:
    """Copy [start, end) of the file into a pipe (os.sendfile: no copy through Python)."""
    try:
        with open(path, "rb") as fh:
            pos = start
            while pos < end:
                sent = os.sendfile(fd, fh.fileno(), pos, min(end - pos, 1 << 30))
                if sent <= 0:
                    break
                pos += sent
    except OSError:
        pass                                    # wc was killed: result() says so
    finally:
        os.close(fd)


def decode(raw: bytes) -> str:
    """Text of a log slice: UTF-8 where valid, Latin-1 for stray bytes (never fails)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace")


# ------------------------------------------------------------------ streams

_TEMPS: set[str] = set()            # spool files not yet removed


def _remove_temps() -> None:
    for tmp in list(_TEMPS):
        _unlink(tmp)


atexit.register(_remove_temps)


def _unlink(tmp: str) -> None:
    _TEMPS.discard(tmp)
    try:
        os.unlink(tmp)
    except OSError:
        pass


def open_stream(path: str) -> int:
    """A read descriptor on a FIFO or device that never hangs (see bounded.open_stream)."""
    from oomdoctor import bounded

    return bounded.open_stream(path, FIFO_WAIT_S)


def is_stream(path: str) -> bool:
    """True for an input that can be read only once (a pipe, a FIFO, a device), not a regular file."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path)
    except OSError:
        return False


def spool(read, display: str, first: bytes = b"", what: str = "pipe") -> str:
    """Copy a stream to a temporary file and return its path. `read(n)` returns up to n bytes ("" at
    the end); `first` is what was already read of it. Bounded by SPOOL_MAX_BYTES and the free space
    of the temporary folder (an InputError naming the cap past it); UTF-16/32 text is made UTF-8 and
    bare CR line ends LFs (textcodec), NUL bytes are dropped; a stream whose first 64 KiB of text
    look binary is refused there."""
    import tempfile

    if what == "pipe":
        # gzip bytes through a pipe are read as a .gz file is (RFC 1952: a member opens with 1f 8b), so
        # `cat run.log.gz | oomdoctor -` gives the answer of `oomdoctor run.log.gz`.
        first = _peek(read, first, 2, display)
        if first[:2] == b"\x1f\x8b":
            import gzip

            return spool(gzip.GzipFile(None, "rb", fileobj=_Prefixed(first, read)).read, display, what="gzip")
    folder = tempfile.gettempdir()
    copy = _SpoolCopy(_spool_cap(folder), folder, what, display)
    fd, tmp = tempfile.mkstemp(prefix="oomdoctor-log-", suffix=".log")
    _TEMPS.add(tmp)
    try:
        with os.fdopen(fd, "wb") as out:
            saw_cr, saw_lf = copy.run(read, first, out)
        if saw_cr and not saw_lf:
            _cr_to_lf(tmp)
    except (OSError, EOFError, zlib.error) as err:
        _unlink(tmp)
        raise InputError(msg("crash.input.cannot_read", reason=str(err)), display) from None
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _peek(read, first: bytes, n: int, display: str) -> bytes:
    """`first` topped up to `n` bytes from the stream (fewer at its end)."""
    try:
        while len(first) < n:
            more = read(n - len(first))
            if not more:
                break
            first += more
    except OSError as err:
        raise InputError(msg("crash.input.cannot_read", reason=err.strerror or str(err)), display) from None
    return first


class _SpoolCopy:
    """One copy of a stream into the spool file: recoded to UTF-8, NULs dropped, bounded, refused if binary."""

    def __init__(self, cap: int, folder: str, what: str, display: str) -> None:
        self.cap, self.folder, self.what, self.display = cap, folder, what, display
        self.kept = self.read_total = 0
        self.sample = bytearray()

    def run(self, read, first: bytes, out) -> tuple[bool, bool]:
        """Copy everything; (saw a CR, saw an LF)."""
        head = first
        while len(head) < textcodec.SNIFF_BYTES:        # enough to tell the encoding
            more = read(textcodec.SNIFF_BYTES - len(head))
            if not more:
                break
            head += more
        codec = textcodec.sniff(head)
        recode = textcodec.transcoder(codec, False) if codec else None
        saw_cr = saw_lf = False
        chunk, final = head, False
        while True:
            if not chunk:
                chunk = read(COPY_CHUNK_BYTES)
                if not chunk:
                    if recode is None or final:
                        break
                    final = True
            self.read_total += len(chunk)
            if recode is not None:
                chunk = recode(chunk, final)
            if b"\x00" in chunk:
                chunk = chunk.replace(b"\x00", b"")
            saw_lf = saw_lf or b"\n" in chunk
            saw_cr = saw_cr or b"\r" in chunk
            self._check(chunk)
            out.write(chunk)
            chunk = b""
            if final:
                break
        return saw_cr, saw_lf

    def _check(self, chunk: bytes) -> None:
        """Refuse a stream past the cap, or one whose first TEXT_SAMPLE_BYTES look binary."""
        self.kept += len(chunk)
        if self.kept > self.cap or self.read_total > self.cap * SPOOL_READ_FACTOR:
            code = {"gzip": "crash.input.gzip_too_big", "file": "crash.input.copy_too_big"}.get(
                self.what, "crash.input.stream_too_big")
            raise InputError(msg(code, cap=_size(self.cap), folder=self.folder), self.display)
        if len(self.sample) < TEXT_SAMPLE_BYTES:
            self.sample += chunk[:TEXT_SAMPLE_BYTES - len(self.sample)]
            if len(self.sample) >= TEXT_SAMPLE_BYTES and _looks_binary(bytes(self.sample)):
                raise InputError(msg("crash.input.binary"), self.display)


class _Prefixed:
    """A read-only file object over `first` and then `read(n)`: a stream whose first bytes were looked at."""

    def __init__(self, first: bytes, read) -> None:
        self._first, self._read = first, read

    def read(self, n: int = -1) -> bytes:
        if self._first:
            out = self._first if n < 0 else self._first[:n]
            self._first = self._first[len(out):]
            return out
        return self._read(n if n >= 0 else COPY_CHUNK_BYTES)

    def seek(self, n: int) -> int:
        import io

        raise io.UnsupportedOperation("a stream is read once")     # GzipFile seeks only to rewind


def _cr_to_lf(path: str) -> None:
    """Lines that end in a bare CR (no LF anywhere in the log: classic Mac OS, some serial consoles) made
    LF lines, in place: same length, so every byte offset stays. A tqdm log, CRs between LF lines, is
    left as it is (its redraws are one line)."""
    with open(path, "r+b") as fh:
        pos = 0
        while True:
            fh.seek(pos)
            block = fh.read(COPY_CHUNK_BYTES)
            if not block:
                break
            fh.seek(pos)
            fh.write(block.replace(b"\r", b"\n"))
            pos += len(block)


def _spool_cap(folder: str) -> int:
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return SPOOL_MAX_BYTES
    return max(0, min(SPOOL_MAX_BYTES, int(free * SPOOL_FREE_SHARE)))


def _size(n: int) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.3g} GiB"
    return f"{n / (1 << 20):.3g} MiB"


def _stdin_in_place() -> str | None:
    """A path other processes (grep) can open for a regular file redirected to stdin (`< run.log`), so it
    is mapped in place rather than copied; None for a pipe or where /proc is missing."""
    try:
        if not stat.S_ISREG(os.fstat(0).st_mode) or not sys.platform.startswith("linux"):
            return None
        path = f"/proc/{os.getpid()}/fd/0"
        return path if os.path.exists(path) else None
    except OSError:
        return None


def open_log(path: str, spooled: str | None = None) -> LogSource:
    """Open `path` ("-" = stdin, *.gz = gzip stream, a FIFO or `<(...)`) as a LogSource, or raise InputError.
    `spooled`: the spool file of `path` when the stream was read already (by sorting the inputs); the
    LogSource owns it and removes it when closed."""
    if spooled is not None:
        src = LogSource(path, spooled, temp=True)
    elif path == "-":
        here = _stdin_in_place()
        if here is not None:
            src = _open_file(here, "<stdin>")
        else:
            stream = getattr(sys.stdin, "buffer", sys.stdin)
            src = LogSource("<stdin>", spool(stream.read, "<stdin>"), temp=True)
    else:
        from oomdoctor import bounded

        st = bounded.stat_input(path, "crash.input.missing")
        if stat.S_ISDIR(st.st_mode):
            raise InputError(msg("crash.input.directory"), path)
        if not stat.S_ISREG(st.st_mode):
            with os.fdopen(open_stream(path), "rb", buffering=0) as fh:
                src = LogSource(path, spool(fh.read, path), temp=True)
        else:
            src = _open_file(path, path)
    try:
        _check_text(src)
    except InputError:
        src.close()
        raise
    return src


def _open_file(path: str, display: str) -> LogSource:
    """A regular file: mapped in place, unless it is gzip, UTF-16/32 text, has bare CR line ends, is
    mostly holes (a sparse file: only its data is copied), opens with a long NUL run, or says it is
    empty while it has text (a /proc file): those are copied once through spool()."""
    try:
        fh = open(path, "rb")
    except OSError as err:
        raise InputError(msg("crash.input.cannot_read", reason=err.strerror or str(err)), display) from None
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            data = _DataReader(fh.fileno(), size)
            head = fh.read(TEXT_SAMPLE_BYTES) if data.holes < SPARSE_MIN_HOLE_BYTES else data.peek(TEXT_SAMPLE_BYTES)
        except OSError as err:
            raise InputError(msg("crash.input.cannot_read", reason=err.strerror or str(err)), display) from None
        if head[:2] == b"\x1f\x8b":
            import gzip

            try:
                with gzip.open(path, "rb") as gz:
                    return LogSource(display, spool(gz.read, display, what="gzip"), temp=True)
            except (OSError, EOFError, zlib.error) as err:
                raise InputError(msg("crash.input.gzip_broken", reason=str(err)), display) from None
        if size == 0:                       # /proc and /sys files say 0 and still have text
            fh.seek(0)
            return LogSource(display, spool(fh.read, display, what="file"), temp=True)
        codec = textcodec.sniff(head)
        cr = codec is None and textcodec.cr_only(head) and _no_lf(fh.fileno(), size)
        # A log that opens with 64 KiB or more of written NUL bytes (a copytruncate on a file system
        # without holes) is copied without them too: the marker scan would otherwise read every zero.
        nul_start = size > TEXT_SAMPLE_BYTES and len(head) == TEXT_SAMPLE_BYTES and not head.strip(b"\x00")
        if codec or cr or nul_start or data.holes >= SPARSE_MIN_HOLE_BYTES:
            data.pos = 0
            return LogSource(display, spool(data.read, display, what="file"), temp=True)
    try:
        return LogSource(display, path, temp=False)
    except OSError as err:
        raise InputError(msg("crash.input.cannot_read", reason=err.strerror or str(err)), display) from None


def _no_lf(fd: int, size: int) -> bool:
    """True when the file holds no LF at all (memchr speed over a map; stops at the first one)."""
    try:
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mm:
            return mm.find(b"\n") < 0
    except (OSError, ValueError):
        return False


class _DataReader:
    """read(n) over a regular file that steps over its holes (lseek SEEK_DATA / SEEK_HOLE, where the file
    system has them): a sparse file's holes are never read, so a 10 GiB hole costs nothing."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size, self.pos = fd, size, 0
        self.seek = hasattr(os, "SEEK_DATA") and hasattr(os, "SEEK_HOLE")
        self.holes = self._holes() if self.seek else 0

    def _holes(self) -> int:
        """Bytes of the file that are holes (0 where the file system cannot say)."""
        total, pos = 0, 0
        try:
            while pos < self.size:
                try:
                    data = os.lseek(self.fd, pos, os.SEEK_DATA)
                except OSError as err:
                    if err.errno == errno.ENXIO:            # only a hole from here to the end
                        return total + self.size - pos
                    raise
                total += data - pos
                pos = os.lseek(self.fd, data, os.SEEK_HOLE)
        except OSError:
            return 0
        finally:
            try:
                os.lseek(self.fd, 0, os.SEEK_SET)
            except OSError:
                pass
        return total

    def read(self, n: int) -> bytes:
        if self.pos >= self.size:
            return b""
        if self.seek and self.holes:
            try:
                data = os.lseek(self.fd, self.pos, os.SEEK_DATA)
                hole = os.lseek(self.fd, data, os.SEEK_HOLE)
            except OSError as err:
                if err.errno == errno.ENXIO:
                    self.pos = self.size
                    return b""
                raise
            self.pos, n = data, min(n, hole - data)
        chunk = os.pread(self.fd, n, self.pos)
        self.pos = self.pos + len(chunk) if chunk else self.size
        return chunk

    def peek(self, n: int) -> bytes:
        """The first `n` bytes of data (holes stepped over), the position left at the start."""
        out = bytearray()
        while len(out) < n:
            chunk = self.read(n - len(out))
            if not chunk:
                break
            out += chunk
        self.pos = 0
        return bytes(out)


def _check_text(src: LogSource) -> None:
    """Refuse an empty log and a binary file given by mistake. Runs of NUL bytes (a crash while the file
    system flushed) are tolerated: text-ness is judged on the bytes around them."""
    head = bytes(src.mm[:16])
    if head.startswith(_BINARY_MAGIC):
        raise InputError(msg("crash.input.binary"), src.display)
    sample = _text_sample(src)
    if not sample.strip(b" \t\r\n"):
        raise InputError(msg("crash.input.empty"), src.display)
    if _looks_binary(sample):
        raise InputError(msg("crash.input.binary"), src.display)


_NOT_NUL = re.compile(rb"[^\x00]")


def _text_sample(src: LogSource) -> bytes:
    """The first TEXT_SAMPLE_BYTES of the log's non-NUL bytes, however long the NUL runs before them
    (`logrotate copytruncate` leaves gigabytes of them); a run is skipped at memchr-like speed."""
    out = bytearray()
    pos = 0
    while pos < src.size and len(out) < TEXT_SAMPLE_BYTES:
        found = _NOT_NUL.search(src.mm, pos)
        if found is None:
            break
        pos = found.start()
        block = bytes(src.mm[pos:min(src.size, pos + TEXT_SAMPLE_BYTES)])
        out += block.replace(b"\x00", b"") if b"\x00" in block else block
        pos += len(block)
    return bytes(out[:TEXT_SAMPLE_BYTES])


def _looks_binary(sample: bytes) -> bool:
    """Text never has mostly control bytes (tab, newlines, form feed and ESC aside)."""
    if sample.startswith(_BINARY_MAGIC):
        return True
    control = sum(sample.count(bytes([c])) for c in range(1, 32) if c not in (9, 10, 12, 13, 27))
    return len(sample) >= 64 and control > len(sample) * 0.10
