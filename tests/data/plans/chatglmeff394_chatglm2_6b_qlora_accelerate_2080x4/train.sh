# the thread's command as posted (hiyouga/ChatGLM-Efficient-Tuning, August 2023), launched with accelerate on a
# machine with four RTX 2080 11GB
accelerate launch src/train_bash.py \
    --stage sft \
    --model_name_or_path /home/ChatGLM2/chatglm2-6b \
    --do_train \
    --dataset lima \
    --dataset_dir ./data \
    --finetuning_type lora \
    --output_dir /home/ChatGLM2/chatglm2-6b-lora \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 4 \
    --lr_scheduler_type cosine \
    --logging_steps 100 \
    --save_steps 5000 \
    --learning_rate 1e-6 \
    --num_train_epochs 3.0 \
    --quantization_bit 4
