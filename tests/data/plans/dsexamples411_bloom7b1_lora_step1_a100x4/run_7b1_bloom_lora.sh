#!/bin/bash
# Copyright (c) Microsoft Corporation.
# SPDX-License-Identifier: Apache-2.0

# DeepSpeed Team

# the thread's script as posted (DeepSpeed-Chat step 1 main.py adapted by the reporter to bloom-7b1, April 2023);
# data and model paths are elided in the thread
# Note that usually LoRA needs to use larger learning rate
OUTPUT_PATH=./save/actor-models/7b1_bloom_lora
mkdir -p $OUTPUT_PATH

deepspeed --master_port 25104 --num_gpus 4 main.py \
   --data_path xxx \
   --data_split 10,0,0 \
   --model_name_or_path xxx \
   --per_device_train_batch_size 4 \
   --per_device_eval_batch_size 4 \
   --max_seq_len 2048 \
   --learning_rate 1e-3 \
   --weight_decay 0.1 \
   --num_train_epochs 3 \
   --gradient_accumulation_steps 1 \
   --lr_scheduler_type cosine \
   --num_warmup_steps 0 \
   --seed 1234 \
   --zero_stage 0 \
   --lora_dim 128 \
   --lora_module_name transformer.h. \
   --only_optimize_lora \
   --deepspeed \
   --output_dir $OUTPUT_PATH \
   &> $OUTPUT_PATH/training.log
