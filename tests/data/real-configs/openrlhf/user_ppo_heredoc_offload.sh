# Shape of the script pasted in OpenRLHF/OpenRLHF issue 858 (2025-03, PPO on 4x A40): openrlhf.cli.train_ppo in a
# here-document, --adam_offload, prompt and generation lengths. Our values and paths.
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_ppo \
   --pretrain /nas/models/Llama-3-8b-sft-mixture \
   --reward_pretrain /nas/models/Llama-3-8b-rm-mixture \
   --save_path ./checkpoint/llama3-8b-ppo \
   --micro_train_batch_size 1 \
   --train_batch_size 8 \
   --micro_rollout_batch_size 2 \
   --rollout_batch_size 8 \
   --max_epochs 1 \
   --prompt_max_len 1024 \
   --generate_max_len 1024 \
   --zero_stage 2 \
   --bf16 \
   --actor_learning_rate 5e-7 \
   --critic_learning_rate 9e-6 \
   --init_kl_coef 0.01 \
   --prompt_data OpenRLHF/prompt-collection-v0.1 \
   --input_key context_messages \
   --apply_chat_template \
   --normalize_reward \
   --adam_offload \
   --flash_attn \
   --gradient_checkpointing
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
