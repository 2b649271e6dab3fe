"""Mechanisms found where the estimate and a real-size fake-tensor trace of the same setup disagreed
(benchmarks/grid.py --real): Gemma 2's soft-capping, sandwich norms and missing SDPA path, PEFT DoRA's saved
products and weight-norm temporaries, and Phi-3's fused projections. Each test states the bytes the code makes."""
from __future__ import annotations

from dataclasses import replace

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.activations import dora_transient, layer_bytes
from oomdoctor.memory.loss import loss_bytes
from oomdoctor.memory.regime import regime_of

HW = Hardware(gpu="grid", gpu_gib=1e6)
GEMMA2_2B = ModelShape(name="google/gemma-2-2b", model_type="gemma2", hidden_size=2304, intermediate_size=9216,
                       num_layers=26, num_heads=8, num_kv_heads=4, head_dim=256, vocab_size=256000,
                       tie_word_embeddings=True)
MISTRAL_7B = ModelShape(name="mistralai/Mistral-7B-v0.1", model_type="mistral", hidden_size=4096,
                        intermediate_size=14336, num_layers=32, num_heads=32, num_kv_heads=8, vocab_size=32000)


def hf(**kw) -> TrainingSetup:
    base = dict(framework="hf", precision="bf16", load_dtype="bf16", method="lora", lora_rank=16,
                lora_targets=("all",), micro_batch=1, seq_len=4096, grad_ckpt=False, attention="eager")
    base.update(kw)
    return TrainingSetup(**base)


def test_soft_capped_logits_keep_tanh_output_until_the_logits_backward():
    setup = hf()
    gemma1 = replace(GEMMA2_2B, model_type="gemma")
    rg = regime_of(setup, GEMMA2_2B)
    capped, plain = loss_bytes(setup, GEMMA2_2B, rg), loss_bytes(setup, gemma1, rg)
    assert capped.forward - plain.forward == rg.compute_bytes == 2
    assert capped.backward - plain.backward == rg.compute_bytes


def test_gemma2_eager_attention_keeps_its_soft_capped_scores_and_four_norms():
    setup = hf()
    rg = regime_of(setup, GEMMA2_2B)
    gemma2 = layer_bytes(setup, GEMMA2_2B, rg, 4096, trains_weights=False)
    as_llama = layer_bytes(setup, replace(GEMMA2_2B, model_type="llama"), rg, 4096, trains_weights=False)
    # tanh's bf16 output (heads x seq per token), and two more RMSNorms' fp32 input and rsqrt
    assert gemma2.saved - as_llama.saved == 2 * 8 * 4096 + 2 * (4 * 2304 + 4)


def test_gemma2_has_no_sdpa_path_so_a_default_sdpa_run_is_eager():
    assert estimate(hf(attention="sdpa"), GEMMA2_2B, HW).allocated_gib == \
        estimate(hf(attention="eager"), GEMMA2_2B, HW).allocated_gib
    gemma3 = replace(GEMMA2_2B, model_type="gemma3_text")
    assert estimate(hf(attention="sdpa"), gemma3, HW).allocated_gib < \
        estimate(hf(attention="eager"), gemma3, HW).allocated_gib


def test_torchtune_builds_its_own_gemma2_so_the_hf_rules_stay_out():
    tt = hf(framework="torchtune", attention="sdpa")
    assert estimate(tt, GEMMA2_2B, HW).allocated_gib == \
        estimate(tt, replace(GEMMA2_2B, model_type="gemma"), HW).allocated_gib


def test_dora_keeps_the_base_and_lora_outputs_of_every_targeted_projection():
    setup, dora = hf(attention="sdpa"), hf(attention="sdpa", use_dora=True)
    rg = regime_of(setup, MISTRAL_7B)
    extra = (layer_bytes(dora, MISTRAL_7B, rg, 4096, trains_weights=False).saved
             - layer_bytes(setup, MISTRAL_7B, rg, 4096, trains_weights=False).saved)
    outs = 4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096   # q, k, v, o, gate, up, down
    assert extra == 2 * outs * 2           # bf16 base output and (autocast) bf16 lora_B output


def test_dora_weight_norm_temporaries_join_the_recompute_under_checkpointing():
    dora = hf(attention="sdpa", grad_ckpt=True, use_dora=True)
    rg = regime_of(dora, MISTRAL_7B)
    # down_proj (14336 -> 4096) under autocast: fp32 identity, its bf16 cast, lora_B's bf16 output at once
    assert dora_transient(dora, MISTRAL_7B, rg) == 14336 * 14336 * (4 + 2) + 14336 * 4096 * 2
    # without autocast (pure bf16, fp32 adapters): the identity, then the lora weight, the base weight cast to
    # fp32, the scaled lora weight and the sum, all fp32
    pure = replace(dora, pure_bf16=True)
    assert dora_transient(pure, MISTRAL_7B, regime_of(pure, MISTRAL_7B)) == 14336 * 14336 * 4 + 4 * 14336 * 4096 * 4
    with_ckpt = estimate(dora, MISTRAL_7B, HW).moments
    no_ckpt = estimate(replace(dora, grad_ckpt=False), MISTRAL_7B, HW).moments
    assert with_ckpt["layers backward"] - with_ckpt["optimizer"] > dora_transient(dora, MISTRAL_7B, rg) / GIB
    assert no_ckpt["forward"] > no_ckpt["layers backward"]     # the last layer's forward holds them


def test_a_fused_qkv_projection_is_one_adapter_and_its_output_stays_with_v():
    phi3 = ModelShape(name="microsoft/Phi-3-mini-4k-instruct", model_type="phi3", hidden_size=3072,
                      intermediate_size=8192, num_layers=32, num_heads=32, num_kv_heads=32, vocab_size=32064)
    from oomdoctor.archs import shape_from_config

    phi3 = shape_from_config({"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
                              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
                              "vocab_size": 32064}, phi3.name, None, source_kind="catalog")
    split = replace(phi3, model_type="llama", dense_linears=())
    setup = hf(attention="sdpa")
    rg = regime_of(setup, phi3)
    fused = layer_bytes(setup, phi3, rg, 2048, trains_weights=False).saved
    separate = layer_bytes(setup, split, rg, 2048, trains_weights=False).saved
    # separate projections: three q/k/v and two gate/up lora_A inputs (bf16 casts of the fp32 adapter input)
    # and lora_B inputs; fused: one each. v's saved view keeps q and k's part of qkv_proj's output
    adapters = 2 * (2 * 3072 + 2 * 16) + (2 * 3072 + 2 * 16)
    assert separate - fused == adapters - 2 * (3072 + 3072)


def test_a_concatenating_rope_makes_the_attention_output_a_copy_before_o_proj():
    from oomdoctor.archs import shape_from_config

    phi3 = shape_from_config({"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
                              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
                              "vocab_size": 32064}, "microsoft/Phi-3-mini-4k-instruct", None, source_kind="catalog")
    full = hf(attention="sdpa", method="full")
    rg = regime_of(full, phi3)
    cat = layer_bytes(full, phi3, rg, 2048, trains_weights=True).saved
    # the same layer with a RoPE that writes q in place of its layout (Llama's): o_proj shares the kernel's output
    no_cat = layer_bytes(full, replace(phi3, model_type="phi3-like"), rg, 2048, trains_weights=True).saved
    assert cat - no_cat == 2 * 3072          # o_proj's bf16 input, copied from the kernel's (b, heads, s, d) output
