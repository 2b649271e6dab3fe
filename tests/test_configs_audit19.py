"""Readings the 2026-12u draw (docs/configs.md, twentieth round) needed, one test per class, each with its limit."""
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


# ---- InternLM-XComposer's finetune.py: its own LoraArguments defaults

def test_internlm_xcomposer_finetune_py_keeps_its_own_lora_alpha(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "torchrun --nproc_per_node 2 finetune.py --model_name_or_path org/m "
                                               "--use_lora True --lora_r 16 --hd_num 9 --fix_vit True "
                                               "--per_device_train_batch_size 1\n"))
    assert (s.method, s.lora_rank, s.lora_alpha, s.seq_len, s.n_gpus) == ("lora", 16, 64, 8192, 2)


def test_a_finetune_py_without_xcomposers_flags_is_still_qwens(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python finetune.py --model_name_or_path org/m --use_lora True "
                                               "--model_max_length 512\n"))
    assert (s.lora_alpha, s.seq_len) == (16, 512)


# ---- DeepSpeed's printed config: its closing `json = {…}` is the user's own file

_DS_PRINT = ("[2024-01-01 00:00:00,000] [INFO] [config.py:1005:print]   zero_enabled ................. True\n"
             "[2024-01-01 00:00:00,000] [INFO] [config.py:1005:print]   zero_optimization_stage ...... 2\n"
             "[2024-01-01 00:00:00,000] [INFO] [config.py:1005:print]   world_size ................... 4\n"
             "[2024-01-01 00:00:00,000] [INFO] [config.py:991:print_user_config]   json = {\n"
             '    "fp16":{\n        "enabled":true\n    },\n    "gradient_accumulation_steps":3,\n'
             '    "train_micro_batch_size_per_gpu":2,\n    "zero_optimization":{\n        "stage":2\n    }\n}\n')


def test_the_user_json_deepspeed_prints_last_is_read_as_the_config(tmp_path):
    s = load_config(_write(tmp_path, "ds.txt", _DS_PRINT))
    assert (s.zero_stage, s.precision, s.micro_batch, s.grad_accum, s.n_gpus) == (2, "fp16", 2, 3, 4)


def test_a_print_without_its_json_keeps_the_attribute_lines(tmp_path):
    text = _DS_PRINT.split("[2024-01-01 00:00:00,000] [INFO] [config.py:991")[0] + \
        "[2024-01-01 00:00:00,000] [INFO] [config.py:1005:print]   train_micro_batch_size_per_gpu  5\n"
    s = load_config(_write(tmp_path, "ds.txt", text))
    assert (s.zero_stage, s.micro_batch) == (2, 5)


# ---- a trainer built on Megatron-LM's parser: Megatron-Core's dashed arguments, whatever the script's name

def test_megatron_cores_dashed_arguments_make_any_script_a_megatron_run(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "torchrun --nproc_per_node 8 my_trainer/train.py --model-name foo-7b "
                                               "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                                               "--micro-batch-size 1 --global-batch-size 32 --seq-length 4096 --bf16 "
                                               "--use-distributed-optimizer --load /ckpt/dir\n"))
    assert (s.megatron, s.tensor_parallel, s.pipeline_parallel, s.grad_accum, s.seq_len, s.distributed_optimizer) == (
        True, 2, 2, 16, 4096, True)
    assert s.model == "foo-7b"          # the architecture the trainer names, over the checkpoint folder


def test_underscored_batch_flags_of_an_unknown_script_are_not_megatrons(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python train.py --model_name_or_path org/m --micro_batch_size 2 "
                                               "--global_batch_size 8\n"))
    assert s.megatron is False


# ---- a command held in a string and run by a shell a job script hands it to

_SBATCH = ('ARGS=(\n    --model_name_or_path org/m\n    --per_device_train_batch_size 4\n)\n'
           'TRAIN="\ncd /work;\nexport PYTHONPATH=/work:${PYTHONPATH};\npython train.py ${ARGS[@]} --bf16"\n'
           'sbatch <<EOF\n#!/bin/bash\nsrun --mpi=pmix bash -x -c "${TRAIN}"\nEOF\n')


def test_a_here_document_sbatch_runs_is_read_as_the_script(tmp_path):
    s = load_config(_write(tmp_path, "job.sh", _SBATCH))
    assert (s.model, s.micro_batch, s.precision) == ("org/m", 4, "bf16")


def test_an_array_in_a_quoted_assignment_is_its_elements_joined(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", 'ARGS=(--model_name_or_path org/m --per_device_train_batch_size 2)\n'
                                               'CMD="python train.py ${ARGS[@]}"\nbash -c "$CMD"\n'))
    assert (s.model, s.micro_batch) == ("org/m", 2)


def test_a_here_document_written_to_a_file_is_not_run(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "cat > ds.json <<EOF\n{\"zero_optimization\": {\"stage\": 3}}\nEOF\n"
                                               "python train.py --model_name_or_path org/m --deepspeed ds.json\n"))
    assert (s.model, s.zero_stage) == ("org/m", 3)


# ---- TRL's own example scripts: an SFTConfig field no TrainingArguments has

def test_an_examples_script_given_an_sftconfig_field_is_trls(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "accelerate launch examples/scripts/sft_new.py --model_name_or_path org/m "
                                               "--dataset_text_field text --per_device_train_batch_size 2\n"))
    assert (s.framework, s.micro_batch) == ("trl", 2)


