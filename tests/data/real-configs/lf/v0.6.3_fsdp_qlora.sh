#!/bin/bash
# Shape of hiyouga/LLaMA-Factory v0.6.3 examples/extras/fsdp_qlora/sft.sh: pip lines first, then accelerate
# launch with an FSDP config and --quantization_bit 4 on a 70B model. Our values.

pip install "transformers>=4.39.1"
pip install "bitsandbytes>=0.43.0"

CUDA_VISIBLE_DEVICES=0,1 accelerate launch \
    --config_file accelerate/fsdp_config.yaml \
    ../../src/train_bash.py \
    --stage sft \
    --do_train \
    --model_name_or_path meta-llama/Llama-2-70b-hf \
    --dataset alpaca_gpt4_en \
    --template default \
    --finetuning_type lora \
    --lora_target q_proj,v_proj \
    --output_dir ../../saves/l2-70b/qlora \
    --cutoff_len 1024 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 4 \
    --quantization_bit 4 \
    --bf16
