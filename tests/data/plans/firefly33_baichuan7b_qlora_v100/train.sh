# Firefly's QLoRA command of the thread's date (README, June 2023) on the 8 V100s the reporter names;
# sft-qlora.json is the repository's default file with the model path replaced, as the thread says
torchrun --nproc_per_node=8 train_qlora.py --train_args_file sft-qlora.json
