# Shape of JudySun233/IDL_SLM_SAIL7B finetune.sh: `wandb login` first, accelerate launch without a config or a
# process count, the user's own train_lora_qlora.py with --qlora True, --model_max_length, a two-word
# --target_modules, and no model flag (the script picks its model). Our values.
wandb login
accelerate launch train_lora_qlora.py \
  --data_path datasets/my_train.json \
  --output_dir ./llama2-lora-mine \
  --lora_r 32 \
  --lora_alpha 64 \
  --lora_dropout 0.1 \
  --target_modules q_proj v_proj \
  --qlora True \
  --num_train_epochs 3 \
  --per_device_train_batch_size 4 \
  --per_device_eval_batch_size 1 \
  --gradient_accumulation_steps 8 \
  --learning_rate 2e-5 \
  --model_max_length 2048 \
  --lazy_preprocess False
