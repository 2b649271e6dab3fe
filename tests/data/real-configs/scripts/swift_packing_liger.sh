# Reproduces the shape of modelscope/ms-swift examples/train/packing/liger_kernel.sh: `swift sft` full
# fine-tune with --packing true, --use_liger_kernel, --deepspeed zero3, --torch_dtype bfloat16 and no
# --bf16 flag (swift autocasts in the load dtype); values are ours.
# GPU Memory: 4 * 40GB
NPROC_PER_NODE=4 \
CUDA_VISIBLE_DEVICES=0,1,2,3 \
swift sft \
    --model Qwen/Qwen2.5-3B \
    --tuner_type full \
    --dataset 'AI-ModelScope/LongAlpaca-12k' \
    --load_from_cache_file true \
    --split_dataset_ratio 0.01 \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --learning_rate 1e-5 \
    --gradient_accumulation_steps 4 \
    --packing true \
    --eval_steps 100 \
    --save_steps 100 \
    --logging_steps 5 \
    --max_length 8192 \
    --warmup_ratio 0.05 \
    --dataloader_num_workers 8 \
    --dataset_num_proc 8 \
    --save_total_limit 2 \
    --save_only_model true \
    --output_dir output/Qwen2.5-3B \
    --deepspeed zero3 \
    --use_liger_kernel true \
    --attn_impl flash_attn
