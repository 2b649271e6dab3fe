"""The readers the eleventh first-sight audit (2026-12l: official files from folders no round drew from, and thread
pastes) asked for, each by the tool's own rule: accelerate's one-process `distributed_type: NO`; axolotl's
`float16`; a pre-quantised checkpoint named in any HF script; a launch command pasted in a Markdown note, spelled
in Python strings, or a Python snippet indented as a whole; an accelerate config known only by its name; a JSON
config pasted as a Python dict, without its braces or cut off; DeepSpeed's deprecated offload booleans; torchtune's
old CLI and a run whose config is not here; a config pasted under a label; ms-swift's args.json; LitGPT's
pretraining YAML; Unsloth Studio's YAMLs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from oomdoctor.configs import classify, load_config
from oomdoctor.errors import InputError


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _codes(setup) -> list[str]:
    return [w.code for w in setup.warnings]


# ---------------------------------------------------------------- accelerate, axolotl, HF scripts

@pytest.mark.parametrize("kind, n", [("'NO'", 1), ("MULTI_GPU", 4)])
def test_accelerate_distributed_type_no_runs_one_process_whatever_num_processes_says(tmp_path, kind, n):
    s = load_config(_write(tmp_path, "acc.yaml", f"compute_environment: LOCAL_MACHINE\ndistributed_type: {kind}\n"
                                                 "mixed_precision: bf16\nnum_processes: 4\n"))
    assert s.n_gpus == n
    assert s.sources["n_gpus"].key == ("distributed_type" if n == 1 else "num_processes")


@pytest.mark.parametrize("bf16, precision", [("false", "fp16"), (None, "bf16")])
def test_axolotl_float16_trains_in_fp16_only_when_bf16_is_turned_off(tmp_path, bf16, precision):
    text = "base_model: org/m-3b\nsequence_len: 512\nmicro_batch_size: 1\nfloat16: true\nfp16: false\n"
    if bf16 is not None:
        text += f"bf16: {bf16}\n"
    s = load_config(_write(tmp_path, "ax.yml", text))
    assert (s.precision, s.load_dtype) == (precision, precision)


@pytest.mark.parametrize("model, bits", [("org/Llama-3.1-8B-Instruct-GPTQ-INT4", 4), ("org/Qwen2-7B-GPTQ-Int8", 8),
                                         ("org/Mistral-7B-AWQ", 4)])
def test_lora_over_a_checkpoint_named_quantised_is_qlora_in_an_hf_script(tmp_path, model, bits):
    sh = (f"accelerate launch train.py --model_name_or_path {model} --use_peft_lora True --lora_r 8 "
          "--per_device_train_batch_size 2 --packing True --max_length 1024\n")
    s = load_config(_write(tmp_path, "run.sh", sh))
    assert (s.method, s.quant_bits, s.lora_rank, s.packing, s.seq_len) == ("qlora", bits, 8, True, 1024)
    assert s.sources["quant_bits"].key == "model_name_or_path"


def test_an_unquantised_checkpoint_stays_lora(tmp_path):
    sh = "python train.py --model_name_or_path org/Llama-3.1-8B --use_peft_lora True --lora_r 8\n"
    s = load_config(_write(tmp_path, "run.sh", sh))
    assert (s.method, s.quant_bits) == ("lora", None)


# ---------------------------------------------------------------- a command where no script was expected

PASTE = """Script to reproduce :
```
NPROC_PER_NODE=2 \\
swift sft \\
    --model org/m-7b \\
    --tuner_type full \\
    --per_device_train_batch_size 2 \\
    --max_length 1024
```
"""

LOST_BACKSLASHES = """```shell
torchrun
--nproc_per_node 8  src/train.py
--stage sft
--model_name_or_path org/m-7b
--finetuning_type full
--per_device_train_batch_size 1
--cutoff_len 4096
```
"""


@pytest.mark.parametrize("name", ["note.md", "paste"])
def test_a_launch_command_pasted_in_a_note_is_read_as_the_script_it_is(tmp_path, name):
    path = _write(tmp_path, name, PASTE)
    s = load_config(path)
    assert (s.framework, s.model, s.method, s.micro_batch, s.seq_len, s.n_gpus) == (
        "ms-swift", "org/m-7b", "full", 2, 1024, 2)
    assert classify(path) == "config"


def test_a_note_whose_flags_lost_their_backslashes_is_read_rejoined(tmp_path):
    s = load_config(_write(tmp_path, "cmd.md", LOST_BACKSLASHES))
    assert (s.framework, s.model, s.seq_len, s.n_gpus) == ("llamafactory", "org/m-7b", 4096, 8)


def test_a_log_that_shows_the_command_it_ran_stays_a_log(tmp_path):
    log = ("```\ntorchrun --nproc_per_node 2 train.py --model_name_or_path org/m --bf16\nloading weights\n"
           "step 1 loss 2.3\n/bin/bash: line 1: 1234 Killed  torchrun --nproc_per_node 2 train.py\n```\n")
    assert classify(_write(tmp_path, "run.md", log)) == "log"


def test_a_note_with_no_command_is_still_refused(tmp_path):
    path = _write(tmp_path, "note.md", "Some words about training.\n\nNo command here.\n")
    with pytest.raises(InputError):
        load_config(path)


# ---------------------------------------------------------------- Python files

INDENTED = """ model, tok = FastLanguageModel.from_pretrained("org/m-8b", max_seq_length=2048,
                                                   load_in_4bit=False)
 model = FastLanguageModel.get_peft_model(model, r=32, lora_alpha=16,
                                          use_gradient_checkpointing=False)
