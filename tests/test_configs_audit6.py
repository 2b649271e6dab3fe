"""The readers the sixth first-sight audit (2026-12f) asked for, each by its framework's own rule: ms-swift's
--use_dora, accelerate's FSDP1 sharding strategy written as fsdp_reshard_after_forward, Firefly's own keys beside
the use_unsloth it shares with LLaMA-Factory, and TRL's example scripts known by their ModelConfig flags."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("flag, dora", [("--use_dora true", True), ("--use_dora false", False), ("", False)])
def test_ms_swift_use_dora_makes_the_adapters_dora(tmp_path, flag, dora):
    path = _write(tmp_path, "t.sh", f"swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_type lora {flag}\n")
    s = load_config(path)
    assert (s.framework, s.method, bool(s.use_dora)) == ("ms-swift", "lora", dora)
    if dora:
        assert s.sources["use_dora"].key == "use_dora"


@pytest.mark.parametrize("value, mode", [("FULL_SHARD", "full_shard"), ("SHARD_GRAD_OP", "shard_grad_op"),
                                         ("2", "shard_grad_op"), ("HYBRID_SHARD", "hybrid_shard")])
def test_fsdp1_reshard_after_forward_names_the_sharding_strategy(tmp_path, value, mode):
    path = _write(tmp_path, "a.yaml", "distributed_type: FSDP\nnum_processes: 4\nmixed_precision: bf16\n"
                  f"fsdp_config:\n  fsdp_version: 1\n  fsdp_reshard_after_forward: {value}\n"
                  "  fsdp_offload_params: false\n")
    s = load_config(path)
    assert (s.fsdp, s.n_gpus) == (mode, 4)
    assert s.sources["fsdp"].key == "fsdp_config.fsdp_reshard_after_forward"


@pytest.mark.parametrize("value, mode", [("true", "full_shard"), ("false", "shard_grad_op")])
def test_fsdp2_reshard_after_forward_stays_a_boolean(tmp_path, value, mode):
    path = _write(tmp_path, "a.yaml", "distributed_type: FSDP\nnum_processes: 2\n"
                  f"fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: {value}\n")
    assert load_config(path).fsdp == mode


def test_firefly_file_with_use_unsloth_is_firefly_and_keeps_its_qlora_default(tmp_path):
    path = _write(tmp_path, "x.json", '{"model_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "train_file": "d.jsonl",'
                  ' "template_name": "qwen", "max_seq_length": 1024, "per_device_train_batch_size": 1,'
                  ' "lora_rank": 64, "use_unsloth": true}')
    s = load_config(path)
    assert (s.framework, s.method, s.quant_bits, s.seq_len, s.use_unsloth) == ("hf", "qlora", 4, 1024, True)
    assert s.extras.get("entry") == "firefly"


def test_a_llamafactory_file_with_use_unsloth_stays_llamafactory(tmp_path):
    path = _write(tmp_path, "x.yaml", "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: sft\n"
                  "finetuning_type: lora\ntemplate: qwen\ncutoff_len: 1024\nuse_unsloth: true\n")
    assert load_config(path).framework == "llamafactory"


@pytest.mark.parametrize("flags, trl", [("--use_peft --lora_target_modules all-linear", True),
                                        ("--dataset_name trl-lib/x", True),
                                        ("--learning_rate 1e-5", False)])
def test_a_trl_example_script_is_known_by_a_flag_only_trlparser_defines(tmp_path, flags, trl):
    path = _write(tmp_path, "t.sh", "python examples/scripts/gspo.py --model_name_or_path Qwen/Qwen3-0.6B "
                  f"--per_device_train_batch_size 8 {flags}\n")
    s = load_config(path)
    assert (s.framework == "trl") is trl
    if "--use_peft" in flags:
        assert (s.method, s.lora_rank) == ("lora", 16)        # TRL ModelConfig: lora_r 16
