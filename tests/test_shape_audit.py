"""Model types oomdoctor has no reading of its own (tests/data/corpus/MANIFEST.yaml `audit:`, first sight in
tests/data/corpus/AUDIT.md): read from their config's features they are counted within 1%, or refused with one
line, or counted with a loud warning — never silently wrong; where transformers knows the type, its own model
class on the meta device makes the count exact."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from helpers import read_yaml

from oomdoctor.errors import InputError
from oomdoctor.memory import count_params
from oomdoctor.models import read_config_json, resolve_model, shape_warnings

CORPUS = Path(__file__).parent / "data" / "corpus"
MANIFEST = read_yaml(CORPUS / "MANIFEST.yaml")
AUDIT = MANIFEST["audit"]
# the second audit: 28 config.json files of types new to the corpus and to the first audit (AUDIT.md)
AUDIT_2 = MANIFEST["audit_2"]
# the third: 28 more, new to the corpus and to both audits above (AUDIT.md)
AUDIT_3 = MANIFEST["audit_3"]
# the fourth: 35 more, drawn by the rule at the top of its section in MANIFEST.yaml (docs/shapes.md)
AUDIT_4 = MANIFEST["audit_4"]


@pytest.fixture
def no_transformers(monkeypatch):
    monkeypatch.setenv("OOMDOCTOR_NO_TRANSFORMERS", "1")


# AutoModelForCausalLM maps these types to their decoder alone: the meta-device count must build the named class
DECODER_ALONE = ("bart-large-cnn-ft", "pegasus-autonlp-reuters", "opus-mt-zh-en", "llama-3.2-11b-vision")


def _unknown_type_config() -> dict:
    cfg = json.loads((CORPUS / "olmoe-1b-7b-0924" / "config.json").read_text())
    cfg["model_type"] = "brand_new_moe"
    return cfg


def META_COUNT_CONFIGS() -> list[dict]:
    """The configs the transformers tests below count one at a time (rwkv's, a type transformers does not know,
    the four whose class is not their decoder's): conftest's meta_counts_warm counts them in the session's one batch
    child with the guessed configs (one import of transformers for both, not one each)."""
    configs = [json.loads((CORPUS / name / "config.json").read_text()) for name in ("rwkv-defaults", *DECODER_ALONE)]
    return configs + [_unknown_type_config()]


@pytest.fixture(scope="module")
def counted_in_one_child(meta_counts_warm):
    """META_COUNT_CONFIGS counted into the session's cache by the session's batch child (metacount.meta_count_many);
    each test still reads its count through metacount's own lookup, and a count the batch did not settle is made by
    the test's own child."""


def _file_type(entry) -> str:
    """The model_type the file states at its top, else the one MANIFEST.yaml names for it (LLaVA-OneVision-1.5's
    config states its type only in its configuration class)."""
    return json.loads((CORPUS / entry["dir"] / "config.json").read_text()).get("model_type", entry.get("model_type"))


def _score(entry):
    path = CORPUS / entry["dir"] / "config.json"
    try:
        shape = read_config_json(str(path), entry["dir"])
    except InputError as err:
        return "refused", err, None
    error = (count_params(shape).total - entry["trusted_params"]) / entry["trusted_params"]
    return ("within" if abs(error) <= 0.01 else "off"), shape, error


def test_audit_holds_20_configs_of_types_new_to_the_corpus():
    corpus = yaml.safe_load((CORPUS / "MANIFEST.yaml").read_text(encoding="utf-8"))["corpus"]
    known = {e["model_type"] for e in corpus}
    types = {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT}
    assert len(AUDIT) >= 20 and not types & known
    for e in AUDIT:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0 and e["first_sight"]


# the ninth: real published config.json files of types no section above holds, drawn by the rule at the top of its
# section (stage 2: the encoder types stage 1 leaves out); first sight and after in AUDIT.md and docs/shapes.md
AUDIT_9 = MANIFEST["audit_9"]
# the tenth, part two: real published config.json files of types m-z no section above holds (AUDIT.md)
AUDIT_10B = MANIFEST["audit_10b"]
_LEFT_OUT = ("model.warn.vision_not_counted", "model.warn.vision_tower_by_name", "model.warn.parts_not_counted")


@pytest.mark.parametrize("entry", AUDIT + AUDIT_2 + AUDIT_3 + AUDIT_4 + AUDIT_9 + AUDIT_10B,
                         ids=[e["dir"] for e in AUDIT + AUDIT_2 + AUDIT_3 + AUDIT_4 + AUDIT_9 + AUDIT_10B])
def test_without_transformers_a_new_type_is_right_refused_or_loudly_guessed(entry, no_transformers):
    kind, got, error = _score(entry)
    if kind == "refused":
        assert got.message.code.startswith("model.refuse.")
        return
    shape = got
    assert shape.shape_confidence in ("derived", "guessed")
    # a reading checked against the type's own code, where the trusted count is exact (not a rounded card figure)
    if shape.shape_confidence == "derived" and not entry.get("trusted_rounded"):
        # unless it says which part it leaves out (a vision tower of a kind it cannot count)
        if not {n.code for n in shape_warnings(shape)} & set(_LEFT_OUT):
            assert abs(error) <= 0.005, f"{entry['dir']}: {error:+.3%}"
    if shape.shape_confidence == "guessed":
        codes = [n.code for n in shape_warnings(shape)]
        assert codes[:2] == ["model.warn.guessed", "model.warn.how_exact"], codes
        assert shape.assumptions
    if kind == "off":
        left_out = {n.code for n in shape_warnings(shape)} & set(_LEFT_OUT)
        assert shape.shape_confidence == "guessed" or left_out, f"{entry['dir']}: {error:+.2%} without a warning"


def test_without_transformers_all_23_are_within_one_percent(no_transformers):
    scored = [_score(e) for e in AUDIT]
    kinds = [k for k, _, _ in scored]
    assert kinds.count("within") == 23
    # what is not within 1% is refused or carries the guessed warning (checked per file above)
    assert all(shape.shape_confidence == "guessed" for k, shape, _ in scored if k == "off")


def test_audit_2_holds_28_configs_of_types_new_to_the_corpus_and_to_the_first_audit():
    known = {e["model_type"] for e in MANIFEST["corpus"]}
    known |= {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT}
    types = {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_2}
    assert len(AUDIT_2) == len(types) == 28 and not types & known
    assert {e["model_type"] for e in AUDIT_2} == types
    for e in AUDIT_2:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0 and e["first_sight"]


def test_audit_2_without_transformers_26_of_28_within_one_percent_and_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_2}
    within = sorted(d for d, (k, _, _) in scored.items() if k == "within")
    # first sight (the code before this round): 16 within, 4 refused, 8 off by more than 1% behind the warning
    assert len(within) >= 27, within
    # Gemma 3n's per-layer intermediate_size list, once refused, is read by its own structure (_gemma3n_text)
    assert "gemma3n-text-defaults" in within
    refused = sorted(d for d, (k, _, _) in scored.items() if k == "refused")
    assert refused == []
    off = sorted(d for d, (k, _, _) in scored.items() if k == "off")
    assert all(scored[d][1].shape_confidence == "guessed" and shape_warnings(scored[d][1]) for d in off), off


def test_audit_3_holds_28_configs_of_types_new_to_the_corpus_and_to_both_audits():
    known = {e["model_type"] for e in MANIFEST["corpus"]}
    known |= {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT + AUDIT_2}
    types = {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_3}
    assert len(AUDIT_3) == len(types) == 28 and not types & known
    assert {e["model_type"] for e in AUDIT_3} == types
    for e in AUDIT_3:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0 and e["first_sight"]


def test_audit_3_without_transformers_27_of_28_within_one_percent_and_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_3}
    within = sorted(d for d, (k, _, _) in scored.items() if k == "within")
    # first sight (commit b6c04b4): 20 within, 5 refused, 3 off by more than 1% behind the warning
    assert len(within) >= 27, within
    refused = {d: scored[d][1].message.code for d, (k, _, _) in scored.items() if k == "refused"}
    # "hybrid" layers that are neither Zamba's nor attention alone: one line, exit 2 (exact with transformers)
    assert refused == {"inkling2-text-defaults": "model.refuse.layer_kind"}
    assert not [d for d, (k, _, _) in scored.items() if k == "off"]


def test_readings_of_their_own_count_the_new_families_exactly(no_transformers):
    for entry in AUDIT_3:
        if entry["model_type"] in ("lfm2_moe", "lfm3", "bitnet", "deepseek_v4", "gemma4_text", "zaya"):
            kind, shape, error = _score(entry)
            assert (kind, shape.shape_confidence, error) == ("within", "derived", 0.0), entry["dir"]
    lfm = read_config_json(str(CORPUS / "lfm2-8b-a1b" / "config.json"), "lfm2-8b-a1b")
    # 24 layers: 18 gated short convolutions, 6 attention; the first 2 dense, then 32 experts in each
    assert (lfm.linear_attn_layers, lfm.first_dense_layers, lfm.moe_layer_count, lfm.num_experts) == (18, 2, 22, 32)


def test_a_gated_deltanet_is_sized_by_its_four_keys(no_transformers):
    kind, shape, error = _score(next(e for e in AUDIT_3 if e["model_type"] == "olmo_hybrid"))
    # 24 of 32 layers: q/k/v/a/b/g/o, a conv over q/k/v, A_log and dt_bias per value head, a gated norm
    assert kind == "within" and abs(error) < 1e-4 and shape.linear_attn_layers == 24
    names = [m.name for m in shape.linear_attn_linears]
    assert names == [f"linear_attn.{n}_proj" for n in "qkvabgo"]


