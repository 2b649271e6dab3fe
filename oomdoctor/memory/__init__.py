"""The memory model: where the memory of one training step goes, per GPU.

Public API:
  estimate(setup, shape, hw, *, crash=None, headroom=0.10) -> Estimate   (crash gaps folded into notes)
  reconcile(estimate, crash) -> tuple[Msg, ...]   (rendered by oomdoctor.words)
  count_params(shape, setup=None) -> ParamCounts
  trainable_params(setup, shape) -> int
"""
from oomdoctor.memory.estimate import estimate, reconcile
from oomdoctor.memory.params import ParamCounts, count_params, lora_params, trainable_params

__all__ = ["estimate", "reconcile", "count_params", "trainable_params", "lora_params", "ParamCounts"]
