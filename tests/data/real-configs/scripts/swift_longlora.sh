# Shape of modelscope/ms-swift@main examples/train/tuners/longlora/train.sh (--tuner_type longlora, no dtype, no
# batch flag). Our values.
CUDA_VISIBLE_DEVICES=0 \
swift sft \
    --model LLM-Research/Meta-Llama-3.1-8B-Instruct \
    --tuner_type longlora \
    --dataset 'AI-ModelScope/LongAlpaca-12k#1000' \
    --num_train_epochs 1 \
    --learning_rate 1e-4 \
    --attn_impl flash_attn \
    --gradient_accumulation_steps 8 \
    --lora_rank 16 \
    --lora_alpha 32 \
    --max_length 8000