def test_per_layer_config_attention_sizes_are_counted_and_other_overrides_refused(tmp_path, no_transformers):
    dots3 = next(e for e in AUDIT_3 if e["model_type"] == "dots3_note_text")
    kind, shape, error = _score(dots3)
    # 33 of 46 layers with 64 heads and a wider latent: at first sight (ignored) +0.46%
    assert kind == "within" and abs(error) < 0.001
    assert any(a.code == "model.assume.per_layer" for a in shape.assumptions)
    cfg = json.loads((CORPUS / "olmoe-1b-7b-0924" / "config.json").read_text())
    cfg.update(model_type="brand_new_moe", per_layer_config={"3": {"intermediate_size": 4096}})
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(InputError) as err:
        read_config_json(str(tmp_path / "config.json"), "new")
    assert err.value.message.code == "model.refuse.per_layer" and "intermediate_size" in str(err.value.message)


def test_latent_attention_shared_experts_of_width_zero_and_pure_mamba2_are_read(no_transformers):
    youtu = read_config_json(str(CORPUS / "youtu-defaults" / "config.json"), "youtu")
    names = [m.name for m in youtu.dense_linears]
    assert "self_attn.kv_a_proj_with_mqa" in names and "self_attn.q_b_proj" in names and "self_attn.k_proj" not in names
    granite = read_config_json(str(CORPUS / "granitemoeshared-defaults" / "config.json"), "granite")
    assert granite.shared_experts == 0 and granite.num_experts == 8
    mamba2 = read_config_json(str(CORPUS / "mamba2-defaults" / "config.json"), "mamba2")
    in_proj = next(m for m in mamba2.dense_linears if m.name == "mamba.in_proj")
    # z and x (2 x 8192), B and C (2 x 8 groups x 128 state), one dt per head (128)
    assert (in_proj.in_features, in_proj.out_features) == (4096, 2 * 8192 + 2 * 8 * 128 + 128)
    kimi = read_config_json(str(CORPUS / "kimi-linear-defaults" / "config.json"), "kimi")
    assert (kimi.moe_layer_count, kimi.first_dense_layers) == (26, 1)        # mlp_layer_types: 1 dense, 26 sparse


def test_the_features_place_experts_and_mamba_layers(no_transformers):
    jamba = read_config_json(str(CORPUS / "jamba-v0.1" / "config.json"), "jamba")
    # attention every 8th layer from 4: 4 of 32; experts every 2nd from 1: 16 of 32
    assert (jamba.linear_attn_layers, jamba.moe_layer_count, jamba.num_experts) == (28, 16, 16)
    granite = read_config_json(str(CORPUS / "granite-4.0-h-tiny" / "config.json"), "granite")
    assert (granite.linear_attn_layers, granite.moe_layer_count, granite.shared_experts) == (36, 40, 1)
    ernie = read_config_json(str(CORPUS / "ernie-4.5-21b-a3b" / "config.json"), "ernie")
    assert (ernie.moe_layer_count, ernie.first_dense_layers, ernie.shared_expert_intermediate_size) == (27, 1, 3072)
    nemotron = read_config_json(str(CORPUS / "minitron-4b" / "config.json"), "minitron")
    assert not nemotron.gated_mlp and nemotron.shape_confidence == "derived"


