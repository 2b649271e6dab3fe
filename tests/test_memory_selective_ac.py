"""Selective activation checkpointing with torchtitan's op policy keeps, beside each block's input, every other
matmul's output and the fused attention's output (torchtitan/parallelisms/parallelize_llama.py `_save_list`,
`_custom_policy` @9dec370)."""
from __future__ import annotations

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup, mechanisms_of
from oomdoctor.memory import estimate
from oomdoctor.memory.activations import layer_bytes
from oomdoctor.memory.regime import regime_of

H200 = Hardware(gpu="H200", gpu_gib=139.8, n_gpus=1)    # room for the states and the activations
LLAMA31_8B = ModelShape(name="meta-llama/Llama-3.1-8B", model_type="llama", hidden_size=4096,
                        intermediate_size=14336, num_layers=32, num_heads=32, num_kv_heads=8, vocab_size=128256)
OP = {"selective_ac_option": "op"}


def setup(**kw) -> TrainingSetup:
    base = dict(framework="hf", method="full", load_dtype="bf16", precision="bf16", micro_batch=2, seq_len=2048,
                grad_ckpt=True, attention="sdpa")
    base.update(kw)
    return TrainingSetup(**base)


def kept(s: TrainingSetup) -> float:
    return layer_bytes(s, LLAMA31_8B, regime_of(s, LLAMA31_8B), s.seq_len, trains_weights=s.method == "full").checkpoint_input


def test_the_policy_key_is_read_only_for_the_op_option():
    assert mechanisms_of(OP).selective_ac_op
    assert not mechanisms_of({"selective_ac_option": "2"}).selective_ac_op     # every 2nd block: full checkpointing
    assert not mechanisms_of({}).selective_ac_op


def test_op_policy_keeps_the_odd_matmuls_and_the_attention_output():
    # of q, k, v, o, gate, up, down the 1st, 3rd, 5th and 7th outputs in bf16, SDPA's output and fp32 log-sum-exp
    odd_matmuls = 2 * (4096 + 1024 + 14336 + 4096)
    attention = 2 * 4096 + 4 * 32
    assert kept(setup(extras=OP)) - kept(setup()) == odd_matmuls + attention


def test_op_policy_changes_nothing_without_checkpointing_or_with_adapters():
    assert kept(setup(grad_ckpt=False, extras=OP)) == kept(setup(grad_ckpt=False))
    lora = dict(method="lora", lora_rank=16, lora_targets=("all",))
    assert kept(setup(extras=OP, **lora)) == kept(setup(**lora))


def test_op_policy_raises_the_loss_moment_by_what_every_block_keeps():
    # a full fine-tune on one card peaks at the optimizer step; the loss moment holds every block's kept tensors
    tokens = 2 * 2048
    extra_gib = 32 * tokens * (kept(setup(extras=OP)) - kept(setup())) / GIB
    moment = "moment_loss_activations_gib"
    rise = estimate(setup(extras=OP), LLAMA31_8B, H200).details[moment] - \
        estimate(setup(), LLAMA31_8B, H200).details[moment]
    assert abs(rise - extra_gib) < 0.01 * extra_gib
