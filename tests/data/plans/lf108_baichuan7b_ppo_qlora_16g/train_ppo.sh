# the thread's command as posted (LLaMA-Efficient-Tuning, June 2023)
CUDA_VISIBLE_DEVICES=1 python src/train_ppo.py \
    --model_name_or_path baichuan-7B \
    --do_train \
    --dataset alpaca_gpt4_zh \
	--lora_target W_pack \
    --finetuning_type lora \
	--quantization_bit 4 \
    --checkpoint_dir LLaMA-Efficient-Tuning-main/sft \
    --reward_model LLaMA-Efficient-Tuning-main/rm \
    --output_dir LLaMA-Efficient-Tuning-main/ppo \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --lr_scheduler_type cosine \
    --logging_steps 10 \
    --save_steps 1000 \
    --learning_rate 1e-5 \
    --num_train_epochs 1.0 \
    --resume_lora_training False \
    --plot_loss