def test_experts_that_cannot_be_placed_refuse_with_one_line(tmp_path, no_transformers, capsys):
    from oomdoctor.cli import DEMO_DIR, main

    cfg = json.loads((CORPUS / "olmoe-1b-7b-0924" / "config.json").read_text())
    cfg.update(model_type="brand_new_moe", moe_layer_pattern="alternate")
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    code = main([str(DEMO_DIR / "train.yaml"), "--model", str(tmp_path), "--gpu", "A100-80GB", "--plain"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "64 experts" in err[0] and "moe_layer_pattern" in err[0]


def test_a_checkpoint_index_makes_a_refused_guess_exact(tmp_path, no_transformers):
    cfg = json.loads((CORPUS / "gemma3n-text-defaults" / "config.json").read_text())
    cfg["dtype"] = "bfloat16"                       # a saved checkpoint names its dtype: 2 bytes a parameter
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    total = 6_835_235_568
    index = {"metadata": {"total_size": 2 * total}, "weight_map": {"model.embed_tokens.weight": "a.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    shape = resolve_model(str(tmp_path))
    assert shape.shape_confidence == "exact" and count_params(shape).total == total
    assert not shape_warnings(shape)


def test_every_surface_shows_a_guess(tmp_path, no_transformers, capsys):
    from oomdoctor.cli import DEMO_DIR, main

    # AFMoE: a type whose features reading is not checked (its attention output gate is not in its config)
    shutil.copy(CORPUS / "afmoe-defaults" / "config.json", tmp_path / "config.json")
    argv = [str(DEMO_DIR / "train.yaml"), "--model", str(tmp_path), "--gpu", "A100-80GB"]
    main(argv + ["--plain"])
    out = capsys.readouterr().out
    assert "GUESSED SHAPE" in out and "'afmoe'" in out and "--model DIR" in out and "64 experts" in out
    main(argv + ["--plain", "--lang", "zh"])
    assert "结构为推测" in capsys.readouterr().out
    main(argv + ["--json"])
    model = json.loads(capsys.readouterr().out)["model"]
    assert model["shape_confidence"] == "guessed" and model["counted_as_llama"] is True
    assert [w["code"] for w in model["shape_warnings"]][:2] == ["model.warn.guessed", "model.warn.how_exact"]
    assert model["assumptions"] and model["params_total"] > 0


def test_the_model_line_names_the_guess_in_both_languages(tmp_path, no_transformers):
    shutil.copy(CORPUS / "afmoe-defaults" / "config.json", tmp_path / "config.json")
    from oomdoctor.views.describe import model_lines, model_warning_lines

    shape = resolve_model(str(tmp_path))
    head, _ = model_lines(shape)
    assert "shape guessed" in head and model_warning_lines(shape)
    assert "推测" in model_lines(shape, "zh")[0]


@pytest.mark.simulate
def test_with_transformers_a_type_it_knows_is_counted_exactly(tmp_path, monkeypatch, meta_counts_warm):
    pytest.importorskip("transformers")
    monkeypatch.setenv("OOMDOCTOR_META_TIMEOUT", "600")     # a loaded machine must not turn the count into a guess
    # guessed, and refused (hybrid layers of a kind not read) without transformers
    for name in ("afmoe-defaults", "inkling2-text-defaults"):
        entry = next(e for e in AUDIT + AUDIT_2 + AUDIT_3 if e["dir"] == name)
        shape = read_config_json(str(CORPUS / name / "config.json"), name)
        assert shape.shape_confidence == "exact" and count_params(shape).total == entry["trusted_params"]
        assert shape.notes[0].code == "model.note.meta_count" and not shape_warnings(shape)
    # Gemma 3n's language model, once refused without transformers, has a reading of its own that equals its count
    entry = next(e for e in AUDIT_2 if e["dir"] == "gemma3n-text-defaults")
    shape = read_config_json(str(CORPUS / entry["dir"] / "config.json"), entry["dir"])
    assert shape.shape_confidence == "derived" and count_params(shape).total == entry["trusted_params"]


@pytest.mark.simulate
@pytest.mark.parametrize("pattern", ["M-M*-ME", "M-M-M-M*-M-M-M-M-M*-M-M-M-", "MEMEM*EMEMEM*EME", "*-*-ME"])
def test_nemotron_h_block_patterns_match_transformers_own_build(pattern, no_transformers):
    pytest.importorskip("transformers")
    import torch
    from transformers import AutoModelForCausalLM, NemotronHConfig

    from oomdoctor.archs import shape_from_config

    config = NemotronHConfig(hybrid_override_pattern=pattern, hidden_size=256, intermediate_size=512,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=64, mamba_num_heads=8,
                             mamba_head_dim=32, n_groups=2, ssm_state_size=16, n_routed_experts=4,
                             moe_intermediate_size=128, moe_shared_expert_intermediate_size=96, vocab_size=1000)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    shape = shape_from_config(config.to_dict(), "nemotron-h", None)
    assert count_params(shape).total == sum(p.numel() for p in model.parameters())


@pytest.mark.simulate
def test_with_transformers_a_type_it_does_not_know_says_how(tmp_path, counted_in_one_child):
    pytest.importorskip("transformers")
    (tmp_path / "config.json").write_text(json.dumps(_unknown_type_config()))
    shape = read_config_json(str(tmp_path / "config.json"), "x")
    assert shape.shape_confidence == "guessed"
    assert [n.code for n in shape_warnings(shape)][:2] == ["model.warn.guessed", "model.warn.how_exact_remote"]


def test_a_meta_count_that_runs_out_of_time_leaves_the_guess_and_says_so(tmp_path, monkeypatch):
    from oomdoctor import metacount

    monkeypatch.setattr(metacount, "available", lambda: True)
    monkeypatch.setenv("OOMDOCTOR_META_TIMEOUT", "0.001")
    cfg = json.loads((CORPUS / "afmoe-defaults" / "config.json").read_text())
    cfg["vocab_size"] = 32001                     # a config no other test has counted (the counts are cached)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    shape = read_config_json(str(tmp_path / "config.json"), "afmoe")
    codes = [n.code for n in shape_warnings(shape)]
    assert shape.shape_confidence == "guessed" and "model.warn.meta_timeout" in codes


_REMOTE_CONFIG = """
from transformers import PretrainedConfig


class TinyRemoteConfig(PretrainedConfig):
    model_type = "tiny_remote_oomdoctor"

    def __init__(self, hidden_size=64, vocab_size=100, num_hidden_layers=2, **kwargs):
        self.hidden_size, self.vocab_size, self.num_hidden_layers = hidden_size, vocab_size, num_hidden_layers
        super().__init__(**kwargs)
"""
_REMOTE_MODEL = """
import torch
from transformers import PreTrainedModel

from .configuration_tiny import TinyRemoteConfig


class TinyRemoteForCausalLM(PreTrainedModel):
    config_class = TinyRemoteConfig

    def __init__(self, config):
        super().__init__(config)
        self.embed = torch.nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(config.hidden_size, 3 * config.hidden_size)
                                          for _ in range(config.num_hidden_layers))
        self.head = torch.nn.Linear(config.hidden_size, config.vocab_size, bias=False)
"""


@pytest.mark.simulate
def test_with_trust_remote_code_the_models_own_local_code_counts_it(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    cfg = {"model_type": "tiny_remote_oomdoctor", "hidden_size": 64, "vocab_size": 100, "num_hidden_layers": 2,
           "num_attention_heads": 4, "intermediate_size": 128,
           "auto_map": {"AutoConfig": "configuration_tiny.TinyRemoteConfig",
                        "AutoModelForCausalLM": "modeling_tiny.TinyRemoteForCausalLM"}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "configuration_tiny.py").write_text(_REMOTE_CONFIG)
    (tmp_path / "modeling_tiny.py").write_text(_REMOTE_MODEL)
    monkeypatch.delenv("OOMDOCTOR_TRUST_REMOTE_CODE", raising=False)
    shape = resolve_model(str(tmp_path))
    assert shape.shape_confidence == "guessed"        # not asked to run the model's code: it is not run
    assert "model.warn.how_exact_remote" in [n.code for n in shape_warnings(shape)]
    monkeypatch.setenv("OOMDOCTOR_TRUST_REMOTE_CODE", "1")
    shape = resolve_model(str(tmp_path))
    assert shape.shape_confidence == "exact"
    assert count_params(shape).total == 100 * 64 + 2 * (64 * 192 + 192) + 64 * 100


# Kimi-Linear's config.json as its checkpoints publish it (delta-attention layers in a nested linear_attn_config,
# numbered from 1), structural keys as served at
# https://hf.898520.xyz/Firworks/Kimi-Linear-48B-A3B-Instruct-nvfp4/resolve/main/config.json (a mirror of the
# Hugging Face repository; its quantization_config left out). Trusted: transformers 5.24.0 KimiLinearForCausalLM
# built from it on the meta device.
KIMI_LINEAR_48B = {
    "architectures": ["KimiLinearForCausalLM"], "first_k_dense_replace": 1, "head_dim": 72, "hidden_act": "silu",
    "hidden_size": 2304, "intermediate_size": 9216, "kv_lora_rank": 512,
    "linear_attn_config": {"full_attn_layers": [4, 8, 12, 16, 20, 24, 27], "head_dim": 128,
                           "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
                           "num_heads": 32, "short_conv_kernel_size": 4},
    "model_type": "kimi_linear", "moe_intermediate_size": 1024, "moe_layer_freq": 1, "num_attention_heads": 32,
    "num_experts": 256, "num_experts_per_token": 8, "num_hidden_layers": 27, "num_key_value_heads": 32,
    "num_shared_experts": 1, "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "tie_word_embeddings": False, "vocab_size": 163840, "dtype": "bfloat16"}


def test_kimi_linear_as_published_places_its_delta_attention_layers_from_the_nested_config(no_transformers):
    from oomdoctor.archs import shape_from_config

    shape = shape_from_config(KIMI_LINEAR_48B, "kimi-linear-48b", None)
    assert shape.linear_attn_layers == 20 and shape.moe_layer_count == 26
    assert count_params(shape).total == 49_122_675_072


def test_audit_4_holds_35_configs_of_types_new_to_the_corpus_and_to_the_audits_above():
    known = {e["model_type"] for e in MANIFEST["corpus"]}
    known |= {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"]
              for e in AUDIT + AUDIT_2 + AUDIT_3}
    types = {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_4}
    assert len(AUDIT_4) == len(types) == 35 and not types & known
    assert {e["model_type"] for e in AUDIT_4} == types
    for e in AUDIT_4:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0 and e["first_sight"]


def test_audit_4_without_transformers_32_of_35_within_one_percent_and_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_4}
    within = sorted(d for d, (k, _, _) in scored.items() if k == "within")
    # first sight (commit 998cd19): 19 within, 5 refused, 11 off by more than 1% behind the warning
    assert len(within) >= 32, within
    refused = {d: scored[d][1].message.code for d, (k, _, _) in scored.items() if k == "refused"}
    # layer kinds the features cannot count (Dory's "mlp" half-layers, Inkling-2-Loop's "hybrid" ones; both loop
    # over shared weights): one line, exit 2, exact with transformers
    assert refused == {"dory-defaults": "model.refuse.layer_kind",
                       "inkling2-loop-text-defaults": "model.refuse.layer_kind"}
    off = sorted(d for d, (k, _, _) in scored.items() if k == "off")
    # HRM-Text's two stacks of num_layers_per_stack run H_cycles x (L_cycles + 1) times and num_hidden_layers counts
    # the runs: read as that many layers, behind the warning
    assert off == ["hrm-text-defaults"]
    assert all(scored[d][1].shape_confidence == "guessed" and shape_warnings(scored[d][1]) for d in off)


def test_audit_4_readings_of_their_own_count_exactly(no_transformers):
    own = ("gpt_neo", "codegen", "openai-gpt", "biogpt", "xglm", "ctrl", "gpt_neox_japanese", "rwkv", "doge", "cpmant",
           "xlstm", "hy_v4", "inkling_text")
    entries = [e for e in AUDIT_4 if e["model_type"] in own]
    assert len(entries) == len(own)
    for entry in entries:
        kind, shape, error = _score(entry)
        assert (kind, shape.shape_confidence, error) == ("within", "derived", 0.0), entry["dir"]


def test_a_config_without_attention_heads_is_refused_with_how_to_count_it(tmp_path, no_transformers, monkeypatch):
    from oomdoctor import archs

    monkeypatch.delitem(archs._FAMILIES, "rwkv")            # as a recurrent type oomdoctor has no reading of
    with pytest.raises(InputError) as err:
        read_config_json(str(CORPUS / "rwkv-defaults" / "config.json"), "rwkv")
    assert err.value.message.code == "model.refuse.unreadable"


@pytest.mark.simulate
def test_with_transformers_a_config_without_attention_heads_is_counted_exactly(monkeypatch, meta_counts_warm,
                                                                               counted_in_one_child):
    pytest.importorskip("transformers")
    from oomdoctor import archs

    monkeypatch.setenv("OOMDOCTOR_META_TIMEOUT", "600")
    monkeypatch.delitem(archs._FAMILIES, "rwkv")            # as a recurrent type oomdoctor has no reading of
    entry = next(e for e in AUDIT_4 if e["dir"] == "rwkv-defaults")
    shape = read_config_json(str(CORPUS / "rwkv-defaults" / "config.json"), "rwkv")
    assert shape.shape_confidence == "exact" and count_params(shape).total == entry["trusted_params"]
    assert shape.notes[0].code == "model.note.meta_count" and not shape_warnings(shape)


def test_a_config_that_switches_its_experts_off_counts_none(tmp_path, no_transformers):
    cfg = json.loads((CORPUS / "doge-defaults" / "config.json").read_text())
    cfg["model_type"] = "doge_like_new_type"          # no reading of its own: read from its features
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    shape = read_config_json(str(tmp_path / "config.json"), "x")
    assert cfg["is_moe"] is False and cfg["num_experts"] == 16384 and shape.num_experts == 0
    cfg["is_moe"] = True                              # switched on, the experts are read
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert read_config_json(str(tmp_path / "config.json"), "x").num_experts == 16384


# the fifth: real published config.json files (each with its checkpoint index's count), drawn by the rule at the
# top of its section in MANIFEST.yaml; first sight and after in AUDIT.md and docs/shapes.md
AUDIT_5 = MANIFEST["audit_5"]


def test_audit_5_holds_real_published_configs_of_types_or_variants_new_to_the_corpus():
    earlier = MANIFEST["corpus"] + AUDIT + AUDIT_2 + AUDIT_3 + AUDIT_4

    def kind(e):
        cfg = json.loads((CORPUS / e["dir"] / "config.json").read_text())
        return cfg.get("model_type"), (cfg.get("architectures") or [None])[0]

    seen = {kind(e) for e in earlier}
    assert len(AUDIT_5) == 11
    for e in AUDIT_5:
        # a published file at a commit of the repository that mirrors the checkpoint, counted from its index
        assert "@" in e["config_from"] and "index.json" in e["trusted_from"] and e["trusted_params"] > 0
        assert kind(e) not in seen, e["dir"]


def test_audit_5_without_transformers_7_of_11_within_one_percent_and_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_5}
    within = sorted(d for d, (k, _, _) in scored.items() if k == "within")
    # first sight (commit 9238601): 5 within, 1 refused, 3 warned, 2 silently wrong (the classifier +6%,
    # LocateAnything's uncounted vision tower -19%)
    assert len(within) == 7, within
    refused = {d: scored[d][1].message.code for d, (k, _, _) in scored.items() if k == "refused"}
    assert refused == {"xgen-mm-phi3": "model.config.missing_key"}     # a text_config that names no sizes
    off = sorted(d for d, (k, _, _) in scored.items() if k == "off")
    # vision towers that are described by name or by an encoder of their own: counted without them, and said so
    assert off == ["deepseek-ocr2", "lisa-7b", "locateanything-3b"]
    for d in off:
        codes = [n.code for n in shape_warnings(scored[d][1])]
        assert {"model.warn.vision_not_counted", "model.warn.vision_tower_by_name"} & set(codes), (d, codes)


def _llama_cfg(**extra):
    return dict(model_type="llama", hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=4, vocab_size=1000, tie_word_embeddings=False, **extra)


def test_a_sequence_classifier_counts_its_score_head_in_place_of_the_lm_head(tmp_path, no_transformers):
    from oomdoctor.archs import shape_from_config

    causal = count_params(shape_from_config(_llama_cfg(architectures=["LlamaForCausalLM"]), "c", None)).total
    labels = {"0": "bad", "1": "ok", "2": "good"}
    shape = shape_from_config(_llama_cfg(architectures=["LlamaForSequenceClassification"], id2label=labels), "s", None)
    # GenericForSequenceClassification: score = Linear(hidden, num_labels, bias=False), no lm_head
    assert count_params(shape).total == causal - 1000 * 256 + 256 * 3
    assert "model.note.classification_head" in [n.code for n in shape.notes]
    reward = shape_from_config(_llama_cfg(architectures=["LlamaRewardModel"]), "r", None)
    assert count_params(reward).total == causal - 1000 * 256 + 256 + 1


def test_gpt_neox_keys_under_a_type_of_its_own_are_read_as_gpt_neox_behind_the_warning(no_transformers):
    entry = next(e for e in AUDIT_5 if e["dir"] == "oasst-rm-pythia-1.4b")
    kind, shape, error = _score(entry)
    assert kind == "within" and shape.shape_confidence == "guessed" and not shape.gated_mlp
    codes = [n.code for n in shape_warnings(shape)]
    assert codes[:2] == ["model.warn.guessed", "model.warn.how_exact"]
    assert [a.code for a in shape.assumptions] == ["model.assume.kin"]


def test_a_vision_tower_left_out_of_the_count_is_a_warning_on_every_surface(tmp_path, no_transformers, capsys):
    from oomdoctor.cli import DEMO_DIR, main

    src = CORPUS / "locateanything-3b" / "config.json"
    shape = read_config_json(str(src), "locateanything")
    assert shape.shape_confidence == "derived"
    assert [n.code for n in shape_warnings(shape)] == ["model.warn.vision_not_counted"]
    shutil.copy(src, tmp_path / "config.json")
    argv = [str(DEMO_DIR / "train.yaml"), "--model", str(tmp_path), "--gpu", "A100-80GB"]
    main(argv + ["--plain"])
    out = capsys.readouterr().out
    assert "vision tower" in out and "not counted" in out and "--model DIR" in out
    main(argv + ["--plain", "--lang", "zh"])
    assert "未计入该 locateanything 模型的视觉编码器" in capsys.readouterr().out
    main(argv + ["--json"])
    model = json.loads(capsys.readouterr().out)["model"]
    assert [w["code"] for w in model["shape_warnings"]] == ["model.warn.vision_not_counted"]


@pytest.mark.parametrize("name", ["lisa-7b", "logics-thinking"])
def test_a_vision_encoder_named_by_repository_is_a_warning(name, no_transformers):
    # LLaVA's mm_vision_tower (LISA, Logics-Thinking)
    shape = read_config_json(str(CORPUS / name / "config.json"), name)
    assert "model.warn.vision_tower_by_name" in [n.code for n in shape_warnings(shape)]


def test_minicpm_v_counts_the_timm_tower_it_names_and_warns_for_one_it_cannot(tmp_path, no_transformers):
    # MiniCPM-V 2.0 names a timm SigLIP (so400m, 384 px) and builds its resampler in code: both counted, exact
    # against the checkpoint's index; a timm name outside the table is a named tower, warned
    entry = next(e for e in AUDIT_8 if e["dir"] == "minicpm-v-2")
    assert _score(entry)[2] == 0
    cfg = json.loads((CORPUS / "minicpm-v-2" / "config.json").read_text())
    cfg["vision_encoder"] = "eva02_large_patch14_448.mim_m38m_ft_in22k_in1k"
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    shape = read_config_json(str(tmp_path / "config.json"), "minicpmv")
    assert "model.warn.vision_tower_by_name" in [n.code for n in shape_warnings(shape)]


@pytest.mark.simulate
def test_with_transformers_a_class_it_lacks_is_not_counted_as_its_types_class(tmp_path):
    pytest.importorskip("transformers")
    # LISA's model_type is "llava", but its class (LLaVA with a SAM mask decoder) is its own: transformers'
    # LlavaForConditionalGeneration would be another model's count
    shutil.copy(CORPUS / "lisa-7b" / "config.json", tmp_path / "config.json")
    shape = read_config_json(str(tmp_path / "config.json"), "lisa")
    assert shape.shape_confidence == "guessed"
    assert [n.code for n in shape_warnings(shape)][:2] == ["model.warn.guessed", "model.warn.how_exact_remote"]


# the sixth: real published config.json files as ai-dynamo/aiconfigurator vendors them, new model types and
# structural variants, drawn by the rule at the top of its section; first sight and after in AUDIT.md
AUDIT_6 = MANIFEST["audit_6"]


def test_audit_6_holds_23_published_configs_of_new_types_or_structural_variants():
    earlier = MANIFEST["corpus"] + AUDIT + AUDIT_2 + AUDIT_3 + AUDIT_4 + AUDIT_5
    held = {json.loads((CORPUS / e["dir"] / "config.json").read_text()).get("model_type") for e in earlier}
    assert len(AUDIT_6) == 23
    for e in AUDIT_6:
        cfg = json.loads((CORPUS / e["dir"] / "config.json").read_text())
        assert cfg.get("model_type") == e["model_type"] and e["first_sight"] and e["first_sight_with_transformers"]
        assert "aiconfigurator@" in e["config_from"] and "transformers 5.24.0" in e["trusted_from"]
        # a type held before (in the corpus, or kept above) is here only as a variant that states a structural key
        # none of its files stated
        assert (e["model_type"] not in held) == (e["drawn"] == "new model_type"), e["dir"]
        held.add(e["model_type"])


def test_audit_6_without_transformers_22_of_23_within_one_percent_and_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_6}
    within = sorted(d for d, (k, _, _) in scored.items() if k == "within")
    # first sight (commit f4086af): 14 within, 4 refused, 5 off behind a warning, 0 silently wrong
    assert len(within) == 22, within
    off = sorted(d for d, (k, _, _) in scored.items() if k == "off")
    # Step-3.7-Flash: a text-only copy under a type whose transformers class adds a default vision tower
    # (MANIFEST note); read from its features, behind the warning
    assert off == ["step-3.7-flash-fp8"]
    shape = scored["step-3.7-flash-fp8"][1]
    assert shape.shape_confidence == "guessed" and shape_warnings(shape)[0].code == "model.warn.guessed"


@pytest.mark.parametrize("dirname", ["qwen3-vl-2b-instruct", "qwen3-vl-235b-a22b-instruct", "gemma-4-26b-a4b",
                                     "gemma-4-31b-it-nvfp4", "deepseek-v4-flash"])
def test_audit_6_vision_towers_and_legacy_layer_keys_count_exactly(dirname, no_transformers):
    kind, shape, error = _score(next(e for e in AUDIT_6 if e["dir"] == dirname))
    assert (kind, shape.shape_confidence, error) == ("within", "derived", 0.0)
    assert not shape_warnings(shape)


def _moe_cfg(**extra):
    cfg = dict(model_type="brand_new_moe", hidden_size=256, intermediate_size=512, num_hidden_layers=4,
               num_attention_heads=4, num_key_value_heads=4, vocab_size=1000, moe_intermediate_size=128,
               n_routed_experts=8, num_experts_per_tok=2)
    cfg.update(extra)
    return cfg


def test_moe_layer_freq_given_per_layer_places_the_experts_on_the_flagged_layers(no_transformers):
    from oomdoctor.archs import shape_from_config

    listed = shape_from_config(_moe_cfg(moe_layer_freq=[0, 1, 0, 1]), "l", None)
    assert listed.moe_layer_count == 2
    # the same layers named by mlp_layer_types: the same count
    named = shape_from_config(_moe_cfg(mlp_layer_types=["dense", "sparse", "dense", "sparse"]), "n", None)
    assert count_params(listed).total == count_params(named).total
    with pytest.raises(InputError) as err:                   # a list that is not one 0/1 flag per layer
        shape_from_config(_moe_cfg(moe_layer_freq=[0, 1, 1]), "x", None)
    assert err.value.message.code == "model.refuse.experts"


def test_a_latent_moe_counts_its_experts_in_the_latent_width_and_its_two_projections(no_transformers):
    from oomdoctor.archs import shape_from_config

    plain = count_params(shape_from_config(_moe_cfg(first_k_dense_replace=0), "p", None)).total
    latent = count_params(shape_from_config(_moe_cfg(first_k_dense_replace=0, moe_latent_size=64), "q", None)).total
    # per MoE layer: 8 experts x 3 gated matrices of 128 move from 256 wide to 64 wide, plus 256x64 in and 64x256 out
    assert latent - plain == 4 * (8 * 3 * 128 * (64 - 256) + 2 * 256 * 64)


def test_infinity_in_a_config_key_no_size_reads_is_not_an_error(tmp_path, no_transformers):
    text = (CORPUS / "nvidia-nemotron-3-super-120b-a12b-fp8" / "config.json").read_text()
    assert "Infinity" in text
    (tmp_path / "config.json").write_text(text)
    shape = read_config_json(str(tmp_path / "config.json"), "super")
    assert count_params(shape).total == next(e for e in AUDIT_6 if e["dir"] == "nvidia-nemotron-3-super-120b-a12b-fp8"
                                             )["trusted_params"]
    (tmp_path / "config.json").write_text(text.replace('"hidden_size": 4096', '"hidden_size": Infinity'))
    with pytest.raises(InputError):                          # where a size is read, a constant is still refused
        read_config_json(str(tmp_path / "config.json"), "super")


def test_deepseek_v4_keys_under_a_type_of_its_own_are_read_as_deepseek_v4_behind_the_warning(no_transformers):
    kind, shape, error = _score(next(e for e in AUDIT_6 if e["dir"] == "deepseek-v4-flash-fp8"))
    assert kind == "within" and error == 0.0 and shape.shape_confidence == "guessed"
    assert [a.code for a in shape.assumptions] == ["model.assume.kin"]
    assert [n.code for n in shape_warnings(shape)][:2] == ["model.warn.guessed", "model.warn.how_exact"]


def test_gemma4_with_an_audio_tower_keeps_the_vision_warning(tmp_path, no_transformers):
    cfg = json.loads((CORPUS / "gemma-4-26b-a4b" / "config.json").read_text())
    cfg["audio_config"] = {"hidden_size": 1024}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    shape = read_config_json(str(tmp_path / "config.json"), "g")
    assert "model.warn.vision_not_counted" in [n.code for n in shape_warnings(shape)]


# the seventh: real published config.json files of types new to the corpus (encoder-decoders, Whisper, Mllama,
# LLaVA-NeXT-Video, ...), drawn by the rule at the top of its section; first sight and after in AUDIT.md
AUDIT_7 = MANIFEST["audit_7"]


def test_audit_7_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {_file_type(e)
               for section, entries in MANIFEST.items() if section != "audit_7" for e in entries}
    types = [json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_7]
    assert len(AUDIT_7) == 13 and len(set(types)) == 13 and not set(types) & earlier
    assert all(e["trusted_from"].startswith("transformers 5.24.0 on the meta device") for e in AUDIT_7)


def test_audit_7_without_transformers_nothing_is_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_7}
    # every file is within 1%, refused with one line, or counted behind a warning
    for name, (kind, shape, _error) in scored.items():
        assert kind in ("within", "refused") or shape_warnings(shape), name


@pytest.mark.simulate
def test_the_meta_device_count_builds_the_class_the_config_names_not_its_decoder_alone(monkeypatch,
                                                                                       counted_in_one_child):
    pytest.importorskip("transformers")
    from oomdoctor import metacount

    monkeypatch.delenv("OOMDOCTOR_NO_TRANSFORMERS", raising=False)
    # AutoModelForCausalLM maps these types to their decoder alone (BartForCausalLM -37%, PegasusForCausalLM
    # -35%, MarianForCausalLM -25%, MllamaForCausalLM -8.2%): the class the config names is built first
    names = DECODER_ALONE
    configs = [json.loads((CORPUS / n / "config.json").read_text()) for n in names]
    for name, cfg, got in zip(names, configs, metacount.meta_count_many(configs, timeout=600)):
        entry = next(e for e in AUDIT_7 if e["dir"] == name)
        assert (got.params, got.cls) == (entry["trusted_params"], cfg["architectures"][0]), name


def test_audit_7_without_transformers_12_of_13_within_one_percent_and_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_7}
    within = sorted(n for n, (kind, _s, _e) in scored.items() if kind == "within")
    # the BART lineage (bart, marian, pegasus, pegasus_x, m2m_100, whisper) and the T5 family read both halves;
    # LLaVA-NeXT-Video's CLIP tower, projector and image_newline, TrOCR's ViT encoder and Mllama's cross-attention
    # layers and tiled vision tower are counted
    assert within == ["bart-large-cnn-ft", "llama-3.2-11b-vision", "llava-next-video-7b-nf4", "mt5-xl-hunyuandit",
                      "nllb-200-1.3b",
                      "opus-mt-zh-en", "pegasus-autonlp-reuters", "pegasus-x-base-summarization", "t5-11b",
                      "trocr-base-handwritten-ft", "umt5-xxl", "whisper-base"]
    assert all(scored[n][1].shape_confidence == "derived" and scored[n][2] == 0 for n in within)
    # the rest: refused with one line (Cohere Transcribe: NeMo's nested encoder keys)
    assert sorted(n for n, (kind, _s, _e) in scored.items() if kind == "refused") == [
        "cohere-transcribe-arabic"]


# the eighth: 13 real published config.json files of types no section above holds (Qwen2.5-VL, Baichuan2, Molmo,
# Phi-3-vision, TeleChat, SpeechT5, granite-docling, Gemma 4 unified, MOSS, ...), drawn by the rule at the top of its
# section; first sight and after in AUDIT.md
AUDIT_8 = MANIFEST["audit_8"]


def test_audit_8_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {_file_type(e)
               for section, entries in MANIFEST.items() if section != "audit_8" for e in entries}
    types = [json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_8]
    assert len(AUDIT_8) == 13 and len(set(types)) == 13 and not set(types) & earlier
    # every trusted count is the checkpoint's own index or transformers' build of the class the file names
    assert all("index.json" in e["trusted_from"] or "transformers 5.24.0 on the meta device" in e["trusted_from"]
               for e in AUDIT_8)


def test_audit_8_without_transformers_10_of_13_within_one_percent_and_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_8}
    within = sorted(n for n, (kind, _s, _e) in scored.items() if kind == "within")
    # Idefics3's tower and connector, Gemma 4 unified's encoder-free image input on Gemma 4's decoder, Phi-3-vision's
    # CLIP embedder read from img_processor, StableLM's remote-code block: exact; MiniCPM-V's timm tower and
    # resampler on a guessed decoder, MOSS read by CodeGen's block (its n_ctx + rotary_dim), TeleChat: guesses
    assert within == ["baichuan2-13b-chat", "granite-docling-258m", "minicpm-v-2", "moss-moon-003-sft-int8",
                      "phi-2-mlc-phimsft", "phi-3-vision-128k", "qwen2.5-vl-7b-hunyuanimage", "stable-code-3b",
                      "telechat-12b", "vedika-4.1-flash"]
    guesses = ("telechat-12b", "minicpm-v-2", "moss-moon-003-sft-int8")
    assert all(scored[n][2] == 0 and scored[n][1].shape_confidence == "derived" for n in within if n not in guesses)
    assert all(scored[n][1].shape_confidence == "guessed" and shape_warnings(scored[n][1]) for n in guesses)
    assert [n for n, (kind, _s, _e) in scored.items() if kind == "refused"] == ["speecht5-tts-technical"]
    # the rest are counted behind the guessed-shape warning: vision towers their config names or leaves to code
    # (Molmo, Logics-Thinking), Molmo's fused MLP width besides
    for name, (kind, shape, _error) in scored.items():
        assert kind in ("within", "refused") or shape_warnings(shape), name


