"""Files written as one transaction: every one of them, or none.

1. check: every target is judged before anything is touched (a directory, a file that changed since it
   was read, a read-only, hard-linked or foreign-owned file of the user's is refused);
2. prepare: each new text goes to a temporary in its target's own folder (so the rename is atomic),
   with the target's mode and owner, flushed to disk; each file about to be replaced gets a *holder*,
   a hard link to its inode (a copy where links are not supported), under its backup name
   (`config.yaml.orig`) or a temporary name;
3. commit: the temporaries are renamed over their targets with signals held back; if one rename fails,
   every file already replaced is put back from its holder and every created one removed.

A full disk, a read-only folder, Ctrl-C, SIGTERM or SIGHUP at any point leave the files as they were,
and no temporary, holder or backup behind. Only a non-regular target (`--export /dev/stdout`) is
written directly, last, as it cannot be renamed over.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat as stat_mod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from ..facts import msg
from ..interrupts import deferred
from .build import FileStat, _sha256_hex


@dataclass
class Write:
    """One file to write: at `path` (where it resolves to, a symlink kept), named `shown` in messages."""

    path: str
    data: bytes
    shown: str = ""                   # the user's spelling of it; `path` when empty
    own_file: bool = False            # the user's own file, edited in place: guarded, backed up, checked
    expect: FileStat | None = None    # own_file: the bytes it must still hold (None: it must not exist)
    backup_suffix: str = ""           # own_file: keep the original as <path><suffix>, beside the name it has
    make_dirs: bool = True            # create missing folders above it (not for --export: a typo stays one)

    @property
    def name(self) -> str:
        return self.shown or self.path


@dataclass
class Outcome:
    """What happened to one Write."""

    path: str
    real: str
    created: bool
    backup: str | None = None         # the original's new name, when one was kept


@dataclass
class _Plan:
    write: Write
    real: str
    st: os.stat_result | None         # the target before, None when it does not exist
    direct: bool = False              # not a regular file: written in place, last
    temp: str | None = None
    holder: str | None = None         # the original inode while the transaction runs
    holder_is_backup: bool = False
    done: bool = False
    made_dirs: list = field(default_factory=list)


def check_all(writes: Sequence[Write]) -> None:
    """Every refusal write_all would make before touching anything, without writing (the CLI asks its
    question after this, so a yes is never followed by "read-only")."""
    for w in writes:
        _check(w)


def write_all(writes: Sequence[Write]) -> list[Outcome]:
    """Write every file, or none (see the module). Raises InputError naming the file that failed.

    The user's own files are locked (flock) for the whole transaction, and checked against the bytes
    the plan was made from after the lock is held: of two runs applying at once, one writes and the
    other refuses; neither can roll the other's commit back. Each new text of one of them is locked
    before it is renamed into place and until the last rename, so a run that opens it between two renames
    of this one (the config replaced, its DeepSpeed file not yet created) is refused too, rather than
    taking the half-applied plan for its starting point."""
    with locked(writes):
        return _write_locked(writes)


_HELD: set = set()                    # real paths this process holds the lock of


@contextlib.contextmanager
def locked(writes: Sequence[Write]) -> Iterator[None]:
    """Hold the lock of every existing file `writes` edit in place (nested use is free): the CLI holds it
    from its checks through its question to the last rename."""
    fds = _lock_own_files([w for w in writes if os.path.realpath(w.path) not in _HELD])
    held = [real for real, _fd in fds]
    _HELD.update(held)
    try:
        yield
    finally:
        _HELD.difference_update(held)
        for _real, fd in fds:
            os.close(fd)                # closing the descriptor releases its lock


def _lock_own_files(writes: Sequence[Write]) -> list[tuple[str, int]]:
    """An exclusive flock on each existing file edited in place (or to be created, when it exists now:
    another run may have just created it), taken without waiting: a file another run holds is refused
    now (write.busy). The lock is on the inode the path names when it is taken; a rename over the path
    meanwhile (the other run's commit) is seen and the new inode locked instead."""
    try:
        import fcntl
    except ImportError:                 # no flock (Windows): the checks of _check alone
        return []
    fds: list[tuple[str, int]] = []
    try:
        for real in sorted({os.path.realpath(w.path) for w in writes if w.own_file}):
            own = [w for w in writes if w.own_file and os.path.realpath(w.path) == real]
            shown = own[0].name
            for _attempt in range(8):
                try:
                    fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
                except OSError as err:
                    if isinstance(err, FileNotFoundError) and all(w.expect is None for w in own):
                        break           # still to be created: _link_new refuses one created meanwhile
                    raise InputError(msg("write.cannot_write", reason=_reason(err)), shown) from None
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as err:
                    os.close(fd)
                    if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        raise InputError(msg("write.busy"), shown) from None
                    break                   # a file system without flock: the checks of _check alone
                try:
                    here, now = os.fstat(fd), os.stat(real)
                    same = (here.st_dev, here.st_ino) == (now.st_dev, now.st_ino)
                except OSError:
                    same = False
                if same:
                    fds.append((real, fd))
                    break
                os.close(fd)                # replaced while we locked it: lock what the name holds now
            else:
                raise InputError(msg("write.busy"), shown)
    except BaseException:
        for _real, fd in fds:
            os.close(fd)
        raise
    return fds


def _write_locked(writes: Sequence[Write]) -> list[Outcome]:
    plans = [_check(w) for w in writes]
    made: list[str] = []              # temporaries and holders this transaction created
    new_locks: list[int] = []         # the locked descriptors of the user's files' new texts, until the end
    committed = False
    try:
        for plan in plans:
            if not plan.direct:
                _prepare(plan, made, new_locks)
        with deferred():
            _commit(plans)
            committed = True
            for plan in plans:
                if plan.holder and not plan.holder_is_backup:
                    _remove(plan.holder)
    except BaseException:
        if not committed:
            for path in reversed(made):
                _remove(path)
            for plan in reversed(plans):
                for folder in reversed(plan.made_dirs):
                    _rmdir(folder)
        raise
    finally:
        for fd in new_locks:
            os.close(fd)                # closing the descriptor releases its lock
    return [Outcome(p.write.name, p.real, p.st is None and not p.direct,
                    p.holder if p.holder_is_backup else None) for p in plans]


# ---------------------------------------------------------------- 1. check

def _check(w: Write) -> _Plan:
    real = os.path.realpath(w.path)
    try:
        st: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise InputError(msg("write.cannot_write", reason=_reason(err)), w.name) from None
    if st is not None and stat_mod.S_ISDIR(st.st_mode):
        raise InputError(msg("input.is_directory"), w.name)
    if not w.own_file and (st is None or stat_mod.S_ISREG(st.st_mode)):
        # A new file of ours (--export, --write) is never written through a symlink, as O_NOFOLLOW would
        # refuse (a planted plan.diff -> ~/.bashrc), nor over a read-only file, as the shell's `>` would.
        # A device or FIFO behind a link (/dev/stdout) is written as before.
        if os.path.islink(w.path):
            raise InputError(msg("write.symlink_target"), w.name)
        if st is not None and (not st.st_mode & 0o222 or not os.access(real, os.W_OK)):
            raise InputError(msg("write.read_only_target"), w.name)
    if w.own_file:
        if (st is None) != (w.expect is None):
            code = "write.created_meanwhile" if st is not None else "write.changed"
            raise InputError(msg(code), w.name)
        if st is not None:
            _guard(w.name, real, st)
            _same_as_read(w, real)
    direct = st is not None and not stat_mod.S_ISREG(st.st_mode)
    return _Plan(w, real, st, direct=direct)


def _guard(shown: str, real: str, st: os.stat_result) -> None:
    """Refuse to replace a file of the user's whose replacement would not be the same file to them."""
    if not stat_mod.S_ISREG(st.st_mode):
        raise InputError(msg("write.not_regular"), shown)
    # Mode bits first: root may write anything, but a 0444 config says "do not edit me" to root too.
    if not st.st_mode & 0o222 or not os.access(real, os.W_OK):
        raise InputError(msg("write.read_only"), shown)
    if st.st_nlink > 1:
        raise InputError(msg("write.hard_linked", links=st.st_nlink), shown)
    if not _can_keep_owner(st):
        raise InputError(msg("write.foreign_owner", owner=f"{st.st_uid}:{st.st_gid}"), shown)


def _same_as_read(w: Write, path: str) -> None:
    """Content decides: a touched but identical file is safe to patch, an edited one is not."""
    assert w.expect is not None
    try:
        with open(path, "rb") as fh:
            data = fh.read(w.expect.size + 1)
    except OSError as err:
        raise InputError(msg("input.cannot_read", reason=_reason(err)), w.name) from None
    if len(data) != w.expect.size or _sha256_hex(data) != w.expect.sha256:
        raise InputError(msg("write.changed"), w.name)


def _can_keep_owner(st: os.stat_result) -> bool:
    if not hasattr(os, "geteuid"):
        return True
    euid = os.geteuid()
    if euid == 0:
        return True
    return st.st_uid == euid and (st.st_gid == os.getegid() or st.st_gid in os.getgroups())


# ---------------------------------------------------------------- 2. prepare

def _prepare(plan: _Plan, made: list[str], new_locks: list[int]) -> None:
    w, real = plan.write, plan.real
    folder = os.path.dirname(real) or "."
    try:
        if plan.st is None and w.make_dirs:
            plan.made_dirs = _make_dirs(folder)
        plan.temp = _temp_file(folder, os.path.basename(real), ".tmp", made)
        fd = os.open(plan.temp, os.O_WRONLY)
        if w.own_file and _flock_new(fd):
            new_locks.append(fd)        # held (and closed) by _write_locked until the last rename
            fd = os.dup(fd)
        try:
            _write_fd(fd, w.data)
            if plan.st is not None:
                os.fchmod(fd, stat_mod.S_IMODE(plan.st.st_mode))
                if (plan.st.st_uid, plan.st.st_gid) != _owner_of(fd) and _can_keep_owner(plan.st):
                    os.fchown(fd, plan.st.st_uid, plan.st.st_gid)
            os.fsync(fd)
        finally:
            os.close(fd)
        if plan.st is not None:
            _hold(plan, made)
    except OSError as err:
        raise InputError(msg("write.failed_nothing_changed", reason=_reason(err)), w.name) from None


def _flock_new(fd: int) -> bool:
    """Lock a new text before it is renamed into place; False where there is no flock (see _lock_own_files)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)        # a new file nobody else has opened: never busy
    except OSError:
        return False
    return True


def _hold(plan: _Plan, made: list[str]) -> None:
    """Keep the original inode under a second name until the transaction ends (its backup, or a temporary)."""
    w, real = plan.write, plan.real
    # The backup sits beside the name the user knows (a symlinked config's .orig beside the link).
    backup = _backup_name(real, os.path.abspath(w.path), w.backup_suffix) if w.own_file and w.backup_suffix \
        else None
    name = backup or _temp_name(os.path.dirname(real) or ".", os.path.basename(real), ".old")
    with deferred():
        try:
            os.link(real, name)
        except OSError as err:
            if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
                raise
            name = _copy_file(real, name, plan.st)
        made.append(name)
    plan.holder, plan.holder_is_backup = name, backup is not None
    if w.own_file and w.expect is not None:
        _same_as_read(w, name)          # again, through the name that now holds the inode to be replaced


def _copy_file(src: str, dest: str, st: os.stat_result | None) -> str:
    with open(src, "rb") as fh:
        data = fh.read()
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        _write_fd(fd, data)
        if st is not None:
            os.fchmod(fd, stat_mod.S_IMODE(st.st_mode))
            if _can_keep_owner(st) and (st.st_uid, st.st_gid) != _owner_of(fd):
                os.fchown(fd, st.st_uid, st.st_gid)
        os.fsync(fd)
    finally:
        os.close(fd)
    return dest


def _backup_name(real: str, named: str, suffix: str) -> str | None:
    """<named><suffix>, or <suffix>.1, .2 ... when an older backup holds other bytes; None when one
    already holds the bytes of `real` (applying twice keeps one backup)."""
    with open(real, "rb") as fh:
        data = fh.read()
    candidate = named + suffix
    n = 0
    while os.path.lexists(candidate):
        try:
            with open(candidate, "rb") as fh:
                if fh.read(len(data) + 1) == data:
                    return None
        except OSError:
            pass
        n += 1
        candidate = f"{named}{suffix}.{n}"
    return candidate


def _make_dirs(folder: str) -> list[str]:
    """Create `folder` and its missing parents; the ones created, outermost first (to remove on failure)."""
    missing = []
    path = os.path.abspath(folder)
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    made = []
    for path in reversed(missing):
        os.mkdir(path)
        made.append(path)
    return made


def _temp_name(folder: str, name: str, suffix: str) -> str:
    # Short enough for any file system's 255-byte names, whatever the target is called.
    return os.path.join(folder, f".{name[:80]}.{secrets.token_hex(4)}{suffix}")


def _temp_file(folder: str, name: str, suffix: str, made: list[str]) -> str:
    """A new empty file beside the target, created (0666 less the umask) and noted as one step."""
    while True:
        path = _temp_name(folder, name, suffix)
        with deferred():
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except FileExistsError:
                continue
            made.append(path)
        return path


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _owner_of(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_uid, st.st_gid


# ---------------------------------------------------------------- 3. commit

def _commit(plans: list[_Plan]) -> None:
    # Renames first, in order; direct writes (devices, FIFOs) last, as they cannot be undone.
    order = [p for p in plans if not p.direct] + [p for p in plans if p.direct]
    for plan in order:
        try:
            if plan.direct:
                _write_direct(plan)
            elif plan.st is None:
                _link_new(plan)
            else:
                assert plan.temp is not None
                os.replace(plan.temp, plan.real)
            plan.done = True
        except (OSError, InputError) as err:
            _roll_back(order, plan, err)


def _link_new(plan: _Plan) -> None:
    """A new file appears whole and never over one that someone else created meanwhile."""
    assert plan.temp is not None
    try:
        os.link(plan.temp, plan.real)
    except FileExistsError:
        raise InputError(msg("write.created_meanwhile"), plan.write.name) from None
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.lexists(plan.real):
            raise InputError(msg("write.created_meanwhile"), plan.write.name) from None
        os.rename(plan.temp, plan.real)
        return
    _remove(plan.temp)


def _write_direct(plan: _Plan) -> None:
    # O_NONBLOCK: a FIFO with no reader is an error now (ENXIO), not a wait without end.
    fd = os.open(plan.real, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        os.set_blocking(fd, True)
        _write_fd(fd, plan.write.data)
    finally:
        os.close(fd)


def _roll_back(order: list[_Plan], failed: _Plan, err: BaseException) -> None:
    problems = []
    for plan in reversed(order):
        if not plan.done:
            continue
        try:
            if plan.st is None:
                os.unlink(plan.real)
            elif plan.holder is not None:
                os.replace(plan.holder, plan.real)      # the original inode, mode, owner and all
                plan.holder = None
        except OSError as undo_err:
            problems.append((plan, undo_err))
        plan.done = False
    if isinstance(err, InputError):
        if not problems:
            raise err
        reason = err.render()
    else:
        reason = _reason(err)
    if problems:
        plan, first_err = problems[0]
        raise InputError(msg("write.rollback_failed", reason=reason, other=plan.write.name,
                             detail=_reason(first_err), original=plan.holder), failed.write.name)
    raise InputError(msg("write.failed_nothing_changed", reason=reason), failed.write.name)


# ---------------------------------------------------------------- helpers

def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:
        pass          # best effort: the error that brought us here is the one to report


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def _reason(err: BaseException) -> str:
    return getattr(err, "strerror", None) or str(err) or type(err).__name__
