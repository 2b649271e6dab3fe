#!/bin/bash
# Shape of hiyouga/LLaMA-Factory v0.9.2 examples/extras/fsdp_qlora/train.sh: accelerate launch with the FSDP
# config, src/train.py and the YAML as its argument.
# DO NOT use a GPTQ/AWQ checkpoint with FSDP+QLoRA
CUDA_VISIBLE_DEVICES=0,1 accelerate launch \
    --config_file accelerate/fsdp_config.yaml \
    src/train.py examples/extras/fsdp_qlora/lora_sft.yaml