class _FakeCount:
    def __init__(self, params):
        self.params, self.version, self.cls, self.unknown, self.error, self.seconds = params, "5.24.0", "X", False, "", 0.0


def test_a_reading_that_leaves_a_tower_out_takes_transformers_count_of_the_whole_class(tmp_path, monkeypatch):
    from oomdoctor import metacount

    cfg = json.loads((CORPUS / "granite-docling-258m" / "config.json").read_text())
    cfg["vision_config"]["model_type"] = "some_vision"
    cfg["model_type"] = "llava"                          # a tower of a kind the reading cannot count
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    monkeypatch.setattr(metacount, "meta_count", lambda c, d=None, timeout=None: _FakeCount(None))
    shape = read_config_json(str(tmp_path / "config.json"), "x")
    assert shape.shape_confidence == "derived"
    assert "model.warn.vision_not_counted" in [n.code for n in shape_warnings(shape)]
    monkeypatch.setattr(metacount, "meta_count", lambda c, d=None, timeout=None: _FakeCount(123_456_789))
    # as a config.json and as --model DIR without a checkpoint beside it
    for shape in (read_config_json(str(tmp_path / "config.json"), "x"), resolve_model(str(tmp_path))):
        assert (shape.shape_confidence, count_params(shape).total) == ("exact", 123_456_789)
        assert shape.notes[0].code == "model.note.meta_count" and not shape_warnings(shape)


