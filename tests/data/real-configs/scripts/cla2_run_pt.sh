# Shape of ymcui/Chinese-LLaMA-Alpaca-2 scripts/training/run_pt.sh: variables at the top, --block_size for the
# pretraining length, LoRA through the script's own flags. Our values and paths.
lr=2e-4
lora_rank=64
lora_alpha=128
lora_trainable="q_proj,v_proj,k_proj,o_proj,gate_proj,down_proj,up_proj"
lora_dropout=0.05

pretrained_model=/data/chinese-llama-2-13b
chinese_tokenizer_path=/data/chinese-llama-2-13b
dataset_dir=/data/pt
data_cache=/data/pt_cache
per_device_train_batch_size=1
gradient_accumulation_steps=16
block_size=1024
output_dir=out_pt

deepspeed_config_file=ds_zero2_no_offload.json

torchrun --nnodes 1 --nproc_per_node 4 run_clm_pt_with_peft.py \
    --deepspeed ${deepspeed_config_file} \
    --model_name_or_path ${pretrained_model} \
    --tokenizer_name_or_path ${chinese_tokenizer_path} \
    --dataset_dir ${dataset_dir} \
    --data_cache_dir ${data_cache} \
    --per_device_train_batch_size ${per_device_train_batch_size} \
    --do_train \
    --seed $RANDOM \
    --fp16 \
    --num_train_epochs 1 \
    --learning_rate ${lr} \
    --gradient_accumulation_steps ${gradient_accumulation_steps} \
    --block_size ${block_size} \
    --output_dir ${output_dir} \
    --lora_rank ${lora_rank} \
    --lora_alpha ${lora_alpha} \
    --trainable ${lora_trainable} \
    --lora_dropout ${lora_dropout} \
    --torch_dtype float16
