#!/bin/bash
# Shape of the launch in hiyouga/LlamaFactory issue 6942 (2025-02): eight GPUs made visible, llamafactory-cli train
# with the YAML. Our file.
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 llamafactory-cli train user_coder32b_full_offload.yaml
