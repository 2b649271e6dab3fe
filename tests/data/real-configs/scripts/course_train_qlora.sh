# Shape of Brian-Konr/applied-deep-learning hw3/train_qlora.sh: a course assignment's own train_qlora.py, one
# exported GPU, every flag written --key=value with quotes. Our values.
export CUDA_VISIBLE_DEVICES=0
python train_qlora.py \
    --lora_r=8 \
    --lora_alpha=16 \
    --lora_dropout=0.1 \
    --num_train_epochs=2 \
    --per_device_train_batch_size=4 \
    --gradient_accumulation_steps=4 \
    --train_file="./data/train.json" \
    --lora_output_dir="./qlora-out" \
    --model_name_or_path="./Taiwan-LLM-7B-v2.0-chat"
