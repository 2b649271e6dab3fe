"""FSDP's units at the moments of a step: every unit, the root included, is resharded by its post-backward hook,
so the optimizer step holds sharded parameters only (torch/distributed/fsdp/_runtime_utils.py
_post_backward_reshard)."""
from __future__ import annotations

import pytest

from oomdoctor.facts import Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate

FOUR = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=4)
LLAMA3_8B = ModelShape(name="meta-llama/Meta-Llama-3-8B", model_type="llama", hidden_size=4096,
                       intermediate_size=14336, num_layers=32, num_heads=32, num_kv_heads=8, vocab_size=128256)


def fsdp(**kw) -> TrainingSetup:
    base = dict(framework="hf", method="full", load_dtype="fp32", precision="bf16", micro_batch=8, seq_len=512,
                grad_ckpt=True, fsdp="full_shard", n_gpus=4)
    base.update(kw)
    return TrainingSetup(**base)


def test_optimizer_step_holds_no_unsharded_unit():
    d = estimate(fsdp(), LLAMA3_8B, FOUR).details
    assert d["gather_buffers_gib"] > 2.0        # the root unit (embeddings, lm_head) and two decoder layers
    assert d["moment_optimizer_weights_gib"] == pytest.approx(d["trainable_weights_gib"] / 4)
    assert d["moment_layers_backward_weights_gib"] == \
        pytest.approx(d["moment_optimizer_weights_gib"] + d["gather_buffers_gib"])


def test_shard_grad_op_and_one_gpu_keep_their_weights_at_the_step():
    for setup in (fsdp(fsdp="shard_grad_op"), fsdp(n_gpus=1, fsdp=None)):
        d = estimate(setup, LLAMA3_8B, FOUR).details
        assert d["moment_optimizer_weights_gib"] == pytest.approx(d["moment_loss_weights_gib"])
