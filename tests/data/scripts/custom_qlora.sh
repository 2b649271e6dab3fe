#!/usr/bin/env bash
# A user's own training script (not a project oomdoctor knows): its flags are its own, only the HF
# TrainingArguments names and the common LoRA/length conventions are read. Invented for this test.
set -e
CUDA_VISIBLE_DEVICES=1,0 deepspeed --include localhost:1,0 my_train.py \
  --model_name_or_path meta-llama/Llama-2-7b-hf \
  --load_in_bits 4 \
  --lora_r 8 \
  --block_size 2048 \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 4 \
  --bf16 \
  --flash_attn maybe \
  --report_to none
