#!/bin/bash
# fine-tune Llama-2 with the HF example script
export CUDA_VISIBLE_DEVICES=0,1
torchrun --nproc_per_node 2 run_clm.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --per_device_train_batch_size 8 \
    --gradient_accumulation_steps 4 \
    --block_size 1024 \
    --fp16 \
    --gradient_checkpointing \
    --output_dir /tmp/out
