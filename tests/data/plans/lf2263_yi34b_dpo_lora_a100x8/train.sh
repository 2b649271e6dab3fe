# the thread names only what it set: the model, LoRA, batch 1 for train and eval, accumulation 1, on 8x A100 80GB
# (LLaMA-Factory, January 2024); the launcher and every other value are assumed (see case.yaml)
accelerate launch --num_processes 8 src/train_bash.py \
    --stage dpo \
    --do_train \
    --model_name_or_path 01-ai/Yi-34B \
    --dataset comparison_gpt4_zh \
    --template default \
    --finetuning_type lora \
    --output_dir saves/yi34b/dpo \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --gradient_accumulation_steps 1 \
    --learning_rate 1e-5 \
    --num_train_epochs 1.0 \
    --bf16
