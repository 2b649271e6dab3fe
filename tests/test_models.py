"""Model shapes: catalog by id / short name / case, local directory, HF cache, log parameter count."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from oomdoctor.errors import InputError
from oomdoctor.models import catalog_names, resolve_model

DATA = Path(__file__).parent / "data" / "models"
REFERENCE = Path("/work/shared/reference/model-shapes.yaml")


@pytest.mark.skipif(not REFERENCE.is_file(), reason="reference shapes not present")
def test_catalog_covers_every_reference_model_with_official_params():
    ref = yaml.safe_load(REFERENCE.read_text())["models"]
    names = set(catalog_names())
    for m in ref:
        assert m["id"] in names
        shape = resolve_model(m["id"])
        assert shape.hidden_size == m["hidden_size"] and shape.num_layers == m["num_hidden_layers"]
        assert shape.num_kv_heads == m["num_key_value_heads"] and shape.vocab_size == m["vocab_size"]
        assert shape.params_total == int(m["official_params"])


@pytest.mark.parametrize("name,expected", [
    ("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"),
    ("META-LLAMA/LLAMA-2-7B-HF", "meta-llama/Llama-2-7b-hf"),
    ("llama2-7b", "meta-llama/Llama-2-7b-hf"),
    ("Llama-2-7b", "meta-llama/Llama-2-7b-hf"),
    ("qwen2.5-7b-instruct", "Qwen/Qwen2.5-7B"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),
    ("Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-4B"),
    ("TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ", "meta-llama/Meta-Llama-3-8B"),
    ("google/gemma-3-1b-it", "google/gemma-3-1b-pt"),
    ("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1"),
    ("phi-3-mini", "microsoft/Phi-3-mini-4k-instruct"),
])
def test_lookup_by_id_short_name_and_case(name, expected):
    assert resolve_model(name).name == expected


def test_moe_fields_are_mapped():
    mix = resolve_model("mistralai/Mixtral-8x7B-v0.1")
    assert (mix.num_experts, mix.experts_per_token, mix.moe_intermediate_size, mix.shared_experts) == (8, 2, 14336, 0)
    qwen = resolve_model("Qwen/Qwen1.5-MoE-A2.7B")
    assert (qwen.num_experts, qwen.shared_experts, qwen.shared_expert_intermediate_size) == (60, 1, 5632)
    ds = resolve_model("deepseek-ai/DeepSeek-V2-Lite")
    assert (ds.num_experts, ds.shared_experts, ds.first_dense_layers) == (64, 2, 1)


def test_local_directory_with_config_json():
    shape = resolve_model(str(DATA / "tiny-llama"))
    assert (shape.hidden_size, shape.num_layers, shape.num_kv_heads, shape.torch_dtype) == (2048, 22, 4, "bf16")
    assert shape.source.endswith("config.json") and shape.params_total is None


def test_config_json_file_with_moe():
    shape = resolve_model(str(DATA / "mixtral_config.json"))
    assert (shape.num_experts, shape.experts_per_token, shape.moe_intermediate_size) == (8, 2, 14336)


def test_hf_cache_snapshot_is_found(tmp_path, monkeypatch):
    snap = tmp_path / "hub" / "models--acme--tiny-chat" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    shutil.copy(DATA / "tiny-llama" / "config.json", snap / "config.json")
    (tmp_path / "hub" / "models--acme--tiny-chat" / "refs").mkdir()
    (tmp_path / "hub" / "models--acme--tiny-chat" / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    shape = resolve_model("acme/tiny-chat")
    assert shape.num_layers == 22 and shape.source.startswith("hf-cache")


def test_hf_hub_cache_variable_wins(tmp_path, monkeypatch):
    snap = tmp_path / "models--acme--moe" / "snapshots" / "x"
    snap.mkdir(parents=True)
    shutil.copy(DATA / "mixtral_config.json", snap / "config.json")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert resolve_model("acme/moe").num_experts == 8


def test_params_hint_scales_the_nearest_shape():
    shape = resolve_model("my-org/llama2-7b-sft", params_hint=6_738_415_616)
    assert shape.hidden_size == 4096 and shape.num_layers == 32 and shape.params_total == 6_738_415_616
    assert "log" in shape.source and "Llama-2-7b" in shape.source
    bigger = resolve_model("unknown-thing", params_hint=20_000_000_000)
    assert bigger.params_total == 20_000_000_000 and bigger.source.startswith("log")


def test_unknown_model_lists_what_was_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(InputError) as e:
        resolve_model("acme/never-heard-of-it")
    msg = str(e.value)
    assert "catalog" in msg and "Hugging Face cache" in msg and "--model PATH" in msg


def test_bad_config_json_is_input_error(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(InputError) as e:
        resolve_model(str(tmp_path))
    assert e.value.path.endswith("config.json") and e.value.line == 1
