"""The readers the eighth first-sight audit (2026-12h) asked for, each by its framework's own rule: LLaMA-Factory
v1's padding-free batchers pack; a Python script's arithmetic on its own literals; an unsloth 4-bit base with no
get_peft_model call in the file (transformers does not fine-tune a purely quantised model)."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


V1 = "model: Qwen/Qwen3-0.6B\nmicro_batch_size: 4\ncutoff_len: 2048\nbatching_strategy: {}\n"


@pytest.mark.parametrize("strategy, packed", [("dynamic_padding_free", True), ("padding_free", True),
                                              ("dynamic_batching", False), ("normal", False)])
def test_lf_v1_padding_free_batching_packs_a_micro_batch_into_one_row(tmp_path, strategy, packed):
    s = load_config(_write(tmp_path, "v1.yaml", V1.format(strategy)))
    assert (s.packing, s.micro_batch, s.seq_len) == (packed, 4, 2048)
    if packed:
        assert s.sources["packing"].key == "batching_strategy"


UNSLOTH = '''from unsloth import FastLanguageModel


def main():
    lora_rank = 32
    model, tokenizer = FastLanguageModel.from_pretrained(model_name="unsloth/Qwen3-4B-Base", max_seq_length=2048,
                                                         load_in_4bit=True)
    model = FastLanguageModel.get_peft_model(model, r=lora_rank, lora_alpha=lora_rank * 2,
                                             use_gradient_checkpointing="unsloth")
'''


def test_arithmetic_on_a_name_assigned_a_literal_is_folded(tmp_path):
    s = load_config(_write(tmp_path, "train.py", UNSLOTH))
    assert (s.lora_rank, s.lora_alpha, s.quant_bits) == (32, 64, 4)


def test_arithmetic_on_a_value_only_the_run_knows_keeps_the_default(tmp_path):
    text = UNSLOTH.replace("lora_rank * 2", "lora_rank * int(input())")
    s = load_config(_write(tmp_path, "train.py", text))
    assert s.lora_alpha == 16
    assert any(w.code == "config.python_value" for w in s.warnings)


GEMMA = '''from unsloth import FastModel
from trl import SFTConfig, SFTTrainer

model, tokenizer = FastModel.from_pretrained(model_name="unsloth/gemma-3-27b-it-unsloth-bnb-4bit",
                                             max_seq_length=17500, load_in_4bit=True, full_finetuning=False)
trainer = SFTTrainer(model=model, args=SFTConfig(per_device_train_batch_size=1, gradient_accumulation_steps=4))
'''


def test_a_4bit_unsloth_base_without_get_peft_model_is_read_as_qlora_with_unsloths_defaults(tmp_path):
    s = load_config(_write(tmp_path, "train.py", GEMMA))
    assert (s.method, s.quant_bits, s.lora_rank, s.lora_alpha, s.seq_len) == ("qlora", 4, 16, 16, 17500)
    assert any(w.code == "config.python_adapter_unseen" for w in s.warnings)


def test_a_16bit_unsloth_base_without_get_peft_model_stays_as_written(tmp_path):
    s = load_config(_write(tmp_path, "train.py", GEMMA.replace("load_in_4bit=True", "load_in_4bit=False")))
    assert s.quant_bits is None
    assert not any(w.code == "config.python_adapter_unseen" for w in s.warnings)


FSDP_QLORA = """python train.py \\
--context_length 256 \\
--model_name codellama/CodeLlama-34b-hf \\
--train_type custom_qlora \\
--batch_size 4 \\
--gradient_accumulation_steps 4 \\
--precision bf16_buffers_autocast
"""


def test_fsdp_qlora_train_py_is_read_with_its_own_flags_and_defaults(tmp_path):
    s = load_config(_write(tmp_path, "train_sql.sh", FSDP_QLORA))
    assert (s.model, s.method, s.quant_bits, s.lora_rank, s.seq_len) == ("codellama/CodeLlama-34b-hf", "qlora", 4, 64, 256)
    assert (s.micro_batch, s.grad_accum, s.precision, s.load_dtype) == (4, 4, "bf16", "bf16")
    assert (s.fsdp, s.offload_params, s.offload_optimizer, s.grad_ckpt) == ("full_shard", True, True, True)


def test_fsdp_qlora_flags_turn_its_sharding_and_offload_off(tmp_path):
    text = FSDP_QLORA.rstrip() + " \\\n--sharding_strategy ddp --use_cpu_offload False --train_type lora\n"
    s = load_config(_write(tmp_path, "train_sql.sh", text))
    assert (s.fsdp, s.offload_params, s.method, s.quant_bits) == (None, False, "lora", None)


def test_fsdp_qlora_spawns_world_size_processes_itself(tmp_path):
    s = load_config(_write(tmp_path, "train_sql.sh", FSDP_QLORA.rstrip() + " --world_size 2\n"))
    assert s.n_gpus == 2


def test_a_train_py_without_fsdp_qlora_flags_is_not_taken_for_it(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python train.py --model_name_or_path gpt2 --per_device_train_batch_size 2\n"))
    assert s.extras.get("entry") != "fsdp_qlora" and s.fsdp is None


def test_unsloth_cli_is_read_with_its_argparse_defaults(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", 'python unsloth-cli.py --model_name "unsloth/llama-3-8b"\n'))
    assert (s.method, s.lora_rank, s.lora_alpha, s.seq_len) == ("lora", 16, 16, 2048)
    assert (s.micro_batch, s.grad_accum, s.grad_ckpt, s.optimizer) == (2, 4, True, "adamw_8bit")
    s = load_config(_write(tmp_path, "run4.sh", 'python unsloth-cli.py --model_name "unsloth/llama-3-8b" --load_in_4bit '
                                                '--r 64 --use_gradient_checkpointing "unsloth" --gradient_accumulation_steps 8\n'))
    assert (s.method, s.quant_bits, s.lora_rank, s.grad_accum, s.grad_ckpt) == ("qlora", 4, 64, 8, True)



DPO = """read -r -d '' training_commands <<EOF
openrlhf.cli.train_dpo \\
   --train.batch_size 256 \\
   --train.micro_batch_size 1 \\
   --model.model_name_or_path OpenRLHF/Llama-3-8b-sft-mixture \\
   --data.max_len 8192 \\
   --ds.zero_stage 3
