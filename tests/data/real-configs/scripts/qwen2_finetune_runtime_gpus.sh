#!/bin/bash
# Reproduces the shape of QwenLM/Qwen2 examples/sft/finetune.sh: the GPU count computed at run time by
# python, launcher options gathered in DISTRIBUTED_ARGS (multi-line, with that unknown count inside),
# `torchrun $DISTRIBUTED_ARGS finetune.py`, Qwen's own --use_lora / --q_lora / --model_max_length; values are ours.
export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=$(python -c 'import torch; print(torch.cuda.device_count())')
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-6001}

MODEL="Qwen/Qwen2-1.5B"
DATA="example_data.jsonl"
USE_LORA=False
Q_LORA=False

DISTRIBUTED_ARGS="
    --nproc_per_node $GPUS_PER_NODE \
    --nnodes $NNODES \
    --node_rank $NODE_RANK \
    --master_addr $MASTER_ADDR \
    --master_port $MASTER_PORT
"

torchrun $DISTRIBUTED_ARGS finetune.py \
    --model_name_or_path $MODEL \
    --data_path $DATA \
    --bf16 True \
    --output_dir output_qwen \
    --num_train_epochs 3 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --learning_rate 1e-5 \
    --model_max_length 1024 \
    --lazy_preprocess True \
    --use_lora ${USE_LORA} \
    --q_lora ${Q_LORA} \
    --gradient_checkpointing
