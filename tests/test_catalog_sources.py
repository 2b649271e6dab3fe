"""The bundled catalog (oomdoctor/data/models.yaml) against the sources it names.

Every entry says which config.json copy its shape was checked against (`source`) and where its parameter count comes
from (`params_from`). A count that an independent source gives (a checkpoint index's total_size over the dtype width,
a Hugging Face safetensors count, a runtime's own count) must agree with the count oomdoctor computes from the entry's
shape; where the entry cites a real config.json of this repository's corpus, its shape must equal what oomdoctor reads
from that file.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import read_yaml

from oomdoctor.memory import count_params
from oomdoctor.models import CATALOG_PATH, read_config_json, resolve_model

CATALOG = read_yaml(CATALOG_PATH)["models"]
CORPUS = Path(__file__).parent / "data" / "corpus"
_MANIFEST = read_yaml(CORPUS / "MANIFEST.yaml")
# every section of MANIFEST.yaml names a corpus file with its source and trusted count
MANIFEST = {e["dir"]: e for entries in _MANIFEST.values() for e in entries}

UNCHECKED = "unchecked:"
TRUSTED = [e for e in CATALOG if e.get("params_total") and "cannot_count" not in e
           and not e["params_from"].startswith(UNCHECKED) and "guessed_structure" not in e]
CANNOT = [e for e in CATALOG if "cannot_count" in e]
# (catalog id, corpus dir) for every real config.json of the corpus an entry's source cites
CITED = [(e["id"], d) for e in CATALOG for d in re.findall(r"corpus:([\w.\-]+)", e["source"])
         if "guessed_structure" not in e]
# the shape fields a config.json decides, compared as oomdoctor reads them (head_dim_: explicit or hidden / heads)
FIELDS = ("hidden_size", "num_layers", "num_heads", "num_kv_heads", "head_dim_", "intermediate_size", "vocab_size",
          "tie_word_embeddings", "num_experts", "experts_per_token", "moe_intermediate_size", "shared_experts")


@pytest.fixture(autouse=True)
def _no_local_caches(tmp_path, monkeypatch):
    # a model in the developer's own HF cache would win over the catalog entry under test
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("OOMDOCTOR_NO_TRANSFORMERS", "1")      # the catalog's own reading, not transformers'
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "MODELSCOPE_CACHE"):
        monkeypatch.delenv(var, raising=False)


def _computed(mid: str) -> int:
    shape = resolve_model(mid)
    assert shape.source_kind == "catalog" and shape.name == mid and not shape.llama_style_guess
    return count_params(replace(shape, params_total=None)).total


def test_every_entry_names_its_sources_and_the_corpus_files_it_cites_exist():
    assert len(CATALOG) >= 98
    for e in CATALOG:
        assert isinstance(e.get("source"), str) and len(e["source"]) > 10, e["id"]
        if e.get("params_total"):
            assert isinstance(e.get("params_from"), str) and len(e["params_from"]) > 10, e["id"]
        for field in ("source", "params_from"):
            for d in re.findall(r"corpus:([\w.\-]+)", e.get(field, "")):
                assert d in MANIFEST and (CORPUS / d / "config.json").is_file(), (e["id"], d)
    # most counts are independent of oomdoctor's formulas; the rest say so
    assert len(TRUSTED) >= 75


@pytest.mark.parametrize("entry", TRUSTED, ids=[e["id"] for e in TRUSTED])
def test_a_trusted_count_agrees_with_the_count_of_the_entrys_shape(entry):
    counted = _computed(entry["id"])
    error = (counted - entry["params_total"]) / entry["params_total"]
    assert abs(error) <= 0.005, f"{entry['id']}: {counted:,} vs {entry['params_total']:,} ({error:+.3%})"


@pytest.mark.parametrize("entry", CANNOT, ids=[e["id"] for e in CANNOT])
def test_a_count_the_shape_cannot_reach_says_why(entry, capsys):
    counted = _computed(entry["id"])
    error = (counted - entry["params_total"]) / entry["params_total"]
    print(f"{entry['id']}: {counted:,} vs {entry['params_total']:,} ({error:+.2%}): {entry['cannot_count']}")
    # the reason given is a part the entry does not describe: the shape counts less, not more
    assert -0.05 < error < -0.005


@pytest.mark.parametrize("mid,corpus_dir", CITED, ids=[f"{m}<-{d}" for m, d in CITED])
def test_a_catalog_shape_equals_the_real_config_json_it_cites(mid, corpus_dir):
    catalog = resolve_model(mid)
    real = read_config_json(str(CORPUS / corpus_dir / "config.json"), corpus_dir)
    differ = {f: (getattr(catalog, f), getattr(real, f)) for f in FIELDS if getattr(catalog, f) != getattr(real, f)}
    assert not differ, f"{mid} vs corpus/{corpus_dir}: {differ}"


def test_a_count_taken_from_a_corpus_index_is_that_index_count():
    checked = 0
    for e in TRUSTED:
        m = re.match(r"corpus:([\w.\-]+) index", e["params_from"])
        if m and "added tokens" not in e["params_from"]:
            assert e["params_total"] == MANIFEST[m.group(1)]["trusted_params"], e["id"]
            checked += 1
    assert checked >= 15


def test_no_rounded_figure_feeds_the_estimate_where_a_checkpoint_count_is_known():
    # model-card figures (32.5B for a 32.76B checkpoint) are not good to 0.5%
    rounded = [e["id"] for e in TRUSTED if e["params_total"] % 1_000_000 == 0]
    assert rounded == []


def test_an_entry_is_marked_guessed_exactly_when_its_layers_are_guessed():
    # a mark left behind once a type gains a reading of its own (mllama did) would hide that the count is now derived
    from oomdoctor.models import shape_warnings

    for entry in CATALOG:
        shape = resolve_model(entry["id"])
        marked = "guessed_structure" in entry
        assert (shape.shape_confidence == "guessed") == marked, entry["id"]
        if marked:
            assert count_params(shape).total == entry["params_total"], entry["id"]
            assert [n.code for n in shape_warnings(shape)] == ["model.warn.catalog_structure"], entry["id"]


def test_an_entry_whose_layers_are_guessed_keeps_its_count_and_warns(tmp_path, monkeypatch):
    import oomdoctor.models as models

    catalog = tmp_path / "models.yaml"
    catalog.write_text(
        "# one entry of a type with no reading of its own\nmodels:\n"
        '- {id: acme/Mystery-1B, family: mystery, params_total: 1234567890, config: {model_type: "mystery_lm", '
        "hidden_size: 2048, intermediate_size: 5632, num_hidden_layers: 22, num_attention_heads: 32, "
        "num_key_value_heads: 4, vocab_size: 32000},\n"
        '   source: "a test", guessed_structure: "mystery_lm has no reading", params_from: "a test"}\n',
        encoding="utf-8")
    monkeypatch.setattr(models, "CATALOG_PATH", catalog)
    models._catalog.cache_clear()
    try:
        shape = models.resolve_model("acme/Mystery-1B")
        assert shape.shape_confidence == "guessed" and count_params(shape).total == 1234567890
        assert [n.code for n in models.shape_warnings(shape)] == ["model.warn.catalog_structure"]
    finally:
        models._catalog.cache_clear()


def test_the_catalog_gaps_users_bring_are_filled():
    for name in ("ai21labs/Jamba-v0.1", "Llama-3.2-11B-Vision-Instruct", "meta-llama/Llama-3.2-90B-Vision",
                 "openai/gpt-oss-20b", "gpt-oss-120b", "tiiuae/Falcon-H1-0.5B-Instruct", "command-r7b",
                 "ByteDance-Seed/Seed-OSS-36B-Instruct", "facebook/opt-1.3b", "facebook/opt-30b", "zai-org/GLM-4.5-Air",
                 "GLM-4.6", "THUDM/GLM-4-32B-0414", "zai-org/GLM-4.7-Flash", "Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3.5-27B"):
        assert resolve_model(name).source_kind == "catalog", name
