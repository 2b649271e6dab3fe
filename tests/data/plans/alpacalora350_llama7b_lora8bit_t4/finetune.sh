# tloen/alpaca-lora finetune.py on one Tesla T4 16GB, with the values the run printed ("Training Alpaca-LoRA
# model with params:" in the thread) written as its fire flags
python finetune.py \
    --base_model 'decapoda-research/llama-7b-hf' \
    --data_path './trans_chinese_alpaca_data.json' \
    --output_dir './lora-alpaca-zh' \
    --batch_size 128 \
    --micro_batch_size 2 \
    --num_epochs 2 \
    --learning_rate 3e-4 \
    --cutoff_len 256 \
    --val_set_size 2000 \
    --lora_r 8 \
    --lora_alpha 16 \
    --lora_dropout 0.05 \
    --lora_target_modules '[q_proj,v_proj]' \
    --train_on_inputs \
    --group_by_length False
