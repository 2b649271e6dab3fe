```diff
+
+# 2) Optionally finetune the model
+litgpt finetune lora \
+  --checkpoint_dir checkpoints/mistralai/Mistral-7B-v0.1 \
+  --train.micro_batch_size 2 \
+  --lora_r 4 \
+  --precision bf16-true \
+  --data Alpaca2k \
+  --out_dir out/my-finetuned-model
+
+# 3) Chat with the model
+litgpt finetune chat \
```
