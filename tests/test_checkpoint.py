"""Exact shapes from a checkpoint's safetensors headers: counts, tying, naming schemes, quantized storage,
buffers, and bad files. The checkpoints are headers without data (tests/data/checkpoints/make_fixtures.py);
each folder's expected.json holds the count its tensors add up to."""
from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from oomdoctor.checkpoint import MAX_HEADER_BYTES, read_header
from oomdoctor.errors import InputError
from oomdoctor.facts import TrainingSetup
from oomdoctor.memory import count_params
from oomdoctor.memory.params import lora_params, unmatched_targets
from oomdoctor.models import read_config_json, resolve_model

FIXTURES = Path(__file__).parent / "data" / "checkpoints"
SCHEMES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", SCHEMES)
def test_header_gives_the_exact_count(name):
    expected = json.loads((FIXTURES / name / "expected.json").read_text())
    shape = resolve_model(str(FIXTURES / name))
    assert shape.source_kind == "checkpoint" and shape.source_path == str(FIXTURES / name)
    assert count_params(shape).total == expected["params"]
    if "tied" in expected:
        assert shape.tie_word_embeddings is expected["tied"]
    if "quant" in expected:
        assert (shape.quant_method, shape.quant_bits) == (expected["quant"], expected["bits"])
    if "vocab" in expected:
        assert shape.vocab_size == expected["vocab"]


def test_header_count_differs_from_the_config_formula_where_the_checkpoint_differs():
    # the resized vocabulary is only in the tensors: config.json alone says 512
    folder = FIXTURES / "llama-resized-vocab"
    from_config = read_config_json(str(folder / "config.json"), "x")
    from_checkpoint = resolve_model(str(folder))
    assert from_config.vocab_size == 512 and from_checkpoint.vocab_size == 520
    assert count_params(from_checkpoint).total - count_params(from_config).total == 2 * 8 * 64


def test_no_head_tensor_means_tied_and_a_stored_head_of_a_tying_model_is_counted_once():
    tied = resolve_model(str(FIXTURES / "llama-tied"))
    assert tied.tie_word_embeddings and count_params(tied).lm_head == 0
    falcon = resolve_model(str(FIXTURES / "falcon-query_key_value"))
    assert falcon.tie_word_embeddings
    assert any(n.code == "model.note.tied_head_stored" for n in falcon.notes)


def test_buffers_stored_in_a_checkpoint_are_not_parameters():
    gpt2 = resolve_model(str(FIXTURES / "gpt2-conv1d"))
    tensors = read_header(str(FIXTURES / "gpt2-conv1d" / "model.safetensors"))
    assert "h.0.attn.bias" in tensors and tensors["h.0.attn.bias"][1] == (1, 1, 128, 128)
    assert count_params(gpt2).total == json.loads((FIXTURES / "gpt2-conv1d" / "expected.json").read_text())["params"]
    # Conv1D stores [in, out]: c_attn maps 64 -> 192
    c_attn = next(m for m in gpt2.dense_linears if m.name == "attn.c_attn")
    assert (c_attn.in_features, c_attn.out_features, c_attn.bias) == (64, 192, True)


@pytest.mark.parametrize("scheme,targets,modules", [
    ("qwen1-c_attn", ("c_attn",), ["attn.c_attn"]),
    ("qwen1-c_attn", ("c_proj",), ["attn.c_proj", "mlp.c_proj"]),          # PEFT's suffix rule takes both
    ("baichuan-w_pack", ("W_pack",), ["self_attn.W_pack"]),
    ("falcon-query_key_value", ("query_key_value",), ["self_attention.query_key_value"]),
    ("internlm2-wqkv", ("wqkv", "wo"), ["attention.wqkv", "attention.wo"]),
    ("chatglm-query_key_value", ("query_key_value", "dense_h_to_4h"),
     ["self_attention.query_key_value", "mlp.dense_h_to_4h"]),
    ("llama-tied", ("q_proj", "v_proj"), ["self_attn.q_proj", "self_attn.v_proj"]),
    ("mixtral-experts", ("w1",), ["block_sparse_moe.experts.*.w1"]),
    ("gpt2-conv1d", ("c_attn",), ["attn.c_attn"]),
])
def test_lora_targets_match_the_modules_the_checkpoint_has(scheme, targets, modules):
    from oomdoctor.memory.params import layer_linears, matched_linears

    shape = resolve_model(str(FIXTURES / scheme))
    dense, moe = layer_linears(shape)
    got = [m.name for m in matched_linears(targets, tuple(dense or moe))]
    assert sorted(got) == sorted(modules)