def test_an_encoder_decoder_without_a_reading_is_refused_unless_transformers_counts_it(monkeypatch, no_transformers):
    from oomdoctor import metacount

    path = str(CORPUS / "speecht5-tts-technical" / "config.json")
    with pytest.raises(InputError) as err:
        read_config_json(path, "speecht5")
    assert err.value.message.code == "model.refuse.unreadable"
    # the decoder's sizes (decoder_layers, decoder_attention_heads) stand in for the figures per layer
    monkeypatch.setattr(metacount, "meta_count", lambda c, d=None, timeout=None: _FakeCount(144_431_684))
    shape = read_config_json(path, "speecht5")
    assert (shape.shape_confidence, count_params(shape).total, shape.num_layers) == ("exact", 144_431_684, 6)


def test_audit_9_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {_file_type(e)
               for section, entries in MANIFEST.items() if section != "audit_9" for e in entries}
    types = [json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_9]
    assert len(AUDIT_9) == 17 and len(set(types)) == 17 and not set(types) & earlier
    assert [e["model_type"] for e in AUDIT_9] == types
    # every file is at a named commit; every trusted count is the checkpoint's own index or transformers' build of
    # the class the file names
    assert all("@" in e["config_from"] for e in AUDIT_9)
    assert all("index.json" in e["trusted_from"] or "transformers 5.24.0 on the meta device" in e["trusted_from"]
               for e in AUDIT_9)
    # stage 2 holds only the bidirectional encoders stage 1's rule leaves out
    assert sorted(e["model_type"] for e in AUDIT_9 if e["drawn"] == "encoder") == [
        "bert", "electra", "roberta", "xlm-roberta"]


def test_audit_9_without_transformers_none_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_9}
    within = sorted(n for n, (kind, _s, _e) in scored.items() if kind == "within")
    # first sight (commit 0c70d11): mbart and blenderbot within (the BART lineage), 2 refused, 13 warned
    assert within == ["blenderbot-400m-distill", "blip-image-captioning-base", "blip2-flan-t5-xl", "distilroberta-base",
                      "electra-small-discriminator",
                      "hunyuandit-text-encoder-bert", "mbart-large-50-mmt", "minimax-m1-beta-o1",
                      "paligemma-3b-pt-224", "t5gemma-crowecode", "xlm-roberta-english-drill", "xlnet-base-cased"]
    # readings of their own (BERT's lineage with the class's head, T5Gemma's two halves, PaliGemma's tower, BLIP's
    # and BLIP-2's ViT, text decoder and Q-Former, XLNet's relative attention) are exact
    assert all(scored[n][2] == 0 and scored[n][1].shape_confidence == "derived"
               for n in within if n != "minimax-m1-beta-o1")
    refused = {n: s.message.code for n, (kind, s, _e) in scored.items() if kind == "refused"}
    # Moondream 3's sizes sit under one `config` key of its remote code; Kosmos-2's text decoder names its sizes
    # as fairseq does (layers, embed_dim): read by neither without transformers
    assert refused == {"moondream3-preview": "model.refuse.unreadable", "kosmos-2-patch14-224": "model.refuse.unreadable"}
    for name, (kind, shape, _error) in scored.items():
        assert kind in ("within", "refused") or shape_warnings(shape), name


