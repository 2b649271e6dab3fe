# Shape of modelscope/ms-swift@main examples/train/qlora/hqq.sh (--quant_method hqq --quant_bits 4, a dataset
# list continued over lines). Our values.
# 10GB
CUDA_VISIBLE_DEVICES=0 \
swift sft \
    --model Qwen/Qwen2.5-7B-Instruct \
    --tuner_type lora \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-zh#500' \
              'AI-ModelScope/alpaca-gpt4-data-en#500' \
              'swift/self-cognition#500' \
    --torch_dtype bfloat16 \
    --quant_method hqq \
    --quant_bits 4 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 2 \
    --learning_rate 1e-4 \
    --lora_rank 8 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --gradient_accumulation_steps 8 \
    --max_length 1024 \
    --output_dir output \
    --system 'You are a helpful assistant.'
