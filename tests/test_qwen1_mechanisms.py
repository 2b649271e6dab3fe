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


def test_cross_entropy_under_cuda_autocast_runs_log_softmax_in_the_logits_dtype():
    # traced on this machine's torch with fake CUDA tensors: the composite's log_softmax keeps bf16 and
    # nll_loss's autocast cast makes the fp32 copy it saves
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "get_autocast_dtype"):
        pytest.skip("torch < 2.4 has no per-device autocast state to set")
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: list[tuple[str, str]] = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor):
                seen.append((str(func), str(out.dtype)))
            return out

    fake = FakeTensorMode()
    with fake:
        logits = torch.empty(8, 64, device="cuda", dtype=torch.bfloat16)
        labels = torch.zeros(8, dtype=torch.long, device="cuda")
    was = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")
    torch.set_autocast_enabled("cuda", True)
    torch.set_autocast_dtype("cuda", torch.bfloat16)
    try:
        with fake, Record():
            torch.nn.functional.cross_entropy(logits, labels)
    finally:
        torch.set_autocast_enabled("cuda", was[0])
        torch.set_autocast_dtype("cuda", was[1])
    assert ("aten._log_softmax.default", "torch.bfloat16") in seen
    assert ("aten._to_copy.default", "torch.float32") in seen


def test_hf_trainer_qwen1_loss_and_the_segments_a_longer_batch_maps():
    from oomdoctor.memory.estimate import _varlen_bytes

    lora = swift_qlora("1.5.1", method="lora", quant_bits=None)
    est = estimate(lora, QWEN_7B, A100)
    logits = TOKENS * QWEN_7B.vocab_size
    # forward: logits, log-softmax (bf16), nll's fp32 copy, accelerate's fp32 copy of the returned logits
    assert est.details["loss_bytes_per_logit"] == 12
    # backward: the saved pair and nll's fp32 gradient
    assert est.details["logits_backward_gib"] == pytest.approx(10 * logits / GIB)
    assert _varlen_bytes(lora, QWEN_7B, "compute") == 10
    # without autocast (DeepSpeed casts the module) nothing is upcast: the former three-tensor figure stands
    assert _varlen_bytes(lora.with_changes(zero_stage=2), QWEN_7B, "compute") == 12
