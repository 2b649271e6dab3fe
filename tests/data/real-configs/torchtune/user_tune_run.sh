# Shape of hishab-nlp/torchtune MYREADME.md and dangbert/thesis_app's README: `tune run <recipe> --config <a
# copied yaml>` with key=value overrides. Our values.
tune run --nproc_per_node 2 lora_finetune_distributed --config ./v0.3.0_llama3_1_8B_lora.yaml \
    batch_size=2 \
    gradient_accumulation_steps=16 \
    tokenizer.max_seq_len=8192
