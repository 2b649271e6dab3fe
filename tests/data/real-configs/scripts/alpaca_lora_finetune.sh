# Shape of zhouyu5/alpaca-lora scripts/train.sh (a fork of tloen/alpaca-lora): finetune.py's fire flags, both
# `--flag value` and `--flag=value`, a total --batch_size with --micro_batch_size, a list given as one quoted word.
# Our values and paths.

python finetune.py \
    --base_model '/data/llama-13b-hf' \
    --data_path '/data/alpaca-cleaned' \
    --output_dir '/data/out/lora-alpaca-13b' \
    --batch_size 128 \
    --num_epochs=2 \
    --cutoff_len=1024 \
    --group_by_length \
    --lora_target_modules='[q_proj,k_proj,v_proj,o_proj]' \
    --lora_r=16 \
    --micro_batch_size=4
