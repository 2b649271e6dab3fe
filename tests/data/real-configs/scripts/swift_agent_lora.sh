# Shape of modelscope/ms-swift examples/train/agent/train.sh: a variable process count, swift sft LoRA, an
# accumulation from $(expr 32 / $nproc_per_node), --deepspeed zero3. Our values.
nproc_per_node=2

NPROC_PER_NODE=$nproc_per_node \
CUDA_VISIBLE_DEVICES=0,1 \
swift sft \
    --model Qwen/Qwen2.5-7B-Instruct \
    --train_type lora \
    --dataset iic/ms_agent \
    --loss_scale react \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 2 \
    --learning_rate 1e-4 \
    --gradient_accumulation_steps $(expr 32 / $nproc_per_node) \
    --deepspeed zero3 \
    --max_length 3072
