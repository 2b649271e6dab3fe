# Shape of the command pasted in OpenRLHF/OpenRLHF issue 384 (DPO of glm-4-9b-chat on 8x A100): deepspeed --module
# openrlhf.cli.train_dpo with a local model directory. Our values.
deepspeed --module openrlhf.cli.train_dpo \
   --save_path ckpt/glm-test \
   --save_steps -1 \
   --train_batch_size 64 \
   --micro_train_batch_size 1 \
   --pretrain /workspace/models/ZhipuAI/glm-4-9b-chat/ \
   --bf16 \
   --max_epochs 1 \
   --max_len 3072 \
   --zero_stage 3 \
   --learning_rate 5e-7 \
   --beta 0.1 \
   --dataset OpenRLHF/preference_dataset_mixture2_and_safe_pku \
   --apply_chat_template \
   --chosen_key chosen \
   --rejected_key rejected \
   --gradient_checkpointing
