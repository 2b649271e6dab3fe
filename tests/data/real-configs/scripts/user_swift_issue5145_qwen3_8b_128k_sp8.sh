NPROC_PER_NODE=8 \
CELOSS_PARALLEL_SIZE=2048 \
swift sft \
    --model Qwen/Qwen3-8B \
    --train_type full \
    --dataset 'Yukang/LongAlpaca-12k' \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --learning_rate 1e-5 \
    --lr_scheduler_type cosine \
    --gradient_accumulation_steps 2 \
    --loss_scale ignore_empty_think \
    --rope_scaling yarn \
    --max_length 131072 \
    --save_steps 1 \
    --logging_steps 1 \
    --warmup_ratio 0.05 \
    --dataloader_num_workers 8 \
    --dataset_num_proc 8 \
    --save_total_limit 2 \
    --save_only_model true \
    --deepspeed zero3_offload \
    --attn_impl flash_attn \
    --sequence_parallel_size 8 \
    --use_hf 1 
