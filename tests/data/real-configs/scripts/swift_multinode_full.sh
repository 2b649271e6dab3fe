# Shape of modelscope/ms-swift examples/train/multi-node/swift/train_node2.sh: lower-case variables for the
# node and process counts, environment prefixes before `swift sft`, accumulation computed with $(expr …),
# --deepspeed zero2 by name. Our values.
nnodes=2
nproc_per_node=4

CUDA_VISIBLE_DEVICES=0,1,2,3 \
NNODES=$nnodes \
NODE_RANK=1 \
MASTER_ADDR=xxx.xxx.xxx.xxx \
MASTER_PORT=29500 \
NPROC_PER_NODE=$nproc_per_node \
swift sft \
    --model Qwen/Qwen2.5-7B-Instruct \
    --train_type full \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-zh#20000' \
              'AI-ModelScope/alpaca-gpt4-data-en#20000' \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --per_device_eval_batch_size 1 \
    --learning_rate 1e-5 \
    --gradient_accumulation_steps $(expr 64 / $nproc_per_node / $nnodes) \
    --max_length 4096 \
    --output_dir output \
    --deepspeed zero2
