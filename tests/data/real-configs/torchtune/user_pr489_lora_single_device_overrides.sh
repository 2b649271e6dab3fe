tune lora_finetune_single_device --config alpaca_llama2_lora_finetune_single_device --override \
model_checkpoint=/data/users/ebs/checkpoints/llama2-7b-torchtune-model.pt \
tokenizer._component_=torchtune.models.llama2.llama2_tokenizer \
tokenizer.path=/data/users/ebs/checkpoints/lora-debug/tokenizer.model model._component_=torchtune.models.llama2.lora_llama2_7b model.lora_attn_modules=['q_proj','v_proj'] \
model.apply_lora_to_mlp=False model.apply_lora_to_output=False model.lora_rank=8 model.lora_alpha=16 \
metric_logger._component_=torchtune.utils.metric_logging.WandBLogger metric_logger.project=lora-debug \
batch_size=4 gradient_accumulation_steps=32 output_dir=/data/users/ebs/lora-debug/tt-baseline-bsz4-gradaccum32
