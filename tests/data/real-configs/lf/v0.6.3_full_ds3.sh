#!/bin/bash
# Shape of hiyouga/LLaMA-Factory v0.6.3 examples/full_multi_gpu/single_node.sh: the deepspeed launcher with
# --num_gpus, train_bash.py, the repo's ds_z3_config.json named relative to the examples folder. Our values.

deepspeed --num_gpus 4 ../../src/train_bash.py \
    --deepspeed ../deepspeed/ds_z3_config.json \
    --stage sft \
    --do_train \
    --model_name_or_path mistralai/Mistral-7B-v0.1 \
    --dataset alpaca_gpt4_en \
    --template mistral \
    --finetuning_type full \
    --output_dir ../../saves/mistral-7b/full/sft \
    --cutoff_len 2048 \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 4 \
    --learning_rate 2e-5 \
    --num_train_epochs 1.0 \
    --ddp_timeout 180000000 \
    --bf16