def test_lora_count_on_a_checkpoint_is_rank_times_in_plus_out_per_module():
    shape = resolve_model(str(FIXTURES / "qwen1-c_attn"))
    setup = TrainingSetup(method="lora", lora_rank=4, lora_targets=("c_attn",))
    assert lora_params(setup, shape) == 2 * 4 * (64 + 192)
    # all linear: c_attn, attn.c_proj, w1, w2, mlp.c_proj
    every = TrainingSetup(method="lora", lora_rank=4, lora_targets=("all",))
    assert lora_params(every, shape) == 2 * 4 * ((64 + 192) + (64 + 64) + 2 * (64 + 160) + (160 + 64))
    dora = TrainingSetup(method="lora", lora_rank=4, lora_targets=("c_attn",), use_dora=True)
    assert lora_params(dora, shape) == 2 * (4 * (64 + 192) + 192)


def test_a_target_the_model_lacks_is_reported_for_peft_frameworks_only():
    shape = resolve_model(str(FIXTURES / "qwen1-c_attn"))
    hf = TrainingSetup(framework="llamafactory", method="lora", lora_targets=("q_proj", "v_proj"))
    assert unmatched_targets(hf, shape) == ("q_proj", "v_proj")
    tune = TrainingSetup(framework="torchtune", method="lora", lora_targets=("q_proj", "v_proj"))
    assert unmatched_targets(tune, shape) == ()
    # the estimate still counts what the name stands for (the fused attention input)
    assert lora_params(hf, shape) > 0


def test_quantized_fused_experts_are_not_lora_targets():
    shape = resolve_model(str(FIXTURES / "gpt-oss-mxfp4"))
    everything = TrainingSetup(method="lora", lora_rank=2, lora_targets=("all-linear",))
    experts = [m for m in shape.moe_linears if "experts" in m.name]
    assert experts and not any(m.peft for m in experts)
    # attention q/k/v/o and the router only
    per_layer = 2 * ((64 + 64) + 2 * (64 + 32) + (64 + 64) + (64 + 4))
    assert lora_params(everything, shape) == 2 * per_layer


def test_only_the_index_present_gives_the_count_from_total_size(tmp_path):
    src = FIXTURES / "llama-sharded-untied"
    for f in ("config.json", "model.safetensors.index.json"):
        shutil.copy(src / f, tmp_path / f)
    (tmp_path / "model-00001-of-00003.safetensors").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 123\n")
    shape = resolve_model(str(tmp_path))
    codes = [n.code for n in shape.notes]
    assert "model.note.shard_unreadable" in codes and "model.note.shards_missing" in codes
    expected = json.loads((src / "expected.json").read_text())["params"]
    # total_size also holds the two layers' rotary inv_freq buffers (8 fp32 each = 64 bytes = 32 "parameters")
    assert 0 <= count_params(shape).total - expected <= 32 and shape.source_kind == "checkpoint"


def _write_header(path: Path, header: bytes, declared: int | None = None) -> None:
    path.write_bytes(struct.pack("<Q", len(header) if declared is None else declared) + header)


