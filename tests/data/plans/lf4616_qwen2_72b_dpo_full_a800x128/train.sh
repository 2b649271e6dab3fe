# the key arguments as the thread posts them (16 nodes x 8 A800); the rest of the command is not shown
deepspeed \
    src/train.py \
    --stage dpo \
    --model_name_or_path Qwen/Qwen2-72B \
    --do_train \
    --finetuning_type full \
    --deepspeed ds_z3_config.json \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 4 \
    --preprocessing_num_workers 8 \
    --bf16 True \
    --cutoff_len 6144
