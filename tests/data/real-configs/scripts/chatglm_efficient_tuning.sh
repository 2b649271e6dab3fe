# Shape of YerongLi/ChatGLM-Efficient-Tuning train.sh (hiyouga's ChatGLM-Efficient-Tuning, the project before
# LLaMA-Factory): src/train_sft.py without a model flag (the script's own default model), LLaMA-Factory-like
# --finetuning_type and --quantization_bit. Our values.
python src/train_sft.py \
    --do_train \
    --dataset my_character \
    --finetuning_type lora \
    --output_dir my_character \
    --per_device_train_batch_size 8 \
    --gradient_accumulation_steps 2 \
    --lr_scheduler_type cosine \
    --logging_steps 10 \
    --save_steps 50 \
    --learning_rate 5e-5 \
    --num_train_epochs 3.0 \
    --fp16 \
    --quantization_bit 4
