# Shape of minglii1998/scripts_ZJ 20231004/train_wiz_13b_4096.sh: cd into a FastChat checkout, an exported GPU
# list, torchrun fastchat/train/train_mem.py (FlashAttention patched in) with --fsdp "… offload". Our values.
cd ~/scratch/FastChat

export CUDA_VISIBLE_DEVICES=0,1,2,3

torchrun --nproc_per_node=4 --master_port=25656 fastchat/train/train_mem.py \
    --model_name_or_path ~/scratch/Llama-2-13b-hf \
    --data_path ~/scratch/data/my_sharegpt_4096.json \
    --lazy_preprocess False \
    --cache_dir ../cache \
    --bf16 True \
    --output_dir ~/scratch/trained/llama2-13b-mine \
    --num_train_epochs 3 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --gradient_accumulation_steps 32 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --learning_rate 1e-5 \
    --weight_decay 0. \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --fsdp "full_shard auto_wrap offload" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --tf32 True \
    --model_max_length 4096 \
    --gradient_checkpointing True
