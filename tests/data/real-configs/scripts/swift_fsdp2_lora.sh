# Reproduces the shape of modelscope/ms-swift examples/train/multi-gpu/fsdp2_lora/train.sh (with its
# fsdp2.json): `accelerate launch --config_file <json> swift/cli/sft.py`, FSDP2 with activation
# checkpointing in the accelerate config, --gradient_checkpointing false, accumulation from $(expr);
# values are ours.
nproc_per_node=2

CUDA_VISIBLE_DEVICES=0,1 \
accelerate launch --config_file "./swift_fsdp2.json" \
    swift/cli/sft.py \
    --model Qwen/Qwen2.5-7B-Instruct \
    --tuner_type lora \
    --dataset 'swift/self-cognition#1000' \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --learning_rate 1e-4 \
    --lora_rank 16 \
    --lora_alpha 32 \
    --gradient_checkpointing false \
    --target_modules all-linear \
    --gradient_accumulation_steps $(expr 32 / $nproc_per_node) \
    --max_length 4096 \
    --output_dir output
