# ms-swift 3.x flags (swift sft --train_type, --deepspeed zero3). NPROC_PER_NODE comes from outside the
# script: `swift sft` launches torchrun (ms-swift swift/cli/main.py use_torchrun), on a count the script does
# not name. Our values.
NPROC_PER_NODE=$NPROC \
swift sft \
    --model Qwen/Qwen2.5-7B-Instruct \
    --train_type full \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-en' \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --max_length 2048 \
    --gradient_checkpointing true \
    --deepspeed zero3 \
    --output_dir output
