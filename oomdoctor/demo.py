"""The bundled demo is read-only: what writes to it (apply, in the app or with --apply) works on a copy.

The demo lives inside the installed package; applying a plan there would change every later `--demo`.
A copy goes into ./oomdoctor-demo/ (or oomdoctor-demo-2/, ... when that exists and differs), and the
plan's edits are pointed at it.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from oomdoctor.errors import InputError
from oomdoctor.facts import KeyEdit, msg

DEMO_DIR = Path(__file__).resolve().parent / "data" / "demo"
DEMO_FILES = ("train.yaml", "train.log")


def is_installed_demo(edits: Sequence[KeyEdit]) -> bool:
    """Whether any edit would write inside the bundled demo's folder."""
    root = str(DEMO_DIR)
    return any(os.path.abspath(e.file).startswith(root + os.sep) for e in edits)


def copy_demo(parent: str) -> Path:
    """A fresh copy of the demo's files in `parent`/oomdoctor-demo (the first free or unchanged name)."""
    for n in range(1, 1000):
        folder = Path(parent) / ("oomdoctor-demo" if n == 1 else f"oomdoctor-demo-{n}")
        if not folder.exists():
            folder.mkdir(parents=True)
            for name in DEMO_FILES:
                shutil.copyfile(DEMO_DIR / name, folder / name)
            return folder
        if all((folder / name).is_file() and (folder / name).read_bytes() == (DEMO_DIR / name).read_bytes()
               for name in DEMO_FILES):
            return folder           # an untouched copy from before: use it again
    raise InputError(msg("cli.demo_no_folder"), parent)


def relocate(edits: Sequence[KeyEdit], folder: Path) -> tuple[KeyEdit, ...]:
    """The edits, with every file of the bundled demo replaced by its copy in `folder`."""
    root = str(DEMO_DIR)
    out = []
    for e in edits:
        path = os.path.abspath(e.file)
        if path.startswith(root + os.sep):
            out.append(replace(e, file=str(folder / os.path.relpath(path, root))))
        else:
            out.append(e)
    return tuple(out)
