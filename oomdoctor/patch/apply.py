"""Write a PatchSet to disk: patched copies elsewhere, or in place with a backup and an atomic rename."""
from __future__ import annotations

import hashlib
import os
import stat as stat_mod
import tempfile
from pathlib import Path, PurePosixPath

from ..errors import InputError
from .build import FilePatch, PatchSet


def _target(fp: FilePatch) -> Path:
    return Path(fp.abs_path or fp.path)


def _atomic_write(path: Path, data: bytes, mode: int | None) -> None:
    """Temp file in the same directory + os.replace: readers see the old file or the new one, never half."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _copy_relpath(rel_path: str) -> PurePosixPath:
    # Files outside the cwd ("../ds.json") keep their layout below DIR without climbing out of it.
    parts = [p for p in PurePosixPath(rel_path).parts if p not in ("..", "/", ".")]
    return PurePosixPath(*parts)


def write_copies(patch: PatchSet, out_dir: str | os.PathLike) -> list[Path]:
    """Write each patched file to out_dir/<rel_path>; never over an original. Returns the written paths."""
    out = Path(out_dir)
    originals = {os.path.realpath(_target(fp)) for fp in patch.files}
    plan = []
    for fp in patch.files:
        dest = out / _copy_relpath(fp.rel_path)
        if os.path.realpath(dest) in originals:
            raise InputError("refusing to write a patched copy over an original; choose another directory",
                             str(dest))
        plan.append((fp, dest))
    written = []
    for fp, dest in plan:
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(dest, fp.new_text.encode("utf-8"), None)
        except OSError as err:
            raise InputError(f"cannot write: {err.strerror}", str(dest)) from None
        written.append(dest)
    return written


def _already_applied(fp: FilePatch, path: Path) -> bool:
    try:
        return path.is_file() and path.read_bytes() == fp.new_text.encode("utf-8")
    except OSError:
        return False


def _check_unchanged(fp: FilePatch, path: Path) -> None:
    if fp.created:
        if path.exists() or path.is_symlink():
            raise InputError("was created by someone else since the plan was made; not overwritten", str(fp.path))
        return
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", str(fp.path)) from None
    # Content decides: a touched but identical file is safe to patch, an edited one is not.
    assert fp.old_stat is not None
    if len(data) != fp.old_stat.size or hashlib.sha256(data).hexdigest() != fp.old_stat.sha256:
        raise InputError("changed since it was read; not overwritten (run oomdoctor again)", str(fp.path))


def _backup_path(path: Path, suffix: str) -> Path | None:
    """<file>.orig, or .orig.1, .orig.2 ... when an older backup holds other bytes; None if an identical one exists."""
    data = path.read_bytes()
    candidate = path.with_name(path.name + suffix)
    n = 0
    while candidate.exists():
        if candidate.read_bytes() == data:
            return None
        n += 1
        candidate = path.with_name(f"{path.name}{suffix}.{n}")
    return candidate


def apply_in_place(patch: PatchSet, *, backup_suffix: str = ".orig") -> list[Path]:
    """Write the patched texts over the originals. Returns the paths it wrote.

    Every file is checked before any is written, so a refusal leaves all of them untouched.
    A file that already holds its patched text is skipped, so applying a PatchSet twice is harmless.
    Each original is first copied to <file><backup_suffix> (never clobbering an older backup).
    A symlinked config keeps its link: the file it points to is the one replaced.
    """
    todo = []
    for fp in patch.files:
        path = _target(fp)
        if _already_applied(fp, path):
            continue
        _check_unchanged(fp, path)
        todo.append((fp, path))
    written = []
    for fp, path in todo:
        try:
            real = Path(os.path.realpath(path))
            mode = None
            if not fp.created:
                mode = stat_mod.S_IMODE(real.stat().st_mode)
                if backup_suffix:
                    backup = _backup_path(path, backup_suffix)
                    if backup is not None:
                        _atomic_write(backup, real.read_bytes(), mode)
            else:
                real.parent.mkdir(parents=True, exist_ok=True)
            _atomic_write(real, fp.new_text.encode("utf-8"), mode)
        except OSError as err:
            raise InputError(f"cannot write: {err.strerror}", str(fp.path)) from None
        written.append(path)
    return written


def backup_of(path: str | os.PathLike, backup_suffix: str = ".orig") -> Path | None:
    """The newest backup apply_in_place left beside `path`, for the CLI to name; None if there is none."""
    path = Path(path)
    newest = None
    candidate = path.with_name(path.name + backup_suffix)
    n = 0
    while candidate.exists():
        newest = candidate
        n += 1
        candidate = path.with_name(f"{path.name}{backup_suffix}.{n}")
    return newest
