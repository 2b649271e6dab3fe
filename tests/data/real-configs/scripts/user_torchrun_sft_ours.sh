# Shape of xjw-nlp/open-r1 scripts/torch_train_qwen_sft_ours.sh: torchrun --nproc_per_node=${NUM_GPUS} with the
# count taken from an exported GPU list, quoted launcher values, a DeepSpeed JSON of the repo not shipped here.
# Our values.
USED_GPUS='0,1,2,3'
NUM_GPUS=$(echo $USED_GPUS | tr ',' ' ' | wc -w)
export CUDA_VISIBLE_DEVICES=$USED_GPUS

torchrun --nproc_per_node=${NUM_GPUS} \
     --nnodes="1" \
     --node_rank="0" \
     --master_addr="127.0.0.1" \
     --master_port="12345" \
     src/open_r1/sft_ours.py \
     --deepspeed recipes/accelerate_configs/zero2.json\
     --model_name_or_path /data/models/DeepSeek-R1-Distill-Qwen-7B \
     --dataset_name /data/OpenR1-Math-220k \
     --learning_rate 1.0e-5 \
     --num_train_epochs 1 \
     --max_seq_length 8192 \
     --per_device_train_batch_size 2 \
     --gradient_checkpointing \
     --bf16 \
     --output_dir data/Qwen-7B-Distill-ours
