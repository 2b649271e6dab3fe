# the thread's command as posted (hiyouga/ChatGLM-Efficient-Tuning, June 2023: src/train_sft.py, the script
# LLaMA-Efficient-Tuning later renamed train_bash.py --stage sft)
CUDA_VISIBLE_DEVICES=1 python src/train_sft.py \
    --model_name_or_path THUDM/chatglm2-6b \
    --do_train \
    --dataset code_helper \
    --finetuning_type lora \
    --lora_rank 8 \
    --quantization_bit 4 \
    --output_dir code_helper \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --lr_scheduler_type cosine \
    --logging_steps 10 \
    --save_steps 50 \
    --learning_rate 5e-5 \
    --num_train_epochs 4.0 \
    --fp16 \
    --use_v2