# the ninth, continued (audit_9b): the same draw as audit_9 carried on, remote-code families and encoders no section
# holds (CodeT5+, InternVL 2, CodeShell, Ling, MinerU 2, DistilBERT, SigLIP, CLIP, wav2vec 2.0); first sight in AUDIT.md
AUDIT_9B = MANIFEST["audit_9b"]


def test_audit_9b_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {_file_type(e)
               for section, entries in MANIFEST.items() if section != "audit_9b" for e in entries}
    types = [json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_9B]
    assert len(AUDIT_9B) == 10 and len(set(types)) == 10 and not set(types) & earlier
    # every trusted count is the checkpoint's own index or a build of the class the file names (its own code for a
    # remote-code type), on the meta device
    assert all("index.json" in e["trusted_from"] or "transformers 5.24.0" in e["trusted_from"] for e in AUDIT_9B)


def test_audit_9b_without_transformers_nothing_is_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_9B}
    for name, (kind, shape, _error) in scored.items():
        assert kind in ("within", "refused") or shape_warnings(shape), name


def _minimax_cfg(**extra):
    cfg = dict(model_type="minimax", hidden_size=256, intermediate_size=512, num_hidden_layers=4,
               num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=1000, num_local_experts=4,
               num_experts_per_tok=2, block_size=256)
    cfg.update(extra)
    return cfg


def test_minimax_attn_type_list_places_lightning_layers_as_layer_types_does(no_transformers):
    from oomdoctor.archs import shape_from_config

    # transformers' MiniMaxConfig spells the layers' kinds as layer_types; MiniMax-M1's remote code as
    # attn_type_list, 0 for a lightning-attention layer and 1 for softmax attention
    named = shape_from_config(_minimax_cfg(layer_types=["linear_attention", "full_attention"] * 2), "n", None)
    coded = _minimax_cfg(model_type="minimax_m1", attn_type_list=[0, 1, 0, 1])
    del coded["block_size"]                         # the remote config does not state it
    shape = shape_from_config(coded, "c", None)
    assert count_params(shape).total == count_params(named).total
    assert count_params(shape).total != count_params(shape_from_config(
        dict(coded, attn_type_list=[1, 1, 1, 1]), "a", None)).total
    entry = next(e for e in AUDIT_9 if e["dir"] == "minimax-m1-beta-o1")
    kind, shape, error = _score(entry)
    # first sight: -2.13%, every layer read as softmax attention
    assert kind == "within" and abs(error) < 1e-4 and shape.shape_confidence == "guessed"


def test_paligemma_counts_its_siglip_tower_and_projector_exactly(no_transformers):
    entry = next(e for e in AUDIT_9 if e["dir"] == "paligemma-3b-pt-224")
    kind, shape, error = _score(entry)
    # first sight: -14.19%, the tower left out behind model.warn.vision_not_counted; its vision_config has no
    # image_size, SiglipVisionConfig's 224 stands in
    assert (kind, shape.shape_confidence, error) == ("within", "derived", 0.0)
    assert not shape_warnings(shape)


def test_kosmos_2_is_refused_without_transformers_and_counted_exactly_with_it(monkeypatch, no_transformers):
    from oomdoctor import metacount

    path = str(CORPUS / "kosmos-2-patch14-224" / "config.json")
    with pytest.raises(InputError) as err:
        read_config_json(path, "kosmos-2")
    assert err.value.message.code == "model.refuse.unreadable"
    # its text decoder's fairseq names (layers, embed_dim, ffn_dim) stand in for the figures per layer, so that
    # transformers may count it (first sight: refused before the count was tried)
    monkeypatch.setattr(metacount, "meta_count", lambda c, d=None, timeout=None: _FakeCount(1_664_485_376))
    shape = read_config_json(path, "kosmos-2")
    assert (shape.shape_confidence, count_params(shape).total, shape.num_layers) == ("exact", 1_664_485_376, 24)


def test_an_encoder_head_the_reading_does_not_know_is_a_guess_that_transformers_counts(tmp_path, monkeypatch,
                                                                                        no_transformers):
    from oomdoctor import metacount

    bert = json.loads((CORPUS / "hunyuandit-text-encoder-bert" / "config.json").read_text())
    xlnet = json.loads((CORPUS / "xlnet-base-cased" / "config.json").read_text())
    path = tmp_path / "config.json"
    for name, cfg in (("bert", dict(bert, architectures=["BertForSomethingNew"])),
                      ("xlnet", dict(xlnet, architectures=["XLNetForQuestionAnswering"]))):
        path.write_text(json.dumps(cfg))
        shape = read_config_json(str(path), name)
        # counted without the head and said so; where transformers is importable its count replaces the guess
        codes = [n.code for n in shape_warnings(shape)]
        assert shape.shape_confidence == "guessed" and codes[:2] == ["model.warn.guessed", "model.warn.how_exact"]
        assert [a.code for a in shape.assumptions] == ["model.assume.head"]
        with monkeypatch.context() as m:
            m.setattr(metacount, "meta_count", lambda c, d=None, timeout=None: _FakeCount(123_456))
            exact = read_config_json(str(path), name)
        assert (exact.shape_confidence, count_params(exact).total) == ("exact", 123_456)


def test_a_bert_layer_with_cross_attention_counts_its_crossattention_block(no_transformers):
    from oomdoctor.archs import shape_from_config

    cfg = json.loads((CORPUS / "hunyuandit-text-encoder-bert" / "config.json").read_text())
    plain = count_params(shape_from_config(cfg, "b", None))
    crossed = count_params(shape_from_config(dict(cfg, add_cross_attention=True), "c", None))
    h, layers = cfg["hidden_size"], cfg["num_hidden_layers"]
    # BertLayer.crossattention: biased query/key/value/output.dense of hidden_size and a LayerNorm
    assert crossed.total - plain.total == layers * (4 * (h * h + h) + 2 * h)


def test_audit_9b_without_transformers_every_file_within_one_percent(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_9B}
    within = sorted(n for n, (kind, _s, _e) in scored.items() if kind == "within")
    # InternVL's llm_config with its InternViT tower and mlp1; CodeT5+'s encoder beside CodeGen's decoder; DistilBERT,
    # CLIP, SigLIP, wav2vec 2.0 by readings of their own;
    # CodeShell by GPT-2's MLP keys and num_query_groups, MinerU 2 with its named SigLIP tower, Ling: guesses
    assert within == ["clip-vit-large-patch14", "codeshell-7b-chat-int4", "distilbert-hinglish-stress",
                      "flux1-dev-clip-text-encoder", "instructcodet5p-16b", "internvl2-2b-uav", "ling-lite-chat",
                      "mineru2-qwen-0.9b",
                      "siglip-so400m-patch14-384", "wav2vec2-luxembourgish-ctc"]
    exact = ("clip-vit-large-patch14", "distilbert-hinglish-stress", "flux1-dev-clip-text-encoder", "instructcodet5p-16b",
             "internvl2-2b-uav", "siglip-so400m-patch14-384", "wav2vec2-luxembourgish-ctc")
    assert all(scored[n][2] == 0 and scored[n][1].shape_confidence == "derived" for n in exact)
    guesses = [n for n in within if n not in exact]
    assert all(scored[n][1].shape_confidence == "guessed" and shape_warnings(scored[n][1]) for n in guesses)


# the tenth, part one (audit_10a): real published config.json files of types a-l no section holds (part two, m-z, is
# audit_10b); first sight in AUDIT.md and docs/shapes.md
AUDIT_10A = MANIFEST["audit_10a"]


def test_audit_10a_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {_file_type(e) for section, entries in MANIFEST.items() if section != "audit_10a" for e in entries}
    types = [_file_type(e) for e in AUDIT_10A]
    assert len(AUDIT_10A) >= 12 and len(set(types)) == len(AUDIT_10A) and not set(types) & earlier
    assert all(t[0].lower() <= "l" for t in types)
    # every trusted count is the checkpoint's own index or a build of the class the file names (its own code for a
    # remote-code type) on the meta device
    assert all("index.json" in e["trusted_from"] or "transformers 5.24.0" in e["trusted_from"] for e in AUDIT_10A)


def test_audit_10a_without_transformers_nothing_is_silently_wrong(no_transformers):
    for entry in AUDIT_10A:
        kind, shape, _error = _score(entry)
        assert kind in ("within", "refused") or shape_warnings(shape), entry["dir"]


def test_audit_10a_without_transformers_the_files_within_one_percent(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_10A}
    within = sorted(n for n, (kind, _s, _e) in scored.items() if kind == "within")
    # first sight: llada alone (Llama-shaped, a guess); ESM by a reading of its own, Hunyuan-A13B's per-layer expert
    # lists read as one value (first sight: refused), LLaVA-OneVision-1.5 with its RICE-ViT tower (first sight: -3.95%),
    # GLM-ASR's lm_config, Whisper encoder and adapter (first sight: -34.9%)
    assert within == ["esm2-t33-650m", "glm-asr-nano-2512", "hunyuan-a13b", "llada-8b-instruct-hf",
                      "llava-onevision-1.5-8b"]
    assert scored["esm2-t33-650m"][2] == 0 and scored["esm2-t33-650m"][1].shape_confidence == "derived"
    assert scored["hunyuan-a13b"][2] == 0 and scored["hunyuan-a13b"][1].shape_confidence == "guessed"


