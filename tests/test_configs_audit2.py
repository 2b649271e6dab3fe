"""Audit 2: an ORPO YAML given alone is ORPO (no reference model), a `swift megatron` script is refused as
unsupported Megatron training, and an HF script without --bf16/--fp16 launched with an accelerate config
takes that config's mixed_precision."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError
from oomdoctor.facts import Hardware, ModelShape
from oomdoctor.memory import estimate
from oomdoctor.words import say

CORPUS = Path(__file__).parent / "data" / "real-configs"
ORPO = CORPUS / "trl" / "recipes" / "zephyr_orpo" / "orpo" / "config_full.yaml"
H100 = Hardware(gpu="H100 80GB", gpu_gib=79.1, n_gpus=1)
MISTRAL_7B = ModelShape(name="mistralai/Mistral-7B-v0.1", hidden_size=4096, intermediate_size=14336, num_layers=32,
                        num_heads=32, num_kv_heads=8, vocab_size=32000)


def test_an_orpo_recipe_alone_is_orpo_by_its_path_and_says_so():
    s = load_config(str(ORPO))
    assert s.stage == "orpo"
    assert any(getattr(w, "code", "") == "config.trl_orpo_hint" for w in s.warnings)
    assert "ORPO" in say(s.sources["stage"].default)


def test_the_same_keys_under_another_name_stay_dpo(tmp_path):
    p = tmp_path / "config_full.yaml"
    p.write_text(ORPO.read_text().replace("zephyr-orpo", "zephyr"))
    assert load_config(str(p)).stage == "dpo"


def test_a_hub_id_that_names_it_is_a_hint_too(tmp_path):
    p = tmp_path / "config_full.yaml"
    p.write_text(ORPO.read_text().replace("zephyr-orpo", "zephyr") + "hub_model_id: me/Mixtral-ORPO-v1\n")
    s = load_config(str(p))
    assert s.stage == "orpo" and ":" in str(s.sources["stage"].default)


def test_a_folder_far_above_the_file_is_no_hint(tmp_path):
    d = tmp_path / "orpo-runs" / "a" / "b"
    d.mkdir(parents=True)
    p = d / "config.yaml"
    p.write_text(ORPO.read_text().replace("zephyr-orpo", "zephyr"))
    assert load_config(str(p)).stage == "dpo"


def test_a_dpo_only_key_wins_over_the_name(tmp_path):
    d = tmp_path / "orpo"
    d.mkdir()
    p = d / "config.yaml"
    p.write_text(ORPO.read_text() + "precompute_ref_log_probs: false\n")
    assert load_config(str(p)).stage == "dpo"


def test_orpo_holds_no_reference_model_where_dpo_does():
    from dataclasses import replace

    s = replace(load_config(str(ORPO)), method="full", load_dtype="bf16")
    orpo = estimate(s, MISTRAL_7B, H100)
    dpo = estimate(replace(s, stage="dpo"), MISTRAL_7B, H100)
    assert orpo.details["reference_model_gib"] == 0
    assert dpo.details["reference_model_gib"] > 10


@pytest.mark.parametrize("command,stage", [
    ("NPROC_PER_NODE=2 swift megatron sft --load Qwen2.5-7B-Instruct-mcore --micro_batch_size 1", "sft"),
    ("CUDA_VISIBLE_DEVICES=0,1 megatron pt --load Qwen2.5-7B-mcore --micro_batch_size 1", "pt"),
])
def test_a_megatron_swift_script_is_read_as_a_megatron_run(tmp_path, command, stage):
    p = tmp_path / "train_megatron.sh"
    p.write_text("#!/bin/bash\n# Megatron run\n" + command + "\n")
    setup = load_config(str(p))
    assert setup.megatron and setup.framework == "ms-swift" and setup.stage == stage
    assert setup.micro_batch == 1 and setup.model.endswith("-mcore") and setup.n_gpus == 2


def test_a_script_without_a_command_still_says_no_command(tmp_path):
    p = tmp_path / "x.sh"
    p.write_text("#!/bin/bash\necho hello\n")
    with pytest.raises(InputError) as err:
        load_config(str(p))
    assert "no training command" in str(err.value)


def test_hf_script_without_amp_flags_takes_the_accelerate_configs_mixed_precision():
    s = load_config(str(CORPUS / "scripts" / "hf_clm_accelerate_config.sh"))
    assert s.precision == "fp16"
    assert s.sources["precision"].key == "mixed_precision"
    assert s.sources["precision"].file.endswith("accelerate_multi_gpu_fp16.yaml")


def test_a_script_flag_still_wins_over_the_accelerate_config(tmp_path):
    src = CORPUS / "scripts"
    shutil.copy(src / "accelerate_multi_gpu_fp16.yaml", tmp_path)
    text = (src / "hf_clm_accelerate_config.sh").read_text().replace("--do_train", "--do_train --bf16")
    (tmp_path / "run.sh").write_text(text)
    s = load_config(str(tmp_path / "run.sh"))
    assert s.precision == "bf16" and s.sources["precision"].file.endswith("run.sh")


def test_trls_own_bf16_default_is_kept_under_an_accelerate_config(tmp_path):
    shutil.copy(CORPUS / "scripts" / "accelerate_multi_gpu_fp16.yaml", tmp_path)
    (tmp_path / "run.sh").write_text(
        "#!/bin/bash\naccelerate launch --config_file accelerate_multi_gpu_fp16.yaml -m trl.scripts.sft "
        "--model_name_or_path Qwen/Qwen2.5-0.5B --dataset_name x --output_dir o\n")
    s = load_config(str(tmp_path / "run.sh"))
    assert s.framework == "trl" and s.precision == "bf16"
