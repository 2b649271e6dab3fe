# Shape of modelscope/ms-swift@main examples/train/moe/llama4.sh (swift sft, --tuner_type, NPROC_PER_NODE and
# CUDA_VISIBLE_DEVICES, --deepspeed zero3 by name). Our values.
NPROC_PER_NODE=4 \
USE_HF=1 \
CUDA_VISIBLE_DEVICES=0,1,2,3 \
swift sft \
    --model meta-llama/Llama-4-Scout-17B-16E-Instruct \
    --dataset 'linxy/LaTeX_OCR:full#5000' \
    --split_dataset_ratio 0.01 \
    --tuner_type lora \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --learning_rate 1e-4 \
    --lora_rank 16 \
    --lora_alpha 32 \
    --router_aux_loss_coef 1e-3 \
    --freeze_vit true \
    --gradient_accumulation_steps 8 \
    --gradient_checkpointing true \
    --max_length 4096 \
    --output_dir output \
    --deepspeed zero3 \
    --dataloader_num_workers 4