def test_per_layer_expert_sizes_that_differ_are_refused_not_guessed(no_transformers):
    from oomdoctor.archs import shape_from_config

    cfg = json.loads((CORPUS / "hunyuan-a13b" / "config.json").read_text())
    uniform = count_params(shape_from_config(cfg, "h", None)).total
    scalar = dict(cfg, moe_intermediate_size=3072, moe_topk=8, num_shared_expert=1)
    assert count_params(shape_from_config(scalar, "h", None)).total == uniform
    widths = [3072] * 31 + [1536]
    with pytest.raises(InputError) as err:
        shape_from_config(dict(cfg, moe_intermediate_size=widths), "h", None)
    assert err.value.message.code == "model.refuse.experts"
    # the first moe_layer_num_skipped layers keep the dense MLP (configuration_hunyuan.py)
    skipped = count_params(shape_from_config(dict(scalar, moe_layer_num_skipped=2), "h", None)).total
    h, inter, experts = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_experts"]
    moe_layer = experts * 3 * h * inter + h * experts + 3 * h * inter          # experts, router, shared MLP
    assert uniform - skipped == 2 * (moe_layer - 3 * h * inter)


def test_a_rice_vit_tower_counts_as_its_own_code_builds_it(no_transformers):
    from oomdoctor.archs import shape_from_config

    cfg = json.loads((CORPUS / "llava-onevision-1.5-8b" / "config.json").read_text())
    whole = count_params(shape_from_config(cfg, "ov", None)).total
    text_only = count_params(shape_from_config({k: v for k, v in cfg.items() if k != "vision_config"}, "ov", None)).total
    # its own modeling_llavaonevision1_5.py builds the RICE-ViT tower and merger at 336,479,264: the checkpoint's
    # 8,527,214,624 less Qwen3-8B's decoder (8,190,735,360)
    assert whole - text_only == 336_479_264
    # a wider merge folds four times the patches into one token: the merger's first Linear grows with it
    wider = dict(cfg, vision_config=dict(cfg["vision_config"], spatial_merge_size=4))
    assert count_params(shape_from_config(wider, "ov", None)).total > whole


def test_audit_10b_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"]
               for section, entries in MANIFEST.items() if section not in ("audit_10a", "audit_10b") for e in entries}
    types = [json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_10B]
    assert len(set(types)) == len(AUDIT_10B) >= 6 and not set(types) & earlier
    assert all(t[0].lower() >= "m" for t in types)
    for e in AUDIT_10B:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0
        assert e["first_sight"] and e["first_sight_with_transformers"]


def test_audit_10b_without_transformers_nothing_is_silently_wrong(no_transformers):
    scored = {e["dir"]: _score(e) for e in AUDIT_10B}
    for name, (kind, got, error) in scored.items():
        assert kind in ("within", "refused") or shape_warnings(got), f"{name}: {error:+.2%} without a warning"
    within = [n for n, (k, _, _) in scored.items() if k == "within"]
    # first sight on the untouched last-round main: 4 of 7 within 1%, vibepod and qwen3_omni_moe refused, moonshine
    # warned; now Qwen3-Omni's thinker, towers and talker are read (its code2wav named), VibeVoice's language model
    # is read (its tokenizers and diffusion head named), and Moonshine has a reading of its own
    assert sorted(within) == ["minimax-m3", "moonshine-base", "orion-14b", "plbart-base",
                              "qwen3-omni-30b-a3b-instruct", "smolvlm2-500m-video-instruct"]
    assert [n for n, (k, _, _) in scored.items() if k == "off"] == ["vibevoice-1.5b"]
    assert not [n for n, (k, _, _) in scored.items() if k == "refused"]


def test_an_omni_models_thinker_is_read_as_its_language_model_and_the_rest_is_warned(no_transformers):
    # Qwen3-Omni: the language model is thinker_config.text_config (Qwen3-MoE's decoder), beside the thinker's
    # audio and vision towers and the talker, all read; the waveform decoder (code2wav) is named, not counted
    path = CORPUS / "qwen3-omni-30b-a3b-instruct" / "config.json"
    shape = read_config_json(str(path), "qwen3-omni")
    # transformers 5.24's build of the same file: 35,259,818,545 in all, of which code2wav holds 216,016,577
    assert shape.shape_confidence == "derived" and count_params(shape).total == 35_259_818_545 - 216_016_577
    assert [(n.code, dict(n.values)["parts"]) for n in shape_warnings(shape)] == \
        [("model.warn.parts_not_counted", "code2wav_config")]


def test_a_decoder_config_beside_a_speech_models_tokenizers_is_its_language_model(no_transformers):
    # VibeVoice: language_model = AutoModel.from_config(config.decoder_config) (its modeling_vibevoice.py); the
    # acoustic and semantic tokenizers and the diffusion head beside it are named, not counted
    shape = read_config_json(str(CORPUS / "vibevoice-1.5b" / "config.json"), "vibevoice")
    assert shape.model_type == "qwen2" and shape.hidden_size == 1536 and shape.num_layers == 28
    assert shape.tie_word_embeddings        # decoder_config says so, and VibeVoice's tie_weights follows it
    parts = dict(next(n for n in shape_warnings(shape) if n.code == "model.warn.parts_not_counted").values)["parts"]
    assert parts == "acoustic_tokenizer_config, diffusion_head_config, semantic_tokenizer_config"


def test_a_count_of_the_whole_class_drops_the_parts_warning(monkeypatch):
    from oomdoctor import metacount

    whole = 35_259_818_545              # transformers 5.24: Qwen3OmniMoeForConditionalGeneration, this file
    monkeypatch.setattr(metacount, "meta_count", lambda cfg, directory=None, timeout=None: metacount.MetaCount(
        whole, version="5.24.0", cls="Qwen3OmniMoeForConditionalGeneration"))
    shape = read_config_json(str(CORPUS / "qwen3-omni-30b-a3b-instruct" / "config.json"), "qwen3-omni")
    assert shape.shape_confidence == "exact" and count_params(shape).total == whole
    assert not shape_warnings(shape)


