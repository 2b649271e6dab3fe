"""What OOM messages (and their look-alikes) look like, and how to read numbers out of them.

Shapes follow docs/reference/oom-log-formats.md (F01..F28 messages, P01..P09 line prefixes).
"""
from __future__ import annotations

import re
from dataclasses import field

from oomdoctor.facts import GIB
from oomdoctor.lazyre import LazyPattern, lazy_re
from oomdoctor.records import record

SIZE = r"\d+(?:\.\d+)? ?(?:[KMGTPE]i?B|bytes|B)"
_SIZE_RE = lazy_re(r"(\d+(?:\.\d+)?) ?([KMGTPE]i?B|bytes|B)")
# PyTorch's allocator, MPS, DeepSpeed and vLLM all divide by 1024 even where they print "GB",
# so decimal-looking labels are read as binary units.
_UNIT_GIB = {"B": 1 / GIB, "bytes": 1 / GIB, "K": 1 / (1 << 20), "M": 1 / 1024, "G": 1.0, "T": 1024.0,
             "P": 1024.0 ** 2, "E": 1024.0 ** 3}


def size_gib(text: str | None) -> float | None:
    """'356.88 MiB' -> 0.3485 (GiB). None when the text is not a size."""
    if not text:
        return None
    m = _SIZE_RE.search(text)
    if not m:
        return None
    unit = m.group(2)
    factor = _UNIT_GIB.get(unit) if unit in ("B", "bytes") else _UNIT_GIB.get(unit[0])
    if factor is None:
        return None
    return float(m.group(1)) * factor


# ------------------------------------------------------------------ line clean-up

