"""The general readings the thirteenth first-sight audit (2026-12n) asked for, each by the grammar or the mechanism
of what made the file: Megatron's LoRA group in verl; a YAML paste under the prompt line that printed it and cut
inside a quoted value; a Python snippet with a `//` comment or cut inside a call; a config held in a Python dict
literal; a command a log printed as Python data (DeepSpeed's launcher argv, a failed Hydra job's overrides); an
angle-bracketed placeholder in a documented command; ms-swift's accumulation when none is given."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _codes(setup) -> list[str]:
    return [w.code for w in setup.warnings]


def test_verl_megatron_lora_group_is_the_adapter(tmp_path):
    s = load_config(_write(tmp_path, "m.sh", "python3 -m verl.trainer.main_ppo --config-name=ppo_megatron_trainer "
                                             "actor_rollout_ref.model.path=Qwen/Qwen2-7B-Instruct "
                                             "actor_rollout_ref.model.lora.rank=64\n"))
    assert (s.method, s.lora_rank, s.lora_alpha) == ("lora", 64, 32)       # the megatron group's alpha default


@pytest.mark.parametrize("prompt", ["$cat ./config.yaml", "$ cat lora.yaml", "% cat cfg.yml", "PS C:\\x> type c.yaml"])
def test_a_yaml_paste_under_the_prompt_that_printed_it_is_the_file(tmp_path, prompt):
    s = load_config(_write(tmp_path, "c.yaml", f"{prompt}\nmodel: mlx-community/Qwen3-4B-bf16\nfine_tune_type: lora\n"
                                               "batch_size: 2\nadapter_path: adapters\n"))
    assert (s.framework, s.micro_batch) == ("mlx-lm", 2)
    assert "config.yaml_prompt" in _codes(s)


def test_a_yaml_paste_cut_inside_a_quoted_value_drops_that_line(tmp_path):
    s = load_config(_write(tmp_path, "c.yaml", "model: m/x\nfine_tune_type: lora\ngrad_checkpoint: true\nbatch_size: 2\n"
                                               'adapter_path: "./training_res\n'))
    assert s.micro_batch == 2 and "config.yaml_cut" in _codes(s)
    with pytest.raises(InputError):          # a broken line that is not the last is still refused at its line
        load_config(_write(tmp_path, "d.yaml", 'model: "m/x\nfine_tune_type: lora\nbatch_size: 2\n'))


def test_a_slash_comment_in_a_pasted_snippet_is_a_comment(tmp_path):
    s = load_config(_write(tmp_path, "t.py", "from transformers import TrainingArguments\n"
                                             "args = TrainingArguments(output_dir='o',\n"
                                             "    per_device_train_batch_size=2, // was 8, OOM\n"
                                             "    gradient_accumulation_steps=4)\n"))
    assert (s.micro_batch, s.grad_accum) == (2, 4) and "config.python_comment" in _codes(s)


def test_a_snippet_cut_inside_a_call_is_read_up_to_its_last_whole_line(tmp_path):
    s = load_config(_write(tmp_path, "t.py", "from transformers import TrainingArguments\n"
                                             "args = TrainingArguments(\n    per_device_train_batch_size=3,\n"
                                             "    gradient_accumulation_steps=2,\n    lr_scheduler_type=\"cos"))
    assert (s.micro_batch, s.grad_accum) == (3, 2) and "config.python_cut" in _codes(s)


def test_a_deepspeed_config_held_in_a_python_dict_is_read_as_the_json(tmp_path):
    s = load_config(_write(tmp_path, "ds.py", "ds_config = {\n  'train_micro_batch_size_per_gpu': batch_size,\n"
                                              "  'bf16': {'enabled': True},\n"
                                              "  'zero_optimization': {'stage': 3, 'offload_param': {'device': 'cpu'}},\n}\n"))
    assert (s.zero_stage, s.precision, s.offload_params) == (3, "bf16", True)
    assert "config.python_literal" in _codes(s)


def test_llamafactory_arguments_held_in_dict_call_are_read(tmp_path):
    s = load_config(_write(tmp_path, "run.py", "args = dict(stage='sft', model_name_or_path='Qwen/Qwen2.5-7B',\n"
                                               "  finetuning_type='lora', cutoff_len=4096, per_device_train_batch_size=2)\n"
                                               "run_exp(args)\n"))
    assert (s.framework, s.model, s.method, s.seq_len, s.micro_batch) == ("llamafactory", "Qwen/Qwen2.5-7B", "lora",
                                                                          4096, 2)


def test_the_argv_deepspeeds_launcher_printed_is_the_command(tmp_path):
    line = ("[2024-11-13 19:22:21,564] [ERROR] [launch.py:325:sigkill_handler] ['/env/bin/python', '-u', '-m', "
            "'openrlhf.cli.train_sft', '--local_rank=3', '--pretrain', 'Qwen/Qwen2.5-7B', '--max_len', '4096', "
            "'--micro_train_batch_size', '2', '--zero_stage', '3', '--bf16'] exits with return code = 1\n")
    s = load_config(_write(tmp_path, "log.txt", line))
    assert (s.framework, s.model, s.seq_len, s.micro_batch, s.zero_stage) == ("openrlhf", "Qwen/Qwen2.5-7B", 4096, 2, 3)


def test_a_failed_hydra_jobs_overrides_wrapped_by_the_terminal_are_verls_command(tmp_path):
    text = ("Error executing job with overrides: ['data.max_prompt_length=1024', 'data.max_response_length=512', "
            "'actor_rollout_ref.model.path=Qwen/Qwen2.5-3B', 'actor_rollout_ref.actor.ppo_micro_b\n"
            "atch_size_per_gpu=4', 'trainer.n_gpus_per_node=4', 'trainer.nnodes=1', 'actor_rollout_ref.ro")
    s = load_config(_write(tmp_path, "err.txt", text))
    assert (s.framework, s.model, s.seq_len, s.micro_batch, s.n_gpus) == ("verl", "Qwen/Qwen2.5-3B", 1536, 4, 4)
    assert "config.hydra_overrides" in _codes(s)


def test_an_angle_bracket_placeholder_is_a_missing_value_not_a_redirection(tmp_path):
    s = load_config(_write(tmp_path, "r.sh", "torchrun --nproc_per_node=4 --master_port=<your_port> train.py \\\n"
                                             "    --model_name_or_path <your_model> --bf16 True \\\n"
                                             "    --per_device_train_batch_size 4 --gradient_accumulation_steps 8\n"))
    assert (s.model, s.model_unresolved, s.precision, s.micro_batch, s.n_gpus) == ("", "<your_model>", "bf16", 4, 4)


@pytest.mark.parametrize("launch, accum", [("", 8), ("NPROC_PER_NODE=4 ", 2), ("NPROC_PER_NODE=2 ", 4)])
def test_ms_swift_accumulates_to_16_sequences_when_no_accumulation_is_given(tmp_path, launch, accum):
    s = load_config(_write(tmp_path, "s.sh", f"{launch}swift sft --model Qwen/Qwen3-8B --per_device_train_batch_size 2 "
                                             "--dataset d\n"))
    assert s.grad_accum == accum            # ceil(16 / 2 / processes)
    given = load_config(_write(tmp_path, "g.sh", f"{launch}swift sft --model Qwen/Qwen3-8B --gradient_accumulation_steps 3\n"))
    assert given.grad_accum == 3


def test_a_printed_command_alone_is_a_config_and_with_a_crash_a_log(tmp_path):
    from oomdoctor.configs import classify

    line = ("[ERROR] [launch.py:325:sigkill_handler] ['/env/bin/python', '-u', '-m', 'openrlhf.cli.train_sft', "
            "'--pretrain', 'Qwen/Qwen2.5-7B', '--micro_train_batch_size', '2', '--bf16'] exits with return code = 1\n")
    assert classify(_write(tmp_path, "alone.md", line)) == "config"
    crash = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" + line
    assert classify(_write(tmp_path, "crash.md", crash)) == "log"
