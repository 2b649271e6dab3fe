set -x


JOB_NAME=try_in_note_book
# export RAY_USE_MULTIPROCESSING_CPU_COUNT=1
JOBLOG="$(realpath .)/train_ppo_llama_ray-${JOB_NAME}.log"
echo "$(date '+%Y-%m-%d %H:%M:%S') Job ${JOB_NAME} started ..." &>> ${JOBLOG}

# RANK=$1
ip=$MASTER_ADDR

port=$MASTER_PORT
# port=6379
ip_head=${MASTER_ADDR}:$port
export ip_head
echo "IP Head: $ip_head"  &>> ${JOBLOG}

echo "STARTING HEAD at $MASTER_ADDR"  &>> ${JOBLOG}

if [ $RANK == 0 ]; then
   ray start --head --node-ip-address=$ip --port=$port &>> ${JOBLOG}
   sleep 60
   ray job submit --address="http://127.0.0.1:8265" \
   --runtime-env-json='{"working_dir": "./openrlhf"}' \
   -- python3 -m openrlhf.cli.train_ppo_ray \
   --ref_num_nodes 1 \
   --ref_num_gpus_per_node 4 \
   --critic_num_nodes 0 \
   --critic_num_gpus_per_node 0 \
   --actor_num_nodes 1 \
   --actor_num_gpus_per_node 16 \
   --vllm_num_engines 2 \
   --vllm_tensor_parallel_size 2 \
   --pretrain Qwen2.5-3B-Instruct \
   --remote_rm_url rm_r1_simple.py \
   --save_path save_path \
   --micro_train_batch_size 4 \
   --train_batch_size 128 \
   --micro_rollout_batch_size 32 \
   --rollout_batch_size 960 \
   --n_samples_per_prompt 16 \
   --max_epochs 1 \
   --prompt_max_len 1024 \
   --max_samples 100000 \
   --generate_max_len 4096 \
   --init_kl_coef 1e-6 \
   --gamma 1.0 \
   --use_kl_loss \
   --use_kl_estimator_k3 \
   --ad
