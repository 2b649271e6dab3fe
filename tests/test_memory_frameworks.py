"""What frameworks do that HF Trainer does not: torchtune's logits, compile, activation offloading and
optimizer-in-backward, PEFT's modules_to_save copies, bitsandbytes' double quantization, LitGPT's own output
layer, and the reserved figure a run can reach (benchmarks/accuracy.py)."""
from __future__ import annotations

import pytest

from oomdoctor.configs import load_config
from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.runtime import CUDA_CONTEXT_GIB
from oomdoctor.words import say

A100 = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=1)
LLAMA32_3B = ModelShape(name="meta-llama/Llama-3.2-3B", hidden_size=3072, intermediate_size=8192, num_layers=28,
                        num_heads=24, num_kv_heads=8, vocab_size=128256, tie_word_embeddings=True)
LLAMA2_7B = ModelShape(name="meta-llama/Llama-2-7b-hf", hidden_size=4096, intermediate_size=11008, num_layers=32,
                       num_heads=32, num_kv_heads=32, vocab_size=32000)
QWEN_7B = ModelShape(name="Qwen/Qwen-7B", model_type="qwen", hidden_size=4096, intermediate_size=11008,
                     num_layers=32, num_heads=32, num_kv_heads=32, vocab_size=151936, attention_bias=True)


def tune(**kw) -> TrainingSetup:
    base = dict(framework="torchtune", method="full", load_dtype="bf16", micro_batch=2, seq_len=4096, packing=True,
                grad_ckpt=True, optimizer="adamw_torch_fused")
    base.update(kw)
    return TrainingSetup(**base)


def test_torchtune_unchunked_output_is_fp32_logits_beside_their_log_softmax():
    e = estimate(tune(grad_ckpt=False), LLAMA32_3B, A100)
    logits = 2 * 4096 * 128256
    assert e.details["loss_bytes_per_logit"] == 8
    assert e.details["logits_forward_gib"] == pytest.approx(8 * logits / GIB)
    assert e.details["logits_backward_gib"] == pytest.approx(12 * logits / GIB)


def test_torchtune_compiled_chunked_loss_keeps_only_the_compute_dtype_chunks():
    eager = estimate(tune(loss_kernel="chunked"), LLAMA32_3B, A100)
    compiled = estimate(tune(loss_kernel="chunked", extras={"compile": True}), LLAMA32_3B, A100)
    logits = 2 * 4096 * 128256
    assert compiled.details["logits_forward_gib"] == pytest.approx((2 * logits + 8 * 2 * 4096) / GIB)
    assert compiled.details["logits_backward_gib"] < eager.details["logits_backward_gib"] / 2


def test_torchtune_reader_tells_the_chunked_output_from_the_fused_projection(tmp_path):
    text = open("tests/data/configs/torchtune_lora.yaml").read()
    fused = load_config("tests/data/configs/torchtune_lora.yaml")
    p = tmp_path / "chunked.yaml"
    p.write_text(text.replace("LinearCrossEntropyLoss", "CEWithChunkedOutputLoss"))
    chunked = load_config(str(p))
    assert (fused.fused_ce, fused.loss_kernel) == (True, "linear")
    assert (chunked.fused_ce, chunked.loss_kernel) == (True, "chunked")
    shape = ModelShape(name="meta-llama/Llama-3.1-8B", hidden_size=4096, intermediate_size=14336, num_layers=32,
                       num_heads=32, num_kv_heads=8, vocab_size=128256)
    # every chunk of the chunked output exists at once; the fused projection holds one chunk's logits
    assert estimate(chunked, shape, A100).details["logits_forward_gib"] > \
        4 * estimate(fused, shape, A100).details["logits_forward_gib"]


def test_compiled_torchtune_layers_save_the_norm_inputs_and_recompute_silu():
    eager = estimate(tune(grad_ckpt=False), LLAMA32_3B, A100).details["layer_saved_gib"]
    compiled = estimate(tune(grad_ckpt=False, extras={"compile": True}), LLAMA32_3B, A100).details["layer_saved_gib"]
    per_token = (eager - compiled) * GIB / (2 * 4096)
    h, inter = 3072, 8192
    # two norms: fp32 copy (4h) and normalised tensor (2h) -> the bf16 input (2h); silu's output (2 x inter)
    assert per_token == pytest.approx(2 * (4 * h + 2 * h - 2 * h) + 2 * inter)
    # torchtune's README: compile takes 9 GiB off the 60 GiB packed Llama 3.2 3B full fine-tune (41 KB/token/layer)
    assert per_token * 2 * 4096 * 28 / GIB == pytest.approx(9.0, rel=0.15)


def test_activation_offloading_moves_the_checkpointed_inputs_off_the_gpu():
    kept = estimate(tune(), LLAMA32_3B, A100)
    off = estimate(tune(extras={"activation_offloading": True}), LLAMA32_3B, A100)
    ckpt_inputs = 28 * 2 * 4096 * 3072 * 2 / GIB
    assert kept.details["activations_gib"] - off.details["activations_gib"] == pytest.approx(ckpt_inputs - 2 * ckpt_inputs / 28)
    assert any("offloading" in say(n, "en") for n in off.notes)


