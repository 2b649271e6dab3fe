# the thread's command: Chinese-Vicuna finetune.py run by plain python on a machine with two GTX 1080 Ti 11GB
# (MICRO_BATCH_SIZE 4, BATCH_SIZE 128, CUTOFF_LEN 256, LORA_R 8 on q_proj/v_proj, the base in 8-bit are module
# constants in that script, not flags); the reporter sees only one GPU working
python finetune.py --data_path ./sample/merge.json --test_size 2000
