"""GPU catalog, --gpu flags, the log's capacity, and NVML through a fake pynvml module."""
from __future__ import annotations

import sys
import types

import pytest

from oomdoctor.errors import InputError
from oomdoctor.facts import CrashEvent, CrashReport
from oomdoctor.gpus import catalog, detect_nvml, hardware_from_flag, hardware_from_log, lookup_gpu

GIB = 1 << 30


@pytest.mark.parametrize("text,name", [
    ("A100-80GB", "A100 80GB SXM"), ("a100 80g", "A100 80GB SXM"), ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
    ("A100-PCIE-40GB", "A100 40GB PCIe"), ("H100", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("RTX4090", "RTX 4090"), ("4090", "RTX 4090"), ("NVIDIA GeForce RTX 3090", "RTX 3090"),
    ("Tesla T4", "Tesla T4"), ("Tesla V100-SXM2-32GB", "V100 32GB"), ("NVIDIA A10G", "A10G"), ("L4", "L4"),
    ("L40S", "L40S"), ("H20", "H20"), ("h200", "H200"), ("AMD Instinct MI300X", "MI300X"),
])
def test_lookup_gpu_by_common_names(text, name):
    assert lookup_gpu(text).name == name


def test_catalog_facts_are_consistent():
    for g in catalog():
        assert 0 < g.usable_gib <= g.total_gib and g.bf16_tflops > 0
    assert not lookup_gpu("T4").bf16 and not lookup_gpu("V100").flash_attn2
    assert lookup_gpu("A100-80GB").bf16 and lookup_gpu("A100-80GB").usable_gib == pytest.approx(79.15)


def test_unknown_gpu_is_input_error():
    with pytest.raises(InputError, match="unknown GPU"):
        lookup_gpu("voodoo5")


@pytest.mark.parametrize("flag,gib", [("24GiB", 23.64), ("24G", 23.64), ("17GB", 17.0), ("16384MiB", 15.77)])
def test_hardware_from_size_flag(flag, gib):
    hw = hardware_from_flag(flag, n_gpus=2)
    assert hw.gpu_gib == pytest.approx(gib) and hw.n_gpus == 2 and hw.source == "flag"


def test_hardware_from_name_flag_carries_arch_facts():
    hw = hardware_from_flag("T4")
    assert (hw.gpu, hw.gpu_gib, hw.bf16, hw.flash_attn2) == ("Tesla T4", 14.58, False, False)


def test_hardware_from_log_uses_capacity_and_other_processes():
    ev = CrashEvent(kind="cuda_oom", line=10, tried_gib=1.0, capacity_gib=79.15, free_gib=0.5, process_gib=70.0)
    hw = hardware_from_log(CrashReport(file="r.log", events=(ev,), gpu_name="NVIDIA A100-SXM4-80GB", world_size=4))
    assert (hw.gpu, hw.gpu_gib, hw.n_gpus, hw.source) == ("A100 80GB SXM", 79.15, 4, "log")
    assert hw.other_procs_gib == pytest.approx(8.65)


def test_hardware_from_log_without_numbers_or_name_is_none():
    assert hardware_from_log(CrashReport(file="r.log", events=(CrashEvent(kind="cuda_oom", line=3),))) is None
    only_name = hardware_from_log(CrashReport(file="r.log", gpu_name="Tesla T4"))
    assert only_name.gpu_gib == 14.58


# ---------------------------------------------------------------- NVML through a fake module

def _fake_nvml(devices, *, mig=None, fail_init=False):
    mod = types.ModuleType("pynvml")
    mod.nvmlMemory_v2 = 2

    class Mem:
        def __init__(self, total, used, reserved):
            self.total, self.used, self.free, self.reserved = total, used, total - used, reserved

    class Proc:
        def __init__(self, used):
            self.usedGpuMemory = used

    def init():
        if fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    mod.nvmlInit = init
    mod.nvmlShutdown = lambda: None
    mod.nvmlDeviceGetCount = lambda: len(devices)
    mod.nvmlDeviceGetHandleByIndex = lambda i: ("dev", i)
    mod.nvmlDeviceGetName = lambda h: devices[h[1]]["name"].encode() if h[0] == "dev" else b"mig"
    def mem(h, version=None):
        d = devices[h[1]] if h[0] == "dev" else mig[h[2]]
        return Mem(d["total"], d.get("used", 0), d.get("reserved", 0))
    mod.nvmlDeviceGetMemoryInfo = mem
    mod.nvmlDeviceGetComputeRunningProcesses = lambda h: [Proc(p) for p in (devices[h[1]] if h[0] == "dev" else mig[h[2]]).get("procs", [])]
    mod.nvmlDeviceGetGraphicsRunningProcesses = lambda h: []
    mod.nvmlDeviceGetMigMode = lambda h: (1, 1) if mig else (0, 0)
    mod.nvmlDeviceGetMaxMigDeviceCount = lambda h: len(mig or [])
    mod.nvmlDeviceGetMigDeviceHandleByIndex = lambda h, j: ("mig", h[1], j)
    return mod


def test_detect_nvml_reads_cards_and_other_processes(monkeypatch):
    dev = {"name": "NVIDIA A100-SXM4-80GB", "total": 80 * GIB, "reserved": int(0.85 * GIB),
           "used": 6 * GIB, "procs": [5 * GIB]}
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([dev, dict(dev, procs=[])]))
    hw = detect_nvml()
    assert (hw.gpu, hw.n_gpus, hw.source) == ("NVIDIA A100-SXM4-80GB", 2, "nvml")
    assert hw.gpu_gib == pytest.approx(79.15) and hw.other_procs_gib == pytest.approx(5.0)
    assert hw.bf16 and hw.usable_gib == pytest.approx(74.15)


def test_detect_nvml_counts_mig_slices(monkeypatch):
    dev = {"name": "NVIDIA A100-SXM4-80GB", "total": 80 * GIB}
    slices = [{"total": 40 * GIB}, {"total": 20 * GIB}]
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([dev], mig=slices))
    hw = detect_nvml()
    assert hw.n_gpus == 2 and hw.gpu_gib == pytest.approx(20.0) and "MIG" in hw.gpu


def test_detect_nvml_is_silent_without_driver(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([], fail_init=True))
    assert detect_nvml() is None
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml([]))
    assert detect_nvml() is None
    monkeypatch.setitem(sys.modules, "pynvml", None)     # import fails
    assert detect_nvml() is None


def test_only_gpus_module_imports_pynvml():
    import pathlib

    root = pathlib.Path(__file__).parents[1] / "oomdoctor"
    users = [p for p in root.rglob("*.py") if "import pynvml" in p.read_text() and p.name != "gpus.py"]
    assert users == []


def test_a_bare_card_number_is_the_card_not_a_size():
    from oomdoctor.gpus import hardware_from_flag

    assert hardware_from_flag("4090").gpu == "RTX 4090"
    assert hardware_from_flag("3090").gpu_gib < 25
    assert hardware_from_flag("24").gpu_gib == pytest.approx(23.64, abs=0.5)
