# Shape of the `trl sft` command in huggingface/trl docs (docs/source/clis.md, sft_trainer.md): model,
# dataset and ModelConfig LoRA flags on the command line. Our values.
trl sft \
    --model_name_or_path Qwen/Qwen2.5-0.5B \
    --dataset_name trl-lib/Capybara \
    --learning_rate 2.0e-4 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 4 \
    --use_peft \
    --lora_r 32 \
    --lora_alpha 16 \
    --max_length 2048 \
    --output_dir Qwen2.5-0.5B-SFT
