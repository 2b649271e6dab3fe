(mlx) I542464@DY4GPKX1J0 lora % python lora.py \
 --train \
 --model HuggingFaceH4/zephyr-7b-beta \
 --data ./data \
 --batch-size 1 \
 --lora-layers 4 \
 --iters 500
