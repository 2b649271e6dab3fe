#!/bin/bash
# Shape of QwenLM/Qwen finetune/finetune_qlora_single_gpu.sh: one visible GPU, plain python, --q_lora on an
# Int4 checkpoint. Our own values.
export CUDA_DEVICE_MAX_CONNECTIONS=1
MODEL="Qwen/Qwen-7B-Chat-Int4"
DATA="path_to_data"
export CUDA_VISIBLE_DEVICES=0

# fp16 because of auto-gptq
python finetune.py \
  --model_name_or_path $MODEL \
  --data_path $DATA \
  --fp16 True \
  --output_dir output_qwen \
  --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 8 \
  --model_max_length 2048 \
  --gradient_checkpointing \
  --use_lora \
  --q_lora \
  --deepspeed finetune/ds_config_zero2.json
