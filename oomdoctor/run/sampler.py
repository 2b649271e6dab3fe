"""GPU memory while a run runs: a thread that reads NVML (nvidia-ml-py's `pynvml`) at a fixed rate.

Each sample holds, per GPU, the device's used memory and how much of it the run's processes hold (NVML's
per-process figures for the pids of the run's process group) versus everyone else. Samples go into a bounded
ring (the last RING_SAMPLES, for the charts) and, one JSON line per GPU per sample, into the timeline file.
Summaries (peak per GPU and when, others' memory, growth, which GPU neared its limit first) are computed
from the running maxima, so a long run's ring can drop old samples without losing its peak.

NVML missing or failing at start leaves `problem` set (a words code) and the thread not started: the run goes
on without a timeline. Pure Python apart from pynvml; no torch.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import IO, Any

from oomdoctor.facts import Msg

MIB = 1 << 20
RING_SAMPLES = 7200          # one hour at 2 Hz
NEAR_LIMIT = 0.95            # a GPU "hits the limit" when its used memory reaches this share of its total


@dataclass
class GpuStats:
    index: int
    name: str
    total_mib: float
    peak_used_mib: float = 0.0       # device used memory at its highest
    peak_run_mib: float = 0.0        # the run's processes at their highest
    peak_at_s: float = 0.0           # seconds after launch of the run's peak (device used when per-process is unknown)
    other_peak_mib: float = 0.0      # processes that are not the run, at their highest
    first_used_mib: float | None = None   # at the first sample
    near_limit_at_s: float | None = None  # first time used memory reached NEAR_LIMIT of the total
    run_series: list = field(default_factory=list)   # (t, run MiB) thinned for growth: one per second


@dataclass(frozen=True)
class Sample:
    t: float                              # seconds since launch
    used_mib: tuple[float, ...]           # per GPU
    run_mib: tuple[float | None, ...]     # per GPU, None when NVML gives no per-process figures


def load_nvml() -> tuple[Any, Msg | None]:
    """(pynvml module initialised, None) or (None, why not): through gpus.py, the one module that imports it."""
    from oomdoctor.gpus import open_nvml

    return open_nvml()


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of a pid from /proc/<pid>/stat, or None when it is gone (or not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = stat[stat.rfind(")") + 2:].split()
    return (int(rest[1]), int(rest[2])) if len(rest) >= 3 else None


class RunPids:
    """Which pids NVML reports belong to the run: members of its process group, or their descendants that
    started a group of their own. A pid is judged once (walking its parents), so a sample costs a few
    dictionary look-ups, not a scan of /proc."""

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid
        self._judged: dict[int, bool] = {pgid: True}

    def __contains__(self, pid: object) -> bool:
        if not isinstance(pid, int):
            return False
        seen = self._judged.get(pid)
        if seen is None:
            seen = self._judge(pid)
            self._judged[pid] = seen
            if len(self._judged) > 4096:
                self._judged = {self.pgid: True, pid: seen}
        return seen

    def visible(self, pid: int) -> bool:
        """Whether /proc shows this pid: NVML inside a container reports the host's pids, which it does not;
        then NVML's per-process figures cannot be told apart."""
        return pid in self._judged and self._judged[pid] or _stat(pid) is not None

    def _judge(self, pid: int) -> bool:
        cur = pid
        for _ in range(64):
            if cur in self._judged:
                return self._judged[cur]
            st = _stat(cur)
            if st is None:
                return False
            ppid, pgrp = st
            if pgrp == self.pgid:
                return True
            if ppid <= 1:
                return False
            cur = ppid
        return False


