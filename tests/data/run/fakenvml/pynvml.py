"""A stand-in for nvidia-ml-py's `pynvml`, for tests: the same names, arguments and result shapes as the real
module (nvmlInit, nvmlShutdown, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex, nvmlDeviceGetName,
nvmlDeviceGetMemoryInfo -> .total/.free/.used in bytes, nvmlDeviceGetComputeRunningProcesses -> [.pid,
.usedGpuMemory], NVMLError), over a fake machine described by environment variables:

    FAKE_NVML_GPUS     "NVIDIA A100-SXM4-80GB:81920,NVIDIA A100-SXM4-80GB:81920" (name:MiB per GPU)
    FAKE_NVML_OTHER    MiB held on GPU 0 by another process (pid 1: one /proc shows, not the run's), default 0
    FAKE_NVML_STATE    file the fake trainer writes {"pid", "used_mib": [per GPU]} to
    FAKE_NVML_FAIL     "init": nvmlInit raises NVMLError (no driver)
    FAKE_NVML_PID_OFFSET  added to the run's pid, as NVML inside a container reports the host's pids
"""
import json
import os

NVML_SUCCESS = 0
NVML_ERROR_DRIVER_NOT_LOADED = 9
OTHER_PID = 1


class NVMLError(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value


class c_nvmlMemory_t:
    def __init__(self, total, used):
        self.total = total
        self.used = used
        self.free = total - used


class c_nvmlProcessInfo_t:
    def __init__(self, pid, used):
        self.pid = pid
        self.usedGpuMemory = used


_ready = [False]


def _gpus():
    spec = os.environ.get("FAKE_NVML_GPUS", "NVIDIA A100-SXM4-80GB:81920")
    out = []
    for part in spec.split(","):
        name, _, mib = part.rpartition(":")
        out.append((name, int(mib) << 20))
    return out


def _check():
    if not _ready[0]:
        raise NVMLError(1)      # NVML_ERROR_UNINITIALIZED


def nvmlInit():
    if os.environ.get("FAKE_NVML_FAIL") == "init":
        raise NVMLError(NVML_ERROR_DRIVER_NOT_LOADED)
    _ready[0] = True


def nvmlShutdown():
    _check()
    _ready[0] = False


def nvmlDeviceGetCount():
    _check()
    return len(_gpus())


def nvmlDeviceGetHandleByIndex(index):
    _check()
    if not 0 <= index < len(_gpus()):
        raise NVMLError(2)      # NVML_ERROR_INVALID_ARGUMENT
    return ("handle", index)


def nvmlDeviceGetName(handle):
    return _gpus()[handle[1]][0]


def _state():
    path = os.environ.get("FAKE_NVML_STATE")
    if not path:
        return None
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def nvmlDeviceGetComputeRunningProcesses(handle):
    _check()
    index = handle[1]
    procs = []
    other = int(os.environ.get("FAKE_NVML_OTHER", "0") or 0)
    if other and index == 0:
        procs.append(c_nvmlProcessInfo_t(OTHER_PID, other << 20))
    st = _state()
    if st and index < len(st["used_mib"]):
        pid = st["pid"] + int(os.environ.get("FAKE_NVML_PID_OFFSET", "0") or 0)
        procs.append(c_nvmlProcessInfo_t(pid, int(st["used_mib"][index]) << 20))
    return procs


def nvmlDeviceGetMemoryInfo(handle):
    _check()
    total = _gpus()[handle[1]][1]
    used = (300 << 20) + sum(p.usedGpuMemory for p in nvmlDeviceGetComputeRunningProcesses(handle))
    return c_nvmlMemory_t(total, min(total, used))
