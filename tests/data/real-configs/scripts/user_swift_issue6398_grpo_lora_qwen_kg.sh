export MASTER_PORT=29501
MAX_PIXELS=602112 \
NPROC_PER_NODE=4 \
swift rlhf \
    --rlhf_type grpo \
    --model /home/qid/lgs/lgs-foodkg/ms-swift/output_kg/v1-20251027-102007/checkpoint-1875-merged \
    --train_type lora \
    --dataset '/home/qid/lgs/lgs-foodkg/ms-swift/data/grpo_train_entities_full.json' \
    --use_vllm true \
    --external_plugins examples/train/grpo/plugin/plugin.py \
    --vllm_mode colocate \
    --vllm_gpu_memory_utilization 0.5 \
    --vllm_tensor_parallel_size 4 \
    --torch_dtype bfloat16 \
    --system /home/qid/lgs/lgs-foodkg/ms-swift/examples/train/grpo/plugin/kg_prompt.txt \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --split_dataset_ratio 0 \
    --learning_rate 5e-6 \
    --save_total_limit 2 \
    --logging_steps 1 \
    --output_dir output_grpo \
    --gradient_accumulation_steps 4 \
    --warmup_ratio 0.05 \
    --dataloader_num_workers 4 \
    --max_completion_length 4096 \
    --reward_funcs entity relation format \
    --reward_weights 1 1 0.1 \
    --num_generations 8 \
    --sleep_level 1 \
    --save_steps 500 \
    --temperature 1.0 \
    --top_p 0.85 \
    --gradient_checkpointing_kwargs '{"use_reentrant": true}' \
    --max_length 8192 \
    --lora_rank 128 \
    --lora_alpha 256 \
    --attn_impl flash_at
