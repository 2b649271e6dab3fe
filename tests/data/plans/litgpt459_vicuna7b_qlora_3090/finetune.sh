# lit-gpt finetune/lora.py as the thread ran it on one RTX 3090 24GB (micro_batch_size 4, batch_size 128, lora_r 8
# are module constants in that script, not flags)
python finetune/lora.py  --data_dir data/mydata/   --precision "bf16-true" --quantize "bnb.nf4-dq" --checkpoint_dir /AIDEV/llm/vicuna-7b-v1.5 --out_dir /AIDEV/llm/out/lora/vicuna
