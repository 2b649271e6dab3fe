# Shape of modelscope/ms-swift@main examples/train/multi-gpu/ddp_device_map/train.sh (two processes over four
# visible GPUs: DDP with each process's model split over two cards). Our values.
# 14GiB * 4
nproc_per_node=2

CUDA_VISIBLE_DEVICES=0,1,2,3 \
NPROC_PER_NODE=$nproc_per_node \
swift sft \
    --model Qwen/Qwen2.5-14B-Instruct \
    --tuner_type lora \
    --dataset 'swift/self-cognition#1000' \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --learning_rate 1e-4 \
    --lora_rank 8 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --gradient_accumulation_steps $(expr 16 / $nproc_per_node) \
    --max_length 2048 \
    --output_dir output \
    --gradient_checkpointing_kwargs '{"use_reentrant": false}'
