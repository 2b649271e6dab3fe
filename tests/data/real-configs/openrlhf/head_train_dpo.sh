# Shape of OpenRLHF/OpenRLHF@main examples/scripts/train_dpo_llama.sh (dotted options, here-document, deepspeed
# --module). Our values.
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_dpo \
   --ckpt.output_dir ./checkpoint/qwen-dpo \
   --train.batch_size 64 \
   --train.micro_batch_size 2 \
   --model.model_name_or_path Qwen/Qwen2.5-7B-Instruct \
   --ds.param_dtype bf16 \
   --train.max_epochs 1 \
   --data.max_len 4096 \
   --ds.zero_stage 3 \
   --adam.lr 5e-7 \
   --model.beta 0.1 \
   --data.dataset OpenRLHF/preference_dataset_mixture2_and_safe_pku \
   --data.apply_chat_template \
   --data.chosen_key chosen \
   --data.rejected_key rejected \
   --ds.attn_implementation flash_attention_2 \
   --model.gradient_checkpointing_enable
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
