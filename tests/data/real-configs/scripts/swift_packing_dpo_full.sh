# Shape of modelscope/ms-swift@main examples/train/packing/dpo.sh (full DPO with packing, zero3). Our values.
# 4 * 50GiB; 2h
PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' \
NPROC_PER_NODE=4 \
CUDA_VISIBLE_DEVICES=0,1,2,3 \
swift rlhf \
    --rlhf_type dpo \
    --model Qwen/Qwen2.5-7B-Instruct \
    --tuner_type full \
    --dataset AI-ModelScope/orpo-dpo-mix-40k \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --learning_rate 1e-5 \
    --gradient_accumulation_steps 2 \
    --max_length 4096 \
    --output_dir output \
    --save_only_model true \
    --deepspeed zero3 \
    --attn_impl flash_attn \
    --rpo_alpha 0.1 \
    --packing true
