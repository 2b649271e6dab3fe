"""Readings the 2026-12v draw (docs/configs.md, twenty-first round) needed, one test per class, each with its limit."""
from __future__ import annotations

from pathlib import Path

from oomdoctor.configs import load_config


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ---- `eval $CMD`: bash joins the words and runs them as a command

def test_eval_of_a_command_variable_runs_that_command(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", 'CMD="deepspeed --num_gpus=4 train.py --model_name_or_path org/m '
                                               '--per_device_train_batch_size 3"\neval $CMD\n'))
    assert (s.model, s.micro_batch, s.n_gpus) == ("org/m", 3, 4)


def test_eval_of_a_quoted_string_reads_the_string(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "eval \"torchrun --nproc_per_node 2 train.py --model_name_or_path "
                                               "org/m --per_device_train_batch_size 5\"\n"))
    assert (s.micro_batch, s.n_gpus) == (5, 2)


# ---- a DeepSpeed JSON the script writes to a name only the run knows, read back by the same name

_WRITTEN = '''MODE=$1
CFG="$(pwd)/ds_${MODE}.json"
cat > "$CFG" << EOF
{"train_batch_size": 8, "gradient_accumulation_steps": 2,
 "bf16": {"enabled": true},
 "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}
EOF
deepspeed --num_gpus=2 finetune.py --deepspeed_config=$CFG --model_name org/m
'''


def test_a_json_written_under_an_unknown_name_is_read_through_the_flag_that_names_it(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", _WRITTEN))
    assert (s.zero_stage, s.offload_optimizer, s.precision) == (3, True, "bf16")


def test_a_flag_naming_another_unknown_file_stays_unknown(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", _WRITTEN.replace("--deepspeed_config=$CFG",
                                                                 "--deepspeed_config=$(pwd)/other_$1.json")))
    assert s.zero_stage == 0


def test_deepspeeds_own_config_flag_names_the_json_on_a_script_command_line(tmp_path):
    _write(tmp_path, "ds.json", '{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": 4}')
    s = load_config(_write(tmp_path, "run.sh", "deepspeed train.py --deepspeed --deepspeed_config ds.json "
                                               "--model_name_or_path org/m\n"))
    assert s.zero_stage == 2


# ---- basename / dirname of a known path are computed

def test_basename_of_a_known_model_id_names_the_checkpoint_folder(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "HF=${HF:-org/Some-Model-7B}\nNAME=$(basename \"$HF\")\n"
                                               "torchrun --nproc_per_node 1 train.py --model_name_or_path "
                                               "/ckpt/${NAME} --per_device_train_batch_size 1\n"))
    assert s.model == "/ckpt/Some-Model-7B"


def test_basename_of_an_unknown_path_stays_unknown(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "NAME=$(basename \"$1\")\ntorchrun --nproc_per_node 1 train.py "
                                               "--model_name_or_path /ckpt/${NAME} --per_device_train_batch_size 1\n"),
                    model="org/given")
    assert s.model == "org/given"


# ---- srun under sbatch: one process a task

_SLURM = '''#!/bin/bash
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
CMD="python scripts/training/run_recipe.py --recipe llama3_8b_peft_config model.tensor_model_parallel_size=2 \\
    checkpoint.pretrained_checkpoint=/m/llama train.micro_batch_size=1 train.global_batch_size=16"
srun --mpi=pmix bash -c "$CMD"
'''


def test_srun_starts_one_python_a_task_from_the_jobs_sbatch_options(tmp_path):
    s = load_config(_write(tmp_path, "job.sh", _SLURM))
    assert (s.n_gpus, s.grad_accum) == (8, 4)


def test_srun_given_its_own_task_count_wins(tmp_path):
    s = load_config(_write(tmp_path, "job.sh", _SLURM.replace("srun --mpi=pmix", "srun -n 2 --mpi=pmix")))
    assert s.n_gpus == 2


def test_torchrun_under_srun_still_counts_its_own_processes(tmp_path):
    s = load_config(_write(tmp_path, "job.sh", "#SBATCH --ntasks-per-node=1\nsrun torchrun --nproc_per_node 4 "
                                               "train.py --model_name_or_path org/m --per_device_train_batch_size 1\n"))
    assert s.n_gpus == 4


