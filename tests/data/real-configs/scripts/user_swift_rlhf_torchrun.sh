# Shape of the launch in modelscope/ms-swift issue 6209 (2025-10, GRPO LoRA of Qwen3-8B on 4x V100): the logged
# `python -m torch.distributed.run … swift/cli/rlhf.py` command, fp16, zero3_offload. Our values.
/opt/conda/bin/python -m torch.distributed.run \
--nproc_per_node 4 \
--nnodes 1 \
--node_rank 0 \
/workspace/ms-swift/swift/cli/rlhf.py \
--rlhf_type grpo \
--output_dir /checkpoint \
--model /model/actor_model \
--dataset /data \
--torch_dtype float16 \
--model_type qwen3 \
--train_type lora \
--num_train_epochs 2 \
--learning_rate 1e-06 \
--per_device_train_batch_size 1 \
--use_vllm true \
--vllm_mode colocate \
--offload_model true \
--offload_optimizer true \
--reward_funcs accuracy \
--gradient_accumulation_steps 4 \
--max_completion_length 1024 \
--num_generations 2 \
--max_length 1024 \
--deepspeed zero3_offload \
--lora_rank 8 \
--lora_alpha 32
