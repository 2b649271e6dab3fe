# the thread's evaluation command (LLaMA-Efficient-Tuning, October 2023), as posted
CUDA_VISIBLE_DEVICES=0 python src/train_bash.py \
    --stage sft \
    --model_name_or_path /data/yangzr/Llama-2-7b-hf \
    --checkpoint_dir /home/yangzr/LLaMA-Efficient-Tuning/ckpt/lima \
    --do_eval \
    --dataset lima \
    --template llama2 \
    --finetuning_type lora \
    --output_dir /home/yangzr/LLaMA-Efficient-Tuning/eval_results/lima \
    --per_device_eval_batch_size 8 \
    --max_samples 100 \
    --predict_with_generate \
    --overwrite_cache \
    --flash_attn
