# Shape of modelscope/ms-swift@main examples/train/tuners/qlora/train.sh (no --torch_dtype, --quant_bits 4
# --quant_method bnb, no --max_length). Our values.
CUDA_VISIBLE_DEVICES=0 \
swift sft \
    --model Qwen/Qwen2.5-7B-Instruct \
    --tuner_type lora \
    --dataset 'swift/self-cognition#1000' \
    --num_train_epochs 1 \
    --per_device_train_batch_size 2 \
    --learning_rate 1e-4 \
    --lora_rank 8 \
    --lora_alpha 32 \
    --gradient_accumulation_steps 8 \
    --quant_bits 4 \
    --quant_method bnb
