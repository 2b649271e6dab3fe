"""PEFT's LoRA-FA optimizer freezes every lora_A (peft/optimizers/lorafa.py create_lorafa_optimizer,
`param.requires_grad_(False)`): a linear saves its input only for its weight's gradient, so the adapters keep no
input, only lora_B's rank-wide one (PEFT's method comparison, its previous re-run: LoRA-FA r32 18.8 GiB beside
plain LoRA r32's 20.8)."""
from __future__ import annotations

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.activations import layer_bytes
from oomdoctor.memory.regime import regime_of

L40S = Hardware(gpu="L40S 48GB", gpu_gib=44.4, n_gpus=1)
LLAMA32_3B = ModelShape(name="meta-llama/Llama-3.2-3B", model_type="llama", hidden_size=3072, intermediate_size=8192,
                        num_layers=28, num_heads=24, num_kv_heads=8, vocab_size=128256, tie_word_embeddings=True)


def lora(**kw) -> TrainingSetup:
    # PEFT's method comparison: bf16 weights, no AMP, fp32 adapters (autocast_adapter_dtype), batch 4 x 768
    base = dict(framework="hf", method="lora", lora_rank=32, lora_targets=("q_proj", "v_proj"), load_dtype="bf16",
                precision="bf16", pure_bf16=True, micro_batch=4, seq_len=768, grad_ckpt=False, attention="sdpa")
    base.update(kw)
    return TrainingSetup(**base)


def saved(setup: TrainingSetup) -> float:
    return layer_bytes(setup, LLAMA32_3B, regime_of(setup, LLAMA32_3B), setup.seq_len, trains_weights=False).saved


def test_lora_fa_keeps_no_adapter_input():
    # plain LoRA: q_proj's and v_proj's lora_A each keep PEFT's fp32 cast of x (4 bytes x 3072); LoRA-FA: none
    assert saved(lora()) - saved(lora(optimizer="lora-fa")) == 2 * 4 * 3072
    # lora_B still keeps lora_A's output, rank wide
    assert saved(lora(optimizer="lora-fa")) > saved(lora(method="full", lora_rank=8, lora_targets=()))


def test_lora_fa_lowers_the_peak_by_the_inputs_of_every_layer():
    plain, fa = estimate(lora(), LLAMA32_3B, L40S), estimate(lora(optimizer="lora-fa"), LLAMA32_3B, L40S)
    dropped = 2 * 4 * 3072 * 4 * 768 * 28 / GIB
    assert abs((plain.allocated_gib - fa.allocated_gib) - dropped) < 0.05 * dropped


def test_other_optimizers_and_dora_keep_the_adapter_input():
    assert saved(lora(optimizer="adamw_torch_fused")) == saved(lora())
    # DoRA's magnitude needs lora_A's product; the rule is LoRA-FA's on plain LoRA only
    assert saved(lora(use_dora=True, optimizer="lora-fa")) == saved(lora(use_dora=True))
