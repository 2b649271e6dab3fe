"""Mechanisms that changed with a framework's release: what a published figure measured is the code of its day."""
from __future__ import annotations

import pytest

from oomdoctor.configs import load_config
from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.regime import regime_of

RTX4090 = Hardware(gpu="RTX 4090 24GB", gpu_gib=23.6, n_gpus=1)
LLAMA2_7B = ModelShape(name="meta-llama/Llama-2-7b-hf", hidden_size=4096, intermediate_size=11008, num_layers=32,
                       num_heads=32, num_kv_heads=32, vocab_size=32000)


def axolotl_qlora(version: str, attention: str = "sdpa", **kw) -> TrainingSetup:
    base = dict(framework="axolotl", framework_version=version, method="qlora", quant_bits=4, lora_rank=32,
                lora_targets=("all",), load_dtype="bf16", precision="bf16", micro_batch=2, seq_len=4096,
                grad_ckpt=True, attention=attention, packing=True)
    base.update(kw)
    return TrainingSetup(**base)


def test_axolotl_before_0_3_keeps_pefts_fp32_upcast_of_the_unquantized_weights():
    old, new = axolotl_qlora("0.1"), axolotl_qlora("0.3.0")
    rg_old, rg_new = regime_of(old, LLAMA2_7B), regime_of(new, LLAMA2_7B)
    assert (rg_old.other_dtype, rg_old.residual_bytes) == ("fp32", 4)
    assert (rg_new.other_dtype, rg_new.residual_bytes) == ("bf16", 2)
    e_old, e_new = estimate(old, LLAMA2_7B, RTX4090), estimate(new, LLAMA2_7B, RTX4090)
    # embed_tokens, lm_head and the 65 RMSNorm weights: 2 more bytes each in fp32
    unquantized = 2 * 32000 * 4096 + (2 * 32 + 1) * 4096
    assert (e_old.details["frozen_weights_gib"] - e_new.details["frozen_weights_gib"]) * GIB == \
        pytest.approx(2 * unquantized, rel=1e-6)
    # the fp32 embedding output is the residual stream every checkpointed layer keeps as its input
    assert e_old.details["checkpoint_inputs_gib"] == pytest.approx(2 * e_new.details["checkpoint_inputs_gib"])
    assert e_old.allocated_gib > e_new.allocated_gib + 2.0


@pytest.mark.parametrize("setup", [axolotl_qlora("0.1", attention="fa2"),           # cast back for flash attention
                                   axolotl_qlora("0.1", method="lora", quant_bits=None),   # no kbit preparation
                                   axolotl_qlora("0.1", extras={"quant_method": "gptq"})])
def test_the_upcast_holds_only_for_bitsandbytes_without_flash_attention(setup):
    assert regime_of(setup, LLAMA2_7B).other_dtype == "bf16"


def _write(tmp_path, text: str) -> str:
    p = tmp_path / "qlora.yml"
    p.write_text("base_model: meta-llama/Llama-2-7b-hf\nadapter: qlora\nload_in_4bit: true\nbf16: true\n"
                 "sequence_len: 4096\nmicro_batch_size: 2\n" + text)
    return str(p)


def test_axolotl_offload_checkpointing_keeps_layer_inputs_on_the_host(tmp_path):
    text = "gradient_checkpointing: offload\ngradient_checkpointing_kwargs:\n  use_reentrant: false\n"
    today = load_config(_write(tmp_path, text))
    assert today.grad_ckpt and today.mechanisms.activation_offload
    assert today.extras["gradient_checkpointing_kwargs"] == {"use_reentrant": False}   # the stream offloading
    # before 0.12: an autograd.Function running the layer under no_grad, whatever use_reentrant says
    before = load_config(_write(tmp_path, text), framework_version="0.9.2")
    assert before.mechanisms.activation_offload
    assert before.extras["gradient_checkpointing_kwargs"] == {"use_reentrant": True}
    plain = load_config(_write(tmp_path, "gradient_checkpointing: true\n"))
    assert plain.grad_ckpt and not plain.mechanisms.activation_offload
