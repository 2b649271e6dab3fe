# Reproduces the shape of modelscope/ms-swift examples/train/multimodal/rlhf/dpo/lora.sh: `swift rlhf
# --rlhf_type dpo` (a chosen/rejected pair per sample), NPROC_PER_NODE from a shell variable, accumulation
# from $(expr), --deepspeed zero2; values are ours.
# --rlhf_type cpo/orpo/simpo/rm are also supported
nproc_per_node=4

CUDA_VISIBLE_DEVICES=0,1,2,3 \
NPROC_PER_NODE=$nproc_per_node \
swift rlhf \
    --rlhf_type dpo \
    --model Qwen/Qwen2.5-7B-Instruct \
    --dataset 'our/preference-data#20000' \
    --split_dataset_ratio 0.01 \
    --tuner_type lora \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --learning_rate 5e-5 \
    --lora_rank 16 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --gradient_accumulation_steps $(expr 32 / $nproc_per_node) \
    --deepspeed zero2 \
    --max_length 2048 \
    --output_dir output \
    --rpo_alpha 0.1
