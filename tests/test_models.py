"""Model shapes: catalog by id / short name / case, local directory, HF cache, log parameter count."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from oomdoctor.errors import InputError
from oomdoctor.models import catalog_names, resolve_model

DATA = Path(__file__).parent / "data" / "models"
REFERENCE = Path(__file__).resolve().parent / "data" / "reference" / "model-shapes.yaml"


def test_catalog_covers_every_reference_model_with_official_params():
    from oomdoctor.models import CATALOG_PATH

    ref = yaml.safe_load(REFERENCE.read_text())["models"]
    entries = {e["id"]: e for e in yaml.safe_load(CATALOG_PATH.read_text(encoding="utf-8"))["models"]}
    names = set(catalog_names())
    for m in ref:
        assert m["id"] in names
        shape = resolve_model(m["id"])
        assert shape.hidden_size == m["hidden_size"] and shape.num_layers == m["num_hidden_layers"]
        assert shape.num_kv_heads == m["num_key_value_heads"] and shape.vocab_size == m["vocab_size"]
        official = int(m["official_params"])
        if shape.params_total != official:
            # the reference quotes some counts from memory or rounded (32.5B for a 32.76B checkpoint); the catalog
            # may replace one only with a checked count that says where it comes from, and stays near the figure
            assert not entries[m["id"]]["params_from"].startswith("unchecked:"), m["id"]
            assert abs(shape.params_total - official) / official < 0.02, m["id"]


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


@pytest.mark.parametrize("name", ["x" * 300, "org/" + "y" * 300, "a\x00b"])
def test_a_name_no_file_system_allows_is_an_unknown_model_not_a_crash(tmp_path, monkeypatch, name):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(InputError):
        resolve_model(name)


def test_bad_config_json_is_input_error(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(InputError) as e:
        resolve_model(str(tmp_path))
    assert e.value.path.endswith("config.json") and e.value.line == 1


# ---------------------------------------------------------------- what users type

@pytest.mark.parametrize("name,expected", [
    ("Qwen/Qwen-7B", "Qwen/Qwen-7B"),
    ("Qwen/Qwen-7B-Chat", "Qwen/Qwen-7B"),
    ("qwen-1.8b-chat", "Qwen/Qwen-1_8B"),
    ("Qwen/Qwen-14B-Chat-Int4", "Qwen/Qwen-14B"),
    ("Qwen/Qwen-72B", "Qwen/Qwen-72B"),
    ("01-ai/Yi-1.5-6B-Chat", "01-ai/Yi-1.5-6B"),
    ("deepseek-ai/deepseek-llm-7b-chat", "deepseek-ai/deepseek-llm-7b-base"),
    ("openbmb/MiniCPM-2B-sft-bf16", "openbmb/MiniCPM-2B-sft-bf16"),
    ("THUDM/glm-4-9b-chat", "THUDM/glm-4-9b-chat"),
    ("THUDM/chatglm2-6b", "THUDM/chatglm2-6b"),
    ("THUDM/chatglm2-6b-32k", "THUDM/chatglm2-6b"),
    ("zai-org/chatglm3-6b", "THUDM/chatglm3-6b"),
    ("THUDM/GLM-4-9B-0414", "THUDM/GLM-4-9B-0414"),
    ("internlm/internlm2_5-7b-chat", "internlm/internlm2_5-7b"),
    ("internlm2.5-20b-chat", "internlm/internlm2_5-20b"),
    ("mistralai/Mistral-Nemo-Instruct-2407", "mistralai/Mistral-Nemo-Base-2407"),
    ("google/gemma-3-270m-it", "google/gemma-3-270m"),
    ("codellama/CodeLlama-7b-Instruct-hf", "codellama/CodeLlama-7b-hf"),
    ("meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.1-70B"),
    ("Qwen/Qwen2.5-Coder-7B-Instruct", "Qwen/Qwen2.5-7B"),
    ("Qwen/Qwen2.5-Math-1.5B-Instruct", "Qwen/Qwen2.5-1.5B"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"),
    ("huihui-ai/Qwen2.5-7B-Instruct-abliterated-v2", "Qwen/Qwen2.5-7B"),
    ("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", "meta-llama/Llama-3.1-8B"),
])
def test_family_and_size_resolve_the_variants_users_type(name, expected, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "MODELSCOPE_CACHE"):
        monkeypatch.delenv(var, raising=False)
    shape = resolve_model(name)
    assert shape.name == expected and shape.source_kind == "catalog"


def test_qwen1_by_name_is_counted_as_qwen1_not_as_twice_its_mlp():
    from oomdoctor.memory import count_params

    shape = resolve_model("Qwen/Qwen-7B")
    assert shape.intermediate_size == 11008                  # config.json says 22016: w1 and w2 halves
    assert count_params(shape).total == 7_721_324_544
    assert {m.name for m in shape.dense_linears} >= {"attn.c_attn", "mlp.w1", "mlp.w2", "mlp.c_proj"}


def _cache_snapshot(root: Path, hub_id: str, config: dict) -> Path:
    repo = root / ("models--" + hub_id.replace("/", "--"))
    snap = repo / "snapshots" / "0123abcd"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    (snap / "config.json").write_text(json.dumps(config))
    return snap


def test_a_cached_variant_with_a_resized_vocabulary_wins_over_the_catalog(tmp_path, monkeypatch):
    cfg = json.loads((DATA / "tiny-llama" / "config.json").read_text())
    base = resolve_model("meta-llama/Llama-2-7b-hf")
    cfg.update(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
               num_key_value_heads=32, vocab_size=32001)
    _cache_snapshot(tmp_path / "hub", "meta-llama/Llama-2-7b-hf", cfg)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    shape = resolve_model("meta-llama/Llama-2-7b-hf")
    assert shape.vocab_size == 32001 and base.vocab_size == 32000
    assert shape.source_kind == "config.json" and shape.source.startswith("hf-cache")
    assert any(n.code == "model.note.vocab_differs" for n in shape.notes)


def test_the_hub_cache_variables_are_all_looked_up(tmp_path, monkeypatch):
    cfg = json.loads((DATA / "tiny-llama" / "config.json").read_text())
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "TRANSFORMERS_CACHE"):
        monkeypatch.delenv(var, raising=False)
    _cache_snapshot(tmp_path / "legacy", "acme/legacy", cfg)
    monkeypatch.setenv("HUGGINGFACE_HUB_CACHE", str(tmp_path / "legacy"))
    assert resolve_model("acme/legacy").num_layers == 22
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE")
    _cache_snapshot(tmp_path / "xdg" / "huggingface" / "hub", "acme/xdg", cfg)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_model("acme/xdg").num_layers == 22


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads any directory")
def test_an_unreadable_cache_is_skipped_with_a_note(tmp_path, monkeypatch):
    locked = tmp_path / "locked" / "hub"
    locked.mkdir(parents=True)
    (locked / "models--acme--x").mkdir()
    locked.chmod(0)
    try:
        monkeypatch.setenv("HF_HOME", str(tmp_path / "locked"))
        shape = resolve_model("meta-llama/Llama-2-7b-hf")
        assert any(n.code == "model.note.cache_unreadable" for n in shape.notes)
    finally:
        locked.chmod(0o755)


def test_a_cache_that_cannot_be_listed_is_a_note_not_an_internal_error(tmp_path, monkeypatch):
    # HF_HOME points at a regular file: its "hub" cannot be a directory; and a snapshots dir that raises
    (tmp_path / "not_a_dir").write_text("x")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "not_a_dir"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    assert resolve_model("meta-llama/Llama-2-7b-hf").name == "meta-llama/Llama-2-7b-hf"
    import oomdoctor.models as models

    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(models.Path, "iterdir", refuse)
    _cache_snapshot(tmp_path / "hub2", "meta-llama/Llama-2-7b-hf", {"model_type": "llama"})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub2"))
    (tmp_path / "hub2" / "models--meta-llama--Llama-2-7b-hf" / "refs" / "main").unlink()
    shape = resolve_model("meta-llama/Llama-2-7b-hf")
    assert any(n.code == "model.note.cache_unreadable" and "Permission denied" in str(n.values) for n in shape.notes)


@pytest.mark.parametrize("key,raw,fragment", [
    ("num_hidden_layers", "-32", "at least 1"),
    ("hidden_size", "1e400", "finite"),
    ("vocab_size", "1" * 400, "too large"),
    ("intermediate_size", "4096.5", "integer"),
    ("num_attention_heads", '"many"', "number"),
])
def test_a_bad_number_in_a_model_config_names_the_file_and_line(tmp_path, key, raw, fragment):
    text = (DATA / "tiny-llama" / "config.json").read_text()
    value = json.loads(text)[key]
    bad = re.sub(r'("%s"\s*:\s*)%s' % (key, value), lambda m: m.group(1) + raw, text, count=1)
    assert bad != text
    (tmp_path / "config.json").write_text(bad)
    with pytest.raises(InputError) as err:
        resolve_model(str(tmp_path))
    line = next(i for i, l in enumerate(bad.splitlines(), 1) if f'"{key}"' in l)
    assert err.value.path.endswith("config.json") and err.value.line == line and fragment in str(err.value)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", ".inf", ".nan", '".inf"'])
def test_nan_and_infinity_in_a_model_config_are_refused(tmp_path, literal):
    text = (DATA / "tiny-llama" / "config.json").read_text()
    (tmp_path / "config.json").write_text(re.sub(r'("hidden_size"\s*:\s*)\d+', lambda m: m.group(1) + literal, text))
    with pytest.raises(InputError) as err:
        resolve_model(str(tmp_path))
    assert err.value.path.endswith("config.json")


def test_negative_layers_in_a_model_config_exits_2_on_the_command_line(tmp_path, capsys):
    from oomdoctor.cli import DEMO_DIR, main

    cfg = json.loads((DATA / "tiny-llama" / "config.json").read_text())
    cfg["num_hidden_layers"] = -32
    (tmp_path / "config.json").write_text(json.dumps(cfg, indent=2))
    code = main([str(DEMO_DIR / "train.yaml"), "--model", str(tmp_path), "--gpu", "A100-80GB", "--plain"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "config.json:" in err[0] and "num_hidden_layers" in err[0]


def test_an_unknown_model_type_is_read_from_its_features_and_says_so_everywhere(tmp_path, capsys, monkeypatch):
    from oomdoctor.cli import DEMO_DIR, main

    cfg = json.loads((DATA / "tiny-llama" / "config.json").read_text())
    cfg["model_type"] = "brand_new_arch"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    monkeypatch.setenv("OOMDOCTOR_NO_TRANSFORMERS", "1")
    shape = resolve_model(str(tmp_path))
    assert shape.llama_style_guess and shape.model_type == "brand_new_arch" and shape.shape_confidence == "guessed"
    argv = [str(DEMO_DIR / "train.yaml"), "--model", str(tmp_path), "--gpu", "A100-80GB"]
    main(argv + ["--plain"])
    out = capsys.readouterr().out
    assert "brand_new_arch" in out and "GUESSED SHAPE" in out and "gated MLP" in out and str(tmp_path) in out
    main(argv + ["--json"])
    model = json.loads(capsys.readouterr().out)["model"]
    assert model["counted_as_llama"] is True and model["source"] == "config.json"
    assert model["path"] == str(tmp_path / "config.json") and model["shape_confidence"] == "guessed"
    assert [n["code"] for n in model["notes"]][:2] == ["model.warn.guessed", "model.warn.how_exact"]


def test_reports_name_a_checkpoint_source_with_its_path(capsys):
    from oomdoctor.cli import DEMO_DIR, main

    folder = Path(__file__).parent / "data" / "checkpoints" / "llama-tied"
    main([str(DEMO_DIR / "train.yaml"), "--model", str(folder), "--gpu", "24GiB", "--json"])
    model = json.loads(capsys.readouterr().out)["model"]
    assert model["source"] == "checkpoint" and model["path"] == str(folder) and model["tie_word_embeddings"]
    main([str(DEMO_DIR / "train.yaml"), "--model", str(folder), "--gpu", "24GiB", "--plain"])
    assert f"checkpoint {folder}" in " ".join(capsys.readouterr().out.split())    # a wrapped line too


@pytest.mark.parametrize("model_type,tied", [
    ("llama", False), ("mistral", False), ("qwen2", False), ("qwen3", False), ("internlm2", False),
    ("gemma", True), ("gemma2", True), ("gpt2", True), ("bloom", True), ("falcon", True), ("cohere", True),
    ("starcoder2", True), ("smollm3", True), ("mpt", True), ("gpt_neox", False), ("olmo2", False),
])
def test_a_config_silent_on_tying_takes_its_config_class_default(model_type, tied):
    from oomdoctor.archs import shape_from_config

    cfg = {"model_type": model_type, "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 1000, "d_model": 256, "n_layers": 2, "n_heads": 4,
           "n_positions": 128, "max_seq_len": 128}
    assert shape_from_config(cfg, "x", None).tie_word_embeddings is tied


def test_a_bad_number_in_a_nested_text_config_names_its_own_line(tmp_path):
    # the same key stands earlier in vision_config: the line is the text_config's, where the bad value is
    cfg = {"model_type": "llava",
           "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024, "num_hidden_layers": 24},
           "text_config": {"model_type": "llama", "hidden_size": -4096, "num_hidden_layers": 32,
                           "num_attention_heads": 32, "vocab_size": 32000}}
    text = json.dumps(cfg, indent=2)
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(InputError) as err:
        resolve_model(str(tmp_path))
    line = next(i for i, l in enumerate(text.splitlines(), 1) if '"hidden_size": -4096' in l)
    assert err.value.line == line and "at least 1" in str(err.value)
