nproc_per_node=${1:-2}
LR=${3:-4e-6}
DROPOUT=${4:-0.05}
RANK=${5:-32}
EPOCH=${6:-4}

PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"
CUDA_VISIBLE_DEVICES=${2:-"0,1"}
NPROC_PER_NODE=$nproc_per_node \
swift sft \
  --use_hf true \
  --model /Models/OSS/google/gemma-3-12b-it \
  --train_type lora \
  --dataset /data/train/tickets_reply_4class_reviewed_more2_msdata_xml7w_allvali_abnummodified_dataset.jsonl \
  --split_dataset_ratio 0.02 \
  --torch dtype bfloat16 \
  --num_train_epochs $EPOCH \
  --per_device_train_batch_size 8 \
  --per_device_eval_batch_size 1 \
  --learning_rate $LR \
  --lr_scheduler_type cosine_with_restarts \
  --lr_scheduler_kwargs '{"num_cycles": 3}' \
  --lora_rank $RANK \
  --lora_alpha $LORA_ALPHA \
  --lora_dropout $DROPOUT \
  --target_modules all-linear \
  --gradient_accumulation_steps 4 \
  --eval_steps 50 \
  --neptune_noise_alpha 5 \
  --save_steps 100 \
  --save_total_limit 10 \
  --max_length 10240 \
  --output_dir /trained_models/$VERSION \
  --warmup_ratio 0.03 \
  --dataloader_num_workers 32 \
  --dataloader_persistent_workers true \
  --load_from_cache_file true \
  --attn_impl flash_attn \
  --logging_steps 1 \
  --use_liger_kernel true \
  --gradient_checkpointing_kwargs '{"use_reentrant": false}'