@pytest.mark.parametrize("header,declared,fragment,zh", [
    (b"{}", MAX_HEADER_BYTES + 1, "larger than", "超过允许的"),
    (b'{"a": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}}', 4096, "cut at", "safetensors 文件头：只有 65 字节，应有 4,096 字节"),
    (b"[1, 2, 3]", None, "not a JSON object", "safetensors 文件头：不是 JSON 对象"),
    (b'{"a": {"dtype": "BF16", "shape": [-1], "data_offsets": [0, 0]}}', None, "bad shape", "条目 'a' 的 shape 无效"),
    (b'{"a": {"dtype": "Q7", "shape": [2], "data_offsets": [0, 0]}}', None, "dtype", "条目 'a' 的 dtype 是 'Q7'"),
    (b'{"a": {"dtype": "BF16"}}', None, "no dtype and shape", "条目 'a' 缺少 dtype 和 shape"),
    (b"\xff\xfe{}", None, "not UTF-8", "safetensors 文件头：不是 UTF-8 文本"),
])
def test_a_bad_safetensors_header_is_an_input_error_naming_the_file(tmp_path, header, declared, fragment, zh):
    shutil.copy(FIXTURES / "llama-tied" / "config.json", tmp_path / "config.json")
    _write_header(tmp_path / "model.safetensors", header, declared)
    with pytest.raises(InputError) as err:
        resolve_model(str(tmp_path))
    assert err.value.path == str(tmp_path / "model.safetensors") and fragment in str(err.value)
    assert zh in err.value.render("zh")


def test_the_header_reader_reads_no_tensor_data(tmp_path, monkeypatch):
    # a header followed by 64 MiB of "data": only 8 + header bytes are read
    src = (FIXTURES / "llama-tied" / "model.safetensors").read_bytes()
    big = tmp_path / "model.safetensors"
    with open(big, "wb") as f:
        f.write(src)
        f.truncate(len(src) + (64 << 20))
    import builtins

    sizes = []
    real_open = builtins.open

    class Spy:
        def __init__(self, f):
            self.f = f

        def read(self, n=-1):
            data = self.f.read(n)
            sizes.append(len(data))
            return data

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

    monkeypatch.setattr(builtins, "open", lambda p, m="r", *a, **k: Spy(real_open(p, m, *a, **k)) if p == str(big) else real_open(p, m, *a, **k))
    read_header(str(big))
    assert sum(sizes) == len(src)


def test_a_hybrid_checkpoint_keeps_the_configs_two_kinds_of_layer(tmp_path):
    # Qwen3.5 (text): layers 0-2 Gated DeltaNet, layer 3 gated full attention. The header's layer 0 is a
    # linear-attention layer; the shape keeps the config's lists, so counts and LoRA stay those of both kinds
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import warnings

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=4, num_attention_heads=4,
               num_key_value_heads=2, head_dim=16, vocab_size=256, linear_num_key_heads=2, linear_num_value_heads=4,
               linear_key_head_dim=8, linear_value_head_dim=12, linear_conv_kernel_dim=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(AutoConfig.for_model("qwen3_5_text", **cfg))
    header, offset = {}, 0
    for name, p in model.named_parameters():
        header[name] = {"dtype": "BF16", "shape": list(p.shape), "data_offsets": [offset, offset + 2 * p.numel()]}
        offset += 2 * p.numel()
    _write_header(tmp_path / "model.safetensors", json.dumps(header).encode())
    (tmp_path / "config.json").write_text(json.dumps(dict(cfg, model_type="qwen3_5_text")))
    from_config = read_config_json(str(tmp_path / "config.json"), "x")
    shape = resolve_model(str(tmp_path))
    assert shape.source_kind == "checkpoint" and shape.linear_attn_layers == 3
    assert count_params(shape).total == sum(p.numel() for p in model.parameters()) == count_params(from_config).total
    assert shape.dense_linears == from_config.dense_linears
    every = TrainingSetup(method="lora", lora_rank=2, lora_targets=("all-linear",))
    assert lora_params(every, shape) == lora_params(every, from_config)
    # in_proj_qkv is a name of this model; o_proj is matched in the one full-attention layer only
    hf = TrainingSetup(framework="llamafactory", method="lora", lora_rank=2, lora_targets=("in_proj_qkv", "o_proj"))
    assert unmatched_targets(hf, shape) == ()
    assert lora_params(hf, shape) == 3 * 2 * (64 + 2 * 16 + 48) + 2 * (64 + 64)
