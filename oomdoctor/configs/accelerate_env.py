"""accelerate's own environment variables, read as the launcher config keys they stand for. No import from the
rest of the package: the YAML parser uses it for a container's environment list."""
from __future__ import annotations

from typing import Any

# The environment `accelerate launch` hands its processes (utils/launch.py prepare_multi_gpu_env and
# prepare_deepspeed_cmd_env), which accelerate reads back in each process (state.py, utils/dataclasses.py): a run
# started by torchrun or a cluster's pod with these variables set is configured as by the YAML keys they stand for.
_ENV = {"ACCELERATE_MIXED_PRECISION": "mixed_precision", "FSDP_VERSION": "fsdp_config.fsdp_version",
        "FSDP_SHARDING_STRATEGY": "fsdp_config.fsdp_sharding_strategy",
        "FSDP_RESHARD_AFTER_FORWARD": "fsdp_config.fsdp_reshard_after_forward",
        "FSDP_OFFLOAD_PARAMS": "fsdp_config.fsdp_offload_params",
        "FSDP_ACTIVATION_CHECKPOINTING": "fsdp_config.fsdp_activation_checkpointing",
        "ACCELERATE_DEEPSPEED_ZERO_STAGE": "deepspeed_config.zero_stage",
        "ACCELERATE_DEEPSPEED_CONFIG_FILE": "deepspeed_config.deepspeed_config_file",
        "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE": "deepspeed_config.offload_optimizer_device",
        "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE": "deepspeed_config.offload_param_device"}


def config_from_env(env: dict[str, str]) -> dict[str, Any] | None:
    """The accelerate config an environment of accelerate's own variables stands for, or None when it names
    neither FSDP nor DeepSpeed."""
    kinds = [kind for kind, var in (("FSDP", "ACCELERATE_USE_FSDP"), ("DEEPSPEED", "ACCELERATE_USE_DEEPSPEED"))
             if env.get(var, "").strip().lower() == "true"]
    if not kinds:
        return None
    out: dict[str, Any] = {"distributed_type": kinds[0]}
    for var, key in _ENV.items():
        if var in env:
            head, _, leaf = key.partition(".")
            if leaf:
                out.setdefault(head, {})[leaf] = env[var]
            else:
                out[head] = env[var]
    return out
