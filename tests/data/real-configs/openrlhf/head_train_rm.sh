# Shape of OpenRLHF/OpenRLHF@main examples/scripts/train_rm.sh (reward model, dotted options). Our values.
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_rm \
   --ckpt.output_dir ./checkpoint/llama3-8b-rm \
   --train.batch_size 128 \
   --train.micro_batch_size 1 \
   --model.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \
   --ds.param_dtype bf16 \
   --train.max_epochs 1 \
   --data.max_len 4096 \
   --ds.zero_stage 3 \
   --adam.lr 9e-6 \
   --data.dataset OpenRLHF/preference_dataset_mixture2_and_safe_pku \
   --data.apply_chat_template \
   --data.chosen_key chosen \
   --data.rejected_key rejected \
   --ds.packing_samples \
   --model.gradient_checkpointing_enable
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
