#!/bin/bash
# Shape of the launch in hiyouga/LlamaFactory issue 9349 (2025-10): several environment assignments before
# llamafactory-cli, FORCE_TORCHRUN, two visible GPUs, output redirected to a dated log. Our file.
CUDA_LAUNCH_BLOCKING=1 TOKENIZERS_PARALLELISM=false FORCE_TORCHRUN=1 DISABLE_VERSION_CHECK=1 CUDA_VISIBLE_DEVICES=4,5 llamafactory-cli train head_qwen3_lora_kto.yaml > lf_gpu_$(date +%Y%m%d_%H%M%S).log 2>&1
