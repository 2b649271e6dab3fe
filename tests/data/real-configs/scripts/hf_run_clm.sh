# Shape of the run_clm.py command in huggingface/transformers examples/pytorch/language-modeling/README.md:
# torchrun over the example script with --block_size and TrainingArguments. Our values.
torchrun --nproc_per_node 8 run_clm.py \
    --model_name_or_path openai-community/gpt2-large \
    --dataset_name wikitext \
    --dataset_config_name wikitext-2-raw-v1 \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 4 \
    --block_size 512 \
    --do_train \
    --do_eval \
    --bf16 \
    --output_dir /tmp/test-clm
