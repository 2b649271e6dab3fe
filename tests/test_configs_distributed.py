"""Distributed details read right: DeepSpeed's batch rule, checkpointing and fused losses that live in
other keys, offload DeepSpeed ignores, sequence/context parallelism, and the accelerate-pair note."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomdoctor.configs import combine, load_config
from oomdoctor.pipeline import Options, build_report
from oomdoctor.words import say

DATA = Path(__file__).parent / "data" / "configs"
DEMO = Path(__file__).parents[1] / "oomdoctor" / "data" / "demo" / "train.yaml"


def _write(tmp_path, name, text) -> str:
    p = tmp_path / name
    p.write_text(text if isinstance(text, str) else json.dumps(text, indent=2))
    return str(p)


def _codes(setup) -> list[str]:
    return [w.code for w in setup.warnings]


# ---------------------------------------------------------------- DeepSpeed

def test_deepspeed_json_alone_derives_accumulation_from_train_batch_size(tmp_path):
    path = _write(tmp_path, "ds.json", {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 8,
                                        "zero_optimization": {"stage": 2}})
    s = load_config(path)
    assert (s.micro_batch, s.grad_accum, s.n_gpus, s.zero_stage) == (8, 4, 1, 2)
    assert s.sources["grad_accum"].key == "train_batch_size"
    assert "config.ds_accum_derived" in _codes(s)


def test_deepspeed_json_with_all_three_batch_keys_gives_the_world_size(tmp_path):
    path = _write(tmp_path, "ds.json", {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4,
                                        "gradient_accumulation_steps": 2, "zero_optimization": {"stage": 3}})
    s = load_config(path)
    assert (s.micro_batch, s.grad_accum, s.n_gpus) == (4, 2, 8)
    assert s.sources["n_gpus"].key == "train_batch_size"


def test_deepspeed_batch_keys_that_cannot_multiply_out_are_refused(tmp_path):
    from oomdoctor.errors import InputError

    path = _write(tmp_path, "ds.json", {"train_batch_size": 30, "train_micro_batch_size_per_gpu": 8,
                                        "zero_optimization": {"stage": 2}})
    with pytest.raises(InputError) as err:
        load_config(path)
    assert err.value.message.code == "config.ds_batch_mismatch" and err.value.line == 2


@pytest.mark.parametrize("stage", [1, 2])
def test_offload_param_below_zero3_is_ignored_and_the_setup_says_so(tmp_path, stage):
    path = _write(tmp_path, "ds.json", {"zero_optimization": {"stage": stage, "offload_param": {"device": "cpu"},
                                                              "offload_optimizer": {"device": "cpu"}}})
    s = load_config(path)
    assert s.offload_params is False and s.offload_optimizer is True
    assert say(s.sources["offload_params"].describe()) == \
        f"{path}:5 (zero_optimization.offload_param.device): DeepSpeed ignores offload_param below ZeRO-3"
    note = next(w for w in s.warnings if w.code == "config.ds_offload_param_ignored")
    assert f"at stage {stage}" in say(note) and path in say(note)


def test_offload_param_at_zero3_is_kept(tmp_path):
    path = _write(tmp_path, "ds.json", {"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}})
    s = load_config(path)
    assert s.offload_params is True and "config.ds_offload_param_ignored" not in _codes(s)


# ---------------------------------------------------------------- axolotl

def test_axolotl_fsdp_activation_checkpointing_is_checkpointing(tmp_path):
    for key in ("fsdp_activation_checkpointing", "activation_checkpointing"):
        path = _write(tmp_path, f"{key}.yml", f"base_model: NousResearch/Llama-2-7b-hf\nfsdp_version: 2\n"
                      f"fsdp_config:\n  {key}: true\n  reshard_after_forward: true\n")
        s = load_config(path)
        assert s.grad_ckpt is True and s.sources["grad_ckpt"].key == f"fsdp_config.{key}"
        assert s.fsdp == "full_shard"
        # accelerate wraps each layer in torch's checkpoint_wrapper: non-reentrant, whatever axolotl's default
        assert s.mechanisms.use_reentrant is False


def test_axolotl_fsdp_checkpointing_keeps_a_stated_use_reentrant(tmp_path):
    path = _write(tmp_path, "stated.yml", "base_model: NousResearch/Llama-2-7b-hf\nfsdp_version: 2\n"
                  "fsdp_config:\n  activation_checkpointing: true\ngradient_checkpointing_kwargs:\n  use_reentrant: true\n")
    assert load_config(path).mechanisms.use_reentrant is True
    plain = _write(tmp_path, "plain.yml", "base_model: NousResearch/Llama-2-7b-hf\ngradient_checkpointing: true\n")
    assert load_config(plain).mechanisms.use_reentrant is None


def test_axolotl_quantize_moe_experts_is_a_mechanism(tmp_path):
    text = "base_model: zai-org/GLM-4.7-Flash\nadapter: qlora\nload_in_4bit: true\n"
    on = load_config(_write(tmp_path, "on.yml", text + "quantize_moe_experts: true\n"))
    off = load_config(_write(tmp_path, "off.yml", text))
    assert on.mechanisms.experts_quantized_on_load and not off.mechanisms.experts_quantized_on_load


def test_axolotl_cut_cross_entropy_plugin_is_a_fused_loss(tmp_path):
    text = ("base_model: Qwen/Qwen2.5-7B\nplugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n"
            "sequence_len: 8192\n")
    s = load_config(_write(tmp_path, "cce.yml", text))
    assert s.fused_ce is True and s.sources["fused_ce"].key == "plugins"
    off = load_config(_write(tmp_path, "cce_off.yml", text + "cut_cross_entropy: false\n"))
    assert off.fused_ce is False


def test_axolotl_liger_fused_linear_cross_entropy_is_a_fused_loss(tmp_path):
    text = ("base_model: Qwen/Qwen2.5-7B\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
            "liger_fused_linear_cross_entropy: true\n")
    assert load_config(_write(tmp_path, "liger.yml", text)).fused_ce is True


# ---------------------------------------------------------------- sequence / context parallelism

@pytest.mark.parametrize("text,key,expect", [
    ("base_model: m\nsequence_parallel_degree: 4\n", "sequence_parallel_degree", 4),
    ("base_model: m\ncontext_parallel_size: 8\n", "context_parallel_size", 8),
])
def test_axolotl_sequence_parallel_degree_splits_each_sequence(tmp_path, text, key, expect):
    s = load_config(_write(tmp_path, "sp.yml", text))
    assert s.seq_parallel == expect and s.sources["seq_parallel"].key == key


def test_torchtune_context_parallel_dim_splits_each_sequence(tmp_path):
    text = ("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nbatch_size: 1\n"
            "tokenizer:\n  max_seq_len: 131072\ncontext_parallel_dim: 4\nfsdp_cpu_offload: false\n")
    s = load_config(_write(tmp_path, "cp.yaml", text))
    assert (s.seq_parallel, s.seq_len) == (4, 131072)


def test_accelerate_parallelism_config_splits_each_sequence_and_combines(tmp_path):
    acc = _write(tmp_path, "acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_processes: 8\n"
                 "fsdp_config:\n  fsdp_version: 2\nparallelism_config:\n  parallelism_config_dp_shard_size: 2\n"
                 "  parallelism_config_cp_size: 4\n")
    a = load_config(acc)
    assert a.seq_parallel == 4 and a.sources["seq_parallel"].key == "parallelism_config.parallelism_config_cp_size"
    run = combine(load_config(str(DEMO)), a)
    assert (run.seq_parallel, run.n_gpus, run.fsdp) == (4, 8, "full_shard")


def test_no_parallelism_key_means_one_gpu_per_sequence():
    assert load_config(str(DEMO)).seq_parallel == 1


# ---------------------------------------------------------------- the accelerate pair

def test_an_accelerate_config_alone_says_it_names_no_model():
    s = load_config(str(DATA / "accelerate_fsdp.yaml"))
    assert "config.accelerate_alone" in _codes(s)


def test_an_accelerate_config_given_with_the_training_config_does_not_warn():
    report = build_report(Options(files=(str(DATA / "accelerate_fsdp.yaml"), str(DEMO)), gpu="80GiB"))
    codes = [getattr(w, "code", None) for w in report.warnings]
    assert "config.accelerate_alone" not in codes
    assert not any("names no model" in say(w) if not isinstance(w, str) else "names no model" in w
                   for w in report.warnings)
    assert report.setup.fsdp == "full_shard" and report.setup.n_gpus == 4
