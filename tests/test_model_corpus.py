"""Real config.json files of many model types, each counted against a parameter count that does not come from
oomdoctor's own formulas: a checkpoint index's total_size over the stored dtype's width, or a count published
with the checkpoint (tests/data/corpus/MANIFEST.yaml names the source of every file and every count)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import read_yaml

from oomdoctor.memory import count_params
from oomdoctor.models import read_config_json, resolve_model

CORPUS = Path(__file__).parent / "data" / "corpus"
ENTRIES = read_yaml(CORPUS / "MANIFEST.yaml")["corpus"]
COUNTABLE = [e for e in ENTRIES if "cannot_count" not in e]
REASONED = [e for e in ENTRIES if "cannot_count" in e]


def test_corpus_has_40_configs_of_20_model_types_with_sources():
    assert len(ENTRIES) >= 40
    assert len({e["model_type"] for e in ENTRIES}) >= 20
    for e in ENTRIES:
        assert (CORPUS / e["dir"] / "config.json").is_file()
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0


@pytest.mark.parametrize("entry", COUNTABLE, ids=[e["dir"] for e in COUNTABLE])
def test_config_json_is_counted_within_half_a_percent(entry):
    path = CORPUS / entry["dir"] / "config.json"
    shape = read_config_json(str(path), entry["model"])
    counted = count_params(shape).total
    error = (counted - entry["trusted_params"]) / entry["trusted_params"]
    assert abs(error) <= 0.005, f"{entry['dir']}: {counted:,} vs {entry['trusted_params']:,} ({error:+.3%})"
    assert not shape.llama_style_guess and shape.source_kind == "config.json" and shape.source_path == str(path)


@pytest.mark.parametrize("entry", REASONED, ids=[e["dir"] for e in REASONED])
def test_a_config_that_cannot_be_counted_says_why(entry, capsys, meta_counts_warm):
    shape = read_config_json(str(CORPUS / entry["dir"] / "config.json"), entry["model"])
    counted = count_params(shape).total
    error = (counted - entry["trusted_params"]) / entry["trusted_params"]
    print(f"{entry['dir']}: {counted:,} vs {entry['trusted_params']:,} ({error:+.2%}): {entry['cannot_count']}")
    # the reason holds: the type is unknown (to transformers too), read from its features, and the shape says so
    assert shape.llama_style_guess and shape.shape_confidence == "guessed"
    assert any(n.code == "model.warn.guessed" for n in shape.notes)
    assert abs(error) > 0.005


def test_index_beside_config_gives_the_checkpoint_count_and_tying(tmp_path):
    # falcon-40b: a .bin index (buffers possible, not summable) still tells that lm_head is stored;
    # the config is silent on tying and Falcon's default ties it, so the head is not a second matrix
    falcon = resolve_model(str(CORPUS / "falcon-40b"))
    entry = next(e for e in ENTRIES if e["dir"] == "falcon-40b")
    assert falcon.tie_word_embeddings and count_params(falcon).lm_head == 0
    assert abs(count_params(falcon).total - entry["trusted_params"]) / entry["trusted_params"] < 0.005
    # a safetensors index: total_size over the dtype's width is the count, and the report says so
    for name in ("gemma-2b", "smollm3-3b", "qwen-7b-chat", "phi-3-mini-merge"):
        entry = next(e for e in ENTRIES if e["dir"] == name)
        shape = resolve_model(str(CORPUS / name))
        assert shape.source_kind == "checkpoint" and shape.source_path.endswith("model.safetensors.index.json")
        assert count_params(shape).total == entry["trusted_params"]
        assert any(n.code == "model.note.shards_missing" for n in shape.notes)


def test_every_family_the_issue_lists_has_semantics_of_its_own():
    from oomdoctor.archs import known_model_types

    listed = ("qwen", "chatglm", "baichuan", "internlm", "internlm2", "bloom", "gpt2", "gpt_neox", "falcon",
              "RefinedWeb", "RefinedWebModel", "mpt", "phi", "phi3", "gemma", "gemma2", "gemma3", "gemma3_text",
              "cohere", "starcoder2", "olmo", "olmo2", "stablelm", "deepseek_v2", "deepseek_v3", "mixtral",
              "qwen2_moe", "qwen3_moe", "granitemoe", "gpt_oss", "llama4", "llama4_text", "smollm3", "glm", "glm4")
    assert not set(listed) - set(known_model_types())


def test_minicpm_moe_counts_every_expert_of_every_layer():
    # MiniCPM-MoE-8x2B (remote code): each layer's MLP is 8 MiniCPMMLP experts behind a bias-free mlp.gate;
    # the same config without num_experts is the dense MiniCPM-2B it was upcycled from
    from oomdoctor.archs import shape_from_config

    cfg = json.loads((CORPUS / "minicpm-moe-8x2b" / "config.json").read_text())
    moe = shape_from_config(cfg, "minicpm-moe", None)
    dense = shape_from_config({k: v for k, v in cfg.items() if k not in ("num_experts", "num_experts_per_tok")},
                              "minicpm", None)
    h, i, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    assert (moe.num_experts, moe.experts_per_token, moe.moe_layer_count) == (8, 2, layers)
    assert count_params(moe).total - count_params(dense).total == layers * (7 * 3 * h * i + h * 8)
    names = {m.name for m in moe.moe_linears}
    assert {"mlp.gate", "mlp.experts.*.gate_proj", "mlp.experts.*.up_proj", "mlp.experts.*.down_proj"} <= names


def test_orion_norms_are_layernorms_with_bias():
    # Orion-14B (remote code) is Llama's decoder with nn.LayerNorm: a bias beside every norm weight
    from oomdoctor.archs import shape_from_config

    cfg = dict(hidden_size=5120, intermediate_size=15360, num_hidden_layers=40, num_attention_heads=40,
               num_key_value_heads=40, vocab_size=84608, tie_word_embeddings=False)
    orion = shape_from_config(dict(cfg, model_type="orion"), "orion", None)
    llama = shape_from_config(dict(cfg, model_type="llama"), "llama", None)
    assert not orion.llama_style_guess
    assert count_params(orion).total - count_params(llama).total == 40 * 2 * 5120 + 5120


def test_compressed_tensors_weight_bits_are_read_from_the_config_groups():
    shape = read_config_json(str(CORPUS / "exaone-4.0-1.2b-w4" / "config.json"), "exaone4")
    assert (shape.quant_method, shape.quant_bits) == ("compressed-tensors", 4)
