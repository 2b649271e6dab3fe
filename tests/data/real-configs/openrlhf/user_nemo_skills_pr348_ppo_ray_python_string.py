from nemo_skills.pipeline import wrap_arguments
from nemo_skills.pipeline.cli import run_cmd

# ppo
start_cmd = (
    "ray job submit "
    "    --address=\"http://127.0.0.1:8265\" "
    "    -- python3 -m openrlhf.cli.train_ppo_ray "
    "        --ref_num_nodes 1 "
    "        --ref_num_gpus_per_node 4 "
    "        --reward_num_nodes 1 "
    "        --reward_num_gpus_per_node 4 "
    "        --critic_num_nodes 1 "
    "        --critic_num_gpus_per_node 4 "
    "        --actor_num_nodes 1 "
    "        --actor_num_gpus_per_node 4 "
    "        --vllm_num_engines 4 "
    "        --vllm_tensor_parallel_size 2 "
    "        --colocate_critic_reward "
    "        --colocate_actor_ref "
    "        --pretrain /hf_models/Meta-Llama-3.1-8B-Instruct "
    "        --reward_pretrain /hf_models/Llama-3-8b-rm-mixture "
    "        --save_path /workspace/test-openrlhf-ppo/llama3-8b-rlhf "
    "        --micro_train_batch_size 8 "
    "        --train_batch_size 128 "
    "        --micro_rollout_batch_size 16 "
    "        --rollout_batch_size 1024 "
