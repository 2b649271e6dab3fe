# the thread's run as described: LLaMA-7B, full fine-tune, the README's ZeRO-2 example, batch size 1, 8 GPUs
deepspeed --num_gpus 8 src/train_bash.py \
    --deepspeed ds_z2.json \
    --stage sft \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --do_train \
    --dataset alpaca_gpt4_zh \
    --template default \
    --finetuning_type full \
    --output_dir out \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 4 \
    --learning_rate 2e-5 \
    --num_train_epochs 1.0 \
    --fp16