class Sampler:
    """Samples every `interval_s` from start() to stop(); `timeline` gets one JSON line per GPU per sample."""

    def __init__(self, nvml: Any, *, interval_s: float = 0.5, timeline: IO[str] | None = None,
                 pids: Any = None) -> None:
        self.nvml = nvml
        self.interval_s = interval_s
        self.timeline = timeline
        self.pids = pids if pids is not None else set()     # a container of the run's pids (RunPids)
        self.ring: deque[Sample] = deque(maxlen=RING_SAMPLES)
        self.handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        self.gpus = []
        for i, h in enumerate(self.handles):
            mem = nvml.nvmlDeviceGetMemoryInfo(h)
            try:
                name = _text(nvml.nvmlDeviceGetName(h))
            except Exception:
                name = f"GPU {i}"
            self.gpus.append(GpuStats(i, name, mem.total / MIB))
        self.samples = 0
        self.started = time.time()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.cpu_s = 0.0          # thread CPU time spent sampling (benchmarks/sampler_overhead.py)

    # ---- before launch
    def others_now(self) -> list[tuple[float, int]]:
        """Per GPU: (MiB held by compute processes now, how many processes) — before launch, all are others."""
        out = []
        for h in self.handles:
            procs = self._procs(h)
            out.append((sum(m for _, m in procs if m is not None), len(procs)))
        return out

    def _procs(self, handle: Any) -> list[tuple[int, float | None]]:
        try:
            procs = self.nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        except Exception:
            return []
        out = []
        for p in procs:
            used = getattr(p, "usedGpuMemory", None)
            out.append((int(p.pid), None if used is None else used / MIB))
        return out

    # ---- while running
    def start(self, started: float | None = None) -> None:
        self.started = started or time.time()
        self._thread = threading.Thread(target=self._loop, name="oomdoctor-nvml", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self.sample_once()       # the moment of the exit, so a crash's last state is in
        if self.timeline is not None:
            self.timeline.flush()

    def _loop(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            cpu0 = time.thread_time()
            try:
                self.sample_once()
            except Exception:    # a GPU fallen off the bus must not take the run's output with it
                pass
            self.cpu_s += time.thread_time() - cpu0
            next_at += self.interval_s
            delay = next_at - time.monotonic()
            if delay < 0:
                next_at = time.monotonic()
                delay = 0
            self._stop.wait(delay)

    def sample_once(self) -> Sample:
        t = time.time() - self.started
        mine = self.pids
        used, run = [], []
        lines = []
        for g, h in zip(self.gpus, self.handles):
            mem = self.nvml.nvmlDeviceGetMemoryInfo(h)
            used_mib = mem.used / MIB
            procs = self._procs(h)
            known = [m for _, m in procs]
            visible = getattr(mine, "visible", None)
            # a pid /proc does not show (NVML in a container names the host's pids) could be the run's
            attributable = None not in known and (visible is None or all(visible(p) for p, _ in procs))
            run_mib = sum(m for p, m in procs if p in mine and m is not None) if attributable else None
            other_mib = sum(m for p, m in procs if p not in mine and m is not None)
            used.append(used_mib)
            run.append(run_mib)
            self._account(g, t, used_mib, run_mib, other_mib)
            lines.append({"t": round(t, 3), "gpu": g.index, "used_mib": round(used_mib, 1),
                          "run_mib": None if run_mib is None else round(run_mib, 1), "other_mib": round(other_mib, 1),
                          "total_mib": round(g.total_mib, 1)})
        sample = Sample(t, tuple(used), tuple(run))
        self.ring.append(sample)
        self.samples += 1
        if self.timeline is not None:
            self.timeline.write("".join(json.dumps(line) + "\n" for line in lines))
        return sample

    def _account(self, g: GpuStats, t: float, used: float, run: float | None, other: float) -> None:
        if g.first_used_mib is None:
            g.first_used_mib = used
        # without per-process figures: what the device gained since launch
        mine = run if run is not None else max(0.0, used - g.first_used_mib)
        if mine > g.peak_run_mib:
            g.peak_run_mib = mine
            g.peak_at_s = t
        g.peak_used_mib = max(g.peak_used_mib, used)
        g.other_peak_mib = max(g.other_peak_mib, other)
        if g.near_limit_at_s is None and used >= NEAR_LIMIT * g.total_mib:
            g.near_limit_at_s = t
        if not g.run_series or t - g.run_series[-1][0] >= 1.0:
            g.run_series.append((t, mine))
            if len(g.run_series) > 4 * RING_SAMPLES:
                del g.run_series[::2]


def growth_mib_per_min(series: list) -> float | None:
    """Least-squares slope of the run's memory over the second half of the run (after loading), MiB/min."""
    half = series[len(series) // 2:]
    if len(half) < 3 or half[-1][0] - half[0][0] < 2.0:
        return None
    n = len(half)
    mt = sum(t for t, _ in half) / n
    mm = sum(m for _, m in half) / n
    var = sum((t - mt) ** 2 for t, _ in half)
    if var <= 0:
        return None
    return sum((t - mt) * (m - mm) for t, m in half) / var * 60.0
