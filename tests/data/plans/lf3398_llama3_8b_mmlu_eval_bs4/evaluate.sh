CUDA_VISIBLE_DEVICES=0 python ../../src/evaluate.py \
    --model_name_or_path /public/zzy/model/Meta-Llama-3-8B-Instruct-sft \
    --template llama3 \
    --finetuning_type lora \
    --task /public/zzy/LLaMA-Factory/evaluation/mmlu \
    --split test \
    --lang en \
    --n_shot 5 \
    --batch_size 4
