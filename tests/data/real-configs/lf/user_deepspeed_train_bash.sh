# Shape of HuangXinzhe/llm_fine_tuning fine_tune/LLaMA_factory_tutorial/lora_finetuning.sh: eight visible GPUs,
# deepspeed --num_gpus 8 --master_port=…, an old checkout's train_bash.py, a DeepSpeed JSON of the user's own
# that is not in the repository. Our values.
mkdir -p ./output/model/qwen15-4b-lora
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 deepspeed --num_gpus 8 --master_port=1023 ./LLaMA-Factory/src/train_bash.py \
    --deepspeed ./configs/deepspeed_stage2.json \
    --stage sft \
    --do_train \
    --model_name_or_path Qwen/Qwen1.5-4B \
    --dataset_dir ./LLaMA-Factory/data \
    --dataset my_dialogues \
    --template qwen \
    --finetuning_type lora \
    --lora_target q_proj,v_proj \
    --output_dir ./output/model/qwen15-4b-lora \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 2 \
    --learning_rate 5e-5 \
    --num_train_epochs 5.0 \
    --plot_loss \
    --use_fast_tokenizer True \
    --fp16
