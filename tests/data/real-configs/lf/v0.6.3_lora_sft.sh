#!/bin/bash
# Shape of hiyouga/LLaMA-Factory v0.6.3 examples/lora_single_gpu/sft.sh: one visible GPU, src/train_bash.py with
# LLaMA-Factory's own flags on the command line. Model, data and numbers are ours.

CUDA_VISIBLE_DEVICES=0 python ../../src/train_bash.py \
    --stage sft \
    --do_train \
    --model_name_or_path meta-llama/Llama-2-13b-hf \
    --dataset my_support_tickets \
    --dataset_dir ../../data \
    --template default \
    --finetuning_type lora \
    --lora_target q_proj,v_proj \
    --output_dir ../../saves/l2-13b/lora/sft \
    --overwrite_output_dir \
    --cutoff_len 768 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 4 \
    --lr_scheduler_type cosine \
    --logging_steps 5 \
    --evaluation_strategy steps \
    --eval_steps 50 \
    --learning_rate 1e-4 \
    --num_train_epochs 2.0 \
    --val_size 0.05 \
    --plot_loss \
    --fp16
