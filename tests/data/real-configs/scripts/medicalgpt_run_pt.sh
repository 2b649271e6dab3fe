# Reproduces the shape of shibing624/MedicalGPT scripts/run_pt.sh: `torchrun training/pretraining.py`
# (continued pre-training, packing on by default and said again), --block_size, LoRA by --use_peft;
# values are ours.
CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node 4 training/pretraining.py \
    --model_name_or_path Qwen/Qwen2.5-0.5B \
    --train_file_dir ./data/pretrain \
    --validation_file_dir ./data/pretrain \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 8 \
    --do_train \
    --do_eval \
    --use_peft True \
    --seed 42 \
    --num_train_epochs 0.5 \
    --learning_rate 2e-4 \
    --eval_strategy steps \
    --save_strategy steps \
    --gradient_accumulation_steps 2 \
    --preprocessing_num_workers 10 \
    --block_size 2048 \
    --packing True \
    --output_dir outputs-pt-qwen-v1 \
    --target_modules all \
    --lora_rank 16 \
    --lora_alpha 32 \
    --lora_dropout 0.05 \
    --torch_dtype bfloat16 \
    --bf16 \
    --gradient_checkpointing True \
    --cache_dir ./cache
