"""The memory model: where the memory of one training step goes, per GPU.

Public API: ``estimate(setup, shape, hw, *, crash=None, headroom=0.10) -> Estimate``.
"""
from oomdoctor.memory.estimate import estimate

__all__ = ["estimate"]
