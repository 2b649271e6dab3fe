# Shape of ligw1998/PRIV-QA code/finetune_recover.sh: ms-swift 2.x flags (--sft_type, --model_type with
# --model_id_or_path, --batch_size, --dtype AUTO, --use_flash_attn, --deepspeed 'default-zero3'). Our values.
nproc_per_node=2

NPROC_PER_NODE=$nproc_per_node \
MASTER_PORT=29500 \
CUDA_VISIBLE_DEVICES=0,1 \
swift sft \
    --model_type qwen2-7b-instruct \
    --model_id_or_path /data/models/Qwen2-7B-Instruct \
    --dataset /data/my_train.jsonl \
    --sft_type full \
    --tuner_backend peft \
    --template_type AUTO \
    --dtype AUTO \
    --output_dir ./exp/output_qwen2_7b \
    --num_train_epochs 3 \
    --max_length 4096 \
    --gradient_checkpointing true \
    --batch_size 2 \
    --learning_rate 1e-5 \
    --gradient_accumulation_steps 8 \
    --use_flash_attn true \
    --deepspeed 'default-zero3' \
    --save_only_model true
