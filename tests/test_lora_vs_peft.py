"""LoRA and DoRA parameter counts against PEFT's own: small random-init models of several families are built
with transformers on the meta device, wrapped with peft.get_peft_model for several target lists and ranks,
and PEFT's trainable count must equal memory/params.py's."""
from __future__ import annotations

import importlib.util
import warnings

import pytest

from oomdoctor.archs import shape_from_config
from oomdoctor.facts import TrainingSetup
from oomdoctor.memory.params import lora_params

# torch, transformers and peft are imported by the tests that use them, not when the module is collected: under
# xdist every simulate test runs on one worker (tests/conftest.py), and the other never pays their import
pytestmark = [pytest.mark.simulate,
              pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("torch", "transformers", "peft")),
                                 reason="needs torch, transformers and peft")]

H = 128
BASE = dict(hidden_size=H, intermediate_size=320, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            vocab_size=512, pad_token_id=0, bos_token_id=1, eos_token_id=2)
SMALL = dict(vocab_size=512, pad_token_id=0, bos_token_id=1, eos_token_id=2)
HYBRID = dict(linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=24,
              linear_conv_kernel_dim=3)
MODELS = {
    "llama": dict(BASE, attention_bias=True),
    "qwen2": dict(BASE),
    "qwen3": dict(BASE, head_dim=48),
    "gemma2": dict(BASE, head_dim=64),
    "phi3": dict(BASE),
    "phi": dict(BASE),
    "gpt2": dict(SMALL, n_embd=H, n_layer=2, n_head=4, n_positions=64),
    "falcon": dict(SMALL, hidden_size=H, num_hidden_layers=2, num_attention_heads=4),
    "bloom": dict(SMALL, hidden_size=H, n_layer=2, n_head=4),
    "gpt_neox": dict(BASE),
    "starcoder2": dict(BASE),
    "cohere": dict(BASE),
    "olmo2": dict(BASE),
    "stablelm": dict(BASE),
    "glm4": dict(BASE, head_dim=32),
    "deepseek_v2": dict(BASE, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=64, n_shared_experts=1,
                        first_k_dense_replace=1, kv_lora_rank=32, q_lora_rank=48, qk_nope_head_dim=16,
                        qk_rope_head_dim=8, v_head_dim=16),
    "mixtral": dict(BASE, num_local_experts=4, num_experts_per_tok=2),
    "exaone4": dict(BASE, head_dim=48, layer_types=["full_attention"] * 2),
    "phimoe": dict(BASE, num_local_experts=4, num_experts_per_tok=2, attention_bias=True),
    # hybrids: 3 Gated DeltaNet layers (linear_attn.*) and 1 gated full-attention layer (self_attn.*)
    "qwen3_5_text": dict(BASE, num_hidden_layers=4, head_dim=32, **HYBRID),
    "qwen3_next": dict(BASE, num_hidden_layers=4, head_dim=32, num_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=64, shared_expert_intermediate_size=96, **HYBRID),
    "qwen3_5_moe_text": dict(BASE, num_hidden_layers=4, head_dim=32, num_experts=4, num_experts_per_tok=2,
                             moe_intermediate_size=64, shared_expert_intermediate_size=96, **HYBRID),
}
# (model, targets, rank, dora): PEFT's own names for each family, "all-linear", and suffixes shared by modules
RUNS = [
    ("llama", ["q_proj", "v_proj"], 8, False), ("llama", "all-linear", 4, False), ("llama", "all-linear", 4, True),
    ("qwen2", "all-linear", 16, False), ("qwen2", ["o_proj", "down_proj"], 4, True),
    ("qwen3", "all-linear", 8, False), ("gemma2", ["q_proj", "k_proj", "v_proj", "o_proj"], 8, False),
    ("gemma2", "all-linear", 2, True), ("phi3", ["qkv_proj", "gate_up_proj"], 8, False), ("phi3", "all-linear", 4, True),
    ("phi", "all-linear", 8, False), ("phi", ["q_proj", "dense"], 4, False),
    ("gpt2", ["c_attn"], 8, False), ("gpt2", ["c_proj"], 4, False), ("gpt2", "all-linear", 4, False),
    ("falcon", ["query_key_value"], 16, False), ("falcon", "all-linear", 4, True),
    ("bloom", ["query_key_value", "dense_h_to_4h"], 8, False), ("bloom", "all-linear", 4, False),
    ("gpt_neox", ["query_key_value", "dense"], 8, False), ("gpt_neox", "all-linear", 2, True),
    ("starcoder2", ["c_fc", "c_proj"], 8, False), ("cohere", "all-linear", 4, False),
    ("olmo2", "all-linear", 4, True), ("stablelm", ["q_proj", "v_proj", "o_proj"], 8, False),
    ("glm4", ["gate_up_proj", "q_proj"], 4, False), ("glm4", "all-linear", 4, False),
    ("deepseek_v2", ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"], 8, False),
    ("mixtral", ["q_proj", "k_proj", "v_proj", "o_proj"], 8, True),
    ("exaone4", "all-linear", 4, False), ("exaone4", ["q_proj", "v_proj"], 8, True),
    ("phimoe", ["q_proj", "k_proj", "v_proj", "o_proj"], 8, False),
    # q_proj/v_proj wrap only the full-attention layers, out_proj only the Gated DeltaNet ones
    ("qwen3_5_text", "all-linear", 4, False), ("qwen3_5_text", ["q_proj", "v_proj"], 8, False),
    ("qwen3_5_text", ["in_proj_qkv", "in_proj_z", "out_proj"], 8, True),
    ("qwen3_5_text", ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"], 4, False),
    # (not qwen3_next's "all-linear" or expert names: PEFT on transformers 5 rewrites them to target_parameters of
    # the fused experts and router, which the counts here do not model)
    ("qwen3_next", ["q_proj", "k_proj", "v_proj", "o_proj", "in_proj_qkvz", "in_proj_ba", "out_proj",
                    "shared_expert_gate"], 4, False), ("qwen3_next", ["in_proj_qkvz", "in_proj_ba", "o_proj"], 8, False),
    ("qwen3_5_moe_text", "all-linear", 4, True), ("qwen3_5_moe_text", ["out_proj", "shared_expert_gate"], 8, False),
]


def _peft_trainable(model_type: str, targets, rank: int, dora: bool) -> int:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model(model_type, **MODELS[model_type])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(cfg)
            peft_model = get_peft_model(model, LoraConfig(r=rank, target_modules=targets, use_dora=dora,
                                                          lora_dropout=0.0))
    return sum(p.numel() for p in peft_model.parameters() if p.requires_grad)


@pytest.mark.parametrize("model_type,targets,rank,dora", RUNS,
                         ids=[f"{m}-{t if isinstance(t, str) else '+'.join(t)}-r{r}{'-dora' if d else ''}"
                              for m, t, r, d in RUNS])
def test_lora_count_matches_peft(model_type, targets, rank, dora):
    shape = shape_from_config(dict(MODELS[model_type], model_type=model_type), model_type, None)
    names = (targets,) if isinstance(targets, str) else tuple(targets)
    setup = TrainingSetup(method="lora", lora_rank=rank, lora_targets=names, use_dora=dora)
    assert lora_params(setup, shape) == _peft_trainable(model_type, targets, rank, dora)
