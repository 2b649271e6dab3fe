#!/bin/bash
# Reproduces the shape of huggingface/transformers examples/pytorch/language-modeling README (accelerate launch
# with a saved accelerate config): no --bf16 / --fp16 on the command line, so the accelerate config's
# mixed_precision decides; model and numbers are ours.
accelerate launch --config_file accelerate_multi_gpu_fp16.yaml run_clm.py \
    --model_name_or_path openai-community/gpt2-large \
    --dataset_name wikitext --dataset_config_name wikitext-2-raw-v1 \
    --per_device_train_batch_size 4 \
    --block_size 512 \
    --do_train \
    --output_dir /tmp/test-clm
