# Shape of OpenRLHF/OpenRLHF@066228f9 (2025-10) examples/scripts/train_sft_llama_tensor_parallelism.sh
# (--ds_tensor_parallel_size). Our values.
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_sft \
   --max_len 4096 \
   --dataset Open-Orca/OpenOrca \
   --train_batch_size 128 \
   --micro_train_batch_size 2 \
   --pretrain meta-llama/Meta-Llama-3-8B \
   --save_path ./checkpoint/llama3-8b-sft \
   --zero_stage 2 \
   --max_epochs 1 \
   --bf16 \
   --attn_implementation flash_attention_2 \
   --learning_rate 5e-6 \
   --gradient_checkpointing \
   --packing_samples \
   --ds_tensor_parallel_size 2
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