_ANSI = lazy_re(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|(?<![\w\]])\[(?:\d{1,3};)*\d{1,3}m")
_PREFIX = lazy_re(
    r"""^(?:
      \[rank(?P<rank>\d+)\]:[ ]?                                              # P01 torch>=2.4
    | \[default(?P<drank>\d+)\]:[ ]?                                          # torchrun --tee / elastic
    | (?P<task>\d{1,4}):[ ](?=\S)                                             # P02 srun --label
    | (?:\d{1,3}\.){3}\d{1,3}:[ ]                                             # P03 pdsh IP
    | [a-z][a-z0-9-]*-(?:worker|node|gpu|host)[a-z0-9-]*:[ ]                  # P03 pdsh host
    | \((?:raylet|[A-Za-z_][\w.]*[ ]pid=\d+(?:,[ ]ip=[\d.]+)?)\)[ ]           # P04 Ray
    | \((?:EngineCore(?:_DP\d+)?|VllmWorker(?:[ ]rank=(?P<vrank>\d+)|-\d+)?|Worker(?:_[A-Z]+\d+)*|APIServer)[ ]pid=\d+\)[ ]   # P05 vLLM V1
    | (?:INFO|WARNING|ERROR|DEBUG|CRITICAL)[ ]\d\d-\d\d[ ]\d\d:\d\d:\d\d(?:\.\d+)?[ ]\[?[\w.]+:\d+\][ ]   # vLLM's logger
    | [a-z][\w.-]*\s+\|[ ]                                                    # P06 docker compose
    | \d{4}-\d\d-\d\d[ ]\d\d:\d\d:\d\d\.\d+[ ]\|[ ][A-Z]+\s*\|[ ](?:[\w.:<>-]+[ ]-[ ])?   # loguru
    | ERROR:[\w.]+:                                                           # stdlib logging
    | \[\d{4}-\d\d-\d\d[ ]\d\d:\d\d:\d\d,\d+\][ ]\[(?:INFO|WARNING|ERROR)\][ ](?:\[[\w.]+:\d+:\w+\][ ])?   # DeepSpeed logger
    | [IWEF]\d{4}[ ]\d\d:\d\d:\d\d\.\d+[ ]+\d+[ ](?:[\w/.-]+:\d+\][ ])?       # glog
    | \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z[ ]                                 # GitHub Actions
    | [│┃║|][ ]?                                                              # P08 rich box / table edge
    )""",
    re.X,
)
_BOX_RIGHT = lazy_re(r"\s*[│┃║]\s*$", needs=("│", "┃", "║"))


@record(frozen=False)
class CleanLine:
    """A log line without colour codes and line prefixes, and the rank a prefix named."""

    text: str
    rank: int | None = None
    had_prefix: bool = False


def clean(raw: str) -> CleanLine:
    """Drop ANSI colour, CR, and any stack of line prefixes; remember the rank a prefix named."""
    text = raw.rstrip("\r")
    if text[:1] == "\ufeff":          # UTF-8's byte-order mark (Notepad, PowerShell 5's Out-File -Encoding UTF8)
        text = text[1:]
    if "\r" in text:               # tqdm redraws: the last visible segment is what the terminal showed
        segs = [seg for seg in text.split("\r") if seg.strip()]
        text = segs[-1] if segs else ""
    if "\x1b" in text or "m" in text[:12]:
        text = _ANSI.sub("", text)
    rank = None
    had = False
    for _ in range(4):
        m = _PREFIX.match(text)
        if not m or m.end() == 0:
            break
        had = True
        for key in ("rank", "drank", "vrank", "task"):
            if m.group(key) is not None and (rank is None or key in ("rank", "drank", "vrank")):
                rank = int(m.group(key))
        text = text[m.end():]
    if had and _BOX_RIGHT.search(text):
        text = _BOX_RIGHT.sub("", text)
    return CleanLine(text.rstrip(), rank, had)


def clean_segment(raw: str, needle: str) -> CleanLine:
    """Like clean(), but for a line with carriage returns keep the segment holding `needle`."""
    if "\r" in raw.rstrip("\r"):
        segs = [s for s in raw.split("\r") if needle in s]
        if segs:
            lead = clean(raw.split("\r", 1)[0])      # the prefix lives on the first segment
            inner = clean(segs[-1])
            return CleanLine(inner.text, inner.rank if inner.rank is not None else lead.rank, lead.had_prefix or inner.had_prefix)
    return clean(raw)


# ------------------------------------------------------------------ message regexes

F01 = lazy_re(
    rf"(?P<backend>CUDA|HIP|XPU) out of memory\. ?Tried to allocate (?P<req>{SIZE})\.? ?(?:GPU|Device) ?(?P<dev>\d*) has a total capac(?:i)?ty of (?P<total>{SIZE}) of which (?P<free>{SIZE}) is free\."
, needs=("has a total capac",))
F01_HEAD = lazy_re(rf"(?P<backend>CUDA|HIP|XPU) out of memory\. ?Tried to allocate (?P<req>{SIZE})\.?(?: ?(?:GPU|Device) ?(?P<dev>\d*))?")
F01_TOTAL = lazy_re(rf"has a total capac(?:i)?ty of (?P<total>{SIZE})", needs=("has a total capac",))
F01A = lazy_re(rf"is free\. ?(?P<allowed>{SIZE}) allowed;", needs=(" allowed;",))
F01B = lazy_re(rf"Process (?P<pid>\d+) has (?P<used>{SIZE}) memory in use", needs=(" memory in use",))
F01C = lazy_re(rf"Including non-PyTorch memory, this process has (?:\*\*)?(?P<self>{SIZE})(?:\*\*)? memory in use", needs=("Including non-PyTorch memory, this process has ",))
F01D = lazy_re(
    rf"Of the allocated memory (?P<alloc>{SIZE}) is allocated by PyTorch, (?:with (?P<priv>{SIZE}) allocated in private pools \(e\.g\., (?:CUDA|HIP) Graphs\), )?and (?P<unalloc>{SIZE}) is reserved by PyTorch but unallocated"
, needs=("Of the allocated memory ",))
# On ROCm the same allocator's message is hipified, "HIP out of memory. Tried to allocate 2.00 MiB (GPU 0; 512.00 MiB
# total capacity; ...)" (torch 2.0's ROCm build: hipify rewrites CUDA to HIP in c10/cuda's strings).
F02 = lazy_re(
    rf"(?P<backend>CUDA|HIP|NPU|XPU) out of memory\. Tried to allocate (?P<req>{SIZE}) \((?P<devtype>GPU|NPU|XPU) (?P<dev>\d+); (?P<total>{SIZE}) total capacity; (?P<alloc>{SIZE}) already allocated;(?: (?P<active>{SIZE}) current active;)? (?P<free>{SIZE}) free;(?: (?P<allowed>{SIZE}) allowed;)?(?: (?P<reserved>{SIZE}) reserved in total by PyTorch| (?P<cached>{SIZE}) cached)"
, needs=(" total capacity; ",))
# ... its head when the rest was cut (a title's length, a paste): the capacity clause comes first after the device,
# "(GPU 0; 10.92 GiB total capacity; ...", and a cut after "total" still names the card's size
F02_HEAD = lazy_re(rf"(?P<backend>CUDA|HIP|NPU|XPU) out of memory\. Tried to allocate (?P<req>{SIZE}) \((?P<devtype>GPU|NPU|XPU) (?P<dev>\d+);"
                   rf"(?: (?P<total>{SIZE}) total\b)?", needs=("(GPU ", "(NPU ", "(XPU "))
# torch's XPU allocator (c10/xpu/XPUCachingAllocator.cpp) and IPEX raise "XPU out of memory" like CUDA's, and a
# report may keep only that first sentence.
F03 = lazy_re(rf"(?P<backend>CUDA|HIP|NPU|XPU) out of memory\.?(?: Tried to allocate (?P<req>{SIZE}))?")
# `CUDA Error: out of memory at .../cumem_allocator.cpp:62`: vLLM's sleep-mode wake_up (RL rollouts)
F04 = lazy_re(r"(?:CUDA|HIP) (?:driver )?[Ee]rror ?(?:\(2\) ?)?: ?out of memory|cudaErrorMemoryAllocation|hipErrorOutOfMemory|"
              # torch 0.x's THCGeneral "cuda runtime error (%d) : %s" (MXNet "CUDA: out of memory"); a copy that
              # drops its spaces ("cuda runtime error(2): out of memory", torch's own FAQ) is the same report
              r"cuda runtime error ?\(2\) ?: ?out of memory|CUDA: out of memory|"
              r"(?:CUDA|HIP) error 2 at \S+: out of memory|"     # ggml's CUDA_CHECK: "CUDA error 2 at ggml-cuda.cu:359: out of memory"
              # a check macro printing the CUDA runtime's error 2 (cudaErrorMemoryAllocation) with its string: torch
              # 0.x's THCGeneral.c __THCudaCheckWarn "THCudaCheck FAIL file=F line=N error=2 : out of memory",
              # spconv/tensorview's "cuda failed with error 2 out of memory"
              r"(?i:THCudaCheck|cuda)\b[^\n]{0,200}?\berror[= ]2 ?:? ?out of memory|"
              # TurboMind's and FasterTransformer's check(): "[TM][ERROR] CUDA runtime error: " + cudaGetErrorString
              # (lmdeploy src/turbomind/utils/cuda_utils.h, FasterTransformer's cuda_utils.h)
              r"CUDA runtime error: out of memory|"
              # the runtime call named with cudaGetErrorString's words: MXNet's GPU storage manager ("cudaMalloc
              # failed: out of memory", src/storage/), ggml's buffer allocation without its head
              r"\b(?:cuda|hip)Malloc failed: out of memory")
# bitsandbytes' CUDA_CHECK_RETURN (cudaMallocManaged of a paged optimizer, its kernels): "Error out of
# memory at line 380 in file /.../bitsandbytes/csrc/pythonInterface.c"
F04_CHECK = lazy_re(r"\bError out of memory at line \d+ in file (?P<file>\S+)", needs=("Error out of memory at line ",))
F05 = lazy_re(
    rf"MPS backend out of memory \(MPS allocated: (?P<alloc>{SIZE}), other allocations: (?P<other>{SIZE}), max allowed: (?P<max>{SIZE})\)\. Tried to allocate (?P<req>{SIZE})"
, needs=("MPS backend out of memory (MPS allocated: ",))
F05_HEAD = lazy_re(r"MPS backend out of memory", needs=("MPS backend out of memory",))
# MPSAllocator.mm refuses one buffer past the device's maximum buffer length before trying:
# TORCH_CHECK(size < m_max_buffer_size, "Invalid buffer size: ", format_size(size)).
F05_BUFFER = lazy_re(rf"Invalid buffer size: ?(?P<req>{SIZE})?", needs=("Invalid buffer size:",))
# torch's caching allocator past a per-process memory fraction (torch.cuda.set_per_process_memory_fraction):
# "Allocation on device 0 would exceed allowed memory. (out of memory)" then "Currently allocated : ...",
# "Requested : 4.83 GiB", "Device limit : ..." on lines of their own (c10/cuda/CUDACachingAllocator.cpp);
# a server that quotes it in a repr shows the line breaks as \n.
F_FRACTION = lazy_re(r"Allocation on device (?P<dev>\d+) would exceed allowed memory\. \(out of memory\)",
                     needs=("would exceed allowed memory",))
F_FRACTION_REQ = lazy_re(rf"Requested\s*: (?P<req>{SIZE})", needs=("Requested",))
F_FRACTION_LIMIT = lazy_re(rf"Device limit\s*: (?P<limit>{SIZE})", needs=("Device limit",))
# TGI's warmup catches torch.cuda.OutOfMemoryError and raises its own words (text-generation-inference
# server/text_generation_server/models/flash_causal_lm.py, FlashCausalLM.warmup).
F_TGI = lazy_re(r"Not enough memory to handle \d+ prefill tokens", needs=("Not enough memory to handle ",))
F06 = lazy_re(r"CUBLAS_STATUS_ALLOC_FAILED", needs=("CUBLAS_STATUS_ALLOC_FAILED",))
F07_ALLOC = lazy_re(r"CUDNN_STATUS_ALLOC_FAILED", needs=("CUDNN_STATUS_ALLOC_FAILED",))
F08 = lazy_re(r"NCCL WARN (?:.*?)(?:Cuda failure '?out of memory'?|Failed to CUDA calloc (?P<bytes>\d+) bytes)|Failed to CUDA calloc (?P<bytes2>\d+) bytes|ncclUnhandledCudaError.*out of memory|NCCL error.*out of memory", needs=("NCCL WARN ", "Failed to CUDA calloc ", "ncclUnhandledCudaError", "NCCL error"))
# ggml (llama.cpp, ollama, llamafile) asking its CUDA/HIP backend for a buffer (weights, KV cache, compute
# graph): ggml-cuda.cu's ggml_backend_cuda_buffer_type_alloc_buffer prints
# "allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory" (HIP builds: hipMalloc).
F_GGML = lazy_re(r"allocating (?P<req>[\d.]+ ?[KMG]i?B) on device (?P<dev>\d+): (?P<api>cuda|hip)Malloc failed: out of memory",
                 needs=("Malloc failed: out of memory",))
# ... and its model loader's own words when a backend buffer cannot be had (llama-model.cpp:
# "unable to allocate CUDA0 buffer", "unable to allocate backend buffer"); old ggml's CUDA_CHECK quoted
# without its head: "ggml-cuda.cu:5048: out of memory".
F_GGML_LOAD = lazy_re(r"[Uu]nable to allocate (?P<dev>CUDA\d*|ROCm\d*|Vulkan\d*|SYCL\d*|backend) buffer|ggml-cuda\.cu:\d+: out of memory",
                      needs=("nable to allocate ", "ggml-cuda.cu:"))
# ... and its graph allocator reserving a compute buffer: ggml-alloc.c ggml_gallocr_reserve_n prints "%s: failed to
# allocate %s buffer of size %zu" with the buffer type's name (ggml_backend_buft_name) and the size in bytes. The
# CUDA and ROCm backends report their own cudaMalloc failure just above it (F_GGML); Metal's own report
# (ggml-metal's "error: failed to allocate buffer, size = N MiB") names no device, so this line is the one that does.
F_GGML_METAL = lazy_re(r"failed to allocate Metal buffer of size (?P<bytes>\d+)", needs=("ailed to allocate Metal buffer",))
# ... and the Metal backend's own buffer allocation, named by its function (ggml-metal's
# ggml_backend_metal_buffer_type_alloc_buffer: "error: failed to allocate buffer, size = %8.2f MiB"): the buffer type
# is Metal's whatever the words after it say.
F_GGML_METAL_OWN = lazy_re(r"\bggml_(?:backend_)?metal\w*: error: failed to allocate buffer(?:, size = +(?P<mib>[\d.]+) ?MiB)?",
                           needs=("failed to allocate buffer",))
# MLX's Metal allocator (mlx/backend/metal/allocator.cpp MetalAllocator::malloc_or_wait) throws
# std::runtime_error("[malloc_or_wait] Unable to allocate N bytes."); newer MLX names the function [metal::malloc],
# and refuses a buffer over the device's limit before trying ("[metal::malloc] Attempting to allocate N bytes which is
# greater than the maximum allowed buffer size of M bytes.", MetalAllocator::malloc against maxBufferLength).
F_MLX = lazy_re(r"\[(?:malloc_or_wait|metal::malloc|malloc)\] (?:Unable|Attempting) to allocate (?P<bytes>\d+) bytes",
                needs=("] Unable to allocate ", "] Attempting to allocate "))
# Intel XPU. IPEX's caching allocator refuses one block over 4 GB before trying (Arc/Flex without relaxed
# allocation limits) and says how much it was asked, with the legacy statistics; IPEX's kernel submission
# turns a Level Zero out-of-resources error into "Allocation is out of device memory on current platform."
# (intel-extension-for-pytorch csrc, DPCPP_EXT_SUBMIT; ipex-llm's axolotl troubleshooting).
F_XPU_4GB = lazy_re(rf"Current platform can NOT allocate memory block with size larger than 4GB! ?Tried to allocate (?P<req>{SIZE})"
                    rf"(?: \((?:GPU|XPU) +(?P<dev>\d+); (?P<total>{SIZE}) total capacity; (?P<alloc>{SIZE}) already allocated;"
                    rf"(?: (?P<reserved>{SIZE}) reserved in total by PyTorch)?)?", needs=("allocate memory block with size larger than",))
F_XPU_DEVICE = lazy_re(r"Allocation is out of device memory on current platform", needs=("out of device memory on current platform",))
# Level Zero, the driver under Intel GPUs' runtimes, and oneAPI's Unified Runtime over it name the error code
# (ze_api.h ze_result_t, ur_api.h ur_result_t): "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY".
F_XPU_ZE = lazy_re(r"\b(?:ZE|UR)_RESULT_ERROR_OUT_OF_DEVICE_MEMORY\b", needs=("_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",))
# TensorFlow/XLA's stream executor: "failed to allocate 890.06M (933298432 bytes) from device:
# HIP_ERROR_OutOfMemory" (rocm_driver.cc) or "...: CUDA_ERROR_OUT_OF_MEMORY: out of memory" (cuda_driver.cc).
# Old ROCm printed the HIP code itself: "from device: hipError_t(1002)", 1002 being hipErrorMemoryAllocation
# before HIP renumbered its errors (hip_runtime_api.h of ROCm 1.x-2.x; TF's rocm_driver.cc formats it).
# hipTensorFlow printed the size only as strings::HumanReadableNumBytes gives it (binary units, "8.00G"), and
# the driver's pinned host allocation says "failed to alloc N bytes on host: CUDA_ERROR_OUT_OF_MEMORY"
# (stream_executor/cuda/cuda_driver.cc GpuDriver::HostAllocate).
F_SE_ALLOC = lazy_re(r"failed to allocate (?P<human>[\d.]+[KMGTPE]?)(?:iB|B)? (?:\((?P<bytes>\d+) bytes\) )?from device: (?P<err>HIP_ERROR_OutOfMemory|hipError_t\(1002\)|CUDA_ERROR_OUT_OF_MEMORY)|"
                     r"failed to alloc (?P<hbytes>\d+) bytes on host: (?P<herr>CUDA_ERROR_OUT_OF_MEMORY|HIP_ERROR_OutOfMemory)",
                     needs=("from device: ", " bytes on host: "))
# The CUDA driver API's name for the failure (cuda.h CUresult 2), as a title or a wrapper quotes it alone.
F_CU_RESULT = lazy_re(r"\bCUDA_ERROR_OUT_OF_MEMORY\b", needs=("CUDA_ERROR_OUT_OF_MEMORY",))
# NCCL's CUDACHECK, printed on its own line under torch's DistBackendError ("Last error:").
F08_BARE = lazy_re(r"^\s*Cuda failure '?out of memory'?\s*$", needs=("Cuda failure",))
# systemd-oomd names the cgroup it killed and why: memory pressure, or swap ("due to swap used" before v250,
# "due to memory used (N) / total (N) and swap used (N) / total (N) being more than N%" since) (src/oom/oomd-manager.c);
# the service manager then logs "systemd-oomd killed N process(es) in this unit." on the unit (src/core/unit.c).
F_OOMD = lazy_re(r"systemd-oomd(?:\[\d+\])?: Killed \S+ due to (?:memory pressure|swap used|memory used)|systemd-oomd killed \d+ process\(es\) in this unit", needs=("systemd-oomd",))
# A shell's job-status report of a killed job: bash `script: line 10:    93 Killed    cmd`, zsh
# `[1]    26478 killed     python test.py` (jobs.c / zsh's jobs.c print the pid, the status word, the command).
# The status word is strsignal(SIGKILL), which the C library translates: "Killed", zh_CN "已杀死", es
# "Terminado (killed)" (glibc po/zh_CN.po, po/es.po).
KILLED_WORDS = r"(?:Killed|已杀死|Terminado \(killed\))"
F13_JOB = lazy_re(rf"(?:\bline \d+:|\[\d+\]\s*[+-]?)\s+\d+\s+(?:{KILLED_WORDS}|killed)(?:\s+\S|\s*$)",
                  needs=("illed", "已杀死"))
# c10/core/impl/alloc_cpu.cpp: "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes." (older
# releases: "can't allocate memory"); the words after the allocator's name are c10's alone, so a title that
# kept only `Allocator: not enough memory: ...` is the same failure.
F09 = lazy_re(r"(?:can't allocate memory|not enough memory): you tried to allocate (?P<bytes>\d+) bytes", needs=("you tried to allocate ",))
# Lua Torch's THAlloc/THRealloc and c10's CPUAllocator before 2019 counted in whole GB: "$ Torch: not enough memory:
# you tried to reallocate 11GB. Buy new RAM!" (torch7 lib/TH/THGeneral.c; pytorch #20618); the truncated figure is
# no request size. c10's words alone (a title that kept no figure) are the same failure.
F09_GB = lazy_re(r"not enough memory: you tried to (?:re)?allocate \d+GB|DefaultCPUAllocator: (?:can't allocate memory|not enough memory)\s*$",
                 needs=("you tried to ", "DefaultCPUAllocator: "))
F09B = lazy_re(r"\[Errno 12\] Cannot allocate memory|std::bad_alloc|MemoryError\b", needs=("MemoryError", "[Errno 12] Cannot allocate memory", "std::bad_alloc"))
# c10's MapAllocator maps a file or a shared-memory segment for a storage (torch.load(mmap=True), from_file, the
# DataLoader's shared tensors; safetensors' torch loader through it): "unable to mmap N bytes from file <name>: " then
# strerror and errno (c10/core/MapAllocator.cpp). With ENOMEM (12) the host had no memory to map: the request is N.
F_MMAP = lazy_re(r"unable to mmap (?P<bytes>\d+) bytes from file <[^>]*>: Cannot allocate memory \(12\)",
                 needs=("unable to mmap ",))
# The JVM (HotSpot's os_linux.cpp and vmError.cpp) reports a failed native allocation as "# Native memory allocation
# (mmap) failed to map N bytes for committing reserved memory." under "# There is insufficient memory for the Java
# Runtime Environment to continue.": host memory, with the request in bytes.
F_JVM = lazy_re(r"Native memory allocation \((?:mmap|malloc)\) failed to (?:map|allocate) (?P<bytes>\d+) bytes|"
                r"There is insufficient memory for the Java Runtime Environment to continue",
                needs=("Native memory allocation (", "insufficient memory for the Java Runtime"))
# Rust's default allocation-error hook aborts with "memory allocation of {size} bytes failed" (library/std/src/alloc.rs
# default_alloc_error_hook): host memory, with the request in bytes (tokenizers and other Rust extensions print it).
F_RUST_ALLOC = lazy_re(r"\bmemory allocation of (?P<bytes>\d+) bytes failed", needs=("memory allocation of ",))
# ollama refuses to start a model whose estimate does not fit the host's free RAM (llm/server.go, NewLlamaServer:
# "model requires more system memory (%s) than is available (%s)"): host memory, before any allocation was tried.
F_OLLAMA_RAM = lazy_re(r"\bmodel requires more system memory\b", needs=("requires more system memory",))
# The HIP runtime's own failure report (ROCclr, AMD_LOG_LEVEL): hipamd/src/hip_memory.cpp logs "Allocation failed :
# Device memory : required :%zu | free :%zu | total :%zu", device/rocm/rocmemory.cpp "Video memory allocation failed!".
F_HIP_RT = lazy_re(r"Allocation failed : Device memory : required :(?P<bytes>\d+) \| free :(?P<free>\d+) \| total :(?P<total>\d+)|"
                   r"\bVideo memory allocation failed!", needs=("Allocation failed : Device memory", "Video memory allocation failed"))
# Ascend CANN's error codes: EL0004 "Memory_Allocation_Failure ... Failed to allocate memory" (CANN error-code
# reference, EL0004), and the runtime's "Failed to apply for memory. Check the remaining storage space in the hardware
# environment." (its memory-application error's message): the NPU's device memory.
# torch's cudaMallocAsync backend refuses with "Allocation on device <N> would exceed allowed memory. (out of memory)"
# (c10/cuda/CUDAMallocAsyncAllocator.cpp mallocAsync); ComfyUI's error report and the titles that quote it keep only
# its first words (`Exception Message:** Allocation on device `, `KSampler Allocation on device`), a title's retyping
# with the reporter's word for what they saw after them (`# Allocation on device error`).
# A title may close the words with its author's label for them, bare or bracketed (`# KSampler Allocation on device
# (ERROR Message)`): words that name the report, not a sentence that goes on about a device.
# Logged through rich's handler (ComfyUI's console), the line ends in the record's `file.py:N` column: rich's LogRender
# appends the path and line number after the message when show_path is on (rich/_log_render.py, rich/logging.py
# RichHandler), so that column is not words after the report.
F_ASYNC_ALLOC = lazy_re(r"\bAllocation on device\s*\d*(?:\s{2,}[\w.-]+\.py:\d+)?\s*$|"
                        r"^#{1,6} .*\bAllocation on device\s*\d*(?:[\s\-:()\[\]]+(?i:error|exception|message))+[\s)\].!]*$",
                        needs=("Allocation on device",))
# CuPy's memory pool raises its own OutOfMemoryError(MemoryError) for a failed device allocation with the words
# "out of memory to allocate %d bytes (total %d bytes)" (cupy/cuda/memory.pyx, class OutOfMemoryError): CuPy's alone,
# so they are the failure also where a framework prints the text without the class (Chainer's trainer: "Exception in
# main training loop: " + str(e), chainer/training/trainer.py). The total is the pool's, not the card's.
F_CUPY = lazy_re(r"\bout of memory to allocate (?P<bytes>\d+) bytes \(total \d+ bytes\)", needs=("out of memory to allocate ",))
# torch-directml's allocator: "Could not allocate tensor with N bytes. There is not enough GPU video memory
# available!" (DirectML's PyTorch backend, raised as a RuntimeError); a GPU whose maker the words do not name.
F_DML = lazy_re(r"\bcould not allocate tensor with (?P<n>\S+) bytes\b", re.I)
# CPython raises MemoryError with no text when malloc fails (PyErr_NoMemory, Python/errors.c); a traceback closed
# by the class alone is the interpreter's own allocation on the host. Libraries that raise it for a device say why
# (tinygrad's `MemoryError: Cannot allocate ...`), which the grammar below reads.
F_PY_NOMEM = lazy_re(r"^\s*(?:builtins\.)?MemoryError\s*:?\s*$", needs=("MemoryError",))
# ... and its driver's own record of the failed request, in bytes: devmm's "heap_alloc_managed out of memory, pp=%p,
# bytesize=%llu" (CANN's DRV log line, as CANN's TF-migration troubleshooting page quotes a run's; the runtime's
# `halMemAlloc failed: ... size=N` after it names no cause by itself, so it is left to that line).
F_CANN_DRV = lazy_re(r"\bheap_alloc_managed out of memory, pp=0x[0-9a-fA-F]+, bytesize=(?P<bytes>\d+)",
                     needs=("heap_alloc_managed out of memory",))
# PaddlePaddle's GPU allocators throw memory::allocation::BadAlloc (a std::bad_alloc) with the words "Out of memory
# error on GPU %d. Cannot allocate %s memory on GPU %d, %s memory has been allocated and available memory is only %s."
# (PaddlePaddle/Paddle paddle/fluid/memory/allocation/cuda_allocator.cc CUDAAllocator::AllocateImpl; the auto-growth,
# async and virtual-memory allocators beside it print the same; detail/system_allocator.cc's older GPUAllocator drops
# the "has been allocated" clause). string::HumanReadableSize writes each size as "%f" and a unit of B, kB, MB, GB, TB
# after dividing by 1024 (paddle/fluid/string/printf.h), so "56.000000MB" is 56 MiB. The "allocated" figure is the
# card's used memory (total - avail from cudaMemGetInfo), every process's, not this process's: it is not read.
F_PADDLE = lazy_re(r"\bOut of memory error on GPU(?: ?(?P<dev>\d+))?\b(?:\.\s*Cannot allocate (?P<req>[\d.]+[kKMGTP]?B) memory on GPU ?\d+)?"
                   r"(?:,\s*(?:[\d.]+[kKMGTP]?B memory has been allocated and\s*)?available memory is only\s*(?P<free>[\d.]+[kKMGTP]?B))?",
                   needs=("Out of memory error on GPU",))
_PADDLE_SIZE = lazy_re(r"(\d+(?:\.\d+)?)([kKMGTP]?)B")
_PADDLE_UNIT = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def _paddle_size_gib(text: str | None) -> float | None:
    """Paddle's HumanReadableSize ("56.000000MB", "1.500000kB", "0.000000B") as GiB."""
    m = _PADDLE_SIZE.fullmatch(text or "")
    return float(m.group(1)) * _PADDLE_UNIT[m.group(2).upper() or "B"] / GIB if m else None


F_CANN = lazy_re(r"Memory_Allocation_Failure\(EL0004\)|Failed to apply for memory\. Check the remaining storage space",
                 needs=("Memory_Allocation_Failure(EL0004)", "Failed to apply for memory"))
F10 = lazy_re(r"PT_DEVMEM Allocation failed for size::(?P<bytes>\d+) \((?P<mb>\d+)\)MB", needs=("PT_DEVMEM Allocation failed for size::",))
# torch elastic's "failed (exitcode: -9) local_rank: 0 (pid: N) of binary: ..." (torch/distributed/elastic/multiprocessing/
# api.py): the exit code is the report; the rest may be cut off by a paste.
F11 = lazy_re(r"failed \(exitcode: (?P<code>-?\d+)\)(?: local_rank: (?P<local_rank>\d+) \(pid: (?P<pid>\d+)\))?", needs=("failed (exitcode: ",))
# torch's multiprocess test harness (torch/testing/_internal/common_distributed.py) asserts each child's exit code:
# "Expected zero exit code but got -9 for pid: N", -9 being a SIGKILL.
F11B = lazy_re(r"Expected zero exit code but got (?P<code2>-?\d+)|exitcode\s*: (?P<code>-?\d+) \(pid: (?P<pid>\d+)\)|Signal (?P<sig>\d+) \((?P<signame>SIG[A-Z]+)\) received by PID (?P<spid>\d+)", needs=("exitcode", " received by PID ", "exit code but got "))
F12 = lazy_re(r"sigkill_handler\].*?exits with return code = (?P<rc>-?\d+)|exits with return code = (?P<rc2>-9)(?!\d)", needs=("exits with return code = ",))
# DeepSpeed's launcher kills its other children whenever one exits badly; alone (no return code, no
# Python error before it) the line is what a host-RAM kill leaves (parse.py checks the context).
F12_KILLING = lazy_re(r"(?:sigkill_handler\]\s*|^)Killing subprocess (?P<pid>\d+)", needs=("Killing subprocess ",))
# macOS's libc words the signal with its number, strsignal(SIGKILL) = "Killed: 9", and bash there prints a killed
# job's status with it (Darwin Libc gen/strsignal.c appends ": <signo>" to sys_siglist's "Killed")
F13 = lazy_re(rf"(?:^|[\s\]|]){KILLED_WORDS}(?:[.!]*[ \t]*$|[ \t]{{2,}}\S)|\b(?:zsh|bash|sh): killed\b|(?:^|[\s`'\"]|: )Killed: 9\b", needs=("Killed", "Terminado (killed)", "sh: killed", "已杀死"))
# The kernel's OOM killer (mm/oom_kill.c): "Out of memory: Killed process N (comm) total-vm:...kB, anon-rss:...kB"
# since 4.19; before it, __oom_kill_process printed "Killed process N (comm) total-vm:..." under a separate
# "Out of memory: Kill process N (comm) score S or sacrifice child" line, so there its memory figures mark it.
F14 = lazy_re(r"[Oo]ut of memory: Killed process (?P<pid>\d+) \((?P<comm>[^)]+)\)(?: total-vm:(?P<vm>\d+)kB, anon-rss:(?P<rss>\d+)kB)?|"
              r"\bKilled process (?P<pid2>\d+) \((?P<comm2>[^)]+)\),? total-vm:(?P<vm2>\d+)kB, anon-rss:(?P<rss2>\d+)kB",
              needs=("Killed process ",))
# A parent reports a child killed by a signal as the negative signal number, Python's subprocess convention
# ("A negative value -N indicates that the child was terminated by signal N", Popen.returncode): a wrapper's
# `Training failed with exit code -9` is the SIGKILL the kernel's OOM killer sends.
F15 = lazy_re(r"exited with code 137|[Ee]xit ?[Cc]ode\"?:?\s*137\b|OOMKilled|Exit code 137|"
              r"\b(?:[Ee]xit|[Rr]eturn) ?[Cc]ode:? ?-9(?![\d.])",
              needs=("xit", "OOMKilled", "eturn"))
# The kubelet's eviction manager under node memory pressure: "The node was low on resource: memory."
# (pkg/kubelet/eviction/helpers.go nodeLowMessageFmt).
F_EVICT = lazy_re(r"The node was low on resource: memory\b", needs=("low on resource: memory",))
F16 = lazy_re(r"killed due to memory pressure \(OOM\)|ray\.exceptions\.OutOfMemoryError|node running low on memory", needs=("killed due to memory pressure (OOM)", "ray.exceptions.OutOfMemoryError", "node running low on memory"))
# A Ray worker that vanished: Ray names the OOM killer as the first of its possible causes.
F16_DIED = lazy_re(r"worker died or was killed while executing a task|Worker unexpectedly exits|killed by (?:SIGKILL by )?(?:the )?OOM killer",
                   needs=("worker died or was killed while executing a task", "Worker unexpectedly exits", "OOM killer"))
# A child killed by SIGKILL as its parent reports it: torch.multiprocessing.spawn, subprocess (accelerate
# launch), a DataLoader worker, an IDE's run window; and a DataLoader worker out of shared memory.
# subprocess.CalledProcessError words a signal death "died with <Signals.SIGKILL: 9>" (Lib/subprocess.py __str__,
# the signal.Signals member by its repr): its verb and the member's name, however the brackets were retyped
# (`dies with Signals.SIGKILL 9`); elastic's own `forcefully exiting via Signals.SIGKILL` is its shutdown, not this
F_SIGKILL = lazy_re(r"terminated with signal SIGKILL|\bdie[sd]? with <?Signals\.SIGKILL\b|killed by signal: Killed|"
                    r"interrupted by signal 9: SIGKILL|killed by signal: Bus error",
                    needs=("terminated with signal SIGKILL", "Signals.SIGKILL", "killed by signal: ",
                           "interrupted by signal 9: SIGKILL"))
# Go's os/exec reports a child killed by SIGKILL as "signal: killed" (os.ProcessState.String, os/exec_posix.go), as
# ollama wraps it ("llama runner process has terminated: signal: killed"); Colab's runtime tells a kernel killed for
# host memory "Your session crashed after using all available RAM." (Colab's runtime notice, research.google.com/
# colaboratory/faq.html).
F_SUPERVISOR_KILL = lazy_re(r"\bsignal: killed\b|Your session crashed after using all available RAM\b",
                            needs=("signal: killed", "all available RAM"))
# SLURM's cgroup OOM handler and job state.
F_SLURM = lazy_re(r"Detected \d+ oom[-_]kill event|task \d+: Out Of Memory|\bOUT_OF_MEMORY\b",
                  needs=("Detected ", "Out Of Memory", "OUT_OF_MEMORY"))
F16_GPU = lazy_re(r"RayTaskError\((?P<inner>\w*OutOfMemoryError)\)", needs=("RayTaskError(",))
# XLA's StreamExecutorMemoryAllocator::Allocate: "Failed to allocate request for %s (%uB) on device ordinal %d"
# (xla/stream_executor/stream_executor_memory_allocator.cc), raised as RESOURCE_EXHAUSTED through jaxlib.
# The TPU runtime refusing a device buffer: "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to
# allocate 50.00M. That was not possible. There are 27.86M free.; (0x0x0_HBM0)" (libtpu, as jaxlib raises it).
# The TPU runtime refusing one buffer against a memory space's size, both in bytes: "RESOURCE_EXHAUSTED: Allocation
# (size=134217728) would exceed memory (size=67108864) :: #allocation25 [shape = ...]" (openxla.org/xla/errors/
# error_1001 and the OOM debugging page quote it); the second size is the space's (HBM or vmem), not the card's.
F17 = lazy_re(r"(?:RESOURCE_EXHAUSTED|Resource exhausted): (?:XLA:TPU compile permanent error\. )?(?:Allocation \(size=(?P<bytes5>\d+)\) would exceed memory \(size=\d+\)|Ran out of memory in memory space \w+|Attempting to reserve (?P<reserve>\S+) at the bottom of memory|Out of memory while trying to allocate (?P<bytes>\d+) bytes|Out of memory allocating (?P<bytes3>\d+) bytes|Failed to allocate request for \S+ \((?P<bytes4>\d+)B\) on device ordinal (?P<dev4>\d+)|Error allocating device buffer: Attempting to allocate \S+ That was not possible)", needs=("RESOURCE_EXHAUSTED: ", "Resource exhausted: "))
# XLA's TPU words without the status prefix (an issue's title keeps them alone): "Ran out of memory in memory space
# hbm", the compiler giving up before it starts ("Aborting compilation early because it's unlikely to have enough
# memory. Requires 1.31T, has 14.71G available"), and the report that follows the first line ("Total hbm usage >=
# 11.47G:", then "Program hbm requirement"), all printed by libtpu's compiler for one memory-space overflow.
# A TPU has more memory spaces than HBM, each with its own "Ran out of memory in memory space <name>": the vector
# memory's scoped allocations say `vmem` (openxla.org/xla/errors/error_1001, "Scoped Vmem OOM").
F17_BARE = lazy_re(r"\bRan out of memory in memory space [a-z]+\b|unlikely to have enough memory\. Requires \S+, has |^\s*Total hbm usage >= \S+:",
                   needs=("n out of memory in memory space ", "enough memory. Requires", "Total hbm usage >= "))
F17B = lazy_re(r"Ran out of memory in memory space hbm\. Used (?P<used>[\d.]+\S*) of (?P<cap>[\d.]+\S*) hbm\. Exceeded hbm capacity by (?P<over>[\d.]+\S*)\.", needs=("Ran out of memory in memory space hbm. Used ",))
# The BFC allocator: TensorFlow's and XLA's name themselves ("Allocator (GPU_0_bfc) ran out of memory trying to
# allocate 8.00GiB (rounded to 8589934592)", tsl/framework/bfc_allocator.cc); Intel's TensorFlow plugin does not
# and counts in Bytes ("Allocator ran out of memory trying to allocate 10529419660 Bytes (rounded to N Bytes)",
# itex/core/devices/bfc_allocator.cc). The glog path says whose: TensorFlow and its plugin print their own
# tree (tensorflow/..., itex/...), JAX builds XLA and TSL as Bazel externals (external/...).
F18 = lazy_re(r"Allocator (?:\((?P<alloc>\w+)\) )?ran out of memory trying to allocate (?P<req>\S+?)(?P<unit> Bytes)? \(rounded to (?P<bytes>\d+)(?: Bytes)?\)",
              needs=("ran out of memory trying to allocate ",))
# TensorFlow 1.x's BFC said its request in readable units and gave up with "Allocator (GPU_0_bfc) ran out of memory
# trying to allocate 118.28MiB.  Current allocation summary follows." (tensorflow/core/common_runtime/
# bfc_allocator.cc, AllocateRawInternal); its "The caller indicates that this is not a failure" line is a retry.
F18_OLD = lazy_re(r"Allocator \((?P<alloc>\w+)\) ran out of memory trying to allocate (?P<req>[\d.]+ ?[KMGT]?i?B)\.\s+Current allocation summary follows",
                  needs=("Current allocation summary follows",))
F18_TF_PATH = lazy_re(r"(?:^|[\s\]\\])(?:tensorflow|itex)[/\\]\S*bfc_allocator\.cc:\d+\]", needs=("bfc_allocator.cc",))   # Windows builds: backslashes
# The message is TensorFlow's own (OpKernelContext::allocate_tensor builds "OOM when allocating tensor with shape" +
# shape + " and type " + dtype + " on " + device + " by allocator " + name, tensorflow/core/framework/op_kernel.cc), so it
# is the failure with or without the exception's prefix (an issue's title, backticks).
# A RESOURCE_EXHAUSTED status as TensorFlow prints it (Status::ToString: the code's name, "Resource exhausted: ", then
# the message; the Python exception ResourceExhaustedError) whose message says an allocation failed.
F19B = lazy_re(r"(?:ResourceExhaustedError|Resource exhausted):? failed to allocate memory", needs=("failed to allocate memory",))
# ... and the exception class or the status name alone, as an issue's title or a one-line report keeps them:
# TensorFlow raises ResourceExhaustedError for an allocator's RESOURCE_EXHAUSTED (errors_impl.py).
F19_NAME = lazy_re(r"(?:^|[\s:(`\[\]])(?:tf\.errors\.|tensorflow\.python\.framework\.errors_impl\.)?ResourceExhaustedError\b|"
                   r"^\s*Resource exhausted(?: error)?\b", re.I)
# TensorFlow 0.x printed the sentence with no dims after it (executor.cc's "Compute status: Resource exhausted:
# OOM when allocating tensor with shape", the shape empty): the words, not the dims, are the failure.
F19 = lazy_re(r"(?:(?:ResourceExhaustedError|Resource exhausted):?\s+(?:\(see above for traceback\):\s+)?)?\bOOM when allocating tensor (?:with shape|of shape) ?(?:\[(?P<shape>[\d,\s]*)\])?(?: and type (?P<dtype>\w+))?(?: on (?P<dev>\S+) by allocator (?P<alloc>\S+))?", needs=("OOM when allocating tensor ",))
# TF's device name: "/job:localhost/replica:0/task:0/device:GPU:1" (tensorflow/core/util/device_name_utils.cc)
F19_DEV = lazy_re(r"device:(?:GPU|gpu|XPU):(\d+)$", needs=("device:GPU:", "device:XPU:", "device:gpu:"))
# SGLang's model runner sizes its KV-cache pool from what mem_fraction_static leaves after the weights and raises
# `RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.` when no token fits
# (sglang/srt/model_executor/model_runner.py init_memory_pool): the serving engine's cache check, as vLLM's is
# vLLM v1's _check_enough_kv_cache_memory (vllm/v1/core/kv_cache_utils.py) says what one request at the model's max
# length needs: "To serve at least one request with the models's max seq len (N), (X GiB KV cache is needed, which is
# larger than the available KV cache memory (Y GiB)."; SGLang's request pool (sglang/srt/managers/schedule_batch.py
# alloc_req_slots) refuses a batch with "alloc_req_slots runs out of memory. Please set a smaller number for
# `--max-running-requests`.": both are the serving engine's own cache accounting, not an allocator.
F20 = lazy_re(r"No available memory for the cache blocks|Not enough memory\. Please try to increase --mem[-_]fraction[-_]static|"
              r"larger than the available KV cache memory|\balloc_req_slots runs out of memory|"
              # vLLM 0.2-0.5's worker (vllm/worker/worker.py raise_if_cache_size_invalid): "The model's max seq len (N) is
              # larger than the maximum number of tokens that can be stored in KV cache (M)."
              r"is larger than the maximum number of tokens that can be stored in KV cache")
# vLLM v1's start-up check (vllm/v1/worker/gpu_worker.py init_device) raises "Free memory on device (F/T GiB) on
# startup is less than desired GPU memory utilization (U, W GiB)"; quoted in a title its figures are often left out
# ("Free memory on device on startup is less than desired GPU memory utilization (0.8)"): the words are the check.
F21 = lazy_re(r"Free memory on device (?:\((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) )?on startup is less than desired GPU memory "
              r"utilization \((?P<util>[\d.]+)(?:, (?P<want>[\d.]+) GiB)?\)", needs=("Free memory on device ",))
F21C = lazy_re(r"Insufficient memory|insufficient GPU memory|gpu_memory_utilization.*(?:too (?:low|small)|increas|decreas)", re.I)
# A batch-size search that ran out of sizes: accelerate's find_executable_batch_size (utils/memory.py) "No executable
# batch size found, reached zero."; torch-max-mem's maximize_memory_utilization (torch_max_mem/api.py) raises
# `MemoryError: Execution did not even succeed with ('batch_size',) all equal to 1.`
F22 = lazy_re(r"No executable batch size found, reached zero|Execution did not even succeed with \(.*?\) all equal to 1\b", needs=("Execution did not even succeed with (", "No executable batch size found, reached zero"))
# ComfyUI's execution.py answers an allocator's OOM (comfy.model_management.OOM_EXCEPTION) with the tip "This error
# means you ran out of memory on your GPU." under the node's error: the device's allocator failed.
# Its executor also logs "Got an OOM, unloading all loaded models." under the same test, before it frees the models
# (ComfyUI execution.py, execute: `if isinstance(ex, model_management.OOM_EXCEPTION)`).
F_COMFY_OOM = lazy_re(r"This error means you ran out of memory on your GPU\b|\bGot an OOM, unloading all loaded models\b",
                      needs=("ran out of memory on your GPU", "Got an OOM, unloading all loaded models"))
F25 = lazy_re(r"Failed to clone\(\) tensor with name (?P<name>\S+?)(?: on rank (?P<rank>\d+))?\.(?:\s|$)", needs=("Failed to clone() tensor with name ",))
F26 = lazy_re(r"\[METAL\] Command buffer execution failed: Insufficient Memory", needs=("[METAL] Command buffer execution failed: Insufficient Memory",))
# ... whose code, IOGPU's command-buffer callback error kIOGPUCommandBufferCallbackErrorOutOfMemory (MLX prints it in
# that line's parentheses, mlx/backend/metal: "Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"),
# names the failure by itself wherever it is quoted: an error code is an error by its name, as the grammar reads the
# UPPER_SNAKE enums of CUDA, Level Zero and Vulkan
F26_CODE = lazy_re(r"\bkIOGPUCommandBufferCallbackErrorOutOfMemory\b", needs=("kIOGPUCommandBufferCallbackErrorOutOfMemory",))
F28 = lazy_re(r"(?:^|[\s:(])(?P<cls>(?:torch\.(?:cuda\.)?)?OutOfMemoryError)(?=\s{4,}Traceback|[ \t]*$|:?\s*$)", needs=("OutOfMemoryError",))
# torch's exception class named with its module (`torch.cuda.OutOfMemoryError`, `torch.OutOfMemoryError`,
# torch/cuda/memory.py and torch/__init__.py) is the allocator's own word even inside a sentence ("I always got
# torch.cuda.OutOfMemoryError."): the failure it raised, unless the sentence asks, advises or negates (the grammar's
# look-alikes) or is code. Followed by a colon it is a message, by a bracket a call: the readers above have those.
F_TRIED = lazy_re(rf"\bTried to allocate (?P<req>{SIZE})", needs=("Tried to allocate ",))
F28_QUALIFIED = lazy_re(r"\btorch\.(?:cuda\.)?OutOfMemoryError\b(?!\s*[:(])", needs=("torch.",))
# torch's allocator closes its message with its advice (c10/cuda/CUDACachingAllocator.cpp: "If reserved memory is >>
# allocated memory try setting max_split_size_mb to avoid fragmentation."; since 2.1 "... try setting
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."): the backend's out of memory on the line
# of that sentence is the message, however its head was retyped or cut.
F_TORCH_TAIL = lazy_re(r"\b(?P<backend>[Cc][Uu][Dd][Aa]|[Hh][Ii][Pp])\b[^\n]{0,40}?[Oo]ut of [Mm]emory[^\n]*?"
                       r"(?:max_split_size_mb|expandable_segments:True) to avoid fragmentation", needs=("to avoid fragmentation",))
# C and C++ sources log through printf-style calls (`GGML_LOG_ERROR("%s: failed to allocate graph\n", __func__);`):
# a string literal holding a conversion, with arguments after it, is the code that prints, not what it printed.
_FORMAT_CALL = lazy_re(r'"[^"\n]*%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[diouxXeEfgGcsp][^"\n]*"\s*,', needs=("%",))
F28_GARBLED = lazy_re(r"OutOfMemoryError\s*OutOfMemoryError|OutOfMemoryError:\s+(?!.*out of memory)", needs=("OutOfMemoryError",))
# Look-alikes: never events.
LOOKALIKE = lazy_re(r"OutOfResources|out of resource: shared memory|CUDNN_STATUS_(?:INTERNAL_ERROR|EXECUTION_FAILED|MAPPING_ERROR|NOT_INITIALIZED)|\[METAL\] Command buffer execution failed: Internal Error", needs=("OutOfResources", "out of resource: shared memory", "CUDNN_STATUS_", "[METAL] Command buffer execution failed: Internal Error"))
CUDNN_NOT_SUPPORTED = lazy_re(r"CUDNN_STATUS_NOT_SUPPORTED", needs=("CUDNN_STATUS_NOT_SUPPORTED",))
CODE_LINE = lazy_re(r"^\s*(?:except\b|raise\b|if\b|elif\b|return\b|isinstance\(|from\b|import\b|#|>>>|\.\.\.)|should_reduce_batch_size|_is_oom|is_oom")


@record(frozen=False)
class Parsed:
    """The numbers read out of one memory-failure message."""

    kind: str
    tried_gib: float | None = None
    capacity_gib: float | None = None
    free_gib: float | None = None
    allocated_gib: float | None = None
    reserved_unallocated_gib: float | None = None
    reserved_gib: float | None = None
    process_gib: float | None = None
    other_processes_gib: float | None = None
    device: int | None = None
    fields: int = 0                     # how many numbers were read: picks the best line joining
    extra: dict = field(default_factory=dict)


def _count(p: Parsed) -> Parsed:
    p.fields = sum(v is not None for v in (p.tried_gib, p.capacity_gib, p.free_gib, p.allocated_gib,
                                            p.reserved_unallocated_gib, p.reserved_gib, p.process_gib,
                                            p.other_processes_gib))
    return p


def _backend_kind(backend: str) -> str:
    return {"CUDA": "cuda_oom", "HIP": "hip_oom", "NPU": "npu_oom", "XPU": "xpu_oom"}.get(backend, "cuda_oom")


def _dev(text: str | None) -> int | None:
    return int(text) if text else None


_MAX_DIGITS = 24        # more than any byte count a machine has; a longer run of digits is not a size


def _per(text: str | None, unit: float) -> float | None:
    """A count of bytes (or kB) in a log line as GiB: None for none, and for a run of digits too long to
    be one (a 331-digit "size" would overflow a float)."""
    if not text or len(text.lstrip("0")) > _MAX_DIGITS:
        return None
    return int(text) / unit


def _read_f02(text: str) -> Parsed | None:
    """torch's legacy statistics in brackets: `(GPU 0; 23.65 GiB total capacity; ... reserved in total by PyTorch)`."""
    m = F02.search(text)
    if m:
        reserved = size_gib(m.group("reserved"))
        alloc = size_gib(m.group("alloc"))
        p = Parsed(_backend_kind(m.group("backend")), tried_gib=size_gib(m.group("req")),
                   capacity_gib=size_gib(m.group("total")), free_gib=size_gib(m.group("free")),
                   allocated_gib=alloc, reserved_gib=reserved, device=_dev(m.group("dev")))
        if m.group("cached"):
            # torch 1.0-1.3: "cached" is what the allocator holds beyond the allocated memory
            # (pytorch/pytorch#13751), i.e. reserved but unallocated; reserved is the sum
            p.reserved_unallocated_gib = size_gib(m.group("cached"))
            if alloc is not None and p.reserved_unallocated_gib is not None:
                p.reserved_gib = alloc + p.reserved_unallocated_gib
        elif reserved is not None and alloc is not None:
            p.reserved_unallocated_gib = max(0.0, reserved - alloc)
        return _count(p)
    m = F02_HEAD.search(text)
    if m:
        return _count(Parsed(_backend_kind(m.group("backend")), tried_gib=size_gib(m.group("req")),
                             capacity_gib=size_gib(m.group("total")), device=_dev(m.group("dev"))))
    return None


def _read_f01(text: str) -> Parsed | None:
    """torch >= 2.1's sentences: `GPU 0 has a total capacity of ... of which ... is free. ...`."""
    m = F01.search(text) or F01_HEAD.search(text)
    if not m:
        return None
    p = Parsed(_backend_kind(m.group("backend")), tried_gib=size_gib(m.group("req")), device=_dev(m.group("dev")))
    if "total" in m.re.groupindex:
        p.capacity_gib = size_gib(m.group("total"))
        p.free_gib = size_gib(m.group("free"))
    else:
        t = F01_TOTAL.search(text, m.end())
        if t:
            p.capacity_gib = size_gib(t.group("total"))
    _f01_tail(p, text[m.start():])
    return _count(p)


def _f01_tail(p: Parsed, tail: str) -> None:
    """The sentences after the capacity: the allowed share, the processes' memory, PyTorch's allocated and reserved."""
    a = F01A.search(tail)
    if a:
        p.extra["allowed_gib"] = size_gib(a.group("allowed"))
    _f01_processes(p, tail)
    d = F01D.search(tail)
    if d:
        p.allocated_gib = size_gib(d.group("alloc"))
        p.reserved_unallocated_gib = size_gib(d.group("unalloc"))
        if p.allocated_gib is not None and p.reserved_unallocated_gib is not None:
            p.reserved_gib = p.allocated_gib + p.reserved_unallocated_gib


def _f01_processes(p: Parsed, tail: str) -> None:
    """This process's memory and the other processes' from the `Process N has ...` clauses."""
    procs = [size_gib(x.group("used")) or 0.0 for x in F01B.finditer(tail)]
    c = F01C.search(tail)
    if c:
        p.process_gib = size_gib(c.group("self"))
        if procs:
            p.other_processes_gib = sum(procs)
        elif p.capacity_gib is not None:
            p.other_processes_gib = 0.0
    elif procs:
        # No self clause: in containers the current process appears under a foreign PID,
        # so the biggest entry is taken as this process and the rest as others.
        p.process_gib = max(procs)
        p.other_processes_gib = sum(procs) - max(procs)
    cap = p.capacity_gib
    if p.process_gib is not None and (p.process_gib <= 0.0 or (cap and p.process_gib > cap * 1.5)):
        p.process_gib = None          # '0 bytes' or the unsigned-underflow 17179869184 GiB


def parse_torch(text: str) -> Parsed | None:
    """The PyTorch allocator messages (F01, F02 and their cut forms, F03, F04)."""
    p = _read_f02(text)
    if p is None:
        p = _read_f01(text)
    if p is not None:
        return p
    m = F03.search(text)
    if m:
        return _count(Parsed(_backend_kind(m.group("backend")), tried_gib=size_gib(m.group("req"))))
    if F04.search(text):
        return _count(Parsed("hip_oom" if "HIP" in text or "hipError" in text else "cuda_oom"))
    m = F04_CHECK.search(text)
    if m:
        return _count(Parsed("bnb_alloc" if "bitsandbytes" in m.group("file") else "cuda_oom"))
    m = F_TORCH_TAIL.search(text)
    if m and not _GRAMMAR_NOT.search(text[:m.start()]):
        return _count(Parsed(_backend_kind(m.group("backend").upper())))
    return None


# A reader that recognises a line and finds it is not a failure (a launcher's exit code other than -9)
# returns NOT_AN_EVENT: parse_message stops there instead of asking the readers after it.
NOT_AN_EVENT = Parsed("not_an_event")


def _read_mps(text: str) -> Parsed | None:
    b = F05_BUFFER.search(text)
    if b:
        return _count(Parsed("mps_oom", tried_gib=size_gib(b.group("req")), extra={"block_limit": True}))
    if not F05_HEAD.search(text):
        return None
    m = F05.search(text)
    p = Parsed("mps_oom")
    if m:
        # MPSAllocator.mm: "other allocations" are this process's other Metal buffers (not other
        # processes), and "max allowed" is the high-watermark limit (a share of the recommended
        # working set, PYTORCH_MPS_HIGH_WATERMARK_RATIO), not the size of the unified memory.
        p.tried_gib = size_gib(m.group("req"))
        p.allocated_gib = size_gib(m.group("alloc"))
        other = size_gib(m.group("other"))
        if p.allocated_gib is not None and other is not None:
            p.process_gib = p.allocated_gib + other
        p.extra["allowed_gib"] = size_gib(m.group("max"))
    return _count(p)


def _read_fraction_and_tgi(text: str) -> Parsed | None:
    m = F_FRACTION.search(text)
    if m:
        req = F_FRACTION_REQ.search(text, m.end())
        limit = F_FRACTION_LIMIT.search(text, m.end())
        p = Parsed("cuda_oom", tried_gib=size_gib(req.group("req")) if req else None, device=int(m.group("dev")))
        if limit:
            p.extra["allowed_gib"] = size_gib(limit.group("limit"))
        return _count(p)
    if F_TGI.search(text):
        return _count(Parsed("cuda_oom"))
    return None


def _read_ggml(text: str) -> Parsed | None:
    m = F_GGML.search(text)
    if m:
        p = Parsed("hip_oom" if m.group("api") == "hip" else "cuda_oom", tried_gib=size_gib(m.group("req")),
                   device=int(m.group("dev")))
        p.extra["ggml"] = True
        return _count(p)
    m = F_GGML_METAL.search(text)
    if m:
        p = Parsed("mlx_oom", tried_gib=int(m.group("bytes")) / GIB)
        p.extra["ggml"] = True
        return _count(p)
    m = F_GGML_METAL_OWN.search(text)
    if m:
        p = Parsed("mlx_oom", tried_gib=float(m.group("mib")) / 1024 if m.group("mib") else None)
        p.extra["ggml"] = True
        return _count(p)
    m = F_MLX.search(text)
    if m:
        return _count(Parsed("mlx_oom", tried_gib=_per(m.group("bytes"), GIB)))
    m = F_GGML_LOAD.search(text)
    if m:
        dev = m.group("dev") or ""
        p = Parsed("hip_oom" if dev.startswith("ROCm") else "cuda_oom")
        p.extra["ggml"] = True
        return _count(p)
    return None


def _read_xpu(text: str) -> Parsed | None:
    m = F_XPU_4GB.search(text)
    if m:
        p = Parsed("xpu_oom", tried_gib=size_gib(m.group("req")), capacity_gib=size_gib(m.group("total")),
                   allocated_gib=size_gib(m.group("alloc")), reserved_gib=size_gib(m.group("reserved")), device=_dev(m.group("dev")))
        if p.reserved_gib is not None and p.allocated_gib is not None:
            p.reserved_unallocated_gib = max(0.0, p.reserved_gib - p.allocated_gib)
        p.extra["block_limit"] = True
        return _count(p)
    if F_XPU_DEVICE.search(text) or F_XPU_ZE.search(text):
        return _count(Parsed("xpu_oom"))
    return None


def _read_stream_executor_nccl_oomd(text: str) -> Parsed | None:
    m = F_SE_ALLOC.search(text)
    if m:
        err = m.group("err") or m.group("herr")
        tried: float | None
        if m.group("bytes") or m.group("hbytes"):
            tried = int(m.group("bytes") or m.group("hbytes")) / GIB
        else:
            human = m.group("human")
            tried = float(human.rstrip("KMGTPE")) * _UNIT_GIB[human[-1]] if human[-1] in "KMGTPE" else _per(human, GIB)
        return _count(Parsed("hip_oom" if err.lower().startswith("hip") else "cuda_oom", tried_gib=tried))
    if F08_BARE.search(text):
        return _count(Parsed("nccl_oom"))
    if F_OOMD.search(text):
        return _count(Parsed("host_oom"))
    return None


def _read_kernel_kill(text: str) -> Parsed | None:
    m = F14.search(text)
    if not m:
        return None
    p = Parsed("host_oom")
    rss = m.group("rss") or m.group("rss2")
    if rss:
        p.process_gib = _per(rss, 1 << 20)     # kB -> GiB
    return _count(p)


def _read_xla_and_bfc(text: str) -> Parsed | None:
    m = F17B.search(text)
    if m:
        return _count(Parsed("xla_oom", capacity_gib=size_gib(m.group("cap").replace("G", " GiB").replace("M", " MiB")) if m.group("cap")[-1] in "GM" else size_gib(m.group("cap"))))
    m = F17.search(text)
    if m:
        b = m.group("bytes") or m.group("bytes3") or m.group("bytes4") or m.group("bytes5")
        return _count(Parsed("xla_oom", tried_gib=_per(b, GIB), device=_dev(m.group("dev4"))))
    m = F18.search(text)
    if m:
        asked = m.group("req") if m.group("unit") and m.group("req").isdigit() else m.group("bytes")
        return _count(Parsed("tf_oom" if F18_TF_PATH.search(text) else "xla_oom", tried_gib=_per(asked, GIB)))
    m = F18_OLD.search(text)
    if m:
        return _count(Parsed("tf_oom" if F18_TF_PATH.search(text) else "xla_oom", tried_gib=size_gib(m.group("req"))))
    if F17_BARE.search(text):
        return _count(Parsed("xla_oom"))
    return None


def _read_nccl_and_fsdp_clone(text: str) -> Parsed | None:
    m = F08.search(text)
    if m:
        b = m.group("bytes") or m.group("bytes2")
        return _count(Parsed("nccl_oom", tried_gib=_per(b, GIB)))
    m = F25.search(text)
    if m:
        # FSDP swallowed the OOM into a warning while gathering the state dict: a save-time GPU OOM
        torch_msg = parse_torch(text)
        p = torch_msg if torch_msg is not None else Parsed("cuda_oom")
        p.extra.update(save_clone=True, rank=m.group("rank"))
        return _count(p)
    return None


def _read_ray(text: str) -> Parsed | None:
    if F16_GPU.search(text):
        return _count(Parsed("cuda_oom"))
    if F16.search(text) or F_EVICT.search(text):
        return _count(Parsed("host_oom"))
    return None


def _read_other_allocators(text: str) -> Parsed | None:
    m = F_PADDLE.search(text)
    if m:
        return _count(Parsed("cuda_oom", tried_gib=_paddle_size_gib(m.group("req")), free_gib=_paddle_size_gib(m.group("free")),
                             device=int(m.group("dev")) if m.group("dev") else None))
    found = _first_failure(text, _HOST_AND_HPU_WORDS)
    if found:
        return found
    m = F_HIP_RT.search(text)
    if m:
        return _count(Parsed("hip_oom", tried_gib=_per(m.group("bytes"), GIB), free_gib=_per(m.group("free"), GIB),
                             capacity_gib=_per(m.group("total"), GIB)))
    found = _first_failure(text, _NPU_AND_CUDA_POOL_WORDS)
    if found:
        return found
    m = F_DML.search(text)
    if m:
        return _count(Parsed("cuda_oom", tried_gib=_per(m.group("n") if m.group("n").isdigit() else None, GIB)))
    if F_PY_NOMEM.search(_TITLE.sub("", text)):
        return _count(Parsed("host_oom"))
    return _first_failure(text, _WORKSPACE_WORDS)


# Allocators' words read by one pattern each, as (pattern, kind), tried in order: a pattern with a `bytes` group gives
# the request. _read_other_allocators tries the groups in this order, the special forms between them.
_HOST_AND_HPU_WORDS = ((F09, "host_oom"), (F09_GB, "host_oom"), (F10, "hpu_oom"), (F_JVM, "host_oom"),
                       (F_RUST_ALLOC, "host_oom"), (F_OLLAMA_RAM, "host_oom"))
_NPU_AND_CUDA_POOL_WORDS = ((F_CANN_DRV, "npu_oom"), (F_CANN, "npu_oom"), (F_ASYNC_ALLOC, "cuda_oom"),
                            (F_CUPY, "cuda_oom"))
_WORKSPACE_WORDS = ((F06, "cublas_alloc"), (F07_ALLOC, "cudnn_alloc"))


def _first_failure(text: str, rows: tuple[tuple[LazyPattern, str], ...]) -> Parsed | None:
    for pattern, kind in rows:
        m = pattern.search(text)
        if m:
            return _count(Parsed(kind, tried_gib=_per(m.groupdict().get("bytes"), GIB)))
    return None


def _read_tf_and_serving(text: str) -> Parsed | None:
    m = F19.search(text)
    if m:
        dev = F19_DEV.search(m.group("dev") or "")
        return _count(Parsed("tf_oom", device=int(dev.group(1)) if dev else None, extra={"shape": m.group("shape")}))
    if F19B.search(text):
        return _count(Parsed("tf_oom"))
    m = F21.search(text)
    if m:
        def fig(name: str) -> float | None:
            return float(m.group(name)) if m.group(name) else None
        return _count(Parsed("vllm_cache", capacity_gib=fig("total"), free_gib=fig("free"), tried_gib=fig("want")))
    m = F20.search(text)
    if m:
        # SGLang's scheduler fills its request pool for each batch it serves (alloc_req_slots, from
        # ScheduleBatch.prepare_for_extend): that refusal comes while requests are being generated
        return _count(Parsed("vllm_cache", extra={"serving": True} if "alloc_req_slots" in m.group(0) else {}))
    if F22.search(text):
        return _count(Parsed("batch_size_exhausted"))
    if F_COMFY_OOM.search(text):
        # the app's words name no maker (its OOM_EXCEPTION is torch's, on CUDA and ROCm alike): CUDA is a guess that
        # the allocator's own message of the same failure corrects (parse._merge)
        return _count(Parsed("cuda_oom", extra={"unnamed": True}))
    if F26.search(text):
        return _count(Parsed("mlx_oom"))
    m = F26_CODE.search(text)
    if m and not CODE_LINE.search(_TITLE.sub("", text)) and not text.rstrip().endswith(("?", "？")) and \
            not _GRAMMAR_NEGATED.search(text[:m.start()]):
        return _count(Parsed("mlx_oom"))
    return None


def _read_launchers(text: str) -> Parsed | None:
    """torchrun's and DeepSpeed's exit reports: a kill only for -9 / signal 9, otherwise not an event."""
    m = F11.search(text)
    if m:
        extra = {"local_rank": int(m.group("local_rank"))} if m.group("local_rank") else {}
        return _kill(extra=extra) if m.group("code") == "-9" else NOT_AN_EVENT
    m = F11B.search(text)
    if m:
        return _kill() if "-9" in (m.group("code"), m.group("code2")) or m.group("sig") == "9" else NOT_AN_EVENT
    m = F12.search(text)
    if m:
        return _kill() if (m.group("rc") or m.group("rc2")) == "-9" else NOT_AN_EVENT
    if F12_KILLING.search(text):
        return _kill(extra={"launcher_only": True})
    return None


# GNU MP's default allocator gives up with the size it asked for (gmp's memory.c, __gmp_default_allocate and
# __gmp_default_reallocate): "GNU MP: Cannot allocate memory (size=%lu)", "... reallocate memory (old_size=%lu
# new_size=%lu)". Host memory: sympy and math-answer checkers reach it through gmpy2.
F_GMP = lazy_re(r"GNU MP: Cannot (?:re)?allocate memory \((?:old_size=\d+ new_)?size=(?P<n>\d+)\)", needs=("GNU MP: Cannot ",))


def _read_kills_and_host_errors(text: str) -> Parsed | None:
    if F15.search(text) or F13.search(text) or F13_JOB.search(text) or F16_DIED.search(text) or F_SIGKILL.search(text) or \
            F_SLURM.search(text) or F_SUPERVISOR_KILL.search(text):
        return _kill()
    m = F_MMAP.search(text)
    if m:
        return _count(Parsed("host_oom", tried_gib=_per(m.group("bytes"), GIB)))
    if F09B.search(text) and "Cannot allocate memory" in text or "std::bad_alloc" in text:
        return _count(Parsed("host_oom"))
    m = F_GMP.search(text)
    if m:
        return _count(Parsed("host_oom", tried_gib=int(m.group("n")) / GIB if len(m.group("n")) <= _MAX_DIGITS else None))
    return None


# parse_message asks these in order; the first that recognises the line decides.
# An issue's title is the failure retyped by its author: in a Markdown heading the allocator's words count in any
# letter case ("cuda out of memory", "CUDA Out of Memory", "cuda error out of memory") and the exception class counts
# with prose after it ("torch.cuda.OutOfMemoryError on older GPU"); a log line keeps the tool's exact words.
_TITLE = lazy_re(r"^#{0,5}# ", needs=("# ",))            # a Markdown heading: one to six #, then a space
# an issue title retypes the words in any case, and English hyphenates the compound ("CUDA Out-of-Memory crash")
_TITLE_WORDS = lazy_re(r"\b(?P<backend>cuda|hip|npu|xpu|mps)(?: backend| error:?| runtime error:?)? out[ -]of[ -]memory\b|"
                       r"(?:^|[\s:(`])(?:torch\.(?:cuda\.)?)?OutOfMemoryError\b", re.I)


F_STRERROR_ENOMEM = lazy_re(r"\bCannot allocate memory\b", needs=("Cannot allocate memory",))


def _read_titles_and_names(text: str) -> Parsed | None:
    if F_CU_RESULT.search(text):
        return _count(Parsed("cuda_oom"))
    q = F28_QUALIFIED.search(text)
    if q and not CODE_LINE.search(_TITLE.sub("", text)) and not _GRAMMAR_NOT.search(text) and \
            not _GRAMMAR_NEGATED.search(text[:q.start()]):
        # torch's message states its request as "Tried to allocate <size>" (c10/cuda/CUDACachingAllocator.cpp): after
        # the class on its line, those words are that message's, whatever a writer elided between them (`...`)
        t = F_TRIED.search(text, q.end())
        return _count(Parsed("cuda_oom", tried_gib=size_gib(t.group("req")) if t else None))
    if not _TITLE.search(text):
        return None
    if F19_NAME.search(_TITLE.sub("", text)) and not text.rstrip().endswith(("?", "？")):
        return _count(Parsed("tf_oom"))
    # strerror(ENOMEM) as glibc and musl spell it ("Cannot allocate memory", string/_strerror.c's errlist) quoted in a
    # title: the host refused an allocation (the grammar leaves these words alone in a log line, where they may end the
    # report of a call that is not an allocation; a title quotes the failure the thread is about)
    if F_STRERROR_ENOMEM.search(text) and not text.rstrip().endswith(("?", "？")) and \
            not _GRAMMAR_NEGATED.search(text[:F_STRERROR_ENOMEM.search(text).start()]):
        return _count(Parsed("host_oom"))
    if F_JVM_OOM.search(text):           # the JVM's class in a title is host memory, as in a log line
        return _count(Parsed("host_oom"))
    m = _TITLE_WORDS.search(text)
    if m is None:
        return None
    backend = (m.group("backend") or "cuda").upper()
    return _count(Parsed("mps_oom" if backend == "MPS" else _backend_kind(backend)))


# ------------------------------------------------------------------ the grammar of a failure no family names

# A statement that an allocation failed, in the words every allocator's error string shares (CUDA's
# cudaErrorMemoryAllocation "out of memory", C's ENOMEM "Cannot allocate memory", std::bad_alloc's callers'
# "allocation failed", "insufficient memory", "not enough memory"), any letter case; or an API's error enum for it
# (CUresult's CUDA_ERROR_OUT_OF_MEMORY, Level Zero's ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, Vulkan's
# VK_ERROR_OUT_OF_DEVICE_MEMORY), which is an error by its name.
_GRAMMAR_FAILURE = lazy_re(r"(?P<enum>\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*ERR(?:OR)?_(?:[A-Z0-9]+_)*OUT_OF_(?:[A-Z]+_)?MEMORY\b)|"
                           r"\b(?:out[ _-]of[ _-](?:(?:device|gpu|host|system|video|shared) )?memory|OOM|"
                           r"(?:memory )?allocation (?:has |was )?failed|failed to (?:re)?alloc(?:ate)?|"
                           r"(?:cannot|can ?not|can't|could not|couldn't|unable to) (?:re)?alloc(?:ate)?|"
                           r"insufficient (?:(?:device|gpu|host|system) )?memory|not enough (?:(?:device|gpu|host|system) )?memory)\b",
                           re.I)
# ... made as an error, in a log's form rather than prose's ("raises OOM errors"): an exception class
# (`SomethingError`), or a level or failure word closed by a colon, a bracket or a bar as Python's logging, glog
# (`E0512 ...]`), Rust's panics (`panicked at`) and C/C++ reports print them.
# Chinese logs and reports say 报错 ("error reported") or 错误 ("error") before a colon, full-width or not
# A C/C++ check macro names its level as the last word of its own name, closed by a colon: tt-metal's
# `TT_FATAL: ...` / `TT_THROW` (the allocator's out-of-memory report in tt_metal/impl/allocator/bank_manager.cpp is
# raised through both), ggml's `GGML_ABORT`.
_GRAMMAR_ERROR = lazy_re(r"\b[A-Z]\w*(?:Error|Exception)\b|\b(?:error|fatal|failed|failure|critical|panic|abort(?:ed)?)\s*[:\]|!]|"
                         r"\b[A-Z][A-Z0-9]*_(?:FATAL|ERROR|THROW|ABORT)\s*:|"
                         r"(?:报错|错误)\s*[:：]|"
                         r"\bpanicked at\b|\[(?:E|F|ERR|ERROR|FATAL)\]|^\s*[EF]\d{4}\b|^\s*[EF] \S|"
                         # ONNX Runtime's log sink opens a line with `[<severity>:<category>:<logger id>, <file:line
                         # function>]`, the severity one letter (core/common/logging/sinks/ostream_sink.cc, SeverityPrefix)
                         r"\[[EF]:[\w.-]+:", re.I)
# Look-alikes of that statement: a question, advice and settings (`PYTORCH_CUDA_ALLOC_CONF`, "to avoid OOM",
# "reduce ... if OOM"), a negation ("no OOM", "without out of memory errors"), a warning, code that tests for it.
_GRAMMAR_NOT = lazy_re(r"\?\s*$|\bALLOC_CONF\b|max_split_size_mb|expandable_segments|\b(?:avoid|avoids|prevent|prevents|"
                       r"preventing|reduce|reduces|fix|fixes|fixed|solve|solved|handle|handles|handling|catch|detect|"
                       r"if|whether|might|may|could cause|can cause|to cause|would|possible|possibly|likely|"
                       r"how|why|warn\w*|hint|tip|tips|note|help|retry|retrying|skip\w*)\b|"
                       r"\b(?:is_)?oom\w*\(|\w_oom\b|oom_\w|\boom[-_ ]?(?:score|killer|kill|adj)",
                       re.I)
# ... and a negation of it: "no OOM", "not out of memory", "without OOM errors", a few words before the failure
_GRAMMAR_NEGATED = lazy_re(r"\b(?:no|not|never|without|neither|nor|zero)\W+(?:\w+\W+){0,2}$", re.I)
# ... or a person's report of it: a tool states its failure impersonally (strerror, cudaGetErrorString, an exception's
# text); "I run out of memory", "we ran out of memory" are a user telling what happened
# ("I'm encountering an OOM error:", "My OOM error:": a contraction or a possessive is the same person)
_GRAMMAR_PERSON = lazy_re(r"\b(?:(?:I|we|We)(?:['’](?:m|ve|d|re))?\s+(?:\w+\s+){0,2}|(?:[Mm]y|[Oo]ur)\s+)$")
# ... also with the subject left out, as a list of steps tells it ("5) Ran: `...` again and got the same out of memory
# error:"): a verb of receiving before the failure is someone reporting what they got, which no tool prints of itself;
# and prose that relates a cause to it ("NT-Xent loss causing CUDA OOM: ...") is a person's diagnosis
_GRAMMAR_REPORTED = lazy_re(r"\b(?:got|get|gets|getting|received|receiving|encounter(?:ed|ing|s)?|hit|hitting|fac(?:ed|ing)|"
                            r"saw|seeing|r[au]n(?:ning)? into|causing|causes|caused|leads? to|leading to|results? in|"
                            r"resulting in)\s+(?:(?:the|a|an|same|this|that|similar|following|another|some|CUDA|GPU)\s+){0,3}$",
                            re.I)
# numpy's _ArrayMemoryError, "Unable to allocate 184. MiB for an array with shape (...) and data type float32"
# (numpy/_core/_exceptions.py), is an ndarray's buffer: host memory, whatever framework wraps it (TensorFlow's
# py_func: `Resource exhausted: MemoryError: ...`). Python's MemoryError alone is not: tinygrad raises it for a GPU.
# So are a Python `bytes` object (torch.save's zip writer copying a storage: "Could not allocate bytes object!") and a
# message serialised for writing (protobuf's SerializeToString under TensorFlow's "Failed to allocate memory to
# serialize message of type ..."): both are built in the process's own heap.
_GRAMMAR_HOST = lazy_re(r"\b(?:cannot|can ?not|can't|could not|couldn't|unable to) allocate memory\b|\bbad_alloc\b|"
                        r"\b(?:host|system|cpu|ram)\b|\bfor an array with shape\b|\bbytes object\b|\bto serialize\b", re.I)
_GRAMMAR_BACKENDS = (("hip_oom", lazy_re(r"\b(?:hip|rocm|amdgpu)", re.I)), ("npu_oom", lazy_re(r"\b(?:npu|ascend)\b", re.I)),
                     ("xpu_oom", lazy_re(r"\b(?:xpu|level[ _]zero)\b", re.I)), ("mps_oom", lazy_re(r"\b(?:mps|metal)\b", re.I)),
                     ("hpu_oom", lazy_re(r"\b(?:hpu|habana|gaudi)\b", re.I)), ("xla_oom", lazy_re(r"\b(?:tpu|xla|hbm)\b", re.I)),
                     ("cuda_oom", lazy_re(r"\b(?:cuda|gpu|nvidia|vram|cublas|cudnn)", re.I)))
# One size grammar after the request's words: a number (numpy's `f'{n:#.3g}'` keeps the point of `967. MiB`,
# numpy/_core/_exceptions.py _size_to_string), an optional space and a unit in any of its spellings and cases. Binary whatever the label, as the allocators print them (c10's format_size and TF's HumanReadableNumBytes
# divide by 1024 and print KiB/MiB/GiB; torch's older messages and vLLM print "MB"/"GB" for the same figures).
_GRAMMAR_SIZE = lazy_re(r"\b(?:allocat(?:e|ing|ion)(?: of)?|alloc|request(?:ed|ing)?(?: for)?|of size|sized?|needs?|needed|"
                        r"tried to (?:re)?allocate)\s*:?\s*(?P<n>\d+(?:\.\d*)?)\s?(?P<u>[KMGTP]i?B|[KMGTP]|bytes?|B)\b", re.I)
_GRAMMAR_UNIT_BYTES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


# C and C++ allocators print a request as a bare size_t after its size word: ONNX Runtime's arena `Failed to allocate
# memory for requested buffer of size N` (core/framework/bfc_arena.cc AllocateRawInternal), FlashInfer's workspace
# `... for batch_prefill_tmp_v with size N and alignment 16 ... in AlignedAllocator` (include/flashinfer/allocator.h):
# a whole number there, no unit after it, is bytes.
_GRAMMAR_RAW_BYTES = lazy_re(r"\b(?:of|with) size:?\s*(?P<n>\d+)(?![\d.]|\s*(?:[KMGTP]i?B|[KMGTP]|bytes?|B)\b)", re.I)


def _grammar_size_gib(text: str) -> float | None:
    m = _GRAMMAR_SIZE.search(text)
    if m is None:
        raw = _GRAMMAR_RAW_BYTES.search(text)
        return float(raw.group("n")) / GIB if raw and len(raw.group("n")) <= _MAX_DIGITS else None
    if len(m.group("n")) > _MAX_DIGITS:
        return None
    unit = m.group("u").upper()
    scale = _GRAMMAR_UNIT_BYTES.get("" if unit in ("B", "BYTE", "BYTES") else unit[0])
    return None if scale is None else float(m.group("n")) * scale / GIB


_URL = lazy_re(r"\bhttps?://\S+")


def _read_grammar(text: str) -> Parsed | None:
    """An error that says an allocation failed, in words no family above reads: a likely memory failure."""
    failure = _GRAMMAR_FAILURE.search(text)
    # glibc's strerror(ENOMEM) ends the report of whatever call failed (`unable to create cgroup ...: Cannot allocate
    # memory`): the host family reads the calls that allocate, so the grammar leaves it alone
    if failure is None or CODE_LINE.search(_TITLE.sub("", text)) or "Cannot allocate memory" in text or _FORMAT_CALL.search(text):
        return None
    # the other words ("not enough" is the failure's own); an issue's title is read like a log line, its question
    # or negation making it a look-alike as anywhere else
    before = _TITLE.sub("", text[:failure.start()])
    # an address names a file or a page, it states nothing (`[run.log](https://.../mochi_transformer_OOM.log)`)
    rest = _URL.sub(" ", before + " | " + text[failure.end():])
    # the failure's own words closed by a colon head the allocator's report of it, as the kernel's `Out of memory:
    # Killed process` and tt-metal's `Out of Memory: Not enough space to allocate N B DRAM buffer across N banks`
    # (tt_metal/impl/allocator/bank_manager.cpp) print it
    headed = failure.group(0)[:1] in "Oo" and text[failure.end():failure.end() + 2].startswith(": ")
    if _GRAMMAR_NOT.search(rest) or _GRAMMAR_NEGATED.search(before) or _GRAMMAR_PERSON.search(before) or \
            _GRAMMAR_REPORTED.search(before) or \
            not (failure.group("enum") or headed or _GRAMMAR_ERROR.search(rest)):
        return None
    kind = next((k for k, pat in _GRAMMAR_BACKENDS if pat.search(text)), None)
    unnamed = kind is None and not _GRAMMAR_HOST.search(text)
    if kind is None:
        kind = "cuda_oom" if unnamed else "host_oom"
    # `unnamed`: no word of the line names a device or the host (`# [Bug]: Out of Memory`); CUDA is a guess that the
    # same failure's next line may correct (parse._merge)
    return _count(Parsed(kind, tried_gib=_grammar_size_gib(text), extra={"grammar": True, **({"unnamed": True} if unnamed else {})}))


_READERS = (_read_mps, _read_fraction_and_tgi, _read_ggml, _read_xpu, _read_stream_executor_nccl_oomd,
            _read_kernel_kill, _read_xla_and_bfc, _read_nccl_and_fsdp_clone, _read_ray, parse_torch,
            _read_other_allocators, _read_tf_and_serving, _read_launchers, _read_kills_and_host_errors,
            _read_titles_and_names, _read_grammar)


def parse_message(text: str) -> Parsed | None:
    """Classify one logical message line; None when it is not a memory failure."""
    for read in _READERS:
        p = read(text)
        if p is not None:
            return None if p is NOT_AN_EVENT else p
    return None


def _kill(extra: dict | None = None) -> Parsed:
    """A process killed from outside (launcher, shell, scheduler): host RAM is the likely cause, but
    the line does not say so; the report marks it "likely" and says what to check."""
    return _count(Parsed("host_oom", extra={"likely": True, **(extra or {})}))


# The statistics of a torch OOM pasted without its head ("CUDA out of memory. " fell off the top of
# the excerpt): "Tried to allocate 20.00 MiB (GPU 0; 23.65 GiB total capacity; ...)" or "Tried to
# allocate 2.00 GiB. GPU 0 has a total capacity of ...". Only a torch OOM prints these clauses.
_HEADLESS = lazy_re(r"\bTried to allocate [\d.]+ ?[KMGT]?i?B(?: \((?P<dev>GPU|NPU|XPU) \d+; [\d.]+ ?[KMGT]?i?B total capacity;|"
                    r"\.? ?(?:GPU|Device) ?\d* has a total capac)", needs=("Tried to allocate ",))


# ... and one sentence deeper: torch >= 2.1's caching allocator writes its OOM report as "CUDA out of memory. Tried to
# allocate X. GPU N has a total capacity of T of which F is free. [Process P has U memory in use. ...] Of the allocated
# memory A is allocated by PyTorch, and R is reserved by PyTorch but unallocated." (c10/cuda/CUDACachingAllocator.cpp,
# DeviceCachingAllocator::malloc's OutOfMemoryError text); the capacity-and-free sentence is written nowhere else, so
# a paste that starts there ("error:GPU 0 has a total capacity of 23.64 GiB of which 1.61 GiB is free. ...") is that
# report without its request. Its device names no maker (the HIP build prints the same sentence): CUDA, as above.
_HEADLESS_BODY = lazy_re(rf"(?:GPU|Device) ?(?P<dev>\d*) has a total capac(?:i)?ty of (?P<total>{SIZE}) of which (?P<free>{SIZE}) is free\.",
                         needs=("has a total capac",))


def parse_headless(text: str) -> Parsed | None:
    """A torch OOM message whose first words are missing, read as the whole message would be."""
    if "out of memory" in text:
        return None
    m = _HEADLESS.search(text)
    if m is not None:
        backend = {"NPU": "NPU", "XPU": "XPU"}.get(m.group("dev") or "", "CUDA")
        return parse_message(f"{backend} out of memory. {text[m.start():]}")
    b = _HEADLESS_BODY.search(text)
    if b is None:
        return None
    p = Parsed("cuda_oom", capacity_gib=size_gib(b.group("total")), free_gib=size_gib(b.group("free")), device=_dev(b.group("dev")))
    _f01_tail(p, text[b.start():])
    return _count(p)


# The JVM throws java.lang.OutOfMemoryError when its own heap (or a native buffer it manages) cannot grow (the Java
# SE API's java.lang.OutOfMemoryError): host memory, whatever model the program runs. Android's runtime states the
# request (art/runtime/gc/heap.cc ThrowOutOfMemoryError: "Failed to allocate a %zu byte allocation with %zu free bytes
# and %s until OOM, ...").
# The class is the JVM's also where a writer names it by its language (`java OutOfMemoryError: heap space`) or where
# HotSpot's own detail message follows it: the preallocated errors of src/hotspot/share/memory/universe.cpp ("Java heap
# space", "Metaspace", "Compressed class space", "Requested array size exceeds VM limit", "GC overhead limit exceeded"),
# java.nio.Bits' "Direct buffer memory", the thread start's "unable to create native thread" (JDK 8: "new native").
F_JVM_OOM = lazy_re(r"\bjava(?:\.lang\.| )OutOfMemoryError\b|\bOutOfMemoryError: (?:Java heap space|Metaspace|"
                    r"Compressed class space|Requested array size exceeds VM limit|GC overhead limit exceeded|"
                    r"Direct buffer memory|unable to create (?:new )?native thread)",
                    needs=("OutOfMemoryError",))
F_ART_REQUEST = lazy_re(r"Failed to allocate a (?P<n>\d+) byte allocation\b", needs=("byte allocation",))


def parse_class_only(text: str) -> Parsed | None:
    """F28: only the exception class survived (message cut, garbled by two ranks, IPython header)."""
    if CODE_LINE.search(text):
        return None
    if "ray.exceptions.OutOfMemoryError" in text:
        return _count(Parsed("host_oom"))
    if F_JVM_OOM.search(text):
        m = F_ART_REQUEST.search(text)
        n = m.group("n") if m else None
        return _count(Parsed("host_oom", tried_gib=int(n) / GIB if n and len(n) <= _MAX_DIGITS else None))
    if F28.search(text) or F28_GARBLED.search(text):
        return _count(Parsed("cuda_oom"))
    return None
