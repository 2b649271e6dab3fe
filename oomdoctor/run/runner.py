"""Run a training command in its own process group, its output passed through unchanged and logged.

When our stdout is a terminal the child writes to a pseudo-terminal (progress bars, colours and line
buffering behave as they do without oomdoctor: it sees a terminal); our stdin, when a terminal too, is put
in raw mode and forwarded, so Ctrl-C reaches the child the way a terminal sends it, through its line
discipline. Otherwise stdout and stderr come through pipes, each to the same stream of ours. Every byte is
written, unchanged, to the log file as well (`script(1)` does the same).

Signals sent to oomdoctor (SIGINT, SIGTERM, SIGHUP) are sent on to the child's process group; a second one
of the same kind, or the child ignoring it for KILL_AFTER_S, ends the group with SIGKILL. When the child's
leader exits, whatever of its group is still alive is stopped (SIGTERM, then SIGKILL): no orphan is left.
"""
from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO, Callable

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP")
KILL_AFTER_S = 10.0          # a forwarded signal the group ignores this long is followed by SIGKILL
DRAIN_AFTER_EXIT_S = 0.3     # output still in flight after the leader's exit
STRAGGLER_GRACE_S = 0.5      # SIGTERM to what is left of the group, then SIGKILL
READ_BYTES = 1 << 16