def test_an_examples_script_with_trainer_flags_only_stays_hf(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python examples/scripts/train.py --model_name_or_path org/m "
                                               "--per_device_train_batch_size 2\n"))
    assert s.framework == "hf"


# ---- a note of several fenced blocks: the block that holds the run, not only the first

def test_a_later_fenced_block_holding_the_command_is_read(tmp_path):
    s = load_config(_write(tmp_path, "note.md", "It works with this change:\n```bash\nactor.strategy=fsdp \\\n```\n\n"
                                                "Command:\n```bash\ntorchrun --nproc_per_node 4 train.py "
                                                "--model_name_or_path org/m --per_device_train_batch_size 3\n```\n"))
    assert (s.model, s.micro_batch, s.n_gpus) == ("org/m", 3, 4)


def test_a_note_whose_blocks_hold_no_config_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "note.md", "```\nhello: [\n```\n\n```\nnot a command\n```\n"))


# ---- a command, then the config it names pasted below it

def test_the_config_pasted_below_the_command_that_names_it_is_that_file(tmp_path):
    s = load_config(_write(tmp_path, "note.md", "### Reproduction\n\ntorchrun --nproc_per_node 2 src/train.py my_sft.yaml"
                                                "\n\nmy_sft.yaml:\n### model\nmodel_name_or_path: org/m\nstage: sft\n"
                                                "finetuning_type: lora\ncutoff_len: 1024\n"))
    assert (s.framework, s.model, s.n_gpus, s.seq_len, s.method) == ("llamafactory", "org/m", 2, 1024, "lora")


def test_a_command_naming_a_missing_config_with_nothing_below_is_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "run.sh", "torchrun --nproc_per_node 2 src/train.py my_sft.yaml\n"))


# ---- optimum-habana's gaudi_spawn.py: a launcher of --world_size processes

def test_gaudi_spawn_launches_world_size_processes(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python3 ../gaudi_spawn.py --world_size 4 --use_deepspeed run_clm.py "
                                               "--model_name_or_path org/m --per_device_train_batch_size 2\n"))
    assert (s.model, s.n_gpus, s.micro_batch) == ("org/m", 4, 2)


def test_gaudi_spawn_without_world_size_is_one_process(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python gaudi_spawn.py --use_mpi run_clm.py --model_name_or_path org/m\n"))
    assert s.n_gpus == 1


# ---- a script's own argparse defaults: a constant as a default, an option named as a length

_ARGPARSE_SCRIPT = '''import argparse
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

MODEL_ID = "org/m"

parser = argparse.ArgumentParser()
parser.add_argument("--model-name", type=str, default=MODEL_ID)
parser.add_argument("--sequence-length", type=int, default=3072)
args = parser.parse_args()
model = AutoModelForCausalLM.from_pretrained(args.model_name)
training_args = TrainingArguments(output_dir="out", per_device_train_batch_size=2, bf16=True{extra})
Trainer(model=model, args=training_args).train()
'''


def test_an_argparse_default_naming_a_constant_and_a_length_option_are_read(tmp_path):
    s = load_config(_write(tmp_path, "train.py", _ARGPARSE_SCRIPT.format(extra="")))
    assert (s.model, s.seq_len, s.micro_batch, s.precision) == ("org/m", 3072, 2, "bf16")


def test_a_length_the_script_passes_to_a_call_wins_over_its_option(tmp_path):
    text = ('import argparse\nfrom trl import SFTConfig, SFTTrainer\n\nparser = argparse.ArgumentParser()\n'
            'parser.add_argument("--sequence-length", type=int, default=3072)\nargs = parser.parse_args()\n'
            'cfg = SFTConfig(output_dir="out", max_length=512)\nSFTTrainer(model="org/m", args=cfg).train()\n')
    s = load_config(_write(tmp_path, "train.py", text))
    assert s.seq_len == 512


# ---- a command written in an inline code span inside prose

def test_a_command_in_an_inline_span_inside_a_list_item_is_read(tmp_path):
    s = load_config(_write(tmp_path, "note.md", "#### Test plan\n\n- Test running with the new flag: `torchrun "
                                                "--nproc_per_node 2 train.py --model_name_or_path org/m "
                                                "--per_device_train_batch_size 2` (passes)\n- Also `pytest tests`\n"))
    assert (s.model, s.n_gpus, s.micro_batch) == ("org/m", 2, 2)


def test_prose_with_short_inline_spans_only_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "note.md", "I set `bf16` and `gradient_checkpointing` but: it fails\n"))


# ---- Megatron-Bridge's recipe runner, `uv run`, and a here-string that is no here-document

def test_megatron_bridge_recipe_overrides_are_its_flags(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "uv run --with x python -m torch.distributed.run --nproc_per_node=4 "
                                               "scripts/training/run_recipe.py --recipe foo_sft_config "
                                               "checkpoint.pretrained_checkpoint=/ckpt/Foo-8B model.seq_length=2048 "
                                               "train.global_batch_size=16 train.micro_batch_size=2 "
                                               "model.tensor_model_parallel_size=2\n"))
    assert (s.model, s.megatron, s.n_gpus, s.seq_len, s.micro_batch, s.tensor_parallel, s.grad_accum) == (
        "/ckpt/Foo-8B", True, 4, 2048, 2, 2, 4)


def test_a_here_string_does_not_swallow_the_script_below_it(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "IFS=',' read -r A B <<< \"1,2\"\n"
                                               "torchrun --nproc_per_node 2 train.py --model_name_or_path org/m\n"))
    assert (s.model, s.n_gpus) == ("org/m", 2)
