#!/bin/bash
# Shape of hiyouga/LLaMA-Factory@main examples/train_lora/qwen3_lora_sft.sh (llamafactory-cli train with flags,
# the model in a variable, bare boolean flags). Our values.
set -x
MODEL_PATH=Qwen/Qwen3-4B-Instruct-2507
llamafactory-cli train \
    --model_name_or_path ${MODEL_PATH} \
    --trust_remote_code \
    --stage sft \
    --do_train \
    --finetuning_type lora \
    --lora_rank 16 \
    --lora_target all \
    --dataset identity,alpaca_en_demo \
    --template qwen3_nothink \
    --cutoff_len 4096 \
    --output_dir saves/qwen3-4b/lora/sft \
    --plot_loss \
    --overwrite_output_dir \
    --save_only_model false \
    --report_to none \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 4 \
    --learning_rate 1e-4 \
    --num_train_epochs 3.0 \
    --bf16 \
    --ddp_timeout 180000000
