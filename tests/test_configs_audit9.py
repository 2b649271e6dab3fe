"""The readers the ninth first-sight audit (2026-12j, configs pasted in issue threads) asked for, each by the
tool's own rule: a DeepSpeed JSON with both precision blocks off trains in fp32; a Windows shell's continuation and
escape characters; OpenRLHF's entry points before `openrlhf.cli`; LitGPT's flat setup() keys and its CLI; a diff
pasted from a review; autotrain-advanced's `autotrain llm` (from a notebook cell); accelerate's environment
variables as a container lists them; typographic quotes in a pasted YAML."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------- DeepSpeed

@pytest.mark.parametrize("bf16, fp16, precision", [(False, False, "fp32"), ("false", "false", "fp32"),
                                                    ("auto", False, "bf16"), (True, False, "bf16"),
                                                    (False, True, "fp16")])
def test_a_deepspeed_json_with_both_precision_blocks_off_trains_in_fp32(tmp_path, bf16, fp16, precision):
    doc = {"bf16": {"enabled": bf16}, "fp16": {"enabled": fp16}, "zero_optimization": {"stage": 3}}
    s = load_config(_write(tmp_path, "ds.json", json.dumps(doc)))
    assert (s.zero_stage, s.precision) == (3, precision)


# ---------------------------------------------------------------- Windows shells

PS1 = """$env:CUDA_VISIBLE_DEVICES = "0"
llamafactory-cli train `
    --stage sft `
    --model_name_or_path H:\\models\\qwen `
    --finetuning_type lora `
    --cutoff_len 512 `
    --per_device_train_batch_size 8 `
    --gradient_accumulation_steps 2 `
    --output_dir saves\\lora `
    --fp16 True
"""


@pytest.mark.parametrize("name", ["train.ps1", "train.sh"])
def test_a_powershell_command_continues_with_backticks_and_keeps_its_backslashes(tmp_path, name):
    s = load_config(_write(tmp_path, name, PS1))
    assert (s.framework, s.model, s.seq_len, s.micro_batch, s.grad_accum, s.precision) == (
        "llamafactory", "H:\\models\\qwen", 512, 8, 2, "fp16")
    assert any(w.code == "config.script.windows" for w in s.warnings)


def test_a_cmd_batch_file_continues_with_carets_and_expands_its_set_variables(tmp_path):
    bat = ("set MODEL=C:\\models\\qwen\n"
           "llamafactory-cli train ^\n    --stage sft ^\n    --model_name_or_path %MODEL% ^\n"
           "    --finetuning_type lora ^\n    --cutoff_len 1024\n")
    s = load_config(_write(tmp_path, "train.bat", bat))
    assert (s.model, s.seq_len) == ("C:\\models\\qwen", 1024)


def test_a_bash_script_with_a_backtick_substitution_is_not_taken_for_powershell(tmp_path):
    sh = "N=`nproc`\ntorchrun --nproc_per_node 2 train.py --model_name_or_path m --cutoff_len 256 --stage sft\n"
    s = load_config(_write(tmp_path, "t.sh", sh))
    assert s.n_gpus == 2 and not any(w.code == "config.script.windows" for w in s.warnings)


# ---------------------------------------------------------------- OpenRLHF before openrlhf.cli

def test_openrlhf_examples_script_of_2024_is_openrlhf(tmp_path):
    sh = ("ray job submit -- python3 /ws/OpenRLHF/examples/train_ppo_ray.py --actor_num_nodes 1 "
          "--actor_num_gpus_per_node 4 --pretrain m --micro_train_batch_size 8 --train_batch_size 128 "
          "--prompt_max_len 1024 --generate_max_len 1024 --zero_stage 2 --bf16 --adam_offload\n")
    s = load_config(_write(tmp_path, "t.sh", sh))
    assert (s.framework, s.stage, s.model, s.n_gpus, s.micro_batch, s.grad_accum, s.seq_len, s.zero_stage,
            s.offload_optimizer) == ("openrlhf", "ppo", "m", 4, 8, 4, 2048, 2, True)


def test_another_projects_examples_train_sft_py_is_not_openrlhf(tmp_path):
    sh = "python examples/train_sft.py --model_name_or_path m --per_device_train_batch_size 2\n"
    assert load_config(_write(tmp_path, "t.sh", sh)).framework != "openrlhf"


# ---------------------------------------------------------------- LitGPT

def test_a_litgpt_yaml_cut_before_its_train_group_is_still_litgpt(tmp_path):
    y = "checkpoint_dir: checkpoints/google/gemma-7b\nprecision: bf16-true\ndevices: 1\nlora_r: 32\nlora_alpha: 16\n"
    s = load_config(_write(tmp_path, "lora.yaml", y))
    assert (s.framework, s.model, s.method, s.lora_rank, s.lora_alpha, s.precision) == (
        "litgpt", "google/gemma-7b", "lora", 32, 16, "bf16")


def test_a_yaml_with_checkpoint_dir_alone_is_not_taken_for_litgpt(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "c.yaml", "checkpoint_dir: out/ckpt\nlearning_rate: 0.1\n"))


@pytest.mark.parametrize("command, method", [("litgpt finetune_lora microsoft/phi-2", "lora"),
                                             ("litgpt finetune microsoft/phi-2", "lora"),
                                             ("litgpt finetune lora --checkpoint_dir checkpoints/microsoft/phi-2",
                                              "lora"),
                                             ("litgpt finetune_full microsoft/phi-2", "full"),
                                             ("litgpt finetune full --checkpoint_dir checkpoints/microsoft/phi-2",
                                              "full")])
def test_the_litgpt_cli_subcommand_names_the_method_and_its_flags_are_the_yaml_keys(tmp_path, command, method):
    s = load_config(_write(tmp_path, "t.sh", command + " --train.micro_batch_size 2 --precision bf16-true\n"))
    assert (s.framework, s.model, s.method, s.micro_batch, s.grad_accum, s.precision) == (
        "litgpt", "microsoft/phi-2", method, 2, 8, "bf16")


# ---------------------------------------------------------------- a diff pasted from a review thread

def test_a_diff_paste_is_read_as_its_new_side(tmp_path):
    paste = ("```diff\n+# finetune\n+litgpt finetune lora \\\n"
             "-  --checkpoint_dir checkpoints/old/model \\\n+  --checkpoint_dir checkpoints/mistralai/Mistral-7B-v0.1 \\\n"
             "+  --lora_r 4\n```\n")
    s = load_config(_write(tmp_path, "t.sh", paste))
    assert (s.model, s.lora_rank) == ("mistralai/Mistral-7B-v0.1", 4)
    assert s.extras["markdown_paste"] == "fence, diff"


# ---------------------------------------------------------------- autotrain-advanced, from a notebook cell

def test_autotrain_llm_in_a_notebook_cell_takes_its_own_flags_and_defaults(tmp_path):
    cell = ("!autotrain llm --train --model meta-llama/Llama-2-13b-hf --data_path d --use_peft \\\n"
            "--train_batch_size 8 --gradient_accumulation_steps 16 --use_int4\n")
    s = load_config(_write(tmp_path, "t.sh", cell))
    assert (s.model, s.method, s.quant_bits, s.micro_batch, s.grad_accum, s.lora_rank, s.lora_alpha, s.seq_len) == (
        "meta-llama/Llama-2-13b-hf", "qlora", 4, 8, 16, 16, 32, 1024)


# ---------------------------------------------------------------- accelerate's environment, typographic quotes

ENV = """- name: ACCELERATE_MIXED_PRECISION
  value: "bf16"
