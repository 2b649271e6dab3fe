# The same run launched bare: without NPROC_PER_NODE or NNODES, `swift sft` runs one python process
# (ms-swift swift/cli/main.py use_torchrun, cli_main), so the line itself says one. Our values.
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
