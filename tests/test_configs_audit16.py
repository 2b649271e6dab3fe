"""Readings the 2026-12r draw (docs/configs.md, seventeenth round) needed: each a framework's own grammar."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_trl_example_in_a_subfolder_of_examples_scripts_is_trls(tmp_path):
    # TRL keeps examples/scripts/ppo/ppo.py, openenv/… below examples/scripts/: TrlParser's flags there all the same.
    path = _write(tmp_path, "run.sh", "python examples/scripts/ppo/ppo.py --dataset_name d --model_name_or_path m "
                                      "--per_device_train_batch_size 2 --gradient_accumulation_steps 4\n")
    s = load_config(path)
    assert (s.framework, s.micro_batch, s.grad_accum) == ("trl", 2, 4)


def test_llama_recipes_finetuning_reads_its_own_flags_and_defaults(tmp_path):
    # train_config (llama_recipes/configs/training.py): batch_size_training per GPU, use_peft with peft_method lora.
    path = _write(tmp_path, "run.sh", "torchrun --nnodes 1 --nproc_per_node 4 recipes/quickstart/finetuning/finetuning.py "
                                      "--enable_fsdp --batch_size_training 2 --model_name org/m --use_peft "
                                      "--peft_method lora\n")
    s = load_config(path)
    assert (s.model, s.method, s.micro_batch, s.n_gpus) == ("org/m", "lora", 2, 4)
    full = load_config(_write(tmp_path, "full.sh", "python finetuning.py --enable_fsdp --model_name org/m\n"))
    assert (full.method, full.micro_batch) == ("full", 4)


def test_a_finetuning_py_without_llama_recipes_flags_is_not_read_as_it(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python finetuning.py --model_name_or_path m "
                                               "--per_device_train_batch_size 3\n"))
    assert s.micro_batch == 3 and s.sources["micro_batch"].key == "per_device_train_batch_size"


def test_a_yaml_pasted_in_a_code_span_the_paste_cut_before_it_closed(tmp_path):
    path = _write(tmp_path, "c.yaml", "`base_model: org/m\nadapter: lora\nlora_r: 16\nsequence_len: 1024\n"
                                      "micro_batch_size: 2\nfsdp_co\n")
    s = load_config(path)
    assert (s.framework, s.model, s.lora_rank, s.seq_len) == ("axolotl", "org/m", 16, 1024)
    assert s.extras["markdown_paste"] == "code span"


def test_a_backtick_inside_a_yaml_value_is_no_code_span(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "c.yaml", "`base_model: org/m\nnote: `x`\n: bad\n"))