def test_a_checkpoint_index_counts_the_parts_a_reading_leaves_out(tmp_path, no_transformers):
    shutil.copy(CORPUS / "vibevoice-1.5b" / "config.json", tmp_path / "config.json")     # torch_dtype bfloat16
    total = 2_704_021_985
    index = {"metadata": {"total_size": 2 * total}, "weight_map": {"model.language_model.embed_tokens.weight": "a"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    shape = resolve_model(str(tmp_path))
    assert count_params(shape).total == total and not shape_warnings(shape)


def test_parts_left_out_are_warned_in_every_surface(tmp_path, no_transformers, capsys):
    from oomdoctor.cli import DEMO_DIR, main

    shutil.copy(CORPUS / "vibevoice-1.5b" / "config.json", tmp_path / "config.json")
    argv = [str(DEMO_DIR / "train.yaml"), "--model", str(tmp_path), "--gpu", "A100-80GB"]
    main(argv + ["--plain"])
    out = " ".join(capsys.readouterr().out.split())
    assert "also describes acoustic_tokenizer_config, diffusion_head_config, semantic_tokenizer_config" in out
    main(argv + ["--plain", "--lang", "zh"])
    assert "还描述了" in capsys.readouterr().out
    main(argv + ["--json"])
    model = json.loads(capsys.readouterr().out)["model"]
    assert [w["code"] for w in model["shape_warnings"]] == ["model.warn.parts_not_counted"]


# the tenth, part three (audit_10c): the same walk continued, any first letter; first sight in AUDIT.md and
# docs/shapes.md
AUDIT_10C = MANIFEST["audit_10c"]


def test_audit_10c_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {json.loads((CORPUS / e["dir"] / "config.json").read_text()).get("model_type")
               for section, entries in MANIFEST.items() if not section.startswith("audit_10") for e in entries}
    parts = [e for section in ("audit_10a", "audit_10b", "audit_10c") for e in MANIFEST[section]]
    types = [e["model_type"] for e in parts]
    assert all(json.loads((CORPUS / e["dir"] / "config.json").read_text()).get("model_type", e["model_type"])
               == e["model_type"] for e in parts)
    # one first-sight audit of at least 20 files, one file per type, none of a type an earlier section holds
    assert len(set(types)) == len(parts) >= 20 and not set(types) & earlier
    for e in AUDIT_10C:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0
        assert e["first_sight"] and e["first_sight_with_transformers"]


def test_audit_10c_without_transformers_nothing_is_silently_wrong(no_transformers):
    for e in AUDIT_10C:
        kind, got, error = _score(e)
        assert kind in ("within", "refused") or shape_warnings(got), f"{e['dir']}: {error:+.2%} without a warning"


def _refusal(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        read_config_json(str(path), "m")
    return caught.value


def test_a_refusal_without_transformers_offers_only_what_would_work(no_transformers):
    # MobileViT states no hidden_size: no layer can be read, and nothing here can count it. Neither a checkpoint
    # (read after config.json) nor transformers' count (a total) gives the layer sizes: the line sends the user to
    # neither, only to a model of the same layout
    err = _refusal(CORPUS / "deeplabv3-mobilevit-small" / "config.json")
    assert err.message.code == "model.refuse.unreadable"
    en, zh = err.render("en"), err.render("zh")
    assert "run where transformers" not in en and "--model DIR with the checkpoint" not in en
    assert "pass --model with a model of the same layout" in en and "结构相同的模型" in zh and "\n" not in en


def test_a_refusal_where_transformers_counts_the_type_says_so_instead(monkeypatch):
    # where transformers is importable and counts the type, "run where transformers knows it" would be false: the
    # count is tried before the refusal is shown, and the line says what it counted and what is still unread
    from oomdoctor import metacount

    monkeypatch.setattr(metacount, "meta_count", lambda cfg, directory=None, timeout=None: metacount.MetaCount(
        6_357_170, version="5.24.0", cls="MobileViTForSemanticSegmentation"))
    err = _refusal(CORPUS / "deeplabv3-mobilevit-small" / "config.json")
    assert err.message.code == "model.refuse.known_unread" and err.exit_code == 2
    en, zh = err.render("en"), err.render("zh")
    assert "run where transformers" not in en and "MobileViTForSemanticSegmentation: 6,357,170 parameters" in en
    assert "same layout" in en
    assert "lacks hidden_size" in en and "6,357,170 个参数" in zh and "认识" not in zh


def test_a_refusal_where_transformers_does_not_know_the_type_keeps_its_advice(monkeypatch):
    from oomdoctor import metacount

    monkeypatch.setattr(metacount, "meta_count", lambda cfg, directory=None, timeout=None: metacount.MetaCount(
        None, version="5.24.0", unknown=True))
    err = _refusal(CORPUS / "deeplabv3-mobilevit-small" / "config.json")
    assert err.message.code == "model.refuse.unreadable" and "same layout" in err.render("en")


def test_glm_asr_reads_its_lm_config_whisper_encoder_and_adapter(no_transformers):
    # GLM-ASR's modeling_glmasr.py: LlamaForCausalLM over lm_config, a Whisper encoder whose final layer_norm is
    # nn.Identity, a LayerNorm, then Linear(d_model x merge_factor -> 2h) and Linear(2h -> h); its own code built on
    # the meta device gives 2,259,763,200
    from oomdoctor.archs import shape_from_config

    path = CORPUS / "glm-asr-nano-2512" / "config.json"
    shape = read_config_json(str(path), "glm-asr")
    assert shape.model_type == "llama" and shape.hidden_size == 2048 and not shape.tie_word_embeddings
    assert shape.shape_confidence == "derived" and count_params(shape).total == 2_259_763_200
    assert not shape_warnings(shape)
    cfg = json.loads(path.read_text())
    # a wider merge folds more frames into one token: only the adapter's first Linear grows (d_model 1280, 2h 4096)
    wider = shape_from_config(dict(cfg, merge_factor=8), "g", None)
    assert count_params(wider).total - 2_259_763_200 == 4 * 1280 * 4096
    # an adapter kind that code does not build is named, not guessed
    other = shape_from_config(dict(cfg, adapter_type="conv"), "g", None)
    assert [dict(n.values)["parts"] for n in other.notes if n.code == "model.warn.parts_not_counted"] == \
        ["whisper_config"]


def test_videollama3_reads_a_qwen2_decoder_its_vision_encoder_and_projector(no_transformers):
    # VideoLLaMA3 (Videollama3Qwen2ForCausalLM(Qwen2ForCausalLM)): the checkpoint index beside this file holds
    # 16,089,489,888 bytes of bfloat16, 8,044,744,944 parameters
    from oomdoctor.archs import shape_from_config

    path = CORPUS / "videollama3-cogstream-7b" / "config.json"
    shape = read_config_json(str(path), "videollama3")
    assert shape.shape_confidence == "derived" and shape.attention_bias      # Qwen2's biased q/k/v
    assert count_params(shape).total == 8_044_744_944 and not shape_warnings(shape)
    cfg = json.loads(path.read_text())
    # "linear": one Linear from the encoder's width (1152) to the decoder's (3584) instead of mlp2x_gelu's two
    linear = shape_from_config(dict(cfg, mm_projector_type="linear"), "v", None)
    assert 8_044_744_944 - count_params(linear).total == 3584 * 3584 + 3584
    # a projector kind its code does not build: the encoder is named, not guessed
    odd = shape_from_config(dict(cfg, mm_projector_type="qformer"), "v", None)
    assert [dict(n.values)["parts"] for n in odd.notes if n.code == "model.warn.parts_not_counted"] == \
        ["vision_encoder_config"]


def test_florence2s_text_config_is_read_as_bart_and_its_tower_warned(no_transformers):
    # Florence-2's language model is BART's (transformers 5.24's build of this file: language_model 140,206,848 of
    # 231,414,016); the DaViT tower is not read, and the warning says so
    shape = read_config_json(str(CORPUS / "florence-2-base" / "config.json"), "florence-2")
    assert shape.model_type == "bart" and count_params(shape).total == 140_206_848
    assert [n.code for n in shape_warnings(shape)] == ["model.warn.vision_not_counted"]


# the eleventh (audit_11): real published config.json files of types no section holds, drawn by the staged rule at the
# top of its MANIFEST section; first sight in AUDIT.md and docs/shapes.md
AUDIT_11 = MANIFEST["audit_11"]


def test_audit_11_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {_file_type(e) for section, entries in MANIFEST.items() if section != "audit_11" for e in entries}
    types = [json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_11]
    assert types == [e["model_type"] for e in AUDIT_11]
    assert len(set(types)) == len(AUDIT_11) and not set(types) & earlier
    for e in AUDIT_11:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0
        assert e["first_sight"] and e["first_sight_with_transformers"]


def test_audit_11_without_transformers_nothing_is_silently_wrong(no_transformers):
    for e in AUDIT_11:
        kind, got, error = _score(e)
        assert kind in ("within", "refused") or shape_warnings(got), f"{e['dir']}: {error:+.2%} without a warning"


def test_audit_11_the_six_encoders_are_read_exactly_without_transformers(no_transformers):
    # ALBERT, DeBERTa-v3, LayoutLM, ERNIE, CANINE and MPNet: readings of their own, equal to transformers' build of each file
    exact = {e["dir"]: e["trusted_params"] for e in AUDIT_11
             if e["model_type"] in ("albert", "deberta-v2", "layoutlm", "ernie", "canine", "mpnet")}
    assert len(exact) == 6
    for name, trusted in exact.items():
        shape = read_config_json(str(CORPUS / name / "config.json"), name)
        assert shape.shape_confidence == "derived" and not shape_warnings(shape)
        assert count_params(shape).total == trusted, name


def test_albert_counts_one_copy_of_each_shared_layer_but_every_pass_for_activations(no_transformers):
    from oomdoctor.archs import shape_from_config

    cfg = json.loads((CORPUS / "albert-instagram-sentiment" / "config.json").read_text())
    one = shape_from_config(cfg, "a", None)
    # twelve passes of one shared layer: as many layers for the activations, one layer's weights
    assert one.num_layers == 12
    deeper = shape_from_config(dict(cfg, num_hidden_layers=24), "a", None)
    assert count_params(deeper).total == count_params(one).total
    # two groups hold two layers' weights (AlbertTransformer: num_hidden_groups AlbertLayerGroups)
    two = shape_from_config(dict(cfg, num_hidden_groups=2), "a", None)
    assert count_params(two).total - count_params(one).total == 7_087_872


# the twelfth (audit_12): real published config.json files of types no section holds, drawn by the staged rule at the
# top of its MANIFEST section (transformers' known types less the held ones); first sight in AUDIT.md and
# docs/shapes.md
AUDIT_12 = MANIFEST["audit_12"]


def test_audit_12_holds_real_published_configs_of_types_new_to_every_earlier_section():
    earlier = {_file_type(e) for section, entries in MANIFEST.items() if section != "audit_12" for e in entries}
    types = [json.loads((CORPUS / e["dir"] / "config.json").read_text())["model_type"] for e in AUDIT_12]
    assert types == [e["model_type"] for e in AUDIT_12]
    assert len(set(types)) == len(AUDIT_12) and not set(types) & earlier
    for e in AUDIT_12:
        assert e["config_from"] and e["trusted_from"] and e["trusted_params"] > 0
        assert e["first_sight"] and e["first_sight_with_transformers"]


def test_audit_12_without_transformers_nothing_is_silently_wrong(no_transformers):
    for e in AUDIT_12:
        kind, got, error = _score(e)
        assert kind in ("within", "refused") or shape_warnings(got), f"{e['dir']}: {error:+.2%} without a warning"


def test_audit_12_mobilebert_and_camembert_are_read_exactly_and_gemma3n_warns_of_its_timm_tower(no_transformers):
    for e in AUDIT_12:
        kind, got, _ = _score(e)
        if e["model_type"] == "gemma3n":
            # first sight: refused (model.refuse.unreadable). Now its language model, audio tower and both embedders
            # are read (modeling_gemma3n.py); the MobileNetV5 vision tower timm builds from its name is not described
            # by the config: named in the one warning, the total low by that tower (~315M, 5.8%)
            assert kind == "off" and got.shape_confidence == "derived"
            assert [w.code for w in shape_warnings(got)] == ["model.warn.vision_tower_by_name"]
            assert "mobilenetv5_300m_enc" in dict(shape_warnings(got)[0].values)["tower"]
            assert 0.93 * e["trusted_params"] < count_params(got).total < e["trusted_params"]
        else:
            assert kind == "within", e["dir"]
            assert got.shape_confidence == "derived" and not shape_warnings(got)
            assert count_params(got).total == e["trusted_params"]


def test_gemma3n_per_layer_widths_of_the_wrong_length_refuse_in_one_line_naming_the_file(tmp_path, no_transformers):
    # Gemma3nTextConfig.__post_init__: one intermediate_size for all layers, or exactly one per layer
    cfg = json.loads((CORPUS / "gemma3n-text-defaults" / "config.json").read_text())
    cfg["intermediate_size"] = [16384] * (cfg["num_hidden_layers"] - 1)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg, indent=2))
    with pytest.raises(InputError) as err:
        read_config_json(str(path), "g")
    assert err.value.message.code == "model.config.bad_layer_list" and "\n" not in str(err.value)
    assert "intermediate_size" in str(err.value) and str(path) in str(err.value)
