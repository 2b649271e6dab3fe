# Shape of the command pasted in OpenRLHF/OpenRLHF issue 698 (2025-01, "OOM on Llama 8B"): `deepspeed --num_gpus 1
# --module openrlhf.cli.train_sft` written directly, flat options, ANSI-C quoted template. Our values.
deepspeed --num_gpus 1 --module openrlhf.cli.train_sft \
   --max_len 512 \
   --dataset Open-Orca/OpenOrca \
   --input_key question \
   --output_key response \
   --input_template $'User: {}\nAssistant: ' \
   --train_batch_size 8 \
   --micro_train_batch_size 1 \
   --pretrain meta-llama/Meta-Llama-3-8B \
   --save_path ./checkpoint/llama3-8b-sft \
   --zero_stage 2 \
   --max_epochs 1 \
   --packing_samples \
   --bf16 \
   --flash_attn \
   --learning_rate 5e-6 \
   --gradient_checkpointing
