"""Defaults and key names by framework release, chosen from --framework-version, the log's banner, or
what the file implies; the report says which release it assumed and why."""
from __future__ import annotations

import pytest

from oomdoctor.configs import load_config
from oomdoctor.words import say


def _write(tmp_path, name, text) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


LF_OLD = ("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: freeze\n"
          "num_layer_trainable: 4\nname_module_trainable: mlp\n")


def test_llamafactory_keys_of_old_releases_imply_the_release_and_its_defaults(tmp_path):
    s = load_config(_write(tmp_path, "old.yaml", LF_OLD))
    assert s.framework_version == "0.7.0"
    assert (s.freeze_trainable_layers, s.seq_len) == (4, 1024)          # cutoff_len was 1024 before 0.9.1
    assert s.sources["freeze_trainable_layers"].key == "num_layer_trainable"
    assert "num_layer_trainable" in say(s.version_reason) and "0.7.0" in say(s.version_reason)
    assert s.extras["weights_dtype_rule"] == "compute"


@pytest.mark.parametrize("version,freeze,cutoff", [("0.5.3", 3, 1024), ("0.6.3", 2, 1024), ("0.9.0", 2, 1024),
                                                   ("0.9.1", 2, 2048), ("0.9.4", 2, 2048)])
def test_llamafactory_defaults_follow_the_release(tmp_path, version, freeze, cutoff):
    path = _write(tmp_path, "f.yaml", "model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: freeze\n")
    s = load_config(path, framework_version=version)
    assert (s.framework_version, s.freeze_trainable_layers, s.seq_len) == (version, freeze, cutoff)
    assert "--framework-version" in say(s.version_reason)


def test_llamafactory_flash_attn_values_of_each_era(tmp_path):
    base = "model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\n"
    bool_era = load_config(_write(tmp_path, "a.yaml", base + "flash_attn: true\n"))
    assert (bool_era.attention, bool_era.framework_version) == ("fa2", "0.6.3")
    off_era = load_config(_write(tmp_path, "b.yaml", base + "flash_attn: 'off'\n"))   # bare off is YAML's false
    assert (off_era.attention, off_era.framework_version) == ("eager", "0.8.2")
    now = load_config(_write(tmp_path, "c.yaml", base + "flash_attn: disabled\n"))
    assert (now.attention, now.framework_version) == ("eager", "0.9.4")


def test_the_flag_beats_the_log_which_beats_what_the_file_implies(tmp_path):
    path = _write(tmp_path, "old.yaml", LF_OLD)
    from_log = load_config(path, log_versions={"llamafactory": "0.9.2"})
    assert from_log.framework_version == "0.9.2" and "banner" in say(from_log.version_reason)
    assert from_log.seq_len == 2048
    flagged = load_config(path, framework_version="0.6.0", log_versions={"llamafactory": "0.9.2"})
    assert flagged.framework_version == "0.6.0" and "--framework-version" in say(flagged.version_reason)


def test_an_old_llamafactory_launch_script_implies_its_release(tmp_path):
    path = _write(tmp_path, "run.sh", "CUDA_VISIBLE_DEVICES=0 python src/train_bash.py --stage sft --do_train "
                  "--model_name_or_path meta-llama/Llama-2-7b-hf --finetuning_type lora --lora_target q_proj,v_proj "
                  "--template default --per_device_train_batch_size 4 --fp16\n")
    s = load_config(path)
    assert s.framework == "llamafactory" and s.framework_version == "0.7.1"
    assert s.seq_len == 1024 and "train_bash.py" in say(s.version_reason)
    assert (s.lora_targets, s.precision, s.n_gpus) == (("q_proj", "v_proj"), "fp16", 1)


def test_torchtune_0_2_truncated_in_the_dataset_builder(tmp_path):
    text = ("model:\n  _component_: torchtune.models.llama2.lora_llama2_7b\n  lora_attn_modules: ['q_proj', 'v_proj']\n"
            "checkpointer:\n  _component_: torchtune.utils.FullModelHFCheckpointer\n  checkpoint_dir: /tmp/llama2\n"
            "dataset:\n  _component_: torchtune.datasets.alpaca_cleaned_dataset\nbatch_size: 2\ndtype: bf16\n")
    s = load_config(_write(tmp_path, "old_tt.yaml", text))
    assert s.framework_version == "0.2.1" and s.seq_len == 512
    assert "torchtune.utils" in say(s.version_reason)
    with_len = load_config(_write(tmp_path, "old_tt2.yaml", text.replace(
        "alpaca_cleaned_dataset\n", "alpaca_cleaned_dataset\n  max_seq_len: 1024\n")))
    assert with_len.seq_len == 1024 and with_len.sources["seq_len"].key == "dataset.max_seq_len"


def test_torchtune_from_0_3_truncates_in_the_tokenizer(tmp_path):
    text = ("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
            "tokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  max_seq_len: 4096\n"
            "checkpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\nbatch_size: 2\n")
    s = load_config(_write(tmp_path, "tt.yaml", text))
    assert s.seq_len == 4096 and s.framework_version == "0.6"


def test_axolotl_releases(tmp_path):
    unsloth = load_config(_write(tmp_path, "a.yml", "base_model: m\ngradient_checkpointing: unsloth\n"))
    assert unsloth.framework_version == "0.9.1" and unsloth.grad_ckpt is True
    assert unsloth.optimizer == "adamw_torch_fused"
    old = load_config(_write(tmp_path, "b.yml", "base_model: m\n"), framework_version="0.4.0")
    assert (old.seq_len, old.optimizer) == (2048, "adamw_hf")
    new = load_config(_write(tmp_path, "c.yml", "base_model: m\n"))
    assert (new.seq_len, new.optimizer) == (512, "adamw_torch_fused")


def test_axolotl_total_batch_size_gives_the_accumulation(tmp_path):
    s = load_config(_write(tmp_path, "a.yml", "base_model: m\nmicro_batch_size: 2\nbatch_size: 16\n"))
    assert (s.micro_batch, s.grad_accum) == (2, 8) and s.sources["grad_accum"].key == "batch_size"


def test_trl_releases(tmp_path):
    text = "model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\nmax_seq_length: 2048\n"
    s = load_config(_write(tmp_path, "sft.yaml", text))
    assert s.framework_version == "0.19" and s.seq_len == 2048
    assert (s.precision, s.grad_ckpt) == ("bf16", False)        # bf16 = not fp16 from 0.19; GC on only from 0.22
    older = load_config(_write(tmp_path, "sft2.yaml", "model_name_or_path: m\ndataset_name: d\n"),
                        framework_version="0.15")
    assert (older.precision, older.grad_ckpt, older.seq_len) == ("fp32", False, 1024)
    assert say(older.sources["seq_len"].describe()).endswith("(max_seq_length)")
    newest = load_config(_write(tmp_path, "sft3.yaml", "model_name_or_path: m\ndataset_name: d\n"))
    assert (newest.framework_version, newest.precision, newest.grad_ckpt) == ("0.23", "bf16", True)


def test_the_plain_report_says_which_release_and_why(tmp_path):
    from oomdoctor.views.plain import read_as_line

    s = load_config(_write(tmp_path, "old.yaml", LF_OLD))
    line = read_as_line(s)
    assert "LLaMA-Factory 0.7.0" in line and "num_layer_trainable" in line and "stage" in line
