训练指令：
`HEAD_IP=127.0.0.1
# 提交Ray任务
ray job submit --address="http://${HEAD_IP}:8265" \
   -- python -m openrlhf.cli.train_ppo_ray \
   --ref_num_nodes 1 \
   --ref_num_gpus_per_node 4 \
   --reward_num_nodes 0 \
   --reward_num_gpus_per_node 0 \
   --actor_num_nodes 1 \
   --actor_num_gpus_per_node 8 \
   --critic_num_nodes 0 \
   --critic_num_gpus_per_node 0 \
   --vllm_num_engines 1 \
   --vllm_tensor_parallel_size 4 \
   --advantage_estimator group_norm \
   --use_kl_loss \
   --kl_estimator k3 \
   --pretrain /data/local_disk0/dl_models/models/Qwen/Qwen2.5-7B-Instruct \
   --prompt_data /data/cloud_disk0/s04/grpo/mongodb_grpo_data04.json \
   --save_path /data/cloud_disk0/s04/ckpt/qwen2.5-grpo \
   --ckpt_path /data/cloud_disk0/s04/ckpt/qwen2.5-grpo-checkpoints \
   --rollout_batch_size 8 \
   --train_batch_size 8 \
   --micro_train_batch_size 1 \
   --micro_rollout_batch_size 2 \
   --n_samples_per_prompt 8 \
   --max_samples 10000 \
   --max_epochs 1 \
   --prompt_max_len 13024 \
   --generate_max_len 13024 \
   --zero_stage 3 \
   --bf16 \
   --actor_learning_rate 1e-6 \
   --init_kl_coef 0.05 \
   --save_steps 50 \
   --flash_attn \
   --gradient_checkpointing \
   --remote_rm_url "/data/cloud_disk0/s04/grpo/openrlhf_plugin.py"`
