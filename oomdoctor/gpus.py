"""GPUs: a catalog of common cards, `--gpu` flags, the crash log's capacity, and NVML.

Capacities follow PyTorch's view (`usable_gib`, the "total capacity" an OOM message prints), so a size read
from a log, a flag naming a card, and NVML all agree. This is the only module that imports pynvml.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from oomdoctor.errors import InputError
from oomdoctor.facts import CrashReport, Hardware, msg
from oomdoctor.lazyre import lazy_re
from oomdoctor.records import record

CATALOG_PATH = Path(__file__).with_name("data") / "gpus.yaml"
_MIB = 1 << 20
_GIB = float(1 << 30)


@record
class GpuSpec:
    """One card of the catalog (data/gpus.yaml)."""

    name: str
    total_gib: float            # as the driver reports it
    usable_gib: float           # as PyTorch sees it (OOM message "total capacity")
    bf16: bool
    flash_attn2: bool
    bf16_tflops: float          # dense, datasheet
    arch: str = ""
    mem_gbs: float = 0.0        # memory bandwidth, datasheet GB/s
    aliases: tuple[str, ...] = ()


def _compact(text: str) -> str:
    text = text.lower()
    text = re.sub(r"\b(nvidia|geforce|tesla|amd|instinct|radeon|graphics|device)\b", " ", text)
    return re.sub(r"[^a-z0-9]", "", text)


@lru_cache(maxsize=1)
def catalog() -> tuple[GpuSpec, ...]:
    import yaml

    from oomdoctor.bounded import yaml_loader

    loader = yaml_loader()
    with open(CATALOG_PATH, encoding="utf-8") as fh:
        rows = yaml.load(fh, Loader=loader)["gpus"]
    return tuple(GpuSpec(name=r["name"], total_gib=float(r["total_gib"]), usable_gib=float(r["usable_gib"]),
                         bf16=bool(r["bf16"]), flash_attn2=bool(r["flash_attn2"]),
                         bf16_tflops=float(r["bf16_tflops"]), arch=r.get("arch", ""),
                         mem_gbs=float(r.get("mem_gbs", 0.0)),
                         aliases=tuple(str(a) for a in r.get("aliases", ()))) for r in rows)


# Model tokens, longest first so "a100" is not read as "a10" and "l40s" not as "l4".
_MODEL_TOKENS = ("mi300x", "mi250x", "mi300", "mi250", "a6000", "l40s", "a100", "a800", "a10g", "h100", "h800",
                 "h200", "h20", "b200", "v100", "l40", "l20", "a40", "a10", "l4", "t4", "3090", "4090d", "4090",
                 "5090")


def lookup_gpu(text: str) -> GpuSpec:
    """A catalog card from a name as people and drivers write it: "A100-80GB", "a100 80g", "RTX4090", "4090"."""
    spec = _find_gpu(text)
    if spec is None:
        names = ", ".join(g.name for g in catalog())
        raise InputError(msg("hardware.unknown_gpu", name=repr(text), known=names))
    return spec


# One run asks for the same few names many times (the planner times every candidate plan on the card); the
# catalog is read once and never changes within a process, so each name is looked up once.
@lru_cache(maxsize=256)
def _find_gpu(text: str) -> GpuSpec | None:
    key = _compact(text)
    if not key:
        return None
    for g in catalog():
        if key == _compact(g.name) or key in (_compact(a) for a in g.aliases):
            return g
    token = next((t for t in _MODEL_TOKENS if t in key), None)
    if token is None:
        return None
    # The token must be the card's own token, not a prefix of a longer one in the catalog name.
    cands = [g for g in catalog()
             if next((t for t in _MODEL_TOKENS if t in _compact(g.name) or any(t == _compact(a) for a in g.aliases)), None) == token]
    if not cands:
        return None
    size = re.search(r"(\d{2,3})\s*g", text.lower())
    if size:
        gib = float(size.group(1))
        sized = [g for g in cands if abs(g.total_gib - gib) <= 0.06 * gib]
        cands = sized or cands
    if "pcie" in key:
        cands = [g for g in cands if "pcie" in _compact(g.name)] or cands
    else:
        cands = [g for g in cands if "pcie" not in _compact(g.name)] or cands
    return cands[0]


_SIZE_RE = lazy_re(r"^\s*(\d+(?:\.\d+)?)\s*(gib|gb|g|mib|mb|m)?\s*$", re.I)


def hardware_from_flag(text: str, n_gpus: int = 1) -> Hardware:
    """`--gpu`: a card name, or a size ("24GiB", "80GB", "24G"). GB is read as GiB, as cards are sold."""
    m = _SIZE_RE.match(text or "")
    # A bare number is a card ("4090", "3090") when the catalog knows one by it; a size needs no unit
    # only when it is plausibly one ("24", "80").
    if m and not m.group(2) and float(m.group(1)) > 256:
        m = None
    if m:
        value = float(m.group(1))
        unit = (m.group(2) or "g").lower()
        gib = value / 1024 if unit.startswith("m") else value
        if gib <= 0:
            raise InputError(msg("hardware.size_not_positive", text=text))
        # A size that is a known card's marketing size gets that card's PyTorch-visible capacity.
        near = [g for g in catalog() if abs(g.total_gib - gib) <= 0.03 * gib]
        usable = min((g.usable_gib for g in near), default=gib)
        return Hardware(gpu=f"{gib:g} GiB GPU", gpu_gib=usable, n_gpus=max(1, n_gpus), source="flag")
    spec = lookup_gpu(text)
    return Hardware(gpu=spec.name, gpu_gib=spec.usable_gib, n_gpus=max(1, n_gpus), source="flag",
                    bf16=spec.bf16, flash_attn2=spec.flash_attn2)


def hardware_from_log(crash: CrashReport, n_gpus: int = 1) -> Hardware | None:
    """Capacity from the primary OOM event, card name from the log, memory other processes held."""
    ev = crash.primary
    spec = _find_gpu(crash.gpu_name) if crash.gpu_name else None
    capacity = ev.capacity_gib if ev is not None else None
    if capacity is None:
        if spec is None:
            return None
        capacity = spec.usable_gib
    other = 0.0
    if ev is not None:
        if ev.other_processes_gib is not None:
            other = ev.other_processes_gib
        elif ev.capacity_gib is not None and ev.free_gib is not None and ev.process_gib is not None:
            # 2.x message: capacity = free + this process + everyone else.
            other = max(0.0, ev.capacity_gib - ev.free_gib - ev.process_gib)
    if other < 0.05:
        other = 0.0
    gpus = n_gpus if n_gpus > 1 else (crash.world_size or 1)
    # No name in the log: the card is its size; views say "a 79.2 GiB GPU", never a placeholder.
    return Hardware(gpu=spec.name if spec else (crash.gpu_name or ""),
                    gpu_gib=capacity,
                    n_gpus=max(1, gpus), source="log",
                    bf16=spec.bf16 if spec else True, flash_attn2=spec.flash_attn2 if spec else True,
                    other_procs_gib=round(other, 3), host_ram_gib=crash.host_ram_gib)


def _host_ram_gib() -> float | None:
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / _GIB
    except (ValueError, OSError, AttributeError):
        return None


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def detect_nvml() -> Hardware | None:
    """The GPUs of this machine through NVML, or None (no package, no driver, no GPU, any NVML error)."""
    try:
        import pynvml
    except Exception:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        devices = []        # (name, capacity_gib, other_gib)
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = _text(pynvml.nvmlDeviceGetName(handle))
            slices = _mig_slices(pynvml, handle)
            if slices:
                devices += [(f"{name} MIG {n}", cap, other) for n, cap, other in slices]
            else:
                devices.append((name, *_memory(pynvml, handle)))
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    if not devices:
        return None
    # The run is as tight as its smallest device.
    name, cap, other = min(devices, key=lambda d: d[1] - d[2])
    spec = _find_gpu(name.split(" MIG ")[0])
    return Hardware(gpu=name, gpu_gib=round(cap, 2), n_gpus=len(devices), source="nvml",
                    bf16=spec.bf16 if spec else True, flash_attn2=spec.flash_attn2 if spec else True,
                    other_procs_gib=round(other, 3), host_ram_gib=_host_ram_gib())


def _memory(pynvml, handle) -> tuple[float, float]:
    """(capacity as PyTorch would see it, memory held by running processes) in GiB."""
    try:
        info = pynvml.nvmlDeviceGetMemoryInfo(handle, version=pynvml.nvmlMemory_v2)
    except Exception:
        info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    total = float(info.total)
    reserved = float(getattr(info, "reserved", 0) or 0)   # driver/firmware share (v2 API), invisible to PyTorch
    capacity = (total - reserved) / _GIB
    held = None
    try:
        procs = list(pynvml.nvmlDeviceGetComputeRunningProcesses(handle))
        try:
            procs += list(pynvml.nvmlDeviceGetGraphicsRunningProcesses(handle))
        except Exception:
            pass
        sizes = [p.usedGpuMemory for p in procs if getattr(p, "usedGpuMemory", None) is not None]
        if sizes or not procs:
            held = sum(sizes) / _GIB
    except Exception:
        held = None
    if held is None:
        # Without per-process rights, what is used is the best guess of what others hold.
        held = max(0.0, float(info.used) - reserved) / _GIB
    return capacity, held


def _mig_slices(pynvml, handle) -> list[tuple[str, float, float]]:
    try:
        current, _pending = pynvml.nvmlDeviceGetMigMode(handle)
    except Exception:
        return []
    if not current:
        return []
    out = []
    for j in range(pynvml.nvmlDeviceGetMaxMigDeviceCount(handle)):
        try:
            mig = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, j)
        except Exception:
            continue
        cap, other = _memory(pynvml, mig)
        out.append((f"{round(cap)}gb", cap, other))
    return out


def open_nvml():
    """(the initialised pynvml module, None), or (None, why not as a Msg): the one door to NVML for the run
    watcher's sampler (oomdoctor run), which calls the module's functions itself and shuts it down."""
    try:
        import pynvml
    except Exception:
        return None, msg("watch.no_nvml_module")
    try:
        pynvml.nvmlInit()
        if pynvml.nvmlDeviceGetCount() < 1:
            pynvml.nvmlShutdown()
            return None, msg("watch.no_gpus")
    except Exception as err:        # NVMLError: no driver, no permission
        return None, msg("watch.nvml_failed", error=str(err) or type(err).__name__)
    return pynvml, None
