# Shape of OpenRLHF/OpenRLHF@066228f9 (2025-10) examples/scripts/train_sft_llama.sh: flat options (--pretrain,
# --micro_train_batch_size, --bf16) in a here-document run by `deepspeed --module`. Our values.
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_sft \
   --max_len 3072 \
   --dataset Open-Orca/OpenOrca \
   --input_key question \
   --output_key response \
   --train_batch_size 128 \
   --micro_train_batch_size 2 \
   --max_samples 100000 \
   --pretrain meta-llama/Llama-3.1-8B \
   --save_path ./checkpoint/llama3-8b-sft \
   --save_steps -1 \
   --logging_steps 1 \
   --eval_steps -1 \
   --zero_stage 2 \
   --max_epochs 1 \
   --bf16 \
   --attn_implementation flash_attention_2 \
   --learning_rate 5e-6 \
   --load_checkpoint \
   --packing_samples \
   --gradient_checkpointing
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
