# the thread's command: Chinese-Vicuna finetune.py on one RTX 3060 12GB (MICRO_BATCH_SIZE 4, BATCH_SIZE 128,
# CUTOFF_LEN 256, LORA_R 8 on q_proj/v_proj, the base in 8-bit are module constants in that script, not flags)
python finetune.py --data_path ./sample/merge_sample.json --test_size 9
