```bash
deepspeed \
  --num_gpus 8 \
  src/train.py \
  --do_train \
  --stage sft \
  --finetuning_type full \
  --model_name_or_path Qwen/Qwen3-Omni-30B-A3B-Instruct \
  --deepspeed examples/deepspeed/ds_z3_config.json \
  --dataset alpaca_en_demo,alpaca_zh_demo \
  --template qwen3_omni \
  --cutoff_len 4096 \
  --overwrite_cache \
  --per_device_train_batch_size 32 \
  --gradient_accumulation_steps 1 \
  --learning_rate 1e-5 \
  --num_train_epochs 2 \
  --lr_scheduler_type cosine_with_min_lr \
  --lr_scheduler_kwargs '{"min_lr": 1e-6}' \
  --warmup_ratio 0.05 \
  --bf16 \
