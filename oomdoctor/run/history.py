"""Measured peaks of successful runs on this machine, kept in the user's state directory.

One JSON object a line in $XDG_STATE_HOME/oomdoctor/history.jsonl (else ~/.local/state/oomdoctor/, the XDG
base-directory default). An entry holds the run's facts (model, GPU, method, batch, sequence, GPUs) and the
measured peak per GPU (NVML; PyTorch's own figure when the run printed one). Later estimates for the same
model on the same GPU show how many runs measured what. Written by appending one line with O_APPEND, so two
runs finishing together do not tear each other's entries; a line that does not parse is skipped.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FILE_NAME = "history.jsonl"
MAX_READ_BYTES = 16 << 20


def state_dir(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or ""
    if not os.path.isabs(base):     # the spec: a relative path is invalid and ignored
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "oomdoctor")


def history_path(environ: Mapping[str, str] | None = None) -> str:
    return os.path.join(state_dir(environ), FILE_NAME)


def _key_text(value: Any) -> str:
    return str(value or "").strip().lower()


@dataclass(frozen=True)
class Measured:
    """What earlier runs measured for one model on one GPU."""

    runs: int
    peak_gib: float          # the highest per-GPU peak among them
    last_gib: float          # the most recent run's peak


def add(entry: dict, environ: Mapping[str, str] | None = None) -> str:
    path = history_path(environ)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    line = (json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **entry}, ensure_ascii=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return path


def entries(environ: Mapping[str, str] | None = None) -> list[dict]:
    path = history_path(environ)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_READ_BYTES)
    except FileNotFoundError:
        return []
    out = []
    for raw in data.splitlines():
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("peak_gib"), (int, float)):
            out.append(item)
    return out


def clear(environ: Mapping[str, str] | None = None) -> int:
    """Remove the history; returns how many entries it held."""
    n = len(entries(environ))
    try:
        os.unlink(history_path(environ))
    except FileNotFoundError:
        pass
    return n


def measured(model: str, gpu: str, environ: Mapping[str, str] | None = None) -> Measured | None:
    """Earlier successful runs of `model` on `gpu` (names compared case-insensitively)."""
    same = [e for e in entries(environ)
            if _key_text(e.get("model")) == _key_text(model) and _key_text(e.get("gpu")) == _key_text(gpu)]
    if not model or not same:
        return None
    return Measured(len(same), max(float(e["peak_gib"]) for e in same), float(same[-1]["peak_gib"]))


def model_key(report: Any) -> str:
    """The model as histories name it: the config's model, else the shape's name."""
    setup, shape = getattr(report, "setup", None), getattr(report, "shape", None)
    if setup is not None and setup.model:
        return str(setup.model)
    return str(shape.name) if shape is not None and shape.name else ""


def gpu_key(report: Any) -> str:
    hw = getattr(report, "hardware", None)
    return str(hw.gpu) if hw is not None and hw.gpu else ""
