# the single-device LoRA recipe, the thread's "default Lora recipe with a single device" on one RTX 4090
tune run lora_finetune_single_device --config 8B_lora_single_device.yaml
