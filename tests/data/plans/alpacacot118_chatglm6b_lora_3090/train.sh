# the README's ChatGLM command as the thread ran it (PhoebusSi/Alpaca-CoT uniform_finetune.py), one RTX 3090 24GB;
# --cutoff_len 512 is the script's default, written out (the thread does not set it)
python3 uniform_finetune.py   --model_type chatglm --model_name_or_path THUDM/chatglm-6b \
    --data alpaca-belle-cot --lora_target_modules query_key_value \
    --lora_r 32 --lora_alpha 32 --lora_dropout 0.1 --per_gpu_train_batch_size 2 \
    --learning_rate 2e-5 --epochs 1 --cutoff_len 512
