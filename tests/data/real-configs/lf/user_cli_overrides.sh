# Shape of MachinePhoenix/GeoReasoning runs/run_sft.sh: llamafactory-cli train on an example YAML with
# key=value overrides after it; commented-out variants kept above. Our values.

# CUDA_VISIBLE_DEVICES=2,3 llamafactory-cli train examples/train_full/qwen3_full_sft.yaml \
#     num_train_epochs=4 \
#     flash_attn=fa2

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 llamafactory-cli train examples/train_full/qwen3_full_sft.yaml \
    num_train_epochs=5 \
    learning_rate=1e-5 \
    logging_steps=1 \
    disable_gradient_checkpointing=False \
    flash_attn=fa2
