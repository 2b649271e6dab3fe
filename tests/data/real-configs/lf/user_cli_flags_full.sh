# Shape of okeeper/LLaMA-Factory qwen/train.sh: a user's llamafactory-cli train with every key as a flag (no
# YAML), a model path in a variable, a bare --trust_remote_code. Our paths and values.
MODEL_PATH=/data/models/Qwen3-4B

# full-parameter fine-tune
llamafactory-cli train \
    --model_name_or_path ${MODEL_PATH} \
    --trust_remote_code \
    --stage sft \
    --do_train \
    --finetuning_type full \
    --dataset my_sft,my_mix \
    --template qwen3 \
    --cutoff_len 3072 \
    --max_samples 20000 \
    --overwrite_cache \
    --preprocessing_num_workers 16 \
    --output_dir saves/qwen3_full_sft \
    --logging_steps 1 \
    --report_to none \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 4 \
    --learning_rate 1e-5 \
    --num_train_epochs 2.0 \
    --bf16 \
    --ddp_timeout 180000000
