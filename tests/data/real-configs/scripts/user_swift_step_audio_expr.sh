nproc_per_node=2

CUDA_VISIBLE_DEVICES=6,7 \
ENABLE_AUDIO_OUTPUT=0 \
NPROC_PER_NODE=$nproc_per_node \
VIDEO_MAX_PIXELS=50176 \
FPS_MAX_FRAMES=12 \
MAX_PIXELS=1003520 \
/home/minicondas/envs/zy/bin/swift sft \
    --model /data/models/stepfun-ai/Step-Audio-2-mini \
    --dataset ourdata.jsonl \
    --split_dataset_ratio 0 \
    --train_type lora \
    --torch_dtype bfloat16 \
    --num_train_epochs 3 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --learning_rate 3.0e-5 \
    --strict False \
    --lora_rank 16 \
    --lora_alpha 32 \
    --freeze_vit true \
    --freeze_aligner true \
    --gradient_accumulation_steps $(expr 64 / $nproc_per_node) \
    --eval_steps 50 \
    --save_steps 134 \
    --save_total_limit 2 \
    --logging_steps 5 \
    --max_length 8192 \
    --output_dir test \
    --warmup_ratio 0 \
    --truncation_strategy delete\
    --dataloader_num_workers 16
