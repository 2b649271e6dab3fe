# Shape of OpenRLHF/OpenRLHF@main examples/scripts/train_sft_mixtral_lora.sh (dotted options, --ds.lora.rank).
# Our values.
set -x

read -r -d '' training_commands <<EOF
openrlhf.cli.train_sft \
    --data.max_len 2048 \
    --data.dataset Open-Orca/OpenOrca \
    --train.batch_size 64 \
    --train.micro_batch_size 2 \
    --model.model_name_or_path mistralai/Mixtral-8x7B-v0.1 \
    --ckpt.output_dir ./checkpoint/mixtral-sft-lora\
    --ds.zero_stage 3 \
    --train.max_epochs 1 \
    --ds.param_dtype bf16 \
    --model.gradient_checkpointing_enable \
    --ds.attn_implementation flash_attention_2 \
    --adam.lr 5e-6 \
    --ds.lora.rank 32 \
    --ds.lora.alpha 32 \
    --model.aux_loss_coef 0.001
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
