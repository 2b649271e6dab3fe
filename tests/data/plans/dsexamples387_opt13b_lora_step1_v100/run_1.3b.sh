# DeepSpeed-Chat step 1 (supervised fine-tuning) on one V100-32G, the reporter's command with the batch the run
# crashed at: the reporter changed "the batch_size from 16 to 8, and it works" (16 is main.py's default)
deepspeed --num_gpus 1 main.py \
   --model_name_or_path facebook/opt-1.3b \
   --per_device_train_batch_size 16 --per_device_eval_batch_size 16 \
   --gradient_accumulation_steps 2 --lora_dim 128 --zero_stage 2 \
   --only_optimize_lora --deepspeed --output_dir $OUTPUT &> $OUTPUT/training.log
