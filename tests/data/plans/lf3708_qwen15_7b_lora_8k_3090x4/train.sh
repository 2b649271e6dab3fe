#!/bin/bash

NPROC_PER_NODE=4

CUDA_VISIBLE_DEVICES=4,5,6,7 python -m torch.distributed.run \
    --nproc_per_node $NPROC_PER_NODE \
    --nnodes 1 \
    --standalone \
    src/train.py PQ_sft.yaml
