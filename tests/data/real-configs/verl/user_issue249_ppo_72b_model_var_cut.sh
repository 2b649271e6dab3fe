PROJ_HOME='/mnt/data/RL/verl/'
cd $PROJ_HOME
YOUR_PROJECT_NAME="verl_test"
YOUR_RUN_NAME="72B_gsm8k_PPO"
# model="/mnt/data/qwen/model/Qwen2.5-3B-Instruct"
model="/mnt/data/qwen/model/Qwen2.5-72B-Instruct"

# model="/mnt/data/end_side/model/Qwen2.5-0.5B-Instruct"
actor_model_path=$model
critic_model_path=$model

# export NPROC_PER_NODE=1
export NPROC_PER_NODE=8
export ROLLOUT_TP_SIZE=8
export NNODES=2

HYDRA_FULL_ERROR=1 
PYTHONUNBUFFERED=1 python3 -m verl.trainer.main_ppo \
    data.train_files=$PROJ_HOME/data/gsm8k/train.parquet \
    data.val_files=$PROJ_HOME/data/gsm8k/test.parquet \
    data.train_batch_size=64 \
    data.max_prompt_length=512 \
    data.max_response_length=256 \
    actor_rollout_ref.model.path=$actor_model_path \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=64 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=$ROLLOUT_TP_SI
