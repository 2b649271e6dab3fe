# Shape of modelscope/ms-swift@main examples/train/rlhf/ppo/lora.sh (swift rlhf --rlhf_type ppo with a reward
# model, accumulation from $(expr …)). Our values.
nproc_per_node=4

PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' \
CUDA_VISIBLE_DEVICES=0,1,2,3 \
NPROC_PER_NODE=$nproc_per_node \
swift rlhf \
    --rlhf_type ppo \
    --model LLM-Research/Meta-Llama-3.1-8B-Instruct \
    --reward_model 'AI-ModelScope/Skywork-Reward-Llama-3.1-8B-v0.2' \
    --tuner_type lora \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-en#20000' \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 1 \
    --learning_rate 1e-5 \
    --lora_rank 16 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --gradient_accumulation_steps $(expr 32 / $nproc_per_node) \
    --max_length 1024 \
    --output_dir output \
    --deepspeed zero2 \
    --response_length 512
