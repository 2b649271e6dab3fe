python3 examples/scripts/sft_trainer.py --model_name EleutherAI/gpt-neox-20b --dataset_name imdb --use_peft --batch_size 1 --gradient_accumulation_steps 8
