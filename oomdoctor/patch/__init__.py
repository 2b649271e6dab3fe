"""Exact, comment-preserving patches for the plan's config changes.

build_patch(edits) -> PatchSet (texts + one unified diff); write_copies / apply_in_place put it on
disk; shell_snippet carries what is not a config value (environment, launch command).
"""
from __future__ import annotations

from .apply import apply_in_place, backup_of, write_copies
from .build import FilePatch, FileStat, PatchSet, build_patch, unified_diff
from .shell import shell_snippet

__all__ = [
    "FilePatch",
    "FileStat",
    "PatchSet",
    "apply_in_place",
    "backup_of",
    "build_patch",
    "shell_snippet",
    "unified_diff",
    "write_copies",
]
