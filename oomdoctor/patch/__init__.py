"""Exact, comment-preserving patches for the plan's config changes.

build_patch(edits) -> PatchSet (texts + one unified diff); write_copies / apply_in_place put it on
disk; shell_snippet carries what is not a config value (environment, launch command).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .build import FilePatch, FileStat, PatchSet, build_patch, unified_diff
from .shell import shell_snippet

if TYPE_CHECKING:
    from .apply import apply_in_place, backup_of, check_outputs, write_copies, write_diff

_WRITERS = ("apply_in_place", "backup_of", "check_outputs", "write_copies", "write_diff")


def __getattr__(name: str) -> Any:
    # apply.py (tempfile, hashlib) loads when something is written, not for the diff the report shows.
    if name in _WRITERS:
        from . import apply

        return getattr(apply, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "FilePatch",
    "FileStat",
    "PatchSet",
    "apply_in_place",
    "backup_of",
    "build_patch",
    "check_outputs",
    "shell_snippet",
    "unified_diff",
    "write_copies",
    "write_diff",
]
