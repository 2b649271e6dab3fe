"""torchtune 0.1's QLoRA builds and quantizes its model on the GPU with torchao 0.1, whose quantizer holds 32 bytes
an element twice over; the allocator keeps what that leaves reserved, and training starts from it
(oomdoctor/memory/initload.py)."""
from __future__ import annotations

from dataclasses import replace

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.initload import device_quantized_init

LLAMA2_7B = ModelShape(name="meta-llama/Llama-2-7b-hf", model_type="llama", hidden_size=4096,
                       intermediate_size=11008, num_layers=32, num_heads=32, num_kv_heads=32, vocab_size=32000)
A100 = Hardware(gpu="A100", gpu_gib=79.2, n_gpus=1)
# torchtune's QLoRA tutorial run (recipes/configs/llama2/7B_qlora_single_device.yaml at 0914d5cfb): every decoder
# linear wrapped, rank 8, batch 2, checkpointing
QLORA_01 = TrainingSetup(framework="torchtune", framework_version="0.1.0", method="qlora", quant_bits=4, lora_rank=8,
                         lora_targets=("q_proj", "k_proj", "v_proj", "output_proj", "w1", "w2", "w3"),
                         load_dtype="bf16", precision="bf16", micro_batch=2, seq_len=512, grad_ckpt=True,
                         attention="sdpa")


def test_replayed_init_reserves_what_torchtunes_qlora_tutorial_reports_after_model_init():
    # docs/source/tutorials/qlora_finetune.rst at 0914d5cfb: "Peak memory reserved, model init" 9.13 GB
    init = device_quantized_init(QLORA_01, LLAMA2_7B)
    assert init is not None
    assert abs(init.reserved / 1e9 - 9.13) < 0.1
    # the quantizer's two (elements x 16) bf16 tensors of the largest linear ride on the NF4 model
    assert init.max_allocated > 32 * 2 * 4096 * 11008 * 2


def test_training_reserved_starts_from_what_loading_left():
    est = estimate(QLORA_01, LLAMA2_7B, A100)
    init = device_quantized_init(QLORA_01, LLAMA2_7B)
    assert init is not None
    assert est.details["reserved_gib"] >= init.reserved / GIB - 1e-9
    assert est.peak_moment == "load"
    assert abs(est.moments["load"] - init.max_allocated / GIB) < 0.05
    assert any(n.code == "memory.note.device_quantized_init" for n in est.notes)


def test_only_torchtune_before_0_2_quantizing_on_one_gpu_is_replayed():
    # torchtune 0.2 pins torchao 0.3.1, which quantizes in chunks; an unstated release is the newest
    for other in (replace(QLORA_01, framework_version="0.2.0"), replace(QLORA_01, framework_version=""),
                  replace(QLORA_01, quant_bits=None, method="lora"), replace(QLORA_01, framework="axolotl"),
                  replace(QLORA_01, n_gpus=2)):
        assert device_quantized_init(other, LLAMA2_7B) is None
    newer = estimate(replace(QLORA_01, framework_version="0.2.0"), LLAMA2_7B, A100)
    assert newer.details["reserved_gib"] < 6.0
    assert newer.peak_moment != "load"


def test_unwrapped_linears_are_not_quantized_so_loading_holds_less():
    attention_only = replace(QLORA_01, lora_targets=("q_proj", "v_proj"))
    few = device_quantized_init(attention_only, LLAMA2_7B)
    every = device_quantized_init(QLORA_01, LLAMA2_7B)
    assert few is not None and every is not None
    # bf16 base weights for the rest, and the largest quantized linear is 4096 x 4096, not 4096 x 11008
    assert few.max_allocated != every.max_allocated
    assert few.reserved != every.reserved
