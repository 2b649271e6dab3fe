"""The real model code as a second oracle: small models of every native model_type are built with
transformers on the meta device (no memory), and their parameter count must equal the count
oomdoctor reads from the same config; real corpus configs are checked the same way with fewer layers."""
from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import pytest

from oomdoctor.archs import shape_from_config
from oomdoctor.memory import count_params

# torch and transformers are imported by the tests that use them, not when the module is collected: under xdist
# every simulate test runs on one worker (tests/conftest.py), and the other never pays their import (~11 s of CPU)
pytestmark = [pytest.mark.simulate,
              pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("torch", "transformers")),
                                 reason="needs torch and transformers")]

H = 256
BASE = dict(hidden_size=H, intermediate_size=512, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
            vocab_size=1000, pad_token_id=0, bos_token_id=1, eos_token_id=2)
SMALL = dict(vocab_size=1000, pad_token_id=0, bos_token_id=1, eos_token_id=2)
HYBRID = dict(linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=32, linear_value_head_dim=48,
              linear_conv_kernel_dim=3)
CASES = {
    "llama": dict(BASE, attention_bias=True, mlp_bias=True),
    "mistral": dict(BASE, head_dim=96),
    "qwen2": dict(BASE),
    "qwen3": dict(BASE, head_dim=80),
    "qwen2_moe": dict(BASE, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=128,
                      shared_expert_intermediate_size=384, decoder_sparse_step=2, mlp_only_layers=[0]),
    "qwen3_moe": dict(BASE, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=128, mlp_only_layers=[2]),
    "mixtral": dict(BASE, num_local_experts=4, num_experts_per_tok=2),
    "gemma": dict(BASE, head_dim=128),
    "gemma2": dict(BASE, head_dim=128),
    "gemma3_text": dict(BASE, head_dim=128),
    "cohere": dict(BASE, use_qk_norm=True),
    "cohere2": dict(BASE),
    "starcoder2": dict(BASE),
    "olmo": dict(BASE),
    "olmo2": dict(BASE),
    "stablelm": dict(BASE, use_qkv_bias=True, qk_layernorm=True),
    "phi": dict(BASE, qk_layernorm=True),
    "phi3": dict(BASE),
    "glm": dict(BASE, head_dim=64),
    "glm4": dict(BASE, head_dim=64),
    "granite": dict(BASE, attention_bias=True, mlp_bias=True),
    "granitemoe": dict(BASE, num_local_experts=4, num_experts_per_tok=2),
    "granitemoeshared": dict(BASE, num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=384),
    "gpt_oss": dict(BASE, num_local_experts=4, num_experts_per_tok=2, head_dim=64,
                    layer_types=["full_attention"] * 3),
    "llama4_text": dict(BASE, num_local_experts=4, num_experts_per_tok=1, intermediate_size_mlp=640,
                        interleave_moe_layer_step=2, head_dim=64),
    "smollm3": dict(BASE),
    "exaone4": dict(BASE, head_dim=96, layer_types=["full_attention"] * 3),
    "phimoe": dict(BASE, num_local_experts=4, num_experts_per_tok=2, head_dim=96, attention_bias=True, lm_head_bias=True),
    "deepseek_v2": dict(BASE, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=128, n_shared_experts=2,
                        first_k_dense_replace=1, kv_lora_rank=64, q_lora_rank=None, qk_nope_head_dim=32,
                        qk_rope_head_dim=16, v_head_dim=32),
    "deepseek_v3": dict(BASE, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=128,
                        n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=64, q_lora_rank=96,
                        qk_nope_head_dim=32, qk_rope_head_dim=16, v_head_dim=32, n_group=1, topk_group=1),
    "glm4_moe_lite": dict(BASE, num_attention_heads=5, num_key_value_heads=5, n_routed_experts=4, num_experts_per_tok=2,
                          moe_intermediate_size=128, n_shared_experts=1, mlp_layer_types=["dense", "sparse", "sparse"],
                          kv_lora_rank=64, q_lora_rank=96, qk_nope_head_dim=48, qk_rope_head_dim=16, v_head_dim=64),
    "gpt2": dict(SMALL, n_embd=H, n_layer=3, n_head=4, n_positions=128),
    "gpt_bigcode": dict(SMALL, n_embd=H, n_layer=3, n_head=4, n_positions=128, multi_query=True),
    "gpt_neox": dict(BASE),
    "gptj": dict(SMALL, n_embd=H, n_layer=3, n_head=4, n_positions=128, rotary_dim=16),
    "bloom": dict(SMALL, hidden_size=H, n_layer=3, n_head=4),
    "falcon": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4),
    "falcon/new-decoder": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, num_kv_heads=2,
                               new_decoder_architecture=True, ffn_hidden_size=640),
    "falcon/rw": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, multi_query=False,
                      parallel_attn=False, bias=True),
    "mpt": dict(SMALL, d_model=H, n_layers=3, n_heads=4, max_seq_len=128, attn_config={"alibi": True}),
    "opt": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, ffn_dim=640, max_position_embeddings=128),
    "opt/projected": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, ffn_dim=640,
                          max_position_embeddings=128, word_embed_proj_dim=96, do_layer_norm_before=False),
    "dbrx": dict(SMALL, d_model=H, n_heads=4, n_layers=3, max_seq_len=128, attn_config={"kv_n_heads": 2, "rope_theta": 10000},
                 ffn_config={"ffn_hidden_size": 384, "moe_num_experts": 4, "moe_top_k": 2}),
    # hybrids: Gated DeltaNet layers (layer_types, or every full_attention_interval-th layer full) and gated attention
    "qwen3_5_text": dict(BASE, num_hidden_layers=4, head_dim=96, **HYBRID),
    "qwen3_5_text/layer-types": dict(BASE, head_dim=64, attention_bias=True,
                                     layer_types=["full_attention", "linear_attention", "full_attention"], **HYBRID),
    "qwen3_next": dict(BASE, num_hidden_layers=4, head_dim=64, num_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=96, shared_expert_intermediate_size=160, mlp_only_layers=[1], **HYBRID),
    "qwen3_next/interval": dict(BASE, num_hidden_layers=6, head_dim=64, num_experts=4, num_experts_per_tok=2,
                                moe_intermediate_size=96, shared_expert_intermediate_size=160, decoder_sparse_step=2,
                                full_attention_interval=3, **HYBRID),
    "qwen3_5_moe_text": dict(BASE, num_hidden_layers=4, head_dim=64, num_experts=4, num_experts_per_tok=2,
                             moe_intermediate_size=96, shared_expert_intermediate_size=160, **HYBRID),
    # RG-LRU recurrent blocks and attention, block_types repeated over the layers
    "recurrent_gemma": dict(BASE, num_hidden_layers=5, num_key_value_heads=1, head_dim=64, lru_width=384),
    "recurrent_gemma/attention-first": dict(BASE, num_hidden_layers=4, head_dim=64, attention_bias=True,
                                            block_types=["attention", "recurrent"]),
    "granitemoeshared/no-shared": dict(BASE, num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=0),
    # Mamba-2 layers, hybrid layers running shared transformer blocks (counted once) with per-layer adapters
    "zamba2": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=8, num_attention_heads=4,
                   mamba_d_state=16, n_mamba_heads=4, mamba_headdim=128, adapter_rank=8, hybrid_layer_ids=[1, 3, 5, 7],
                   layers_block_type=["mamba", "hybrid"] * 4),
    "zamba2/two-blocks-adapters": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=8,
                                       num_attention_heads=4, num_key_value_heads=2, mamba_d_state=16, n_mamba_heads=4,
                                       mamba_headdim=128, adapter_rank=8, num_mem_blocks=2, add_bias_linear=True,
                                       use_shared_attention_adapter=True, hybrid_layer_ids=[1, 3, 5, 7],
                                       layers_block_type=["mamba", "hybrid"] * 4),
    # gated short convolutions and attention by layer_types; the MLP width cut to 2/3 and rounded
    "lfm2": dict(SMALL, hidden_size=H, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                 block_ff_dim=1000, layer_types=["conv", "full_attention", "conv", "conv"]),
    "lfm2/biased-unadjusted": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, block_ff_dim=768,
                                   conv_bias=True, conv_L_cache=4, block_auto_adjust_ff_dim=False, tie_embedding=False,
                                   layer_types=["conv", "full_attention", "full_attention"]),
    "lfm2/multiplier": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4,
                            block_ff_dim=999, block_ffn_dim_multiplier=1.5, block_multiple_of=64,
                            layer_types=["conv", "full_attention", "conv"]),
    # attention and a Mamba-2 mixer side by side in every layer
    "falcon_h1": dict(BASE, head_dim=64, mamba_d_ssm=384, mamba_n_heads=6, mamba_d_head=64, mamba_d_state=16),
    "falcon_h1/biased-normed": dict(BASE, head_dim=64, mamba_d_ssm=384, mamba_n_heads=6, mamba_d_head=64,
                                    mamba_d_state=16, mamba_rms_norm=True, mamba_proj_bias=True, projectors_bias=True,
                                    attention_bias=True, mlp_bias=True, mamba_n_groups=2, tie_word_embeddings=True),
    # a mixture of attention experts beside a mixture of MLP experts in every layer
    "jetmoe": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=3, num_attention_heads=8,
                   num_key_value_heads=4, kv_channels=32, num_local_experts=4),
    # LFM2-MoE: dense layers, then a sparse block; LFM3: head_dim attention with an output gate, sandwich norms
    "lfm2_moe": dict(SMALL, hidden_size=H, intermediate_size=512, moe_intermediate_size=128, num_hidden_layers=4,
                     num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                     num_dense_layers=1, layer_types=["conv", "full_attention", "conv", "conv"]),
    "lfm3": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=32, layer_types=["conv", "full_attention", "conv", "sliding_attention"]),
    "lfm3/plain": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=3, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=64, use_sandwich_norm=False, use_attention_gate=False,
                       conv_bias=True, attention_bias=True, layer_types=["conv", "full_attention", "full_attention"]),
    # sub-norms over the attention output and the MLP's inner width; a gated MLP under relu2
    "bitnet": dict(BASE, attention_bias=True),
    # grouped low-rank output, KV compressors and an indexer by layer kind, hyper-connections, one shared expert
    "deepseek_v4": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=1,
                        head_dim=64, qk_rope_head_dim=16, q_lora_rank=64, o_lora_rank=32, o_groups=2,
                        n_routed_experts=4, n_shared_experts=2, num_experts_per_tok=2, moe_intermediate_size=128,
                        index_n_heads=4, index_head_dim=32, hc_mult=2,
                        compress_rates={"compressed_sparse_attention": 4, "heavily_compressed_attention": 8},
                        layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"],
                        mlp_layer_types=["hash_moe", "moe", "moe"]),
    # per-layer head_dim, per-layer embeddings; KV-shared layers with double-wide MLPs; k = v; an expert block
    "gemma4_text": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=6, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=32, global_head_dim=64, vocab_size_per_layer_input=1000,
                        hidden_size_per_layer_input=32),
    "gemma4_text/kv-shared-wide": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=8,
                                       num_attention_heads=4, num_key_value_heads=2, head_dim=32, global_head_dim=64,
                                       vocab_size_per_layer_input=1000, hidden_size_per_layer_input=32,
                                       num_kv_shared_layers=2, use_double_wide_mlp=True, attention_bias=True),
    "gemma4_text/k-eq-v-experts": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=6,
                                       num_attention_heads=4, num_key_value_heads=2, head_dim=32, global_head_dim=64,
                                       attention_k_eq_v=True, num_global_key_value_heads=1,
                                       hidden_size_per_layer_input=0, enable_moe_block=True, num_experts=4,
                                       top_k_experts=2, moe_intermediate_size=128),
    # Gemma 4 unified's decoder: Gemma 4's, without per-layer inputs or an expert block whatever the keys say
    "gemma4_unified_text": dict(SMALL, hidden_size=H, intermediate_size=512, num_hidden_layers=8,
                                num_attention_heads=4, num_key_value_heads=2, head_dim=32, global_head_dim=64,
                                num_kv_shared_layers=2, use_double_wide_mlp=True, attention_k_eq_v=True,
                                num_global_key_value_heads=1, hidden_size_per_layer_input=32),
    # compressed convolutional attention, an MLP router over experts plus a skip class, residual scalings
    "zaya": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                 num_experts=4, num_experts_per_tok=1, moe_intermediate_size=128, router_hidden_size=64,
                 sliding_window=64, layer_types=["hybrid", "hybrid_sliding", "hybrid"]),
    "zaya/biased-untied": dict(SMALL, hidden_size=H, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                               head_dim=64, num_experts=3, moe_intermediate_size=96, router_hidden_size=32,
                               attention_bias=True, lm_head_bias=True, tie_word_embeddings=False, cca_time0=3,
                               cca_time1=4, layer_types=["hybrid", "hybrid"]),
    # read from features (no reading of their own): pure Mamba-2; lightning attention layers with experts
    "mamba2": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_heads=8, head_dim=64, n_groups=2, state_size=16,
                   tie_word_embeddings=False),
    "minimax": dict(BASE, num_local_experts=4, num_experts_per_tok=2, head_dim=64, block_size=256, tie_word_embeddings=False,
                    layer_types=["linear_attention", "full_attention", "linear_attention"]),
    # the classic decoders of MANIFEST.yaml `audit_4:` (readings of their own in oomdoctor/archs.py)
    "gpt_neo": dict(SMALL, hidden_size=H, num_layers=2, num_heads=4, max_position_embeddings=64,
                    attention_types=[[["global", "local"], 1]]),
    "gpt_neo/width": dict(SMALL, hidden_size=H, num_layers=2, num_heads=4, intermediate_size=320,
                          max_position_embeddings=64, attention_types=[[["global", "local"], 1]]),
    "codegen": dict(SMALL, n_embd=H, n_layer=2, n_head=4, rotary_dim=32, n_positions=64),
    "codegen/tied": dict(SMALL, n_embd=H, n_layer=2, n_head=4, rotary_dim=32, n_inner=320, tie_word_embeddings=True),
    "openai-gpt": dict(SMALL, n_embd=H, n_layer=2, n_head=4, n_positions=64),
    "biogpt": dict(BASE, max_position_embeddings=64),
    "biogpt/untied": dict(BASE, max_position_embeddings=64, tie_word_embeddings=False),
    "xglm": dict(SMALL, d_model=H, num_layers=2, attention_heads=4, ffn_dim=320),
    "ctrl": dict(SMALL, n_embd=H, n_layer=2, n_head=4, dff=320, n_positions=64),
    "gpt_neox_japanese": dict(SMALL, hidden_size=H, num_hidden_layers=3, num_attention_heads=4,
                              intermediate_multiple_size=3),
    "rwkv": dict(SMALL, hidden_size=H, num_hidden_layers=3, attention_hidden_size=192, intermediate_size=320),
    "doge": dict(BASE, head_dim=96),
    "doge/moe": dict(BASE, is_moe=True, num_experts=64, num_experts_per_tok=4),
    "cpmant": dict(SMALL, hidden_size=H, num_hidden_layers=2, num_attention_heads=4, dim_head=48, dim_ff=320,
                   prompt_types=4, prompt_length=8, segment_types=6, position_bias_num_buckets=40),
    "hy_v4": dict(SMALL, hidden_size=H, intermediate_size=320, num_hidden_layers=3, num_attention_heads=4,
                  num_key_value_heads=4, q_lora_rank=64, kv_lora_rank=32, qk_nope_head_dim=32, qk_rope_head_dim=16, qk_head_dim=48,
                  v_head_dim=40, index_n_heads=2, index_head_dim=16, index_topk=8, hc_mult=2, n_routed_experts=4,
                  n_shared_experts=1, moe_intermediate_size=64, num_experts_per_tok=2,
                  layer_types=["indexed_attention"] * 3, indexer_types=["full", "shared", "full"],
                  mlp_layer_types=["dense", "sparse", "sparse"]),
    "inkling_text": dict(SMALL, hidden_size=H, intermediate_size=320, num_hidden_layers=3, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=48, swa_num_attention_heads=2, swa_num_key_value_heads=1,
                         swa_head_dim=40, d_rel=8, rel_extent=64, sliding_window_size=32, n_routed_experts=4,
                         n_shared_experts=1, moe_intermediate_size=64, num_experts_per_tok=2,
                         layer_types=["hybrid_sliding", "hybrid", "hybrid_sliding"],
                         mlp_layer_types=["dense", "sparse", "sparse"]),
    "trocr": dict(SMALL, d_model=64, decoder_layers=2, decoder_attention_heads=4, decoder_ffn_dim=80,
                  max_position_embeddings=40),
    "trocr/sinusoidal": dict(SMALL, d_model=64, decoder_layers=2, decoder_attention_heads=4, decoder_ffn_dim=80,
                             use_learned_position_embeddings=False, layernorm_embedding=False),
    "xlstm": dict(SMALL, hidden_size=H, embedding_dim=H, num_hidden_layers=2, num_heads=4),
    "xlstm/fused": dict(SMALL, hidden_size=H, embedding_dim=H, num_hidden_layers=2, num_heads=4, weight_mode="fused",
                        use_bias=True, qk_dim_factor=0.25, ffn_proj_factor=1.5),
}


