"""Readings the 2026-12s draw (docs/configs.md, eighteenth round) needed, one test per class of paste or launcher."""
from __future__ import annotations

from pathlib import Path

from oomdoctor.configs import load_config


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_an_interpreter_in_a_folder_only_the_run_knows_is_still_that_interpreter(tmp_path):
    # bash runs the program the last path component names; `${env}` only picks the folder.
    path = _write(tmp_path, "run.sh", '"${conda_env}/bin/python3" -m torch.distributed.run --nproc_per_node=4 '
                                      "--nnodes=2 swift/cli/sft.py --model org/m --train_type full\n")
    s = load_config(path)
    assert (s.framework, s.model, s.method, s.n_gpus) == ("ms-swift", "org/m", "full", 8)


def test_a_python_script_run_as_the_command_itself_is_read_as_python_script(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "ms-swift/swift/cli/sft.py --model org/m --train_type full "
                                               "--per_device_train_batch_size 3\n"))
    assert (s.framework, s.method, s.micro_batch, s.n_gpus) == ("ms-swift", "full", 3, 1)


def test_megatron_swift_run_through_its_script_under_torchrun(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "torchrun --nproc_per_node 8 swift/cli/_megatron/sft.py --model org/m "
                                               "--tensor_model_parallel_size 2 --micro_batch_size 1\n"))
    assert (s.megatron, s.tensor_parallel, s.n_gpus) == (True, 2, 8)


def test_a_found_command_whose_flags_lost_their_continuations_gets_them(tmp_path):
    # `megatron sft` alone on its line, then one flag a line: bash would run `--model …` as a command.
    s = load_config(_write(tmp_path, "p.md", "megatron sft \n--model /m \n--train_type lora \n"
                                             "--tensor_model_parallel_size 4\n"))
    assert (s.model, s.method, s.tensor_parallel) == ("/m", "lora", 4)


def test_a_command_followed_by_a_separate_command_is_not_joined(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "swift sft --model org/m --train_type full\necho done\n"))
    assert (s.model, s.method) == ("org/m", "full")


def test_swift_flags_alone_one_a_line_in_a_backtick_span_are_swifts(tmp_path):
    # rlhf_type and train_type are ms-swift's own names (swift/arguments), so the flags single it out.
    s = load_config(_write(tmp_path, "p.md", "`\n--rlhf_type grpo \n--model org/m \n--train_type full \n"
                                             "--per_device_train_batch_size 2 \n--deepspeed zero3\n`\n"))
    assert (s.framework, s.model, s.method, s.micro_batch, s.zero_stage) == ("ms-swift", "org/m", "full", 2, 3)
