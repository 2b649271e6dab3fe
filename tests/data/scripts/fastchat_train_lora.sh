# Shape of lm-sys/FastChat scripts/train_lora.sh: deepspeed launcher, FastChat's own --flash_attn False
# (a bool of its TrainingArguments), --q_lora False. Our own values.
deepspeed --num_gpus 2 fastchat/train/train_lora.py \
    --model_name_or_path lmsys/vicuna-7b-v1.5 \
    --lora_r 16 \
    --lora_alpha 32 \
    --lora_dropout 0.05 \
    --data_path $DATA_PATH \
    --output_dir ./checkpoints \
    --num_train_epochs 3 \
    --fp16 True \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 2 \
    --evaluation_strategy "no" \
    --learning_rate 2e-5 \
    --model_max_length 2048 \
    --q_lora False \
    --deepspeed $PATH_TO_DEEPSPEED_CONFIG \
    --gradient_checkpointing True \
    --flash_attn False
