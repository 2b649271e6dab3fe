"""Put a PatchSet on disk: the diff (--export), patched copies elsewhere (--write), or the user's own
files edited in place with a backup (--apply). Every write goes through patch/txn.py: all files or none.

Each output path is checked against every input and against the other outputs first, so no run writes
a diff or a copy over a config, a log or another output.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from ..errors import InputError
from ..facts import Msg, msg
from .build import FilePatch, PatchSet
from .txn import Outcome, Write, locked, write_all

__all__ = ["apply_in_place", "apply_writes", "backup_of", "check_outputs", "copy_writes", "diff_write",
           "write_copies", "write_diff"]


def _target(fp: FilePatch) -> str:
    return fp.abs_path or fp.path


# ---------------------------------------------------------------- which file is which

def _keys(path: str) -> set:
    """What identifies a path's file: its resolved name, and its inode when it exists (a hard link or a
    /dev/fd name of the same file is the same file)."""
    keys: set = {os.path.realpath(path)}
    try:
        st = os.stat(path)
    except OSError:
        return keys
    keys.add((st.st_dev, st.st_ino))
    return keys


def check_outputs(outputs: Sequence[tuple[str, Msg]], inputs: Iterable[str]) -> None:
    """Refuse an output path that is an input, or that two outputs share. `outputs` pairs each path
    with what it is (for the message); raises InputError naming the output."""
    known: list[tuple[set, str]] = [(_keys(p), p) for p in dict.fromkeys(inputs) if p and p != "-"]
    for path, _ in outputs:
        mine = _keys(path)
        for keys, source in known:
            if mine & keys:
                raise InputError(msg("write.output_is_input", input=source), path)
    seen: list[tuple[set, str, Msg]] = []
    for path, role in outputs:
        mine = _keys(path)
        for keys, _other, other_role in seen:
            if mine & keys:
                raise InputError(msg("write.output_twice", first=other_role, second=role), path)
        seen.append((mine, path, role))


# ---------------------------------------------------------------- the writes of each output

def diff_write(path: str, text: str) -> Write:
    return Write(path, text.encode("utf-8"), make_dirs=False)


def _copy_relpath(rel_path: str) -> PurePosixPath:
    # Files outside the cwd ("../ds.json") keep their layout below DIR without climbing out of it.
    parts = [p for p in PurePosixPath(rel_path).parts if p not in ("..", "/", ".")]
    return PurePosixPath(*parts)


def copy_writes(patch: PatchSet, out_dir: str | os.PathLike) -> list[Write]:
    """One write per patched file, to out_dir/<rel_path>; never over an original."""
    out = Path(out_dir)
    originals = set().union(*(_keys(_target(fp)) for fp in patch.files)) if patch.files else set()
    writes = []
    for fp in patch.files:
        dest = str(out / _copy_relpath(fp.rel_path))
        if _keys(dest) & originals:
            raise InputError(msg("write.copy_over_original"), dest)
        writes.append(Write(dest, fp.new_bytes()))
    return writes


def _already_applied(fp: FilePatch, path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return os.path.isfile(path) and fh.read() == fp.new_bytes()
    except OSError:
        return False


def apply_writes(patch: PatchSet, backup_suffix: str = ".orig", *, skip_applied: bool = True) -> list[Write]:
    """The in-place writes of a PatchSet; a file that already holds its patched text is left out unless
    skip_applied is False. Which files are already applied is only settled under their lock (txn.locked
    of every write of the patch): another run may be between the renames of its own transaction."""
    return [Write(_target(fp), fp.new_bytes(), shown=fp.path, own_file=True,
                  expect=None if fp.created else fp.old_stat, backup_suffix=backup_suffix)
            for fp in patch.files if not (skip_applied and _already_applied(fp, _target(fp)))]


# ---------------------------------------------------------------- the API the CLI and the app use

def write_diff(path: str, text: str, *, inputs: Iterable[str] = ()) -> Outcome:
    """Write the diff atomically (a temporary beside it, then a rename), never over an input."""
    check_outputs([(path, msg("write.role_export"))], inputs)
    return write_all([diff_write(path, text)])[0]


def write_copies(patch: PatchSet, out_dir: str | os.PathLike, *, inputs: Iterable[str] = ()) -> list[Path]:
    """Write each patched file to out_dir/<rel_path>, all or none; never over an original or an input."""
    writes = copy_writes(patch, out_dir)
    check_outputs([(w.path, msg("write.role_copy", source=fp.path)) for w, fp in zip(writes, patch.files)], inputs)
    return [Path(o.path) for o in write_all(writes)]


def apply_in_place(patch: PatchSet, *, backup_suffix: str = ".orig") -> list[Path]:
    """Write the patched texts over the originals, all or none. Returns the paths it wrote.

    Every file is checked before any is written: one that changed since it was read, is read-only,
    has other hard links or belongs to someone else is refused, and then nothing is written. A file
    that already holds its patched text is skipped, so applying twice is harmless. Each original is
    kept as <file><backup_suffix> (.orig, or .orig.1 ... beside an older backup with other bytes),
    with its mode and owner; the new file gets the same mode and owner. A symlinked config keeps its
    link: the file it points to is the one replaced.
    """
    with locked(apply_writes(patch, backup_suffix, skip_applied=False)):
        writes = apply_writes(patch, backup_suffix)
        write_all(writes)
    return [Path(w.path) for w in writes]


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
