# Shape of dmitrymailk/ru_chatGPT FastChat/local_train.sh: two exported GPUs but a single `python -m` process
# (the HF Trainer then uses DataParallel), the user's own variant of train_mem, a line continuation that runs
# into commented-out FSDP flags. Our values.
export CUDA_VISIBLE_DEVICES=3,4
python -m \
    fastchat.train.train_mem_custom \
    --model_name_or_path huggyllama/llama-7b \
    --data_path ./playground/data/my-conversations.json \
    --fp16 True \
    --output_dir ./checkpoints \
    --num_train_epochs 3 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 2 \
    --gradient_accumulation_steps 16 \
    --evaluation_strategy "no" \
    --learning_rate 2e-5 \
    --model_max_length 1024 \
    --gradient_checkpointing True \
    --lazy_preprocess True \
    # --fsdp "full_shard auto_wrap" \
    # --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer'
