"""Qwen-1 (remote code, model_type qwen) under ms-swift v1 and the HF Trainer: what the loader, bitsandbytes,
autocast and accelerate do to the step's memory, each from the code that does it."""
from __future__ import annotations

import pytest

from oomdoctor.facts import GIB, Hardware, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.regime import regime_of
from oomdoctor.models import resolve_model

A100 = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=1)
QWEN_7B = resolve_model("Qwen/Qwen-7B-Chat")     # the catalog's Qwen-1 layout: one fused c_attn, w1/w2, c_proj
TOKENS = 2048


def swift_qlora(version: str, **kw) -> TrainingSetup:
    base = dict(framework="ms-swift", framework_version=version, method="qlora", quant_bits=4, lora_rank=8,
                lora_targets=("c_attn",), micro_batch=1, seq_len=TOKENS, grad_ckpt=True,
                extras={"transformers_version": "4.36", "adapter_dtype": "bf16", "lora_dropout": 0.05})
    base.update(kw)
    return TrainingSetup(**base)


def test_ms_swift_1_5_0_loads_qwen_bnb_other_weights_in_fp16():
    # get_model_tokenizer_qwen passed torch_dtype=None under bnb until f52dfd35c (v1.5.1); transformers < 5 then
    # loads the unquantized weights in float16 while bnb computes in bf16
    assert regime_of(swift_qlora("1.5.0"), QWEN_7B).other_dtype == "fp16"
    assert regime_of(swift_qlora("1.5.1"), QWEN_7B).other_dtype == "bf16"
    assert regime_of(swift_qlora("1.5.0", load_dtype="bf16"), QWEN_7B).other_dtype == "bf16"
    five = swift_qlora("1.5.0", extras={"transformers_version": "5.0", "adapter_dtype": "bf16"})
    assert regime_of(five, QWEN_7B).other_dtype == "bf16"


def test_fp16_head_and_inputs_add_the_head_cast_and_a_copy_per_linear():
    broken, fixed = estimate(swift_qlora("1.5.0"), QWEN_7B, A100), estimate(swift_qlora("1.5.1"), QWEN_7B, A100)
    # w1 and w2 share their fp16 input; each Linear4bit casts its own bf16 copy, which MatMul4Bit keeps on ctx
    # past the checkpoint: one more hidden-wide copy per layer than a bf16 input shared by both
    mlp_copy = QWEN_7B.num_layers * TOKENS * 2 * QWEN_7B.hidden_size / GIB
    assert broken.details["moment_forward_gib"] - fixed.details["moment_forward_gib"] == pytest.approx(mlp_copy)
    # the fp16 lm_head's bf16 cast, kept by the matmul for the input gradient from the head's forward on
    head_cast = QWEN_7B.vocab_size * QWEN_7B.hidden_size * 2 / GIB
    assert broken.details["moment_loss_gib"] - fixed.details["moment_loss_gib"] == \
        pytest.approx(mlp_copy + head_cast)
