CUDA_VISIBLE_DEVICES=0,1 swift sft \
    --model_type internvl2-llama3-76b \
    --model_id_or_path /mnt/workspace/InternVL2-Llama3-76B \
    --dataset /mnt/workspace/contacts_1200_add_2000.json \
    --lora_target_modules ALL \
    --output_dir /mnt/workspace/contacts_1200_add_2000 \
    --max_length 4096 \
    --num_train_epochs 1