# ---- Megatron-Bridge: the mode a recipe's name encodes, and the bridge's LoRA

def test_a_peft_recipe_trains_the_bridges_lora(tmp_path):
    s = load_config(_write(tmp_path, "job.sh", _SLURM))
    assert (s.method, s.lora_rank, s.lora_alpha, s.model) == ("lora", 32, 32, "/m/llama")


def test_the_mode_flag_wins_over_the_recipe_name(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "torchrun --nproc_per_node 2 scripts/training/run_recipe.py --recipe "
                                               "llama3_8b_peft_config --mode sft train.micro_batch_size=1\n"))
    assert s.method == "full"


def test_a_pretrain_recipe_trains_every_weight(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "torchrun --nproc_per_node 2 scripts/training/run_recipe.py --recipe "
                                               "llama3_8b_pretrain_config train.micro_batch_size=1\n"))
    assert s.method == "full"


# ---- TRL's PPO scripts: the policy is sft_model_path

def test_trls_ppo_script_trains_the_sft_model_path_policy(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python examples/scripts/ppo/ppo_tldr.py --dataset_name trl-lib/tldr "
                                               "--model_name_or_path org/base --sft_model_path org/sft "
                                               "--reward_model_path org/rm --per_device_train_batch_size 1\n"))
    assert (s.model, s.stage) == ("org/sft", "ppo")


def test_the_old_rloo_config_with_sft_model_path_is_not_ppo(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python examples/scripts/rloo/rloo.py --dataset_name trl-lib/tldr "
                                               "--sft_model_path org/sft --reward_model_path org/rm --rloo_k 2 "
                                               "--per_device_train_batch_size 1\n"))
    assert (s.model, s.stage) == ("org/sft", "sft")


# ---- an Accelerate loop of its own

_LOOP = '''from accelerate import Accelerator, FullyShardedDataParallelPlugin
from torch.utils.data import DataLoader
from transformers import AutoConfig, AutoModelForCausalLM
MODEL_ID = "org/m-8b"
def main():
    plugin = FullyShardedDataParallelPlugin(fsdp_version=2, cpu_offload=True)
    accelerator = Accelerator(fsdp_plugin=plugin, gradient_accumulation_steps=4, mixed_precision="bf16")
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(MODEL_ID))
    loader = DataLoader(data, batch_size=2)
    model, loader = accelerator.prepare(model, loader)
'''


def test_an_accelerate_loop_is_read_from_its_accelerator_plugin_and_dataloader(tmp_path):
    s = load_config(_write(tmp_path, "train.py", _LOOP))
    assert (s.model, s.fsdp, s.offload_params, s.grad_accum, s.precision, s.micro_batch) == \
        ("org/m-8b", "full_shard", True, 4, "bf16", 2)


def test_a_dataloader_without_an_accelerator_is_not_the_batch(tmp_path):
    text = ("from transformers import TrainingArguments\nfrom torch.utils.data import DataLoader\n"
            "args = TrainingArguments(output_dir='o', per_device_train_batch_size=3)\n"
            "m = AutoModelForCausalLM.from_pretrained('org/m')\nloader = DataLoader(d, batch_size=7)\n")
    s = load_config(_write(tmp_path, "train.py", text))
    assert s.micro_batch == 3


# ---- EasyR1: verl's fork with its own schema

_EASYR1_CFG = '''data:
  max_prompt_length: 1024
  max_response_length: 512
worker:
  actor:
    global_batch_size: 64
    micro_batch_size_per_device_for_update: 2
    model:
      model_path: org/base
      enable_gradient_checkpointing: true
      lora:
        rank: 0
    offload:
      offload_params: false
  rollout:
    n: 4
trainer:
  n_gpus_per_node: 8
  nnodes: 1
'''


def test_easyr1s_config_and_overrides_are_read_under_verls_names(tmp_path):
    _write(tmp_path, "config.yaml", _EASYR1_CFG)
    s = load_config(_write(tmp_path, "run.sh", "MODEL=org/tuned\npython3 -m verl.trainer.main config=config.yaml "
                                               "worker.actor.model.model_path=${MODEL} trainer.n_gpus_per_node=4\n"))
    assert (s.model, s.stage, s.method, s.seq_len, s.micro_batch, s.grad_accum, s.n_gpus, s.grad_ckpt) == \
        ("org/tuned", "ppo", "full", 1536, 2, 32, 4, True)


