#!/bin/bash
# Shape of hiyouga/LLaMA-Factory v0.6.3 examples/lora_multi_gpu/single_node.sh: accelerate launch with its
# --config_file (which says the process count), train_bash.py and LLaMA-Factory flags. Our values.

CUDA_VISIBLE_DEVICES=0,1 accelerate launch \
    --config_file accelerate/two_gpu_config.yaml \
    ../../src/train_bash.py \
    --stage sft \
    --do_train \
    --model_name_or_path Qwen/Qwen1.5-7B \
    --dataset glaive_toolcall \
    --template qwen \
    --finetuning_type lora \
    --lora_rank 16 \
    --lora_target all \
    --output_dir ../../saves/qwen15-7b/lora \
    --cutoff_len 1536 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --learning_rate 5e-5 \
    --num_train_epochs 3.0 \
    --fp16
