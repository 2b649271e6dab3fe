#!/bin/bash
# Reproduces the shape of deepspeedai/DeepSpeedExamples applications/DeepSpeed-Chat/training/
# step1_supervised_finetuning/training_scripts/llama2/run_llama2_7b_lora.sh: the ZeRO stage from $2 with a
# default set in an `if`, a bare --deepspeed switch, --lora_dim without --only_optimize_lora (every weight still
# trains), no --dtype (fp16); values are ours.
OUTPUT=$1
ZERO_STAGE=$2
if [ "$OUTPUT" == "" ]; then
    OUTPUT=./output_step1_llama2_13b_lora
fi
if [ "$ZERO_STAGE" == "" ]; then
    ZERO_STAGE=3
fi
mkdir -p $OUTPUT

deepspeed main.py \
   --data_path Dahoas/rm-static Dahoas/full-hh-rlhf \
   --data_split 2,4,4 \
   --model_name_or_path meta-llama/Llama-2-13b-hf \
   --per_device_train_batch_size 2 \
   --per_device_eval_batch_size 2 \
   --max_seq_len 1024 \
   --learning_rate 9.65e-6 \
   --weight_decay 0. \
   --num_train_epochs 2  \
   --gradient_accumulation_steps 4 \
   --lr_scheduler_type cosine \
   --num_warmup_steps 0 \
   --seed 1234 \
   --gradient_checkpointing \
   --zero_stage $ZERO_STAGE \
   --deepspeed \
   --lora_dim 64 \
   --lora_module_name "layers." \
   --output_dir $OUTPUT \
   &> $OUTPUT/training.log