EOF

if [[ ${1} != "slurm" ]]; then
    deepspeed --module $training_commands
fi
"""
SLURM = """#!/bin/bash
#SBATCH -N {nodes}
readonly training_script="train_dpo.sh"
readonly GPUS_PER_NODE=8
source ./${{training_script}} slurm
srun --container-image=img bash -c " cd /openrlhf; torchrun \\
--nproc_per_node $GPUS_PER_NODE --nnodes $SLURM_NNODES --node_rank $SLURM_PROCID \\
--master_addr $MASTER_ADDR -m ${{training_commands}}"
"""


@pytest.mark.parametrize("nodes, gpus", [(1, 8), (2, 16)])
def test_a_sourced_files_variables_reach_the_srun_bash_c_string_and_sbatch_nodes_count(tmp_path, nodes, gpus):
    _write(tmp_path, "train_dpo.sh", DPO)
    s = load_config(_write(tmp_path, "train_slurm.sh", SLURM.format(nodes=nodes)))
    assert (s.framework, s.stage, s.model, s.seq_len) == ("openrlhf", "dpo", "OpenRLHF/Llama-3-8b-sft-mixture", 8192)
    assert (s.n_gpus, s.micro_batch, s.grad_accum, s.zero_stage) == (gpus, 1, 256 // gpus, 3)


def test_a_sourced_files_own_commands_are_not_the_scripts(tmp_path):
    _write(tmp_path, "train_dpo.sh", DPO)
    s = load_config(_write(tmp_path, "train_slurm.sh", SLURM.format(nodes=1)))
    assert s.sources["n_gpus"].file.endswith("train_slurm.sh")


def test_without_the_sourced_file_no_training_command_is_found(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "train_slurm.sh", SLURM.format(nodes=1)))


@pytest.mark.parametrize("model, bits", [("ISTA-DASLab/Meta-Llama-3-8B-Instruct-AQLM-2Bit-1x16", 2),
                                         ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", 8),
                                         ("TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ", 4)])
def test_a_quantised_checkpoints_name_gives_its_bits_under_lf_lora(tmp_path, model, bits):
    text = f"model_name_or_path: {model}\nstage: sft\nfinetuning_type: lora\ncutoff_len: 1024\n"
    s = load_config(_write(tmp_path, "lf.yaml", text))
    assert (s.method, s.quant_bits) == ("qlora", bits)


def test_trls_2023_sft_trainer_script_is_read_with_its_own_script_arguments(tmp_path):
    cmd = ("python3 examples/scripts/sft_trainer.py --model_name EleutherAI/gpt-neox-20b --dataset_name imdb --use_peft "
           "--batch_size 1 --gradient_accumulation_steps 8\n")
    s = load_config(_write(tmp_path, "run.sh", cmd))
    assert (s.framework, s.model, s.method, s.lora_rank, s.lora_alpha) == ("trl", "EleutherAI/gpt-neox-20b", "lora", 64, 16)
    assert (s.seq_len, s.micro_batch, s.grad_accum, s.precision) == (1024, 1, 8, "fp32")
    s = load_config(_write(tmp_path, "run2.sh", "python examples/scripts/sft_trainer.py --model_name gpt2 --load_in_4bit\n"))
    assert (s.method, s.quant_bits, s.micro_batch, s.grad_accum) == ("qlora", 4, 64, 16)


def test_todays_trl_example_scripts_are_still_trlparser_scripts(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python examples/scripts/sft.py --model_name_or_path Qwen/Qwen3-0.6B "
                                               "--dataset_name trl-lib/Capybara --use_peft\n"))
    assert (s.framework, s.lora_rank, s.precision) == ("trl", 16, "bf16")


VISION = """model:
  _component_: torchtune.models.llama3_2_vision.llama3_2_vision_11b
{extra}tokenizer:
  max_seq_len: 8192
