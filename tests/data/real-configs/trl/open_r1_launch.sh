# Shape of the open-r1 launch command (huggingface/open-r1 README; yanfeng98/fork-open-r1 test/sft/README.md):
# accelerate launch with the zero3 accelerate config, src/open_r1/sft.py and --config with the recipe.
ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/open_r1/sft.py \
    --config recipes/qwen/sft/config_demo.yaml
