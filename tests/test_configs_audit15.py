"""The readings the fifteenth first-sight audit (2026-12p) asked for: verl's engine SFT trainer's `engine.*` group;
peft's examples' `--base_model_name_or_path`; unsloth's from_pretrained `use_gradient_checkpointing`; an arguments
dict pasted cut inside its last key, each line closed by a comment."""
from __future__ import annotations

from pathlib import Path

from oomdoctor.configs import load_config


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_verls_engine_trainer_reads_its_engine_group(tmp_path):
    s = load_config(_write(tmp_path, "sft.sh", "torchrun --nproc-per-node=8 -m verl.trainer.sft_trainer "
                                               "model.path=Qwen/Qwen3-8B data.max_length=4096 engine=fsdp "
                                               "engine.ulysses_sequence_parallel_size=4 engine.strategy=fsdp2 "
                                               "engine.param_offload=True\n"))
    assert (s.stage, s.seq_len, s.seq_parallel, s.offload_params, s.n_gpus) == ("sft", 4096, 4, True, 8)


def test_peft_examples_base_model_name_or_path_names_the_model(tmp_path):
    s = load_config(_write(tmp_path, "r.sh", "python tune.py --base_model_name_or_path meta-llama/Llama-3.2-3B "
                                             "--per_device_train_batch_size 2 --bf16 True\n"))
    assert s.model == "meta-llama/Llama-3.2-3B"


def test_unsloth_from_pretrained_gradient_checkpointing_is_read(tmp_path):
    s = load_config(_write(tmp_path, "u.py", "from unsloth import FastModel\n"
                                             "model, tok = FastModel.from_pretrained('unsloth/gemma-3-4b-it',\n"
                                             "    load_in_4bit=False, full_finetuning=True,\n"
                                             "    use_gradient_checkpointing='unsloth')\n"))
    assert (s.method, s.grad_ckpt) == ("full", True)


def test_an_arguments_dict_cut_inside_its_last_key_behind_comments(tmp_path):
    s = load_config(_write(tmp_path, "a.py", "args = dict(\n  stage='sft',   # supervised\n"
                                             "  model_name_or_path='Qwen/Qwen2.5-7B',  # the base\n"
                                             "  finetuning_type='lora',  # adapters\n"
                                             "  per_device_train_batch_size=2,   # the batch size\n  lr_sched"))
    assert (s.framework, s.model, s.method, s.micro_batch) == ("llamafactory", "Qwen/Qwen2.5-7B", "lora", 2)


def test_a_branch_the_script_can_evaluate_sets_the_value(tmp_path):
    script = ('BACKEND=${BACKEND:-fsdp}\nSP=4\nif [ "$BACKEND" = "fsdp" ]; then\n    EXTRA="engine.ulysses_sequence_parallel_size=$SP"\n'
              'else\n    EXTRA="engine.tensor_model_parallel_size=2"\nfi\n'
              "torchrun --nproc-per-node=8 -m verl.trainer.sft_trainer model.path=Qwen/Qwen3-8B $EXTRA\n")
    s = load_config(_write(tmp_path, "b.sh", script))
    assert s.seq_parallel == 4


def test_a_command_as_an_if_condition_still_runs(tmp_path):
    script = ("if torchrun --nproc_per_node=2 train.py --model_name_or_path m/x --per_device_train_batch_size 3; then\n"
              "  echo done\nfi\n")
    s = load_config(_write(tmp_path, "c.sh", script))
    assert (s.micro_batch, s.n_gpus) == (3, 2)
