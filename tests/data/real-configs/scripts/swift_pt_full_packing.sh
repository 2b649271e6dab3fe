# Shape of modelscope/ms-swift@main examples/train/pretrain/train.sh (swift pt, full, packing, streaming,
# --attn_impl flash_attn). Our values.
nproc_per_node=8

NPROC_PER_NODE=$nproc_per_node \
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \
swift pt \
    --model Qwen/Qwen2.5-7B \
    --tuner_type full \
    --dataset swift/chinese-c4 \
    --torch_dtype bfloat16 \
    --streaming true \
    --per_device_train_batch_size 1 \
    --learning_rate 1e-5 \
    --gradient_accumulation_steps $(expr 64 / $nproc_per_node) \
    --packing true \
    --deepspeed zero3 \
    --max_length 4096 \
    --max_steps 10000 \
    --save_only_model true \
    --output_dir output/Qwen2.5-7B \
    --attn_impl flash_attn