def test_optimizer_in_backward_never_holds_every_gradient():
    plain = estimate(tune(loss_kernel="chunked", extras={"compile": True}), LLAMA32_3B, A100)
    in_bwd = estimate(tune(loss_kernel="chunked", extras={"compile": True, "optimizer_in_bwd": True}), LLAMA32_3B, A100)
    grads = 3212749824 * 2 / GIB
    assert plain.moments["optimizer"] - in_bwd.moments["optimizer"] > 0.8 * grads
    assert in_bwd.allocated_gib < plain.allocated_gib - 2.0
    assert any("optimizer_in_bwd" in say(n, "en") for n in in_bwd.notes)
    # torchtune's README optimization table, Llama 3.2 3B: 24.9 GiB with activation checkpointing, 23.1 with the
    # optimizer step fused into backward (peak memory active)
    assert plain.allocated_gib == pytest.approx(24.9, rel=0.07)
    assert in_bwd.allocated_gib == pytest.approx(23.1, rel=0.08)


def test_modules_to_save_copies_live_in_the_base_dtype_under_peft_and_in_fp32_under_llamafactory():
    common = dict(method="lora", lora_targets=("all",), seq_len=1024, load_dtype="bf16", grad_ckpt=True,
                  extras={"modules_to_save": ("embed_tokens", "lm_head")})
    none = estimate(TrainingSetup(framework="hf", **{**common, "extras": {}}), QWEN_7B, A100)
    peft = estimate(TrainingSetup(framework="hf", **common), QWEN_7B, A100)
    lf = estimate(TrainingSetup(framework="llamafactory", **common), QWEN_7B, A100)
    copies = 2 * 151936 * 4096
    states = lambda e: e.details["model_states_gib"]  # noqa: E731
    # PEFT: bf16 copy, bf16 gradient, two bf16 AdamW states = 8 bytes; LLaMA-Factory's fp32 upcast: 16 bytes
    assert states(peft) - states(none) == pytest.approx(8 * copies / GIB, rel=0.01)
    assert states(lf) - states(none) == pytest.approx(16 * copies / GIB, rel=0.05)
    assert any("modules_to_save" in say(n, "en") for n in peft.notes)
    # the output layer's gradient exists from the logits' backward on, the embedding's only at the end
    assert peft.details.get("moment_logits_backward_gradients_gib", 0.0) == pytest.approx(0.0, abs=1e-9)
    assert peft.details["moment_layers_backward_gradients_gib"] >= 151936 * 4096 * 2 / GIB


def test_four_bit_weights_are_double_quantized_by_framework_default():
    common = dict(method="qlora", quant_bits=4, lora_targets=("q_proj",), seq_len=512, load_dtype="bf16")
    hf = estimate(TrainingSetup(framework="hf", **common), LLAMA2_7B, A100).details["frozen_weights_gib"]
    hf_dq = estimate(TrainingSetup(framework="hf", extras={"use_bnb_nested_quant": True}, **common), LLAMA2_7B,
                     A100).details["frozen_weights_gib"]
    lf = estimate(TrainingSetup(framework="llamafactory", **common), LLAMA2_7B, A100).details["frozen_weights_gib"]
    quantized = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)
    # bitsandbytes: an fp32 absmax per 64 weights, or an 8-bit one with an fp32 constant per 256 blocks
    assert hf - hf_dq == pytest.approx(quantized * (4 / 64 - 1 / 64 - 4 / (64 * 256)) / GIB)
    assert lf == pytest.approx(hf_dq)


def test_litgpt_trains_a_tied_model_with_its_own_output_layer_and_quantizes_it():
    common = dict(framework="litgpt", method="lora", lora_targets=("query", "value"), seq_len=512, load_dtype="bf16")
    hf = estimate(TrainingSetup(**{**common, "framework": "hf"}), LLAMA32_3B, A100).details["frozen_weights_gib"]
    lit = estimate(TrainingSetup(**common), LLAMA32_3B, A100).details["frozen_weights_gib"]
    head = 128256 * 3072
    assert lit - hf == pytest.approx(2 * head / GIB)
    quant = estimate(TrainingSetup(**{**common, "method": "qlora", "quant_bits": 4}), LLAMA2_7B, A100)
    hf_quant = estimate(TrainingSetup(**{**common, "framework": "hf", "method": "qlora", "quant_bits": 4,
                                        "extras": {"use_bnb_nested_quant": False}}), LLAMA2_7B, A100)
    # LitGPT's bnb.nf4 (no double quant) also quantizes lm_head, which HF keeps in bf16
    saved = hf_quant.details["frozen_weights_gib"] - quant.details["frozen_weights_gib"]
    assert saved == pytest.approx(32000 * 4096 * (2 - 0.5 - 4 / 64) / GIB)


def test_max_memory_reserved_can_reach_the_card_while_the_fit_line_ignores_idle_segments():
    setup = TrainingSetup(framework="hf", framework_version="4.36", method="lora", lora_targets=("c_attn",),
                          load_dtype="bf16", micro_batch=8, seq_len=2048, grad_ckpt=True, attention="fa2")
    e = estimate(setup, QWEN_7B, A100)
    assert e.details["varlen_cached_logits_uncapped_gib"] > e.details["varlen_cached_logits_gib"]
    # the reserved figure stops at what the card holds beside the CUDA context
    assert e.details["reserved_gib"] == pytest.approx(A100.gpu_gib - CUDA_CONTEXT_GIB)
    fixed = estimate(setup.with_changes(extras={"fixed_length": True}), QWEN_7B, A100)
    assert fixed.details["reserved_gib"] < e.details["reserved_gib"] - 10
