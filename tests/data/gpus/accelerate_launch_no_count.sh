#!/bin/bash
# accelerate launch without --num_processes and a config file that names none: accelerate uses every GPU of
# the machine. Our values.
accelerate launch --config_file accelerate_fsdp_no_count.yaml train.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --bf16 \
    --gradient_checkpointing \
    --output_dir out
