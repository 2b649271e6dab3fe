"""EasyR1 (hiyouga/EasyR1), a fork of verl with its own config schema: `python3 -m verl.trainer.main
config=examples/config.yaml key=value …` (verl/trainer/main.py: OmegaConf merges the YAML `config=` names with the
command's dotted overrides into its PPOConfig dataclass). Its keys are renamed to verl's and read by the verl
reader, where EasyR1 says which verl key each stands for (examples/config.yaml at b44b311: "equivalent to verl's
data.train_batch_size", "… actor.ppo_mini_batch_size", "… actor.ppo_micro_batch_size_per_gpu", "…
rollout.log_prob_micro_batch_size_per_gpu") or its worker config names the same setting
(verl/workers/actor/config.py, verl/workers/rollout/config.py).

Its dynamic batching packs micro_batch_size_per_device_for_update × the longest sequence's tokens a micro-batch
(verl/workers/actor/dp_actor.py:242), so the micro-batch is read as that many sequences of the full length."""
from __future__ import annotations

from typing import Any

# EasyR1 key -> verl key (verl's ppo_trainer.yaml names)
KEYS = {
    "worker.actor.model.model_path": "actor_rollout_ref.model.path",
    "worker.actor.model.enable_gradient_checkpointing": "actor_rollout_ref.model.enable_gradient_checkpointing",
    "worker.actor.model.lora.rank": "actor_rollout_ref.model.lora_rank",
    "worker.actor.model.lora.alpha": "actor_rollout_ref.model.lora_alpha",
    "worker.actor.global_batch_size": "actor_rollout_ref.actor.ppo_mini_batch_size",
    "worker.actor.micro_batch_size_per_device_for_update": "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
    "worker.actor.micro_batch_size_per_device_for_experience":
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
    "worker.actor.ulysses_size": "actor_rollout_ref.actor.ulysses_sequence_parallel_size",
    "worker.actor.offload.offload_params": "actor_rollout_ref.actor.fsdp_config.param_offload",
    "worker.actor.offload.offload_optimizer": "actor_rollout_ref.actor.fsdp_config.optimizer_offload",
    "worker.rollout.n": "actor_rollout_ref.rollout.n",
    "worker.rollout.tensor_parallel_size": "actor_rollout_ref.rollout.tensor_model_parallel_size",
    "worker.rollout.gpu_memory_utilization": "actor_rollout_ref.rollout.gpu_memory_utilization",
    "data.max_prompt_length": "data.max_prompt_length",
    "data.max_response_length": "data.max_response_length",
    "data.rollout_batch_size": "data.train_batch_size",
    "trainer.n_gpus_per_node": "trainer.n_gpus_per_node",
    "trainer.nnodes": "trainer.nnodes",
}
MODEL_KEY = "worker.actor.model.model_path"


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping's leaves by their dotted keys."""
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            out.update(flatten(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return out


def translated(values: dict[str, Any]) -> dict[str, Any]:
    """EasyR1's settings under verl's names (a LoRA rank of 0, EasyR1's "no LoRA", left out)."""
    out = {KEYS[k]: v for k, v in values.items() if k in KEYS}
    if str(out.get("actor_rollout_ref.model.lora_rank", "")).strip() in ("0", ""):
        out.pop("actor_rollout_ref.model.lora_rank", None)
        out.pop("actor_rollout_ref.model.lora_alpha", None)
    return out
