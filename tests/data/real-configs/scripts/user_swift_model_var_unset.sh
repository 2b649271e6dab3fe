# Shape of the command in modelscope/ms-swift issue 10212 (2026-09, long-audio LoRA of an omni MoE on two GPUs):
# the model, data and output are shell variables the paste never sets; target modules as separate words. Our values.
CUDA_VISIBLE_DEVICES=0,1 NPROC_PER_NODE=2 ENABLE_AUDIO_OUTPUT=0 swift sft \
  --model "$MODEL" \
  --use_hf true \
  --dataset "$TRAIN_JSONL" \
  --val_dataset "$VAL_JSONL" \
  --split_dataset_ratio 0.01 \
  --deepspeed zero3 \
  --tuner_type lora \
  --torch_dtype bfloat16 \
  --lora_rank 16 \
  --lora_alpha 32 \
  --lora_dropout 0 \
  --target_modules q_proj k_proj v_proj o_proj \
  --attn_impl sdpa \
  --freeze_vit true \
  --padding_free false \
  --num_train_epochs 1 \
  --per_device_train_batch_size 1 \
  --gradient_accumulation_steps 2 \
  --learning_rate 3e-5 \
  --gradient_checkpointing true \
  --max_length 32768 \
  --output_dir "$OUTPUT_DIR"
