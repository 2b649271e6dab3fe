# Shape of modelscope/ms-swift@main examples/train/sequence_parallel/sequence_parallel_512k.sh (eight processes,
# --sequence_parallel_size 8, zero3_offload, packing, liger). Our values.
# Env: 8 * A100
NPROC_PER_NODE=8 \
CELOSS_PARALLEL_SIZE=2048 \
swift sft \
    --model Qwen/QwQ-32B \
    --tuner_type lora \
    --dataset 'AI-ModelScope/LongAlpaca-12k' \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 1 \
    --learning_rate 1e-5 \
    --gradient_accumulation_steps 2 \
    --packing true \
    --rope_scaling yarn \
    --max_length 131072 \
    --use_liger_kernel true \
    --deepspeed zero3_offload \
    --attn_impl flash_attn \
    --sequence_parallel_size 8
