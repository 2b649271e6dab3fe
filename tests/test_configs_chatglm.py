"""ChatGLM3 / GLM-4 finetune_demo YAMLs (configs/chatglm.py): read as their own framework, patched in their
nested keys (training_args.*, peft_config.*), the model from finetune_hf.py's positional argument."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from oomdoctor.cli import main
from oomdoctor.configs import classify, edits_for, key_for, load_config
from oomdoctor.facts import Change
from oomdoctor.patch import build_patch
from oomdoctor.words import say

CORPUS = Path(__file__).parent / "data" / "real-configs" / "chatglm"


def test_a_lora_yaml_is_read_as_chatglm_with_nested_sources():
    path = str(CORPUS / "chatglm3_lora.yaml")
    assert classify(path) == "config"
    s = load_config(path)
    assert s.extras["reader"] == "chatglm"
    assert "max_input_length" in say(s.framework_reason)
    assert (s.method, s.lora_rank, s.seq_len, s.micro_batch, s.precision, s.grad_ckpt) == \
        ("lora", 16, 768, 2, "fp32", True)
    assert s.sources["micro_batch"].key == "training_args.per_device_train_batch_size"
    assert s.sources["eval_batch"].key == "training_args.per_device_eval_batch_size"
    assert s.sources["lora_rank"].key == "peft_config.r"
    assert s.sources["seq_len"].key == "max_output_length"
    assert s.framework_version == "4.45"        # training_args.evaluation_strategy
    assert not s.model
    assert key_for(s, "grad_accum") == (path, "training_args.gradient_accumulation_steps")


def test_prefix_tuning_is_estimated_as_a_small_adapter_and_said():
    s = load_config(str(CORPUS / "chatglm3_ptuning_v2.yaml"))
    assert s.method == "lora"
    assert any(getattr(w, "code", "") == "config.ptuning_yaml" for w in s.warnings)


def test_sft_yaml_is_a_full_fine_tune_with_its_deepspeed_json():
    s = load_config(str(CORPUS / "chatglm3_sft.yaml"))
    assert (s.method, s.zero_stage, s.seq_len, s.grad_accum) == ("full", 3, 1536, 4)
    assert s.deepspeed_file and s.deepspeed_file.endswith("ds_zero_3.json")


def test_glm4_yaml_loads_in_bf16():
    s = load_config(str(CORPUS / "glm4_lora.yaml"))
    assert (s.load_dtype, s.precision, s.zero_stage, s.lora_rank) == ("bf16", "bf16", 2, 32)
    assert s.lora_targets == ("q_proj", "k_proj", "v_proj")


def test_a_yaml_alone_needs_model_and_the_message_says_so(capsys):
    code = main([str(CORPUS / "chatglm3_lora.yaml"), "--gpu", "4090", "--plain"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "--model" in err and "finetune_hf.py" in err and "chatglm3_lora.yaml" in err


def test_with_model_the_estimate_runs(capsys):
    code = main([str(CORPUS / "chatglm3_lora.yaml"), "--gpu", "4090", "--model", "THUDM/chatglm3-6b", "--plain"])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "THUDM/chatglm3-6b" in out


def test_the_script_gives_the_model_from_its_positional_argument():
    s = load_config(str(CORPUS / "chatglm3_lora.sh"))
    assert s.model == "THUDM/chatglm3-6b"
    assert s.sources["model"].file.endswith("chatglm3_lora.sh") and s.sources["model"].line == 4
    assert s.n_gpus == 2 and s.extras["reader"] == "chatglm"
    assert s.config_file.endswith("chatglm3_lora.yaml")


def test_glm4_finetune_py_with_its_yaml_is_this_entry_not_qwen(tmp_path):
    shutil.copy(CORPUS / "chatglm3_lora.yaml", tmp_path / "lora.yaml")
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython finetune.py data/ THUDM/glm-4-9b-chat lora.yaml yes\n")
    s = load_config(str(tmp_path / "run.sh"))
    assert s.model == "THUDM/glm-4-9b-chat" and s.extras["reader"] == "chatglm"


def test_edits_go_into_the_nested_keys_and_round_trip_through_git_apply(tmp_path, monkeypatch):
    shutil.copy(CORPUS / "chatglm3_lora.yaml", tmp_path / "lora.yaml")
    monkeypatch.chdir(tmp_path)
    s = load_config("lora.yaml")
    changes = [Change("micro_batch", 2, 1), Change("grad_accum", 1, 2), Change("lora_rank", 16, 8),
               Change("seq_len", 768, 384), Change("precision", "fp32", "bf16"), Change("eval_batch", 16, 4)]
    edits = edits_for(s, changes)
    paths = {e.key_path for e in edits}
    assert ("training_args", "per_device_train_batch_size") in paths
    assert ("training_args", "gradient_accumulation_steps") in paths
    assert ("training_args", "bf16") in paths
    assert ("peft_config", "r") in paths
    original = (tmp_path / "lora.yaml").read_text()
    (tmp_path / "plan.diff").write_text(build_patch(edits, cwd=str(tmp_path)).diff)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "plan.diff"], cwd=tmp_path, check=True)
    patched = (tmp_path / "lora.yaml").read_text()
    # Comments stay; the file still reads as the same framework with the planned values.
    assert [l for l in original.splitlines() if l.lstrip().startswith("#")] == \
        [l for l in patched.splitlines() if l.lstrip().startswith("#")]
    data = yaml.safe_load(patched)
    assert data["training_args"]["per_device_train_batch_size"] == 1
    assert data["max_input_length"] + data["max_output_length"] == 384
    assert "per_device_train_batch_size" not in data and "bf16" not in data
    t = load_config("lora.yaml")
    assert (t.micro_batch, t.grad_accum, t.lora_rank, t.seq_len, t.precision, t.eval_batch) == (1, 2, 8, 384, "bf16", 4)
    assert t.extras["reader"] == "chatglm"


def test_a_zero_change_names_a_new_json_under_training_args(tmp_path, monkeypatch):
    shutil.copy(CORPUS / "chatglm3_lora.yaml", tmp_path / "lora.yaml")
    monkeypatch.chdir(tmp_path)
    s = load_config("lora.yaml")
    edits = edits_for(s, [Change("zero_stage", 0, 2)])
    assert any(e.key_path == ("training_args", "deepspeed") for e in edits)
    assert any(e.create for e in edits)
    data = yaml.safe_load(build_patch(edits, cwd=str(tmp_path)).files[0].new_text)
    assert data["training_args"]["deepspeed"].endswith(".json") and "deepspeed" not in data
