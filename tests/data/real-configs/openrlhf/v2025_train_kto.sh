# Shape of OpenRLHF/OpenRLHF@066228f9 (2025-10) examples/scripts/train_kto_llama.sh. Our values.
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_kto \
   --save_path ./checkpoint/llama3-8b-kto \
   --train_batch_size 64 \
   --micro_train_batch_size 2 \
   --pretrain OpenRLHF/Llama-3-8b-sft-mixture \
   --bf16 \
   --max_epochs 1 \
   --max_len 4096 \
   --zero_stage 3 \
   --learning_rate 5e-7 \
   --dataset Dylan2048/ultrafeedback-unpaired-preferences \
   --input_key instruction \
   --output_key response \
   --label_key score \
   --attn_implementation flash_attention_2 \
   --beta 0.1 \
   --gradient_checkpointing
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
