# Shape of ymcui/Chinese-LLaMA-Alpaca-2 scripts/training/run_sft.sh: lower-case variables assigned at the top,
# passed as ${var}; LoRA through the script's own --lora_rank/--trainable. Our own values and paths.
lr=2e-4
lora_rank=32
lora_alpha=64
lora_trainable="q_proj,v_proj,k_proj,o_proj,gate_proj,down_proj,up_proj"
modules_to_save="embed_tokens,lm_head"
lora_dropout=0.05

pretrained_model=/data/models/chinese-alpaca-2-7b
chinese_tokenizer_path=/data/models/chinese-alpaca-2-7b
dataset_dir=/data/sft
per_device_train_batch_size=2
per_device_eval_batch_size=2
gradient_accumulation_steps=4
output_dir=out_sft

deepspeed_config_file=ds_zero2_no_offload.json

torchrun --nnodes 1 --nproc_per_node 2 run_clm_sft_with_peft.py \
    --deepspeed ${deepspeed_config_file} \
    --model_name_or_path ${pretrained_model} \
    --tokenizer_name_or_path ${chinese_tokenizer_path} \
    --dataset_dir ${dataset_dir} \
    --per_device_train_batch_size ${per_device_train_batch_size} \
    --per_device_eval_batch_size ${per_device_eval_batch_size} \
    --do_train \
    --seed $RANDOM \
    --fp16 \
    --learning_rate ${lr} \
    --gradient_accumulation_steps ${gradient_accumulation_steps} \
    --max_seq_length 2048 \
    --output_dir ${output_dir} \
    --lora_rank ${lora_rank} \
    --lora_alpha ${lora_alpha} \
    --trainable ${lora_trainable} \
    --modules_to_save ${modules_to_save} \
    --lora_dropout ${lora_dropout} \
    --torch_dtype float16 \
    --load_in_kbits 4 \
    --gradient_checkpointing \
    --ddp_find_unused_parameters False
