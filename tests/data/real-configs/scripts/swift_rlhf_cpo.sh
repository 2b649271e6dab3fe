# Shape of modelscope/ms-swift@main examples/train/rlhf/cpo.sh (swift rlhf --rlhf_type cpo, a lower-case variable
# for the process count, accumulation from $(expr …)). Our values.
nproc_per_node=2

CUDA_VISIBLE_DEVICES=0,1 \
NPROC_PER_NODE=$nproc_per_node \
swift rlhf \
    --rlhf_type cpo \
    --model Qwen/Qwen2.5-7B-Instruct \
    --tuner_type lora \
    --dataset hjh0119/shareAI-Llama3-DPO-zh-en-emoji \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --learning_rate 1e-4 \
    --lora_rank 8 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --gradient_accumulation_steps $(expr 16 / $nproc_per_node) \
    --max_length 2048 \
    --output_dir output \
    --deepspeed zero2