- name: ACCELERATE_USE_FSDP
  value: “true”
- name: FSDP_SHARDING_STRATEGY
  value: "2"
- name: FSDP_OFFLOAD_PARAMS
  value: "true"
"""


def test_a_containers_accelerate_environment_is_read_as_the_launcher_config(tmp_path):
    s = load_config(_write(tmp_path, "pod-env.yaml", ENV))
    assert (s.fsdp, s.offload_params, s.precision) == ("shard_grad_op", True, "bf16")


def test_an_environment_list_without_accelerates_switches_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "env.yaml", "- name: HOME\n  value: /root\n"))


def test_typographic_quotes_in_a_pasted_yaml_are_read_as_straight_ones(tmp_path):
    y = "model_name_or_path: “Qwen/Qwen3-8B”\nstage: sft\nfinetuning_type: lora\ncutoff_len: 1024\n"
    assert load_config(_write(tmp_path, "c.yaml", y)).model == "Qwen/Qwen3-8B"


# ---------------------------------------------------------------- found by the tenth round (2026-12k)

ACC_DS = """compute_environment: LOCAL_MACHINE
deepspeed_config:
 deepspeed_config_file: ./config/zero/zero_stage2_bf16.json
 zero3_init_flag: true
distributed_type: DEEPSPEED
fsdp_config: {}
num_machines: 6
num_processes: 48
"""


def test_an_accelerate_deepspeed_config_with_an_empty_fsdp_section_is_deepspeed(tmp_path):
    # `accelerate config` writes the unused plugin's section empty; distributed_type decides.
    _write(tmp_path, "ds.json", json.dumps({"zero_optimization": {"stage": 3}}))
    s = load_config(_write(tmp_path, "acc.yaml", ACC_DS.replace("./config/zero/zero_stage2_bf16.json", "ds.json")))
    assert (s.fsdp, s.zero_stage) == (None, 3)


def test_an_accelerate_configs_deepspeed_file_not_here_is_guessed_by_its_name_and_said(tmp_path):
    s = load_config(_write(tmp_path, "acc.yaml", ACC_DS))
    assert (s.n_gpus, s.zero_stage, s.fsdp) == (48, 2, None)
    assert any(w.code == "config.ds_missing_guess" for w in s.warnings)


def test_a_value_masked_with_asterisks_before_pasting_is_a_string_not_an_alias(tmp_path):
    y = ("model_name_or_path: m\nstage: sft\nfinetuning_type: lora\ndataset: ***\noutput_dir: ****\n"
         "cutoff_len: 8192\n")
    assert load_config(_write(tmp_path, "c.yaml", y)).seq_len == 8192
