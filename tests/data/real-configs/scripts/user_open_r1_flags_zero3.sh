# Shape of the command in huggingface/open-r1 issue 506 (2025-03, SFT OOM on 8x H20): accelerate launch with the
# repo's zero3 accelerate config by path, sft.py with flags (--max_seq_length, --packing). Our values.
accelerate launch --config_file=recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py \
    --model_name_or_path Qwen/Qwen2.5-1.5B-Instruct \
    --dataset_name open-r1/OpenR1-Math-220k \
    --learning_rate 1.0e-5 \
    --num_train_epochs 1 \
    --packing \
    --max_seq_length 8192 \
    --per_device_train_batch_size 4 \
    --gradient_checkpointing \
    --bf16 \
    --output_dir data/Qwen2.5-1.5B-Open-R1-Distill