batch_size: 2
dtype: bf16
"""


@pytest.mark.parametrize("extra, frozen", [("", ("decoder",)), ("  decoder_trainable: True\n", None),
                                           ("  decoder_trainable: True\n  encoder_trainable: False\n", ("encoder",))])
def test_a_frozen_part_of_a_torchtune_vision_model_is_said(tmp_path, extra, frozen):
    s = load_config(_write(tmp_path, "11B_full.yaml", VISION.format(extra=extra)))
    notes = [dict(w.args)["parts"] for w in s.warnings if w.code == "config.torchtune_frozen_parts"]
    assert s.method == "full"
    assert notes == ([frozen] if frozen else [])


RLOO = """from peft import LoraConfig
from trl import RLOOConfig, RLOOTrainer

trainer = RLOOTrainer(model="Qwen/Qwen3-0.6B", args=RLOOConfig(output_dir="o", gradient_accumulation_steps=2),
                      peft_config=LoraConfig({args}))
trainer.train()
"""


@pytest.mark.parametrize("args, rank, alpha", [("", 8, 8), ("r=16", 16, 8), ("r=16, lora_alpha=32", 16, 32)])
def test_a_lora_config_call_takes_peft_defaults_for_what_it_leaves_out(tmp_path, args, rank, alpha):
    s = load_config(_write(tmp_path, "rloo.py", RLOO.format(args=args)))
    assert (s.method, s.lora_rank, s.lora_alpha, s.grad_accum) == ("lora", rank, alpha, 2)


RM = """CUDA_VISIBLE_DEVICES=0,1 python3 training/reward_modeling.py \\
    --model_name_or_path Qwen/Qwen3.5-2B --train_file_dir ./data/reward --validation_file_dir ./data/reward \\
    --per_device_train_batch_size 4 --use_peft True --lora_rank 8 {lengths}
"""


@pytest.mark.parametrize("lengths, seq", [("--max_source_length 1024 --max_target_length 256", 1280), ("", 2560)])
def test_medicalgpt_reward_modeling_is_a_reward_model_over_a_prompt_answer_pair(tmp_path, lengths, seq):
    s = load_config(_write(tmp_path, "run_rm.sh", RM.format(lengths=lengths)))
    assert (s.stage, s.method, s.seq_len, s.lora_alpha) == ("rm", "lora", seq, 32)


LF2023 = """deepspeed --num_gpus 8 \\
    --num_node 3 \\
    --master_addr 10.0.0.1 \\ 
    --master_port 9901 src/train_bash.py \\
    --stage {stage} --model_name_or_path /m/Llama-2-70b-hf --max_source_length 1024 --max_target_length 512 \\
    --finetuning_type lora --per_device_train_batch_size 4
"""


def test_a_backslash_with_a_blank_after_it_is_the_continuation_the_paste_meant(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", LF2023.format(stage="sft")))
    assert (s.framework, s.model, s.micro_batch) == ("llamafactory", "/m/Llama-2-70b-hf", 4)
    assert any(w.code == "config.script.rejoined" for w in s.warnings)


def test_deepspeeds_runner_takes_a_unique_prefix_of_num_nodes(tmp_path):
    assert load_config(_write(tmp_path, "run.sh", LF2023.format(stage="sft"))).n_gpus == 24


@pytest.mark.parametrize("stage, seq", [("sft", 1536), ("pt", 1024)])
def test_lf_before_cutoff_len_a_sample_is_source_plus_target(tmp_path, stage, seq):
    assert load_config(_write(tmp_path, "run.sh", LF2023.format(stage=stage))).seq_len == seq