def _meta_count(build) -> int:
    """Parameters of the model `build()` makes on the meta device (tied weights are one Parameter, counted once)."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = build()
    return sum(p.numel() for p in model.parameters())


def _transformers_count(model_type: str, kw: dict) -> int:
    from transformers import AutoConfig, AutoModelForCausalLM

    return _meta_count(lambda: AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type, **kw)))


def _image_text_count(model_type: str, kw: dict) -> int:
    from transformers import AutoConfig, AutoModelForImageTextToText

    return _meta_count(lambda: AutoModelForImageTextToText.from_config(AutoConfig.for_model(model_type, **kw)))


@pytest.mark.parametrize("case", sorted(CASES))
def test_config_count_equals_the_model_codes_own_count(case):
    model_type = case.split("/")[0]
    kw = CASES[case]
    ours = count_params(shape_from_config(dict(kw, model_type=model_type), case, None)).total
    assert ours == _transformers_count(model_type, kw)


CORPUS = Path(__file__).parent / "data" / "corpus"
NATIVE = ["gemma-2b", "gemma-2-2b-ft", "wizardlm-2-8x22b", "redpajama-incite-7b", "granite-3b-code-instruct",
          "llama-3.2-3b", "devstral-small-2507", "phi-3-mini-merge", "qwen2.5-3b-ft", "smollm3-3b",
          "granite-3.1-1b-a400m", "gpt-oss-20b", "stablelm-3b-4e1t", "gpt-j-6b", "qwen1.5-moe-a2.7b",
          "deepseek-v2-lite", "bloom-176b", "falcon-180b-chat", "medgemma-27b-it",
          "llama-3.1-8b-supernova-stock", "yi-1.5-6b-slerp", "qwen3-1.7b", "reflection-llama-3.1-70b",
          "qwen3-14b-mlx-4bit", "exaone-4.0-1.2b-w4", "phi-tiny-moe", "phi-4-mini-instruct", "gemma-2-9b", "gemma-2-27b",
          "gemma-3-1b-it", "llama-3.2-1b", "qwen2-0.5b", "qwen2-7b", "qwen3-0.6b", "starcoder2-7b", "aya-23-8b",
          "olmo-2-7b", "olmo-2-32b", "stablelm-2-zephyr-1.6b", "mistral-7b-v0.3", "tinyllama-1.1b-chat-v1.0",
          "smollm2-360m", "opt-1.3b", "opt-350m", "dbrx-instruct"]


@pytest.mark.parametrize("name", NATIVE)
def test_real_configs_with_two_layers_count_as_the_model_code_does(name):
    cfg = json.loads((CORPUS / name / "config.json").read_text())
    cfg.pop("quantization_config", None)
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    for key in ("num_hidden_layers", "n_layer", "n_layers"):
        if key in text:
            text[key] = 2
    if "layer_types" in text:
        text["layer_types"] = text["layer_types"][:2]
    if "vision_config" in cfg:
        cfg["vision_config"]["num_hidden_layers"] = 2
    model_type = cfg["model_type"]
    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "auto_map", "transformers_version")}
    ours = count_params(shape_from_config(cfg, name, None)).total
    assert ours == _transformers_count(model_type, kw)


def _two_layers(cfg: dict) -> dict:
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    text["num_hidden_layers"] = 2
    cfg.pop("quantization_config", None)
    return cfg


def test_qwen2_vl_counts_its_vision_tower_as_the_model_code_does():
    # the real Qwen2-VL-7B config with 2 language layers and 2 vision blocks: the language model is Qwen2's
    # decoder, and the tower (patch Conv3d, blocks, PatchMerger) is built from vision_config and its defaults
    cfg = _two_layers(json.loads((CORPUS / "qwen2-vl-7b-ft" / "config.json").read_text()))
    cfg["vision_config"]["depth"] = 2
    ours = count_params(shape_from_config(cfg, "qwen2-vl", None)).total
    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "transformers_version")}
    assert ours == _image_text_count("qwen2_vl", kw)


def test_mistral4_language_model_counts_as_the_model_code_does():
    # Mistral Small 4's text model (latent attention, 128 routed + 1 shared expert) with 2 layers
    from transformers import AutoConfig
    from transformers.models.mistral4.modeling_mistral4 import Mistral4ForCausalLM

    cfg = _two_layers(json.loads((CORPUS / "mistral-small-4-mlx" / "config.json").read_text()))
    text = dict(cfg["text_config"])
    text.pop("quantization_config", None)
    ours = count_params(shape_from_config(cfg, "mistral4", None)).total
    config = AutoConfig.for_model("mistral4", **{k: v for k, v in text.items() if k != "model_type"})
    assert ours == _meta_count(lambda: Mistral4ForCausalLM(config))


def test_llava_fills_its_text_config_from_llamas_defaults_and_counts_the_clip_tower():
    # llava-1.5's text_config leaves out every key at LlamaConfig's default (hidden_size among them)
    cfg = json.loads((CORPUS / "llava-1.5-7b" / "config.json").read_text())
    cfg["text_config"]["num_hidden_layers"] = 2
    cfg["vision_config"]["num_hidden_layers"] = 2
    ours = count_params(shape_from_config(cfg, "llava", None)).total
    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "transformers_version")}
    assert ours == _image_text_count("llava", kw)


def test_qwen2_5_vl_counts_its_vision_tower_as_the_model_code_does():
    # Qwen2.5-VL-3B's shapes (tied, text hidden 2048; tower 1280 wide with RMSNorms and a gated MLP of 3420)
    # with 2 language layers and 2 vision blocks; the corpus has no Qwen2.5-VL config.json yet
    cfg = {"model_type": "qwen2_5_vl", "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 2,
           "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
           "vision_config": {"depth": 2, "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
                             "out_hidden_size": 2048, "patch_size": 14, "spatial_merge_size": 2,
                             "temporal_patch_size": 2, "window_size": 112, "fullatt_block_indexes": [1]}}
    ours = count_params(shape_from_config(cfg, "qwen2.5-vl", None)).total
    assert ours == _image_text_count("qwen2_5_vl", {k: v for k, v in cfg.items() if k != "model_type"})


def test_qwen3_5_27b_counts_its_linear_attention_layers_and_vision_tower_as_the_model_code_does():
    # the corpus's Qwen3.5-27B config (architectures: Qwen3_5ForConditionalGeneration) with its first 4 layers
    # (3 Gated DeltaNet, 1 gated full attention) and 2 vision blocks; the text_config is nested
    cfg = _two_layers(json.loads((CORPUS / "qwen3.5-27b-mlx" / "config.json").read_text()))
    cfg["text_config"]["num_hidden_layers"] = 4
    cfg["text_config"]["layer_types"] = cfg["text_config"]["layer_types"][:4]
    cfg["vision_config"]["depth"] = 2
    shape = shape_from_config(cfg, "qwen3.5", None)
    assert (shape.linear_attn_layers, shape.num_layers) == (3, 4) and not shape.llama_style_guess
    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "transformers_version", "quantization")}
    assert count_params(shape).total == _image_text_count("qwen3_5", kw)


@pytest.mark.parametrize("model_type", ["qwen3_5", "qwen3_5_moe"])
def test_qwen3_5_nested_configs_fill_left_out_keys_from_the_config_classes_defaults(model_type):
    # a nested text_config saved as a diff from its class: only the layer count is left, the rest is default
    # (head_dim 256, 16/32 Gated DeltaNet key/value heads, 256 experts ...); the vision tower is all defaults
    text = {"model_type": f"{model_type}_text", "num_hidden_layers": 2}
    cfg = {"model_type": model_type, "text_config": text, "vision_config": {"depth": 1}}
    ours = count_params(shape_from_config(cfg, model_type, None)).total
    assert ours == _image_text_count(model_type, {k: v for k, v in cfg.items() if k != "model_type"})


@pytest.mark.parametrize("name,model_type", [("qwen3-vl-2b-instruct", "qwen3_vl"),
                                             ("qwen3-vl-235b-a22b-instruct", "qwen3_vl_moe")])
def test_qwen3_vl_counts_its_decoder_and_deepstack_tower_as_the_model_code_does(name, model_type):
    # published Qwen3-VL configs with 2 language layers, 3 vision blocks and 2 DeepStack mergers
    cfg = _two_layers(json.loads((CORPUS / name / "config.json").read_text()))
    cfg["vision_config"].update(depth=3, deepstack_visual_indexes=[0, 2])
    ours = count_params(shape_from_config(cfg, name, None)).total
    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "transformers_version")}
    assert ours == _image_text_count(model_type, kw)


def test_gemma4_counts_its_vision_tower_as_the_model_code_does():
    # the published Gemma-4-31B config with 2 language layers and a 2-layer tower of other head sizes
    cfg = _two_layers(json.loads((CORPUS / "gemma-4-31b-it-nvfp4" / "config.json").read_text()))
    cfg["text_config"]["layer_types"] = cfg["text_config"]["layer_types"][:2]
    cfg["vision_config"].update(num_hidden_layers=2, num_key_value_heads=8, head_dim=64, position_embedding_size=512)
    ours = count_params(shape_from_config(cfg, "gemma4", None)).total
    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "transformers_version")}
    assert ours == _image_text_count("gemma4", kw)


@pytest.mark.parametrize("name,model_type", [("granite-docling-258m", "idefics3"), ("vedika-4.1-flash", "gemma4_unified")])
def test_idefics3_and_gemma4_unified_count_their_image_input_as_the_model_code_does(name, model_type):
    # the published files with 2 language layers (and a 2-layer Idefics3 tower): Idefics3's SigLIP-style tower and
    # pixel-shuffle connector; Gemma 4 unified's encoder-free patch embedder and its audio projection
    cfg = _two_layers(json.loads((CORPUS / name / "config.json").read_text()))
    if "layer_types" in cfg["text_config"]:
        cfg["text_config"]["layer_types"] = cfg["text_config"]["layer_types"][:2]
    if model_type == "idefics3":
        cfg["vision_config"]["num_hidden_layers"] = 2
    ours = count_params(shape_from_config(cfg, name, None)).total
    kw = {k: v for k, v in cfg.items() if k not in ("model_type", "architectures", "transformers_version")}
    assert ours == _image_text_count(model_type, kw)


SEQ2SEQ = dict(d_model=32, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4, decoder_attention_heads=4,
               encoder_ffn_dim=48, decoder_ffn_dim=64, vocab_size=101, max_position_embeddings=40, pad_token_id=1,
               bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
T5_SMALL = dict(d_model=32, d_kv=8, num_heads=4, d_ff=48, num_layers=2, num_decoder_layers=3, vocab_size=101)
ENCODER_DECODERS = {
    **{t: SEQ2SEQ for t in ("bart", "mbart", "plbart", "mvp", "blenderbot", "blenderbot-small", "marian", "pegasus",
                            "m2m_100")},
    "whisper": dict(SEQ2SEQ, num_mel_bins=16, max_source_positions=30, max_target_positions=20),
    "pegasus_x": dict(SEQ2SEQ, num_global_tokens=8, block_size=8),
    "t5": dict(T5_SMALL, feed_forward_proj="relu"),
    "t5/gated": dict(T5_SMALL, feed_forward_proj="gated-gelu"),
    "mt5": T5_SMALL,
    "umt5": T5_SMALL,
    # the encoder's heads and key/value heads apart from the decoder's (each attention sizes its own head_dim)
    "moonshine": dict(hidden_size=32, intermediate_size=48, encoder_num_hidden_layers=2, decoder_num_hidden_layers=3,
                      encoder_num_attention_heads=4, encoder_num_key_value_heads=2, decoder_num_attention_heads=2,
                      decoder_num_key_value_heads=1, vocab_size=101, attention_bias=True),
    "moonshine/untied": dict(hidden_size=32, intermediate_size=48, encoder_num_hidden_layers=1,
                             decoder_num_hidden_layers=2, vocab_size=101, tie_word_embeddings=False),
}


@pytest.mark.parametrize("case", sorted(ENCODER_DECODERS))
def test_encoder_decoders_count_both_halves_as_the_model_code_does(case):
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoModelForSpeechSeq2Seq

    model_type = case.split("/")[0]
    conf = AutoConfig.for_model(model_type, **ENCODER_DECODERS[case])
    # Whisper and Moonshine read audio: the speech seq2seq mapping holds their classes
    auto = AutoModelForSpeechSeq2Seq if model_type in ("whisper", "moonshine") else AutoModelForSeq2SeqLM
    cls = auto._model_mapping[type(conf)]
    # the config as transformers writes it: every key stated, as a published config.json states them
    ours = count_params(shape_from_config(dict(conf.to_dict(), model_type=model_type), case, None)).total
    assert ours == _meta_count(lambda: cls(conf))


@pytest.mark.parametrize("model_type,pool", [("llava_next", {}), ("llava_next_video", {"spatial_pool_mode": "average"}),
                                             ("llava_next_video", {"spatial_pool_mode": "conv",
                                                                   "spatial_pool_out_channels": 32})])
def test_llava_next_counts_its_clip_tower_newline_and_video_pooler_as_the_model_code_does(model_type, pool):
    from transformers import AutoConfig

    text = dict(model_type="mistral", hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=120)
    vision = dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                  num_attention_heads=4, image_size=28, patch_size=14)
    conf = AutoConfig.for_model(model_type, text_config=text, vision_config=vision, image_token_index=100,
                                video_token_index=101, **pool)
    from transformers import AutoModelForImageTextToText

    ours = count_params(shape_from_config(conf.to_dict(), model_type, None)).total
    assert ours == _meta_count(lambda: AutoModelForImageTextToText.from_config(conf))


@pytest.mark.parametrize("qkv_bias,cross_width", [(False, 48), (True, None)])
def test_a_vision_encoder_decoder_counts_its_vit_encoder_and_trocr_decoder_as_the_model_code_does(qkv_bias, cross_width):
    from transformers import TrOCRConfig, VisionEncoderDecoderConfig, VisionEncoderDecoderModel, ViTConfig

    encoder = ViTConfig(hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                        patch_size=16, qkv_bias=qkv_bias)
    decoder = TrOCRConfig(d_model=64, decoder_layers=3, decoder_attention_heads=4, decoder_ffn_dim=80, vocab_size=120,
                          max_position_embeddings=40, cross_attention_hidden_size=cross_width, pad_token_id=1)
    conf = VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    # without cross_attention_hidden_size the encoder's 48 features are projected to the decoder's 64 (enc_to_dec_proj)
    ours = count_params(shape_from_config(conf.to_dict(), "ved", None)).total
    assert ours == _meta_count(lambda: VisionEncoderDecoderModel(conf))


def test_mllama_counts_its_cross_attention_layers_and_tiled_vision_tower_as_the_model_code_does():
    from transformers import MllamaConfig, MllamaForConditionalGeneration

    text = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=5, num_attention_heads=4, num_key_value_heads=2,
                vocab_size=120, cross_attention_layers=[1, 3], pad_token_id=0)
    vision = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_global_layers=1, attention_heads=4,
                  image_size=28, patch_size=14, max_num_tiles=2, vision_output_dim=96, intermediate_layers_indices=[0, 1],
                  supported_aspect_ratios=[[1, 1], [1, 2], [2, 1]])
    conf = MllamaConfig(text_config=text, vision_config=vision)
    ours = count_params(shape_from_config(conf.to_dict(), "mllama", None)).total
    assert ours == _meta_count(lambda: MllamaForConditionalGeneration(conf))


ENCODER = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96, vocab_size=101,
               max_position_embeddings=40, type_vocab_size=2)
THREE = {"id2label": {"0": "a", "1": "b", "2": "c"}}
ENCODERS = {
    "bert/BertModel": {}, "bert/BertForMaskedLM": {}, "bert/BertForPreTraining": {}, "bert/BertLMHeadModel": {},
    "bert/BertForSequenceClassification": THREE, "bert/BertForTokenClassification": THREE,
    "bert/BertForQuestionAnswering": {}, "bert/BertForMultipleChoice": {},
    "roberta/RobertaModel": {}, "roberta/RobertaForMaskedLM": {}, "roberta/RobertaForSequenceClassification": THREE,
    "xlm-roberta/XLMRobertaForTokenClassification": THREE, "camembert/CamembertForMaskedLM": {},
    "electra/ElectraModel": {}, "electra/ElectraForPreTraining": {"embedding_size": 32},
    "electra/ElectraForMaskedLM": {"embedding_size": 32}, "electra/ElectraForSequenceClassification": THREE,
}


@pytest.mark.parametrize("case", sorted(ENCODERS))
def test_bert_lineage_encoders_count_their_embeddings_layers_and_head_as_the_model_code_does(case):
    import transformers
    from transformers import AutoConfig

    model_type, arch = case.split("/")
    kw = dict(ENCODER, **ENCODERS[case])
    conf = AutoConfig.for_model(model_type, **kw)
    ours = count_params(shape_from_config(dict(kw, model_type=model_type, architectures=[arch]), case, None)).total
    assert ours == _meta_count(lambda: getattr(transformers, arch)(conf))


T5GEMMA_HALF = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=24, vocab_size=101, model_type="t5_gemma_module")


@pytest.mark.parametrize("case", ["tied", "untied/biased", "wider-encoder"])
def test_t5gemma_counts_both_halves_as_the_model_code_does(case):
    from transformers import T5GemmaConfig, T5GemmaForConditionalGeneration

    enc, dec = dict(T5GEMMA_HALF), dict(T5GEMMA_HALF, num_hidden_layers=3)
    top: dict = {}
    if case == "untied/biased":
        top["tie_word_embeddings"] = False
        enc["attention_bias"] = dec["attention_bias"] = True
    if case == "wider-encoder":
        enc.update(hidden_size=96, intermediate_size=128)
    dec["cross_attention_hidden_size"] = enc["hidden_size"]
    cfg = dict(top, model_type="t5gemma", architectures=["T5GemmaForConditionalGeneration"], encoder=enc, decoder=dec)
    ours = count_params(shape_from_config(cfg, case, None)).total
    conf = T5GemmaConfig(encoder=dict(enc), decoder=dict(dec), **top)
    assert ours == _meta_count(lambda: T5GemmaForConditionalGeneration(conf))


@pytest.mark.parametrize("arch", ["XLNetModel", "XLNetLMHeadModel"])
def test_xlnet_counts_its_relative_attention_tensors_and_head_as_the_model_code_does(arch):
    import transformers
    from transformers import XLNetConfig

    kw = dict(d_model=64, n_layer=2, n_head=4, d_head=16, d_inner=96, vocab_size=101)   # XLNetConfig: d_head = d_model // n_head
    ours = count_params(shape_from_config(dict(kw, model_type="xlnet", architectures=[arch]), arch, None)).total
    assert ours == _meta_count(lambda: getattr(transformers, arch)(XLNetConfig(**kw)))


def test_a_bert_decoder_half_with_cross_attention_counts_as_the_model_code_does():
    from transformers import BertConfig, BertLMHeadModel

    kw = dict(ENCODER, is_decoder=True, add_cross_attention=True)
    ours = count_params(shape_from_config(dict(kw, model_type="bert", architectures=["BertLMHeadModel"]), "d", None))
    assert ours.total == _meta_count(lambda: BertLMHeadModel(BertConfig(**kw)))


@pytest.mark.parametrize("case", ["t5", "opt/text-input/no-qkv-bias"])
def test_blip_2_counts_its_vit_qformer_queries_and_projection_as_the_model_code_does(case):
    from transformers import Blip2Config, Blip2ForConditionalGeneration

    vision = dict(hidden_size=48, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, image_size=28,
                  patch_size=14, model_type="blip_2_vision_model")
    qformer = dict(hidden_size=32, intermediate_size=40, num_hidden_layers=3, num_attention_heads=4,
                   cross_attention_frequency=2, encoder_hidden_size=48, model_type="blip_2_qformer")
    if case.startswith("t5"):
        text = dict(model_type="t5", d_model=32, d_kv=8, num_heads=4, d_ff=48, num_layers=2, num_decoder_layers=2,
                    vocab_size=101)
    else:
        text = dict(model_type="opt", hidden_size=32, ffn_dim=48, num_hidden_layers=2, num_attention_heads=4,
                    vocab_size=101, max_position_embeddings=40, word_embed_proj_dim=32)
        vision["qkv_bias"] = False
        qformer["use_qformer_text_input"] = True
    cfg = dict(model_type="blip-2", architectures=["Blip2ForConditionalGeneration"], num_query_tokens=5,
               vision_config=vision, qformer_config=qformer, text_config=text)
    ours = count_params(shape_from_config(cfg, case, None)).total
    conf = Blip2Config(vision_config=dict(vision), qformer_config=dict(qformer), text_config=dict(text),
                       num_query_tokens=5)
    assert ours == _meta_count(lambda: Blip2ForConditionalGeneration(conf))


@pytest.mark.parametrize("case", ["same-width", "wider-tower"])
def test_blip_counts_its_vit_and_text_decoder_as_the_model_code_does(case):
    from transformers import BlipConfig, BlipForConditionalGeneration

    vw = 48 if case == "same-width" else 64
    vision = dict(hidden_size=vw, intermediate_size=80, num_hidden_layers=2, num_attention_heads=4, image_size=32,
                  patch_size=16, model_type="blip_vision_model")
    text = dict(hidden_size=48, intermediate_size=72, num_hidden_layers=2, num_attention_heads=4, vocab_size=101,
                max_position_embeddings=40, encoder_hidden_size=vw, model_type="blip_text_model")
    cfg = dict(model_type="blip", architectures=["BlipForConditionalGeneration"], vision_config=vision,
               text_config=text)
    ours = count_params(shape_from_config(cfg, case, None)).total
    conf = BlipConfig(vision_config=dict(vision), text_config=dict(text))
    assert ours == _meta_count(lambda: BlipForConditionalGeneration(conf))


SMALL_TEXT = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, vocab_size=500)
SMALL_VISION = dict(hidden_size=48, intermediate_size=80, num_hidden_layers=2, num_attention_heads=4, image_size=56,
                    patch_size=14)
READINGS_9B = {
    "DistilBertModel": ("DistilBertConfig", dict(dim=64, hidden_dim=96, n_layers=2, n_heads=4, vocab_size=500,
                                                 sinusoidal_pos_embds=True)),
    "DistilBertForMaskedLM": ("DistilBertConfig", dict(dim=64, hidden_dim=96, n_layers=2, n_heads=4, vocab_size=500)),
    "DistilBertForSequenceClassification": ("DistilBertConfig", dict(dim=64, hidden_dim=96, n_layers=2, n_heads=4,
                                                                     vocab_size=500, num_labels=3)),
    "CLIPTextModel": ("CLIPTextConfig", SMALL_TEXT),
    "CLIPModel": ("CLIPConfig", dict(text_config=SMALL_TEXT, vision_config=SMALL_VISION, projection_dim=40)),
    "SiglipModel": ("SiglipConfig", dict(text_config=dict(SMALL_TEXT, projection_size=40), vision_config=SMALL_VISION)),
    "SiglipModel/no-head": ("SiglipConfig", dict(text_config=SMALL_TEXT,
                                                 vision_config=dict(SMALL_VISION, vision_use_head=False))),
    "Wav2Vec2ForCTC": ("Wav2Vec2Config", dict(SMALL_TEXT, conv_dim=[32, 32], conv_kernel=[5, 3], conv_stride=[2, 2],
                                              num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                              feat_extract_norm="layer", conv_bias=True, vocab_size=30)),
    "Wav2Vec2Model": ("Wav2Vec2Config", dict(SMALL_TEXT, conv_dim=[32, 32], conv_kernel=[5, 3], conv_stride=[2, 2],
                                             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                             mask_time_prob=0.0)),
}


@pytest.mark.parametrize("case", sorted(READINGS_9B))
def test_distilbert_clip_siglip_and_wav2vec2_count_as_the_model_code_does(case):
    import transformers

    cls_name = case.split("/")[0]
    conf_name, kw = READINGS_9B[case]
    conf = getattr(transformers, conf_name)(**kw)
    # the config as transformers writes it, with the class it names
    cfg = dict(conf.to_dict(), architectures=[cls_name])
    ours = count_params(shape_from_config(cfg, case, None)).total
    assert ours == _meta_count(lambda: getattr(transformers, cls_name)(conf))


def test_internvl_chat_counts_its_language_model_intern_vit_tower_and_projector():
    # InternVL2-2B as published (remote code, no class in transformers): its own modeling_intern_vit.py and
    # modeling_internvl_chat.py count 2,205,754,368 (MANIFEST.yaml audit_9b); the language model alone is InternLM2's
    cfg = json.loads((CORPUS / "internvl2-2b-uav" / "config.json").read_text())
    whole = count_params(shape_from_config(cfg, "internvl", None)).total
    llm = count_params(shape_from_config(dict(cfg["llm_config"]), "internlm2", None)).total
    assert whole == 2_205_754_368 and llm < whole


SMALL_ESM = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, vocab_size=33,
                 max_position_embeddings=40, pad_token_id=1, mask_token_id=32)
READINGS_10A = {
    "EsmForMaskedLM": dict(SMALL_ESM, position_embedding_type="rotary"),
    "EsmForMaskedLM/absolute": dict(SMALL_ESM, position_embedding_type="absolute", emb_layer_norm_before=True),
    "EsmModel": dict(SMALL_ESM, position_embedding_type="rotary"),
    "EsmForSequenceClassification": dict(SMALL_ESM, num_labels=3),
    "EsmForTokenClassification": dict(SMALL_ESM, num_labels=3),
}


@pytest.mark.parametrize("case", sorted(READINGS_10A))
def test_esm_counts_its_layers_contact_head_and_class_head_as_the_model_code_does(case):
    import transformers

    cls_name = case.split("/")[0]
    conf = transformers.EsmConfig(**READINGS_10A[case])
    cfg = dict(conf.to_dict(), architectures=[cls_name])
    ours = count_params(shape_from_config(cfg, case, None)).total
    assert ours == _meta_count(lambda: getattr(transformers, cls_name)(conf))


def test_qwen3_omni_counts_its_thinker_towers_and_talker_as_the_model_code_does():
    # every part but the waveform decoder (code2wav: named in a warning, not read): the thinker's Qwen3-MoE decoder,
    # its audio tower (Conv2d downsampler, conv_out, proj1/proj2) and DeepStack vision tower, the talker's MoE
    # decoder with a gated shared expert, its two ResizeMLPs and its code predictor's embeddings and heads
    from transformers import Qwen3OmniMoeConfig, Qwen3OmniMoeForConditionalGeneration

    text = dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_experts=4, num_experts_per_tok=2,
                vocab_size=300)
    audio = dict(d_model=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=48, num_mel_bins=20,
                 downsample_hidden_size=8, output_dim=64)
    vision = dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=4, out_hidden_size=64,
                  num_position_embeddings=16, deepstack_visual_indexes=[0])
    talker_text = dict(hidden_size=48, intermediate_size=80, moe_intermediate_size=24, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=12, num_experts=4, num_experts_per_tok=2,
                       shared_expert_intermediate_size=40, vocab_size=120)
    predictor = dict(hidden_size=48, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=12, vocab_size=50, num_code_groups=4)
    conf = Qwen3OmniMoeConfig(
        thinker_config=dict(text_config=text, audio_config=audio, vision_config=vision),
        talker_config=dict(thinker_hidden_size=64, text_config=talker_text, code_predictor_config=predictor,
                           num_code_groups=4, spatial_merge_size=2))
    whole = 0

    def build():
        nonlocal whole
        model = Qwen3OmniMoeForConditionalGeneration(conf)
        whole = sum(p.numel() for p in model.code2wav.parameters())
        return model

    total = _meta_count(build)
    shape = shape_from_config(conf.to_dict(), "omni", None)
    assert count_params(shape).total == total - whole
    assert [dict(n.values)["parts"] for n in shape.notes if n.code == "model.warn.parts_not_counted"] == ["code2wav_config"]


# LayoutLMv3 (audit_10c): RoBERTa's encoder with 2-D position tables, a patch embedding and relative-position bias
# tables, and the class's own heads (no pooler; token classification switches head at 10 labels)
LAYOUTLMV3 = {
    "LayoutLMv3Model/defaults": {},
    "LayoutLMv3ForSequenceClassification/5 labels": dict(num_labels=5),
    "LayoutLMv3ForTokenClassification/3 labels": dict(num_labels=3),
    "LayoutLMv3ForTokenClassification/12 labels": dict(num_labels=12),
    "LayoutLMv3ForQuestionAnswering/no visual": dict(visual_embed=False),
    "LayoutLMv3ForSequenceClassification/no rel bias": dict(has_relative_attention_bias=False,
                                                            has_spatial_attention_bias=False, input_size=448,
                                                            coordinate_size=64, shape_size=32),
}


@pytest.mark.parametrize("case", sorted(LAYOUTLMV3))
def test_layoutlmv3_counts_its_embeddings_tower_bias_tables_and_head_as_the_model_code_does(case):
    import transformers

    cls_name = case.split("/")[0]
    conf = transformers.LayoutLMv3Config(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                         num_attention_heads=4, vocab_size=1000, **LAYOUTLMV3[case])
    cfg = dict(conf.to_dict(), architectures=[cls_name])
    shape = shape_from_config(cfg, case, None)
    assert shape.shape_confidence == "derived"
    assert count_params(shape).total == _meta_count(lambda: getattr(transformers, cls_name)(conf))


# Audit 11: ALBERT (shared layer groups), DeBERTa-v2/v3 (disentangled attention), LayoutLM (BERT with 2-D position
# tables, a pooler under every head) and ERNIE (BERT with task-type embeddings), each head class they define
ENCODERS_11 = {
    "albert/AlbertForSequenceClassification/3 labels": ("AlbertConfig", dict(num_labels=3)),
    "albert/AlbertForMaskedLM/2 groups of 2": ("AlbertConfig", dict(num_hidden_groups=2, inner_group_num=2,
                                                                     num_hidden_layers=4, embedding_size=64)),
    "albert/AlbertForPreTraining/defaults": ("AlbertConfig", {}),
    "albert/AlbertForTokenClassification/wide embeddings": ("AlbertConfig", dict(embedding_size=128, num_labels=5)),
    "albert/AlbertForQuestionAnswering/defaults": ("AlbertConfig", {}),
    "albert/AlbertForMultipleChoice/defaults": ("AlbertConfig", {}),
    "albert/AlbertModel/defaults": ("AlbertConfig", {}),
    "deberta-v2/DebertaV2ForTokenClassification/v3 layout": ("DebertaV2Config", dict(
        relative_attention=True, position_buckets=32, pos_att_type=["p2c", "c2p"], share_att_key=True,
        position_biased_input=False, norm_rel_ebd="layer_norm", num_labels=7)),
    "deberta-v2/DebertaV2ForMaskedLM/v2 layout": ("DebertaV2Config", dict(
        relative_attention=True, pos_att_type=["p2c", "c2p"], share_att_key=False, position_biased_input=False,
        conv_kernel_size=3, norm_rel_ebd="layer_norm", embedding_size=64, type_vocab_size=2)),
    "deberta-v2/DebertaV2ForSequenceClassification/pooler width": ("DebertaV2Config", dict(
        relative_attention=True, max_relative_positions=64, pos_att_type=["c2p"], pooler_hidden_size=96)),
    "deberta-v2/DebertaV2ForMultipleChoice/defaults": ("DebertaV2Config", {}),
    "deberta-v2/DebertaV2ForMaskedLM/not legacy": ("DebertaV2Config", dict(legacy=False, embedding_size=64)),
    "layoutlm/LayoutLMForMaskedLM/defaults": ("LayoutLMConfig", {}),
    "layoutlm/LayoutLMForTokenClassification/9 labels": ("LayoutLMConfig", dict(num_labels=9,
                                                                                 max_2d_position_embeddings=512)),
    "layoutlm/LayoutLMForSequenceClassification/defaults": ("LayoutLMConfig", {}),
    "layoutlm/LayoutLMForQuestionAnswering/defaults": ("LayoutLMConfig", {}),
    "ernie/ErnieForMaskedLM/task ids": ("ErnieConfig", dict(use_task_id=True, task_type_vocab_size=3)),
    "ernie/ErnieForSequenceClassification/no task ids": ("ErnieConfig", dict(num_labels=4)),
    "ernie/ErnieForPreTraining/task ids": ("ErnieConfig", dict(use_task_id=True)),
}


@pytest.mark.parametrize("case", sorted(ENCODERS_11))
def test_albert_deberta_v2_layoutlm_and_ernie_count_as_the_model_code_does(case):
    import transformers

    cls_name = case.split("/")[1]
    config_class, extra = ENCODERS_11[case]
    conf = getattr(transformers, config_class)(**{**dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                                         num_attention_heads=4, vocab_size=1000), **extra})
    cfg = dict(conf.to_dict(), architectures=[cls_name])
    shape = shape_from_config(cfg, case, None)
    assert shape.shape_confidence == "derived"
    assert count_params(shape).total == _meta_count(lambda: getattr(transformers, cls_name)(conf))


CANINE = {
    "CanineForTokenClassification/5 labels": dict(num_labels=5),
    "CanineForSequenceClassification/4 hash functions": dict(num_hash_functions=4, num_hash_buckets=512),
    "CanineForQuestionAnswering/wide kernels": dict(downsampling_rate=2, upsampling_kernel_size=3, type_vocab_size=4),
    "CanineForMultipleChoice/defaults": {},
    "CanineModel/defaults": {},
}


@pytest.mark.parametrize("case", sorted(CANINE))
def test_canine_counts_its_hash_tables_three_encoders_and_convolutions_as_the_model_code_does(case):
    import transformers

    cls_name = case.split("/")[0]
    conf = transformers.CanineConfig(**{**dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                               num_attention_heads=4, num_hash_buckets=1024), **CANINE[case]})
    shape = shape_from_config(dict(conf.to_dict(), architectures=[cls_name]), case, None)
    assert shape.shape_confidence == "derived"
    assert count_params(shape).total == _meta_count(lambda: getattr(transformers, cls_name)(conf))


MPNET = ["MPNetModel", "MPNetForMaskedLM", "MPNetForSequenceClassification", "MPNetForTokenClassification",
         "MPNetForQuestionAnswering", "MPNetForMultipleChoice"]


@pytest.mark.parametrize("cls_name", MPNET)
def test_mpnet_counts_its_relative_bias_and_robertas_heads_as_the_model_code_does(cls_name):
    import transformers

    conf = transformers.MPNetConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                                    vocab_size=1000, relative_attention_num_buckets=16, num_labels=3)
    shape = shape_from_config(dict(conf.to_dict(), architectures=[cls_name]), cls_name, None)
    assert shape.shape_confidence == "derived"
    assert count_params(shape).total == _meta_count(lambda: getattr(transformers, cls_name)(conf))


# Audit 12: MobileBERT (models/mobilebert/modeling_mobilebert.py): trigram embeddings, bottlenecked layers of several
# feed-forward networks, a pooler that is a dense only under classifier_activation, each head class it defines
MOBILEBERT = {
    "MobileBertForTokenClassification/defaults": {},
    "MobileBertForSequenceClassification/3 labels": dict(num_labels=3),
    "MobileBertForMaskedLM/defaults": {},
    "MobileBertForPreTraining/defaults": {},
    "MobileBertForNextSentencePrediction/no pooler dense": dict(classifier_activation=False),
    "MobileBertForQuestionAnswering/one ffn": dict(num_feedforward_networks=1),
    "MobileBertForMultipleChoice/bottleneck attention": dict(use_bottleneck_attention=True),
    "MobileBertModel/no shared key-query bottleneck": dict(key_query_shared_bottleneck=False),
    "MobileBertModel/no bottleneck, no trigram, layer norm": dict(use_bottleneck=False, trigram_input=False,
                                                                  normalization_type="layer_norm"),
}


@pytest.mark.parametrize("case", sorted(MOBILEBERT))
def test_mobilebert_counts_its_bottlenecks_ffn_stack_and_head_as_the_model_code_does(case):
    import transformers

    cls_name = case.split("/")[0]
    conf = transformers.MobileBertConfig(**{**dict(hidden_size=128, intermediate_size=96, num_hidden_layers=2,
                                                   num_attention_heads=4, vocab_size=1000, embedding_size=32,
                                                   intra_bottleneck_size=64), **MOBILEBERT[case]})
    shape = shape_from_config(dict(conf.to_dict(), architectures=[cls_name]), case, None)
    assert shape.shape_confidence == "derived"
    assert count_params(shape).total == _meta_count(lambda: getattr(transformers, cls_name)(conf))


# Gemma 3n (issue #30; models/gemma3n/modeling_gemma3n.py): MatFormer's per-layer MLP widths, AltUp's copies and
# projections, LAuReL, per-layer input embeddings, the last layers reusing keys and values (no k/v projections)
GEMMA3N_TEXT = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=16, vocab_size=300, vocab_size_per_layer_input=200,
                    hidden_size_per_layer_input=8, laurel_rank=6, altup_num_inputs=3, num_kv_shared_layers=2,
                    layer_types=["sliding_attention", "full_attention"] * 2)
GEMMA3N = {
    "one width": {},
    "per-layer widths": dict(intermediate_size=[96, 128, 96, 160]),
    "altup 4, wider laurel": dict(altup_num_inputs=4, laurel_rank=16),
    "wider per-layer input": dict(hidden_size_per_layer_input=24, vocab_size_per_layer_input=50),
    "no kv sharing, attention bias": dict(num_kv_shared_layers=0, attention_bias=True),
    "one shared layer, untied": dict(num_kv_shared_layers=1, tie_word_embeddings=False),
    "defaults": {},
}


@pytest.mark.parametrize("case", sorted(GEMMA3N))
def test_gemma3n_text_counts_its_per_layer_widths_altup_laurel_and_kv_sharing_as_the_model_code_does(case):
    from transformers import Gemma3nForCausalLM, Gemma3nTextConfig

    conf = Gemma3nTextConfig() if case == "defaults" else Gemma3nTextConfig(**{**GEMMA3N_TEXT, **GEMMA3N[case]})
    shape = shape_from_config(conf.to_dict(), case, None)
    assert shape.shape_confidence == "derived" and not shape.notes
    assert count_params(shape).total == _meta_count(lambda: Gemma3nForCausalLM(conf))


@pytest.mark.parametrize("audio", [{}, dict(hidden_size=48, conf_num_attention_heads=4, conf_num_hidden_layers=2,
                                            conf_conv_kernel_size=3, input_feat_size=40, vocab_size=20,
                                            sscp_conv_channel_size=[8, 6], sscp_conv_kernel_size=[[3, 5], [3, 3]],
                                            sscp_conv_stride_size=[[2, 3], [2, 2]])])
def test_gemma3n_counts_its_audio_tower_and_embedders_as_the_model_code_does(audio):
    # the whole class needs timm for its MobileNetV5 vision tower: every other part is built here and compared, the
    # tower itself is named in a warning
    from transformers import Gemma3nAudioConfig, Gemma3nConfig, Gemma3nForCausalLM, Gemma3nTextConfig
    from transformers.models.gemma3n.modeling_gemma3n import Gemma3nAudioEncoder, Gemma3nMultimodalEmbedder

    text = Gemma3nTextConfig(**GEMMA3N_TEXT)
    conf = Gemma3nConfig(text_config=text.to_dict(), audio_config=audio)
    parts = [lambda: Gemma3nForCausalLM(text), lambda: Gemma3nAudioEncoder(Gemma3nAudioConfig(**audio)),
             lambda: Gemma3nMultimodalEmbedder(Gemma3nAudioConfig(**audio), text),
             lambda: Gemma3nMultimodalEmbedder(conf.vision_config, text)]
    shape = shape_from_config(dict(conf.to_dict(), architectures=["Gemma3nForConditionalGeneration"]), "g", None)
    assert count_params(shape).total == sum(_meta_count(p) for p in parts)
    warned = [n for n in shape.notes if n.code == "model.warn.vision_tower_by_name"]
    assert len(warned) == 1 and "mobilenetv5_300m_enc" in dict(warned[0].values)["tower"]
    assert not any(n.code == "model.warn.parts_not_counted" for n in shape.notes)