@dataclass(frozen=True)
class Outcome:
    exit_code: int               # the child's code, or 128 + the signal that ended it
    signal: int | None           # the signal that ended the child, if one did
    forwarded: int | None        # the signal oomdoctor passed on to the group, if any
    started: float               # time.time() at launch
    ended: float                 # time.time() when the leader's exit was seen
    pid: int
    used_pty: bool


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        except BlockingIOError:
            time.sleep(0.001)
            continue
        view = view[n:]


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _copy_winsize(src_fd: int, dst_fd: int) -> None:
    import fcntl
    import termios

    try:
        size = fcntl.ioctl(src_fd, termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(dst_fd, termios.TIOCSWINSZ, size)
    except OSError:
        pass


def _pass_through(out_fd: int, slave: int) -> list | None:
    """The child's terminal gets our terminal's settings (it translates newlines, as ours would have); ours stops
    translating while the child's bytes pass, so they reach the screen as a bare run's would. Returns our
    settings to restore."""
    import termios

    try:
        saved = termios.tcgetattr(out_fd)
        termios.tcsetattr(slave, termios.TCSANOW, saved)
        raw = list(saved)
        raw[1] = raw[1] & ~termios.OPOST
        termios.tcsetattr(out_fd, termios.TCSADRAIN, raw)
        return saved
    except termios.error:
        return None


def _make_controlling_tty() -> None:
    """In the child, after setsid(): the pseudo-terminal on fd 1 becomes its controlling terminal."""
    import fcntl
    import termios

    try:
        fcntl.ioctl(1, termios.TIOCSCTTY, 0)
    except OSError:
        pass


@dataclass
class _Child:
    """The launched command and the descriptors oomdoctor holds for it."""

    proc: subprocess.Popen
    master: int | None = None            # the pseudo-terminal's side we read (a pty run)
    err_read: int | None = None          # its stderr pipe, when stderr is not the terminal
    out_saved: list | None = None        # our terminal's settings, to restore after a pass-through
    forward_stdin: bool = False          # our terminal's keys go to the child's terminal


def run(argv: Sequence[str], log: BinaryIO, *, use_pty: bool | None = None, env: dict | None = None,
        on_start: Callable[[int], None] | None = None, stdout_fd: int | None = None,
        stderr_fd: int | None = None, stdin_fd: int | None = None) -> Outcome:
    """Run argv to its end; its output goes to our stdout/stderr and to `log`. `on_start(pid)` is called once
    the child runs (the sampler starts there). Raises FileNotFoundError/PermissionError when argv[0] cannot
    be executed."""
    out_fd = _fileno(sys.stdout, 1) if stdout_fd is None else stdout_fd
    err_fd = _fileno(sys.stderr, 2) if stderr_fd is None else stderr_fd
    in_fd = _fileno(sys.stdin, -1) if stdin_fd is None else stdin_fd
    if use_pty is None:
        use_pty = os.isatty(out_fd)
    sys.stdout.flush()
    sys.stderr.flush()

    child = _spawn_pty(argv, env, in_fd, out_fd, err_fd) if use_pty else _spawn_pipes(argv, env, in_fd)
    proc = child.proc
    started = time.time()
    pgid = proc.pid                          # start_new_session: the child leads its own group
    forwarded: list[int] = []
    kill_at: list[float] = []
    previous = _forward_signals(pgid, forwarded, kill_at)
    if use_pty and os.isatty(out_fd) and hasattr(signal, "SIGWINCH"):
        master = child.master
        try:
            previous[signal.SIGWINCH] = signal.signal(
                signal.SIGWINCH, lambda s, f: _copy_winsize(out_fd, master) if master is not None else None)
        except (OSError, ValueError):
            pass
    raw_saved = _raw_stdin(in_fd) if child.forward_stdin else None

    sel = selectors.DefaultSelector()
    streams = _streams(child, use_pty, out_fd, err_fd)
    for fd in streams:
        sel.register(fd, selectors.EVENT_READ)
    if child.forward_stdin:
        sel.register(in_fd, selectors.EVENT_READ)
    try:
        if on_start is not None:
            on_start(proc.pid)
        code = _pump(proc, sel, streams, log, child.master, in_fd if child.forward_stdin else None, pgid, kill_at)
    finally:
        _restore_terminal(((in_fd, raw_saved), (out_fd, child.out_saved)), in_fd)
        for sig, handler in previous.items():
            try:
                signal.signal(sig, handler)
            except (OSError, ValueError, TypeError):
                pass
        sel.close()
        _close(child, pgid)
    ended = time.time()
    sig = -code if code < 0 else None
    return Outcome(128 + sig if sig else code, sig, forwarded[0] if forwarded else None, started, ended,
                   proc.pid, use_pty)


def _spawn_pty(argv: Sequence[str], env: dict | None, in_fd: int, out_fd: int, err_fd: int) -> _Child:
    """The command on a pseudo-terminal of its own (stderr too when ours is a terminal), leading a new session."""
    import pty

    master, slave = pty.openpty()
    out_saved = None
    if os.isatty(out_fd):
        _copy_winsize(out_fd, slave)
        out_saved = _pass_through(out_fd, slave)
    child_in = slave if _isatty(in_fd) else in_fd
    child_err = slave if _isatty(err_fd) else subprocess.PIPE
    proc = subprocess.Popen(list(argv), stdin=child_in, stdout=slave, stderr=child_err, env=env,
                            start_new_session=True, preexec_fn=_make_controlling_tty)
    os.close(slave)
    err_read = proc.stderr.fileno() if proc.stderr is not None else None
    return _Child(proc, master, err_read, out_saved, forward_stdin=child_in == slave)


def _spawn_pipes(argv: Sequence[str], env: dict | None, in_fd: int) -> _Child:
    """The command with its stdout and stderr on pipes, leading a new session."""
    proc = subprocess.Popen(list(argv), stdin=in_fd if _valid(in_fd) else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    return _Child(proc, err_read=proc.stderr.fileno() if proc.stderr else None)


def _forward_signals(pgid: int, forwarded: list[int], kill_at: list[float]) -> dict:
    """Pass SIGINT, SIGTERM and SIGHUP on to the group (a second of a kind: SIGKILL); the handlers replaced."""
    def forward(signum: int, frame: object) -> None:
        if forwarded and forwarded[-1] == signum:
            _signal_group(pgid, signal.SIGKILL)     # asked twice: stop now
        else:
            _signal_group(pgid, signum)
            kill_at.append(time.monotonic() + KILL_AFTER_S)
        forwarded.append(signum)

    previous = {}
    for name in FORWARDED:
        sig = getattr(signal, name)
        if signal.getsignal(sig) is signal.SIG_IGN:
            continue
        try:
            previous[sig] = signal.signal(sig, forward)
        except (OSError, ValueError):
            pass
    return previous


def _raw_stdin(in_fd: int) -> list | None:
    """Our terminal in raw mode, its keys for the child's line discipline; the settings to restore."""
    import termios
    import tty

    try:
        saved = termios.tcgetattr(in_fd)
        tty.setraw(in_fd)
        return saved
    except termios.error:
        return None


def _streams(child: _Child, use_pty: bool, out_fd: int, err_fd: int) -> dict[int, int]:
    """The child's output descriptors we read, each with the descriptor of ours it is copied to."""
    streams = {}
    if child.master is not None:
        streams[child.master] = out_fd
    if not use_pty and child.proc.stdout is not None:
        streams[child.proc.stdout.fileno()] = out_fd
    if child.err_read is not None:
        streams[child.err_read] = err_fd
    return streams


def _restore_terminal(saved_modes: tuple[tuple[int, list | None], ...], in_fd: int) -> None:
    if all(saved is None for _, saved in saved_modes):
        return
    import termios

    for fd, saved in saved_modes:
        if saved is not None:
            try:
                termios.tcsetattr(fd, termios.TCSAFLUSH if fd == in_fd else termios.TCSADRAIN, saved)
            except termios.error:
                pass


def _close(child: _Child, pgid: int) -> None:
    proc = child.proc
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()
    if child.master is not None:
        try:
            os.close(child.master)
        except OSError:
            pass
    if proc.returncode is None:     # an exception of ours: leave nothing running
        _signal_group(pgid, signal.SIGKILL)
        proc.wait()


def _fileno(stream: object, default: int) -> int:
    """The stream's descriptor; `default` for a stream without one (an in-process caller's replacement)."""
    try:
        return stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return default


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _valid(fd: int) -> bool:
    if fd < 0:
        return False
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _pump(proc: subprocess.Popen, sel: selectors.BaseSelector, streams: dict, log: BinaryIO, master: int | None,
          stdin_fd: int | None, pgid: int, kill_at: list) -> int:
    """Copy output until the leader has exited and its output is drained; returns its wait status code."""
    open_streams = set(streams)
    exit_seen: float | None = None
    stragglers_termed = [False]
    while True:
        if exit_seen is None and proc.poll() is not None:
            exit_seen = time.monotonic()
        now = time.monotonic()
        if exit_seen is not None:
            if not open_streams or _drain_over(now - exit_seen, pgid, stragglers_termed):
                break
        elif kill_at and now > kill_at[0]:
            _signal_group(pgid, signal.SIGKILL)
            kill_at.clear()
        try:
            events = sel.select(timeout=0.05)
        except InterruptedError:
            continue
        for key, _ in events:
            if key.fd == stdin_fd:
                _forward_keys(key.fd, sel, master)
            elif not _copy_output(key.fd, streams[key.fd], log):
                sel.unregister(key.fd)
                open_streams.discard(key.fd)
        if exit_seen is None and not open_streams:
            proc.wait()
    log.flush()
    code = proc.wait()
    _end_group(pgid)
    return code


def _drain_over(since_exit_s: float, pgid: int, stragglers_termed: list[bool]) -> bool:
    """After the leader's exit: SIGTERM to the group still holding the output open, then SIGKILL; True once it
    is time to stop waiting for the output."""
    if since_exit_s > DRAIN_AFTER_EXIT_S and not stragglers_termed[0]:
        # the leader is gone and something of its group still holds the output open
        _signal_group(pgid, signal.SIGTERM)
        stragglers_termed[0] = True
    elif since_exit_s > DRAIN_AFTER_EXIT_S + STRAGGLER_GRACE_S:
        _signal_group(pgid, signal.SIGKILL)
        return since_exit_s > DRAIN_AFTER_EXIT_S + 2 * STRAGGLER_GRACE_S
    return False


def _forward_keys(fd: int, sel: selectors.BaseSelector, master: int | None) -> None:
    """Our terminal's keys to the child's terminal; at their end, stop reading them."""
    try:
        data = os.read(fd, READ_BYTES)
    except OSError:
        data = b""
    if not data:
        sel.unregister(fd)
    elif master is not None:
        try:
            _write_all(master, data)
        except OSError:
            pass


def _copy_output(fd: int, to_fd: int, log: BinaryIO) -> bool:
    """Copy what the child wrote on `fd` to the log and to `to_fd`; False at the end of that output."""
    try:
        data = os.read(fd, READ_BYTES)
    except OSError as err:
        if err.errno not in (errno.EIO, errno.EBADF):    # EIO: the pty's last writer is gone
            raise
        data = b""
    if not data:
        return False
    log.write(data)
    try:
        _write_all(to_fd, data)
    except BrokenPipeError:
        pass
    return True


def _end_group(pgid: int) -> None:
    """A member that closed its output but lives on: the group dies with the run."""
    if _alive(pgid):
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + STRAGGLER_GRACE_S
        while _alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.02)
        if _alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
