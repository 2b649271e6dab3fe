#!/bin/bash
# Reproduces the shape of deepspeedai/DeepSpeedExamples applications/DeepSpeed-Chat/training/
# step1_supervised_finetuning/training_scripts/opt/single_node/run_1.3b_lora.sh: --lora_dim with
# --only_optimize_lora (LoRA only), --zero_stage 0, --num_gpus on the launcher; values are ours.
OUTPUT_PATH=./output
mkdir -p $OUTPUT_PATH

deepspeed --num_gpus 2 main.py \
   --data_path Dahoas/rm-static Dahoas/full-hh-rlhf \
   --data_split 2,4,4 \
   --model_name_or_path meta-llama/Llama-2-7b-hf \
   --per_device_train_batch_size 4 \
   --per_device_eval_batch_size 4 \
   --max_seq_len 768 \
   --learning_rate 1e-3 \
   --weight_decay 0.1 \
   --num_train_epochs 4 \
   --gradient_accumulation_steps 2 \
   --lr_scheduler_type cosine \
   --num_warmup_steps 0 \
   --seed 1234 \
   --zero_stage 0 \
   --dtype bf16 \
   --lora_dim 32 \
   --lora_module_name "layers." \
   --only_optimize_lora \
   --deepspeed \
   --output_dir $OUTPUT_PATH \
   &> $OUTPUT_PATH/training.log
