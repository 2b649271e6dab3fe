# Reproduces the shape of a user's FastChat LoRA run found by code search (deepspeed launcher,
# fastchat/train/train_lora.py, FastChat's playground/deepspeed_config_s2.json named but not beside the
# script, --q_lora False, --flash_attn False); values are ours.
deepspeed --num_gpus=2 fastchat/train/train_lora.py \
    --model_name_or_path lmsys/vicuna-7b-v1.5 \
    --lora_r 16 \
    --lora_alpha 32 \
    --lora_dropout 0.05 \
    --data_path ./data/our_convs.json \
    --bf16 True \
    --output_dir ./checkpoint \
    --num_train_epochs 3 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --evaluation_strategy "no" \
    --save_strategy "epoch" \
    --learning_rate 2e-5 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 1024 \
    --q_lora False \
    --deepspeed playground/deepspeed_config_s2.json \
    --gradient_checkpointing True \
    --flash_attn False