"""


def test_a_python_snippet_indented_as_a_whole_is_read_dedented(tmp_path):
    s = load_config(_write(tmp_path, "snippet.py", INDENTED))
    assert (s.model, s.method, s.lora_rank, s.lora_alpha, s.seq_len, s.grad_ckpt, s.use_unsloth) == (
        "org/m-8b", "lora", 32, 16, 2048, False, True)


ADJACENT = """cmd = (
    "ray job submit --address=http://127.0.0.1:8265 "
    "  -- python3 -m openrlhf.cli.train_ppo_ray "
    "  --actor_num_nodes 1 --actor_num_gpus_per_node 4 "
    # the reward model
    "  --pretrain /models/m-8b "
    "  --micro_train_batch_size 4 "
    "  --train_batch_size 64 "
"""

ARGV = """[
    "accelerate",
    "launch",
    "--config_file=recipes/accelerate_configs/zero3.yaml",
    "src/open_r1/sft.py",
    # "--config=x.yaml",
    "--model_name_or_path=org/m-7b",
    "--max_seq_length=4096",
    "--bf16",
]
"""


def test_a_command_spelled_in_adjacent_python_strings_is_read_even_cut_before_its_bracket(tmp_path):
    s = load_config(_write(tmp_path, "launch.py", ADJACENT))
    assert (s.framework, s.model, s.micro_batch, s.n_gpus, s.grad_accum) == ("openrlhf", "/models/m-8b", 4, 4, 4)
    assert "config.python_command" in _codes(s)
    assert s.sources["micro_batch"].line == 7         # the string's own line in the file


def test_an_argv_list_of_strings_is_read_as_the_command_and_its_accelerate_config_guessed_by_name(tmp_path):
    s = load_config(_write(tmp_path, "args.py", ARGV))
    assert (s.model, s.seq_len, s.precision, s.zero_stage) == ("org/m-7b", 4096, "bf16", 3)
    assert "config.ds_missing_guess" in _codes(s)


def test_a_python_file_with_strings_but_no_command_is_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "x.py", 'a = ["one", "two", "three"]\nb = ("x " "y")\n'))


def test_an_accelerate_config_whose_name_says_no_stage_is_not_guessed(tmp_path):
    sh = "accelerate launch --config_file cfg/multi.yaml train.py --model_name_or_path org/m --bf16\n"
    s = load_config(_write(tmp_path, "run.sh", sh))
    assert s.zero_stage == 0 and "config.ds_missing_guess" not in _codes(s)


# ---------------------------------------------------------------- JSON as pasted

FRAGMENT = """    "zero_optimization": {
        "stage": 2,
       "reduce_bucket_size": 1e7,
        "overlap_comm": True,
        "cpu_offload": True
    },
"""


def test_a_deepspeed_fragment_in_python_literals_without_braces_is_read_mended(tmp_path):
    s = load_config(_write(tmp_path, "ds.json", FRAGMENT))
    assert (s.zero_stage, s.offload_optimizer, s.offload_params) == (2, True, False)
    assert "config.json_mended" in _codes(s)
    assert s.sources["offload_optimizer"].line == 5


@pytest.mark.parametrize("key, field", [("cpu_offload", "offload_optimizer"), ("cpu_offload_param", "offload_params")])
def test_deepspeeds_deprecated_offload_booleans_mean_cpu_offload(tmp_path, key, field):
    doc = {"zero_optimization": {"stage": 3, key: True}}
    s = load_config(_write(tmp_path, "ds.json", json.dumps(doc)))
    assert getattr(s, field) is True


def test_a_json_cut_off_mid_value_is_read_up_to_its_last_complete_member(tmp_path):
    text = ('{\n  "sft_type": "lora",\n  "model_id_or_path": "org/m-8b",\n  "dtype": "bf16",\n'
            '  "packing": false,\n  "output_dir": "/r')
    s = load_config(_write(tmp_path, "sft_args.json", text))
    assert (s.framework, s.model, s.method, s.precision, s.packing) == ("ms-swift", "org/m-8b", "lora", "bf16", False)
    assert "config.json_mended" in _codes(s)


def test_a_broken_json_with_nothing_to_mend_is_still_refused_at_its_line(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "ds.json", '{"zero_optimization": {"stage": 2}} trailing words\n'))


# ---------------------------------------------------------------- ms-swift argument files

def test_an_ms_swift_args_file_is_read_as_swift_reads_its_flags(tmp_path):
    doc = {"model": "org/m-7b", "tuner_type": "lora", "lora_rank": 16, "per_device_train_batch_size": 4,
           "gradient_accumulation_steps": 2, "max_length": 4096, "torch_dtype": "bfloat16", "deepspeed": "zero3"}
    s = load_config(_write(tmp_path, "args.json", json.dumps(doc)))
    assert (s.framework, s.model, s.method, s.lora_rank, s.lora_alpha, s.micro_batch, s.grad_accum, s.seq_len,
            s.precision) == ("ms-swift", "org/m-7b", "lora", 16, 32, 4, 2, 4096, "bf16")


# ---------------------------------------------------------------- torchtune

OLD_TUNE = """tune --nnodes 1 --nproc_per_node 2 lora_finetune_distributed --config alpaca_llama2_lora --override \\
model._component_=torchtune.models.llama2.lora_llama2_7b model.lora_rank=16 model.lora_alpha=32 \\
batch_size=2 gradient_accumulation_steps=8
"""


def test_torchtunes_old_cli_with_its_config_not_here_reads_the_overrides(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", OLD_TUNE))
    assert (s.framework, s.model, s.method, s.lora_rank, s.lora_alpha, s.micro_batch, s.grad_accum, s.n_gpus) == (
        "torchtune", "meta-llama/Llama-2-7b-hf", "lora", 16, 32, 2, 8, 2)
    assert "config.script.config_overrides_only" in _codes(s)


def test_a_tune_run_without_its_config_and_without_overrides_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "run.sh", "tune run lora_finetune_single_device --config llama2/7B_lora\n"))


# ---------------------------------------------------------------- a config under a label

LABELLED = """Accelerate config:
  compute_environment: LOCAL_MACHINE
  distributed_type: FSDP
  fsdp_config:
    fsdp_offload_params: true
  mixed_precision: bf16
  num_processes: 8
"""

ENV_REPORT = """- Platform: Linux-6.1
- Python version: 3.11.9
- Accelerate config: 
  - compute_environment: LOCAL_MACHINE
  - distributed_type: DEEPSPEED
  - mixed_precision: bf16
  - num_processes: 4
  - deepspeed_config: {'offload_optimizer_device': 'cpu', 'offload_param_device': 'none', 'zero_stage': 2}
- Datasets version: 3.0.0
"""


def test_a_config_pasted_under_a_label_line_is_read_as_the_file(tmp_path):
    path = _write(tmp_path, "acc.yaml", LABELLED)
    s = load_config(path)
    assert (s.fsdp, s.offload_params, s.n_gpus, s.precision) == ("full_shard", True, 8, "bf16")
    assert s.sources["n_gpus"].line == 7 and "config.labelled" in _codes(s)
    assert classify(path) == "config"


def test_the_accelerate_config_item_of_an_env_report_is_read(tmp_path):
    s = load_config(_write(tmp_path, "env.yaml", ENV_REPORT))
    assert (s.zero_stage, s.offload_optimizer, s.n_gpus, s.precision) == (2, True, 4, "bf16")


def test_a_label_over_something_no_reader_claims_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "x.yaml", "Notes:\n  colour: blue\n  size: 3\n"))


# ---------------------------------------------------------------- LitGPT pretraining

PRETRAIN = """model_name: pythia-160m
precision: bf16-mixed
tokenizer_dir: checkpoints/EleutherAI/pythia-160m
train:
  global_batch_size: 64
  micro_batch_size: 4
devices: 2
"""


def test_litgpts_pretraining_yaml_is_read_with_pretrain_defaults(tmp_path):
    s = load_config(_write(tmp_path, "pretrain.yaml", PRETRAIN))
    assert (s.framework, s.model, s.stage, s.method, s.micro_batch, s.grad_accum, s.n_gpus, s.fsdp, s.packing,
            s.precision) == ("litgpt", "EleutherAI/pythia-160m", "pt", "full", 4, 8, 2, "hybrid_shard", True, "bf16")


# ---------------------------------------------------------------- Unsloth Studio

STUDIO = """training:
  max_seq_length: 4096
  batch_size: 2
  gradient_accumulation_steps: 4
  gradient_checkpointing: "unsloth"
  optim: "adamw_8bit"
lora:
  lora_r: 32
  lora_alpha: 64
"""


def test_an_unsloth_studio_preset_names_its_model_by_file_name_and_trains_qlora_by_default(tmp_path):
    s = load_config(_write(tmp_path, "unsloth_Qwen3-8B.yaml", STUDIO))
    assert (s.model, s.method, s.quant_bits, s.lora_rank, s.lora_alpha, s.seq_len, s.micro_batch, s.grad_accum,
            s.grad_ckpt, s.optimizer, s.use_unsloth) == ("unsloth/Qwen3-8B", "qlora", 4, 32, 64, 4096, 2, 4, True,
                                                         "adamw_8bit", True)
    assert "config.unsloth_studio_model" in _codes(s)


@pytest.mark.parametrize("extra, method", [("  load_in_4bit: false\n", "lora"), ("  training_type: full\n", "full")])
def test_an_unsloth_studio_config_with_a_model_key_and_its_own_method(tmp_path, extra, method):
    text = "model: org/m-1b\n" + STUDIO.replace("training:\n", "training:\n" + extra)
    s = load_config(_write(tmp_path, "studio.yaml", text))
    assert (s.model, s.method) == ("org/m-1b", method)
    assert "config.unsloth_studio_model" not in _codes(s)


# ---------------------------------------------------------------- after 2026-12m

def test_accelerates_replicate_and_shard_groups_are_hybrid_sharding(tmp_path):
    text = ("distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2\nmixed_precision: bf16\nnum_processes: 8\n"
            "parallelism_config:\n  parallelism_config_dp_replicate_size: {r}\n  parallelism_config_dp_shard_size: 4\n")
    assert load_config(_write(tmp_path, "a.yaml", text.format(r=2))).fsdp == "hybrid_shard"
    assert load_config(_write(tmp_path, "b.yaml", text.format(r=1))).fsdp == "full_shard"


def test_a_yaml_paste_cut_inside_its_last_line_is_read_without_it(tmp_path):
    s = load_config(_write(tmp_path, "ax.yml", "base_model: org/m\nsequence_len: 1024\nmicro_batch_size: 6\neval_step"))
    assert (s.model, s.seq_len, s.micro_batch) == ("org/m", 1024, 6)
    assert any(w.code == "config.yaml_cut" and dict(w.args)["line"] == 4 for w in s.warnings)


def test_a_yaml_broken_before_its_last_line_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "ax.yml", "base_model: org/m\nsequence_len 1024\nmicro_batch_size: 6\n"))
