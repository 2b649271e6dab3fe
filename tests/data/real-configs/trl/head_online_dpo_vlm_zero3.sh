accelerate launch \
    --config_file examples/accelerate_configs/deepspeed_zero3.yaml \
    examples/scripts/online_dpo_vlm.py \
    --model_name_or_path Qwen/Qwen2.5-VL-3B-Instruct \
    --reward_model_path Qwen/Qwen2.5-VL-3B-Instruct \
    --output_dir online-dpo-Qwen2.5-VL-3B-Instruct \
    --learning_rate 1e-5 \
    --dtype bfloat16 \
    --max_length 1536 \
    --max_new_tokens 1024 \
    --use_vllm \
    --vllm_mode server \
    --use_peft \
    --lora_target_modules "q_proj", "v_proj" \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 2
