"""Readings the 2026-12t draw (docs/configs.md, nineteenth round) needed, one test per class, each with its limit."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError

CORPUS = Path(__file__).parent / "data" / "real-configs"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ---- LLaMA-Factory's Megatron Bridge keys (hparams/megatron_bridge_args.py)

def test_llamafactory_megatron_bridge_keys_make_a_megatron_run_with_its_defaults():
    s = load_config(str(CORPUS / "lf" / "head_megatron_bridge_llama3_sft.yaml"))
    assert (s.framework, s.megatron, s.tensor_parallel, s.pipeline_parallel, s.distributed_optimizer) == (
        "llamafactory", True, 1, 1, True)
    assert s.grad_ckpt is False          # no recompute_granularity: Megatron recomputes nothing


def test_llamafactory_megatron_bridge_sizes_and_recompute_are_read(tmp_path):
    s = load_config(_write(tmp_path, "mb.yaml", "model_name_or_path: org/m\nstage: sft\nfinetuning_type: full\n"
                                                "tensor_model_parallel_size: 4\npipeline_model_parallel_size: 2\n"
                                                "use_distributed_optimizer: false\nrecompute_granularity: full\n"))
    assert (s.megatron, s.tensor_parallel, s.pipeline_parallel, s.distributed_optimizer, s.recompute, s.grad_ckpt) == (
        True, 4, 2, False, "full", True)


def test_a_plain_llamafactory_config_stays_an_hf_run():
    s = load_config(str(CORPUS / "lf" / "head_pissa_llama3_lora_sft.yaml"))
    assert (s.megatron, s.grad_ckpt) == (False, True)


# ---- MiniCPM-V's finetune.py: Qwen's flag names, its own defaults

def test_minicpm_v_finetune_py_is_told_apart_from_qwens_by_its_own_flags():
    s = load_config(str(CORPUS / "scripts" / "minicpm_v_finetune_lora.sh"))
    assert (s.method, s.lora_rank, s.lora_alpha, s.seq_len) == ("lora", 64, 64, 2048)


def test_qwens_finetune_py_keeps_its_defaults():
    s = load_config(str(CORPUS / "scripts" / "qwen_finetune_lora_single_gpu.sh"))
    assert (s.method, s.lora_rank, s.lora_alpha) == ("lora", 64, 16)


def test_minicpm_v_defaults_without_flags(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "torchrun --nproc_per_node 2 finetune.py --model_name_or_path org/m "
                                               "--llm_type qwen --use_lora true --per_device_train_batch_size 1\n"))
    assert (s.seq_len, s.lora_alpha, s.n_gpus) == (2048, 64, 2)


# ---- assignments above a command whose continuations the page dropped

def test_assignment_lines_above_a_command_without_continuations_are_its_environment(tmp_path):
    s = load_config(_write(tmp_path, "p.md", "CUDA_VISIBLE_DEVICES=0,1,2,3  \nNPROC_PER_NODE=3  \nswift sft  \n"
                                             "--model org/m  \n--train_type full  \n"
                                             "--per_device_train_batch_size 2  \n"))
    assert (s.framework, s.model, s.n_gpus, s.micro_batch) == ("ms-swift", "org/m", 3, 2)


def test_an_assignment_the_paste_expands_stays_a_shell_variable(tmp_path):
    # `MODEL=…` is used as $MODEL below: it was a variable for later words, not the command's environment.
    s = load_config(_write(tmp_path, "p.md", "MODEL=org/m\nswift sft\n--model $MODEL\n--train_type full\n"))
    assert s.model == "org/m"


# ---- a bare YAML with prose after it (an issue form's sections)

def test_a_yaml_with_a_paragraph_of_prose_after_it_is_read_up_to_the_prose(tmp_path):
    s = load_config(_write(tmp_path, "p.md", "### Reproduction\n\nmodel_name_or_path: org/m\nstage: sft\n"
                                             "finetuning_type: lora\ncutoff_len: 512\n\n### Expected behavior\n\n"
                                             "Please tell me how to set preprocessing_num_workers to 1, thanks\n"))
    assert (s.framework, s.model, s.seq_len) == ("llamafactory", "org/m", 512)
    assert s.extras["markdown_paste"] == "trailing prose"


def test_a_yaml_broken_inside_its_first_paragraph_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "p.md", "model_name_or_path: org/m\nstage: sft\nthis line: is: broken\n"))
