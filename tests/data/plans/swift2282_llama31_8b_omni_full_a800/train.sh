# the thread's run as described: ms-swift 2.6.0.dev0, llama-omni (Llama-3.1-8B-Omni), sft_type full instead of lora,
# gradient_accumulation_steps 16, on one A800 80GB; every other option is swift sft's default
swift sft \
    --model_type llama3_1-8b-omni \
    --model_id_or_path ICTNLP/Llama-3.1-8B-Omni \
    --sft_type full \
    --gradient_accumulation_steps 16
