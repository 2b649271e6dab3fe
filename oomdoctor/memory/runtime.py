"""Device memory a training process holds beside its tensors, the same for every framework and sharding scheme
(memory/estimate.py and memory/megatron.py both add it); the only two tuned numbers of the memory model."""
from __future__ import annotations

# CUDA context + kernels loaded by torch/NCCL: 0.3-2 GiB on real cards (estimator-survey §0.9); 0.5 GiB is
# typical for an A100/H100 process with cuBLAS and NCCL initialised. Not seen by torch's allocator.
CUDA_CONTEXT_GIB = 0.5
# cuBLAS workspace: torch allocates it through the caching allocator (":4096:8" = 8 x 4 MiB per handle/stream).
CUBLAS_WORKSPACE_GIB = 32 / 1024
