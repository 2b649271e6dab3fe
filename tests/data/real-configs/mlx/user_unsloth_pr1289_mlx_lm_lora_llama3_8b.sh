python -m mlx_lm.lora --model unsloth/llama-3-8b \
  --train \
  --data mlx-community/wikisql \
  --fine-tune-type lora \
  --optimizer adamw \
  --batch-size 2 \
  --iters 40 \
  --learning-rate 2e-5 \
  --max-seq-length 2048 \
  --adapter-path ./output
