NPROC_PER_NODE=8 CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 swift sft \
    --model_type llava1_6-llama3_1-8b-instruct \
    --model_id_or_path .cache/modelscope/hub/swift/llava-llama3___1-8b \
    --dataset /32K_html.jsonl \
    --sft_type full \
    --output_dir /ms-swift/output \
    --max_length 40960 \
    --ddp_backend nccl \
    --freeze_vit True \
    --deepspeed default-zero3 \
