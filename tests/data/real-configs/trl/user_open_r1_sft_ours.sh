# Shape of xjw-nlp/open-r1 scripts/train_qwen_sft_ours.sh: the GPU list in a variable, --num_processes counted
# with $(echo … | wc -w), the user's own copy of sft.py driven by TRL flags. Our values.
USED_GPUS='0,1'
NUM_GPUS=$(echo $USED_GPUS | tr ',' ' ' | wc -w)
export CUDA_VISIBLE_DEVICES=$USED_GPUS
export WANDB_MODE=offline

accelerate launch --config_file recipes/accelerate_configs/zero3.yaml \
     --num_processes=$NUM_GPUS src/open_r1/sft_ours.py \
    --model_name_or_path /data/models/DeepSeek-R1-Distill-Qwen-1.5B \
    --dataset_name /data/datasets/OpenR1-Math-220k \
    --learning_rate 1.0e-5 \
    --num_train_epochs 1 \
    --max_seq_length 8192 \
    --per_device_train_batch_size 4 \
    --gradient_checkpointing \
    --bf16 \
    --output_dir data/Qwen2.5-1.5B-Open-R1-Distill-ours
