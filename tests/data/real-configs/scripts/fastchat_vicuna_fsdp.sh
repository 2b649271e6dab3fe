# Shape of BillyZhang24kobe/LS_Proficiency train-vicuna.sh: environment prefixes on the command (WAND_NAME,
# CUDA_VISIBLE_DEVICES), torchrun train_mem.py with FSDP full_shard, a commented-out variant below. Our values.
WAND_NAME="trial_lr_5e_5" CUDA_VISIBLE_DEVICES=2,3 torchrun --nproc_per_node=2 --master_port=20003 fastchat/train/train_mem.py \
    --model_name_or_path "lmsys/vicuna-7b-v1.5" \
    --data_path data/train/my_train.csv \
    --bf16 True \
    --output_dir /local/models/output_vicuna_7b \
    --num_train_epochs 5 \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 2 \
    --evaluation_strategy "no" \
    --learning_rate 5e-5 \
    --tf32 True \
    --model_max_length 1024 \
    --gradient_checkpointing True \
    --lazy_preprocess False \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer'

# WAND_NAME="trial_lr_1e_5" CUDA_VISIBLE_DEVICES=4,5 python fastchat/train/train_mem.py \
#     --model_name_or_path "lmsys/vicuna-13b-v1.5" \
#     --learning_rate 1e-5
