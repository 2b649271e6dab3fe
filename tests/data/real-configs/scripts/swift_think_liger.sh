# Shape of modelscope/ms-swift@main examples/train/think_model/deepseek_r1.sh (one GPU, --use_liger_kernel true).
# Our values.
# 18GB
CUDA_VISIBLE_DEVICES=0 \
swift sft \
    --model deepseek-ai/DeepSeek-R1-0528-Qwen3-8B \
    --tuner_type lora \
    --dataset 'swift/DeepSeek-R1-Qwen3-8B-Distill#1800' \
    --loss_scale ignore_empty_think \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --learning_rate 1e-4 \
    --lora_rank 16 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --gradient_accumulation_steps 16 \
    --max_length 3072 \
    --output_dir output \
    --use_liger_kernel true
