
source .venv/bin/activate

export CUDA_VISIBLE_DEVICES=6,7
NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES | awk -F',' '{print NF}')

echo "Running with $NUM_GPUS GPUs"

MODEL_NAME="meta-llama/Llama-3.2-3B-Instruct"
DATASET_NAME="rrvaswin/llama_star"
SPLIT="train"
PROMPT_FIELD="question"
RESPONSE_FIELD="response"
OUTPUT_DIR="models/llama_star_sft"
MAX_LENGTH=5192
LEARNING_RATE=5e-6
NUM_EPOCHS=1
SAVE_STRATEGY="epoch"
EFF_BATCH_SIZE=16
PER_DEVICE_BATCH_SIZE=4
OPTIM="adamw_torch"
LR_SCHEDULER="cosine"
SAVE_TOTAL_LIMIT=3
REPORT_TO="wandb"
LOGGING_STEPS=10
BF16=True
GRADIENT_CHECKPOINTING=True
WARMUP_RATIO=0.1
PACKING=False
SEED=42

RUN_NAME="llama_star_sft_pc_mode"
DATASET_MODE="pc_mode"

ACCELERATE_LOG_LEVEL=info accelerate launch \
    --main_process_port 0 \
    --config_file config/accelerate_config.yaml \
    --num_processes=$NUM_GPUS \
    sft.py \
    --model_name $MODEL_NAME \
    --dataset_name $DATASET_NAME \
    --split $SPLIT \
    --prompt_field $PROMPT_FIELD \
    --response_field $RESPONSE_FIELD \
    --shuffle \
    --output_dir $OUTPUT_DIR \
    --max_length $MAX_LENGTH \
    --learning_rate $LEARNING_RATE \
    --num_epochs $NUM_EPOCHS \
    --save_strategy $SAVE_STRATEGY \
    --eff_batch_size $EFF_BATCH_SIZE \
    --per_device_batch_size $PER_DEVICE_BATCH_SIZE \
    --optim $OPTIM \
    --lr_schedu
