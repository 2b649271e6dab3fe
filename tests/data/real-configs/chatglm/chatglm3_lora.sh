#!/bin/bash
# finetune_demo: LoRA on two GPUs with the model given as finetune_hf.py's second argument
export CUDA_VISIBLE_DEVICES=0,1
torchrun --standalone --nnodes=1 --nproc_per_node=2 finetune_hf.py data/AdvertiseGen_fix THUDM/chatglm3-6b chatglm3_lora.yaml
