MAX_PIXELS=602112 \
CUDA_VISIBLE_DEVICES=0,1,2,3 \
NPROC_PER_NODE=2 \
swift sft \
    --model Qwen/Qwen2.5-VL-3B-Instruct \
    --dataset '/home/aiscuser/lmms-eval/llava-ov-ewc-ms/msdata/split/qwen_file/merged_data.json' \
    --use_vllm true \
    --train_type custom \
    --optimizer custom \
    --external_plugins 'examples/train/multimodal/lora_llm_full_vit/custom_plugin.py' \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 4 \
    --learning_rate 1e-4 \
    --lora_rank 16 \
    --lora_alpha 32 \
    --gradient_accumulation_steps 4 \
    --eval_steps 100 \
    --save_steps 100 \
    --save_total_limit 2 \
    --logging_steps 5 \
    --max_length 1024 \
    --output_dir output \
    --warmup_ratio 0.05 \
    --dataloader_num_workers 2 \
    --dataset_num_proc 2 \
    --num_infer_workers 2 \
    --deepspeed zero3 \
    --save_only_model true
