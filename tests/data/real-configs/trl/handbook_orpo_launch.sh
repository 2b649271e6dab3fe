# Reproduces the shape of the alignment-handbook README launch (huggingface/alignment-handbook): accelerate
# launch with an accelerate config, scripts/run_orpo.py and the recipe as its positional config: the script,
# not the config's keys, says ORPO (no reference model, unlike DPO).
ACCELERATE_LOG_LEVEL=info accelerate launch --config_file recipes/accelerate_configs/zero3.yaml scripts/run_orpo.py \
    recipes/zephyr_orpo/orpo/config_full.yaml