def test_easyr1s_positive_lora_rank_trains_lora(tmp_path):
    _write(tmp_path, "config.yaml", _EASYR1_CFG.replace("rank: 0", "rank: 16\n        alpha: 32"))
    s = load_config(_write(tmp_path, "run.sh", "python3 -m verl.trainer.main config=config.yaml\n"))
    assert (s.method, s.lora_rank, s.lora_alpha) == ("lora", 16, 32)


# ---- a TRL config whose model its script takes elsewhere

def test_a_trl_grpo_yaml_with_no_model_is_read_and_asks_for_the_model(tmp_path):
    s = load_config(_write(tmp_path, "grpo.yaml", "per_device_train_batch_size: 8\ngradient_accumulation_steps: 8\n"
                                                  "num_generations: 8\nuse_vllm: true\nuse_peft: true\nlora_r: 64\n"
                                                  "lora_alpha: 64\nload_in_4bit: true\nbf16: true\n"))
    assert (s.framework, s.method, s.quant_bits, s.lora_rank, s.micro_batch, s.model) == ("trl", "qlora", 4, 64, 8, "")
    assert s.no_model is not None and s.no_model.code == "config.trl_no_model"


def test_a_yaml_of_trainer_keys_alone_is_still_refused(tmp_path):
    import pytest

    from oomdoctor.errors import InputError

    with pytest.raises(InputError):
        load_config(_write(tmp_path, "args.yaml", "per_device_train_batch_size: 8\nuse_vllm: true\nbf16: true\n"))


# ---- a command written inside a line of prose

def test_a_command_quoted_inside_a_prose_line_is_read(tmp_path):
    s = load_config(_write(tmp_path, "note.md", "> 4 GPUs, my settings: torchrun --nproc_per_node 2 -m pkg.train "
                                                "--model_name_or_path org/m --per_device_train_batch_size 3 --fp16\n"))
    assert (s.model, s.n_gpus, s.micro_batch, s.precision) == ("org/m", 2, 3, "fp16")


def test_prose_naming_a_launcher_without_flags_is_no_command(tmp_path):
    import pytest

    from oomdoctor.errors import InputError

    with pytest.raises(InputError):
        load_config(_write(tmp_path, "note.md", "> I used torchrun on four GPUs and it ran out of memory.\n"))


# ---- a Python script's own usage line, and the accelerate configs TRL ships

_USAGE = '''"""
Train it.
accelerate launch --config_file examples/accelerate_configs/deepspeed_zero3.yaml examples/scripts/sft_x.py
"""
from trl import SFTConfig, SFTTrainer
args = SFTConfig(output_dir="o", per_device_train_batch_size=2, max_length=1024)
trainer = SFTTrainer(model="org/m", args=args)
'''


def test_a_scripts_usage_line_launches_it_with_the_config_trl_ships_under_that_path(tmp_path):
    s = load_config(_write(tmp_path, "sft_x.py", _USAGE))
    assert (s.model, s.micro_batch, s.zero_stage, s.n_gpus) == ("org/m", 2, 3, 8)
    assert any(getattr(w, "code", "") == "config.trl_accelerate_shipped" for w in s.warnings)


def test_an_accelerate_config_of_another_folder_is_not_taken_for_trls(tmp_path):
    s = load_config(_write(tmp_path, "sft_x.py", _USAGE.replace("examples/accelerate_configs/deepspeed_zero3.yaml",
                                                                 "my_configs/multi_gpu.yaml")))
    assert s.n_gpus == 1


def test_a_usage_line_without_a_launcher_leaves_one_process(tmp_path):
    s = load_config(_write(tmp_path, "sft_x.py", _USAGE.replace(
        "accelerate launch --config_file examples/accelerate_configs/deepspeed_zero3.yaml", "python")))
    assert (s.n_gpus, s.zero_stage) == (1, 0)


def test_a_scripts_per_device_batch_size_flag_is_the_micro_batch(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "accelerate launch --num_processes 2 sft.py --model_name org/m "
                                               "--per_device_batch_size 4 --max_length 512\n"))
    assert (s.micro_batch, s.n_gpus) == (4, 2)
