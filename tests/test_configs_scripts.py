"""Launch scripts read as a shell would expand them: the training command, its entry point's own flags,
the launcher's GPU count; a foreign script's unknown values are notes, never exit 2."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.cli import main
from oomdoctor.configs import classify, edits_for, load_config
from oomdoctor.configs.shell import read_script
from oomdoctor.facts import Change
from oomdoctor.words import say

# The issue's scripts: four reproductions from the real-config corpus, and a custom script of the kind it
# describes (its own flags --load_in_bits, --lora_r, --block_size).
SCRIPTS = Path(__file__).parent / "data" / "real-configs" / "scripts"
CUSTOM = Path(__file__).parent / "data" / "scripts" / "custom_qlora.sh"


def _write(tmp_path, name, text) -> str:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return str(p)


def _facts(s) -> tuple:
    return (s.model, s.method, s.lora_rank if s.method in ("lora", "qlora") else None, s.quant_bits, s.seq_len,
            s.n_gpus)


def _notes(s) -> list[str]:
    return [say(w) for w in s.warnings]


# ---------------------------------------------------------------- the shell reader

def test_assignments_exports_defaults_and_continuations_expand():
    text = ('A=1\nexport B="two words"\nC=${UNSET:-fallback}\nD=${A:+set}\nE=$((A * 8 + 2))\n'
            'echo $A "$B" $B ${C} $D $E \\\n  --tail\n')
    cmd = read_script(text, "t.sh").commands[0]
    assert [w.text for w in cmd.words] == ["echo", "1", "two words", "two", "words", "fallback", "set", "10", "--tail"]
    assert cmd.words[-1].line == 7 and cmd.env["B"].text == "two words"


def test_what_needs_running_stays_unknown_with_its_reason():
    cmd = read_script("N=$(nvidia-smi -L | wc -l)\nrun --a $N --b $1 --c `date` --d $RANDOM --e $((X+1))\n",
                      "t.sh").commands[0]
    unknown = {w.text: w.unknown for w in cmd.words if not w.known}
    assert unknown == {"$N": "$(nvidia-smi -L | wc -l)", "$1": "$1", "`date`": "$(date)",
                       "$RANDOM": "$RANDOM", "$((X+1))": "$((X+1))"}


def test_a_variable_of_launcher_options_with_one_unknown_value_keeps_its_known_words():
    # QwenLM/Qwen2 examples/sft/finetune.sh: GPUS_PER_NODE=$(python -c …), DISTRIBUTED_ARGS="--nproc_per_node
    # $GPUS_PER_NODE --nnodes …", `torchrun $DISTRIBUTED_ARGS finetune.py`: finetune.py is still the script.
    text = ('G=$(python -c "import torch; print(torch.cuda.device_count())")\nN=${NNODES:-1}\n'
            'ARGS="\n    --nproc_per_node $G \\\n    --nnodes $N\n"\ntorchrun $ARGS finetune.py --use_lora False\n')
    cmd = read_script(text, "t.sh").commands[0]
    assert [w.text for w in cmd.words][:5] == ["torchrun", "--nproc_per_node", "$(python -c \"import torch; print("
                                               "torch.cuda.device_count())\")", "--nnodes", "1"]
    assert [w.known for w in cmd.words] == [True, True, False, True, True, True, True, True]
    assert read_script('A="x $1"\nrun "$A"\n', "t.sh").commands[0].words[1].unknown == "$1"


def test_a_prefix_assignment_is_that_commands_environment_only():
    sc = read_script("CUDA_VISIBLE_DEVICES=0,1 torchrun a.py\ntorchrun b.py\n", "t.sh")
    assert sc.commands[0].env["CUDA_VISIBLE_DEVICES"].text == "0,1"
    assert "CUDA_VISIBLE_DEVICES" not in sc.commands[1].env


def test_here_documents_are_kept_by_the_file_they_write_and_not_run():
    sc = read_script('cat > ds.json <<EOF\n{"zero_optimization": {"stage": 3}}\nEOF\nrun x\n', "t.sh")
    assert sc.heredocs == {"ds.json": '{"zero_optimization": {"stage": 3}}\n'}
    assert [c.words[0].text for c in sc.commands] == ["cat", "run"]


def test_a_loop_over_configs_reads_the_first_and_says_how_many():
    sc = read_script("for c in a.yaml b.yaml; do\n  llamafactory-cli train $c\ndone\n", "t.sh")
    assert [w.text for w in sc.commands[0].words] == ["llamafactory-cli", "train", "a.yaml"]
    assert sc.loops == (("c", 2, 1),)


def test_comments_quotes_and_escapes():
    cmd = read_script("X=1\nrun 'a # b' \"c $X\" d\\ e \"$UNSET\" # trailing\n", "t.sh").commands[0]
    assert [w.text for w in cmd.words] == ["run", "a # b", "c 1", "d e", '"$UNSET"']
    assert cmd.words[-1].unknown == "$UNSET"      # set in the user's environment, not in the script


# ---------------------------------------------------------------- real launch scripts

SCRIPT_FACTS = {
    # script: (model, method, rank, bits, seq, gpus)
    "qwen_finetune_lora_ds.sh": ("Qwen/Qwen-7B", "lora", 64, None, 1024, 4),
    "qwen_finetune_qlora_single_gpu.sh": ("Qwen/Qwen-7B-Chat-Int4", "qlora", 64, 4, 2048, 1),
    "cla2_run_sft.sh": ("/data/models/chinese-alpaca-2-7b", "qlora", 32, 4, 2048, 2),
    "fastchat_train_lora.sh": ("lmsys/vicuna-7b-v1.5", "lora", 16, None, 2048, 2),
    "custom_qlora.sh": ("meta-llama/Llama-2-7b-hf", "qlora", 8, 4, 2048, 2),
}


@pytest.mark.parametrize("name", sorted(SCRIPT_FACTS))
def test_the_scripts_of_the_issue_give_model_method_rank_quantisation_length_and_gpus(name):
    path = str(CUSTOM if name == CUSTOM.name else SCRIPTS / name)
    assert classify(path) == "config"
    s = load_config(path)
    assert _facts(s) == SCRIPT_FACTS[name]
    assert s.sources["n_gpus"].file == path


def test_a_variable_assigned_at_the_top_is_what_the_flag_gets_with_its_line():
    s = load_config(str(SCRIPTS / "cla2_run_sft.sh"))
    assert s.sources["lora_rank"].key == "lora_rank" and s.sources["lora_rank"].line == 34
    assert s.lora_alpha == 64


def test_a_foreign_flags_own_values_are_notes_never_exit_2(capsys):
    path = str(SCRIPTS / "fastchat_train_lora.sh")
    code = main([path, "--gpu", "80GiB", "--model", "meta-llama/Llama-2-7b-hf", "--plain"])
    out, err = capsys.readouterr()
    assert code in (0, 1, 3), err
    custom = load_config(str(CUSTOM))
    assert any("flash_attn" in n and "maybe" in n for n in _notes(custom))
    assert custom.attention == "sdpa"


def test_an_unknown_scripts_guesses_are_said_in_notes():
    s = load_config(str(CUSTOM))
    notes = " ".join(_notes(s))
    assert "--block_size" in notes and "--lora_r" in notes and "--load_in_bits" in notes


def test_an_unknown_scripts_flags_are_read_only_through_trainingarguments_names_and_conventions(tmp_path):
    path = _write(tmp_path, "t.sh", "python my_train.py --model_name_or_path m --stage_two 1 --micro 9 "
                  "--per_device_train_batch_size 3 --ranks 5 --gradient_checkpointing\n")
    s = load_config(path)
    assert (s.micro_batch, s.method, s.grad_ckpt) == (3, "full", True)


def test_an_unresolved_model_is_a_note_and_the_model_flag_fills_it(tmp_path, capsys):
    path = _write(tmp_path, "t.sh", 'torchrun --nproc_per_node 2 run_clm.py --model_name_or_path "$1" '
                  "--block_size 1024 --per_device_train_batch_size 2 --bf16\n")
    s = load_config(path)
    assert s.model == "" and any("--model" in n for n in _notes(s))
    assert (s.seq_len, s.n_gpus, s.extras["entry"]) == (1024, 2, "hf_examples")
    assert main([path, "--gpu", "80GiB", "--model", "meta-llama/Llama-2-7b-hf", "--plain"]) in (0, 1, 3)


# ---------------------------------------------------------------- launchers' GPU counts

@pytest.mark.parametrize("line,gpus", [
    ("torchrun --nproc_per_node 4 train.py", 4),
    ("torchrun --nproc-per-node=8 --nnodes 2 train.py", 16),
    ("python -m torch.distributed.launch --nproc_per_node 2 train.py", 2),
    ("deepspeed --num_gpus 3 train.py", 3),
    ("deepspeed --include localhost:1,0 train.py", 2),
    ("deepspeed --include worker-0:0,1@worker-1:0,1,2 train.py", 5),
    ("CUDA_VISIBLE_DEVICES=0,1,2 deepspeed train.py", 3),
    ("accelerate launch --num_processes 6 train.py", 6),
    ("accelerate launch --gpu_ids 0,1 train.py", 2),
    ("CUDA_VISIBLE_DEVICES=2,3 torchrun --nproc_per_node gpu train.py", 2),
    ("python train.py", 1),
    ("NPROC_PER_NODE=4 swift sft --model m --train_type lora", 4),
])
def test_the_launchers_gpu_count(tmp_path, line, gpus):
    flags = "" if "swift" in line else " --model_name_or_path meta-llama/Llama-2-7b-hf --per_device_train_batch_size 1"
    s = load_config(_write(tmp_path, "t.sh", line + flags + "\n"))
    assert s.n_gpus == gpus


def test_a_gpu_count_known_only_at_run_time_is_a_note(tmp_path):
    s = load_config(_write(tmp_path, "t.sh", "G=$(nvidia-smi -L | wc -l)\ntorchrun --nproc_per_node $G train.py "
                           "--model_name_or_path m --per_device_train_batch_size 1\n"))
    assert s.n_gpus == 1 and any("--gpus" in n and "nvidia-smi" in n for n in _notes(s))


# ---------------------------------------------------------------- entry points that train with a config file

def test_llamafactory_cli_with_a_yaml_and_overrides(tmp_path):
    _write(tmp_path, "examples/train.yaml", "model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\n"
           "finetuning_type: lora\ncutoff_len: 2048\nper_device_train_batch_size: 4\n")
    path = _write(tmp_path, "run.sh", "export CUDA_VISIBLE_DEVICES=0,1,2,3\n"
                  "llamafactory-cli train examples/train.yaml per_device_train_batch_size=2 cutoff_len=4096\n")
    s = load_config(path)
    assert (s.framework, s.micro_batch, s.seq_len, s.n_gpus) == ("llamafactory", 2, 4096, 4)
    assert s.sources["micro_batch"].file == path and s.sources["micro_batch"].line == 2
    assert s.config_file.endswith("train.yaml") and s.sources["n_gpus"].key == "CUDA_VISIBLE_DEVICES"


def test_a_config_file_the_script_names_but_is_not_here_is_one_clear_error(tmp_path):
    from oomdoctor.errors import InputError

    path = _write(tmp_path, "run.sh", "llamafactory-cli train examples/missing.yaml\n")
    with pytest.raises(InputError) as err:
        load_config(path)
    assert err.value.line == 1 and "examples/missing.yaml" in str(err.value)


def test_tune_run_with_a_config_and_overrides(tmp_path):
    _write(tmp_path, "8B_lora.yaml", "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
           "  lora_rank: 16\ntokenizer:\n  max_seq_len: 2048\nbatch_size: 4\ndtype: bf16\n")
    path = _write(tmp_path, "run.sh", "tune run --nproc_per_node 2 lora_finetune_distributed --config 8B_lora.yaml "
                  "batch_size=8 tokenizer.max_seq_len=8192\n")
    s = load_config(path)
    assert (s.framework, s.method, s.lora_rank, s.micro_batch, s.seq_len, s.n_gpus) == \
        ("torchtune", "lora", 16, 8, 8192, 2)


def test_a_torchtune_configs_header_command_gives_recipe_and_gpus_and_a_launch_script_overrides_it(tmp_path):
    # pytorch/torchtune recipes/configs/gemma2/9B_full.yaml: no FSDP key; the header says the recipe and GPUs.
    header = ("# Config for multi-device full finetuning in full_finetune_distributed.py\n#\n"
              "#   tune run --nnodes 1 --nproc_per_node 4 full_finetune_distributed --config gemma2/9B_full\n")
    body = "model:\n  _component_: torchtune.models.gemma2.gemma2_9b\nbatch_size: 1\ndtype: bf16\n"
    yaml_path = _write(tmp_path, "9B_full.yaml", header + body)
    s = load_config(yaml_path)
    assert (s.fsdp, s.n_gpus, s.sources["n_gpus"].line) == ("full_shard", 4, 3)
    assert any("tune run full_finetune_distributed" in n for n in _notes(s))
    s = load_config(_write(tmp_path, "run.sh", "tune run --nproc_per_node 8 full_finetune_distributed "
                           "--config 9B_full.yaml\n"))
    assert (s.fsdp, s.n_gpus) == ("full_shard", 8)
    single = load_config(_write(tmp_path, "1B.yaml", "# tune run full_finetune_single_device --config x\n" + body))
    assert (single.fsdp, single.n_gpus) == (None, 1)


def test_accelerate_launch_with_its_config_and_a_trl_recipe(tmp_path):
    _write(tmp_path, "recipes/zero3.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
           "deepspeed_config:\n  zero_stage: 3\n  offload_optimizer_device: none\nmixed_precision: bf16\n"
           "num_processes: 8\n")
    _write(tmp_path, "recipes/sft.yaml", "model_name_or_path: Qwen/Qwen2.5-7B\ndataset_name: x\nmax_length: 4096\n"
           "per_device_train_batch_size: 2\ngradient_accumulation_steps: 4\nbf16: true\n")
    path = _write(tmp_path, "launch.sh", "accelerate launch --config_file recipes/zero3.yaml scripts/run_sft.py "
                  "recipes/sft.yaml --per_device_train_batch_size 1\n")
    s = load_config(path)
    assert (s.framework, s.seq_len, s.micro_batch, s.zero_stage, s.n_gpus) == ("trl", 4096, 1, 3, 8)
    assert not any("names no model" in n for n in _notes(s))


def test_firefly_train_py_with_its_argument_file(tmp_path):
    _write(tmp_path, "train_args/sft/qlora/qwen.json",
           '{"output_dir": "o", "model_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "train_file": "d.jsonl",'
           ' "template_name": "qwen", "max_seq_length": 2048, "per_device_train_batch_size": 1,'
           ' "gradient_accumulation_steps": 16, "lora_rank": 64, "lora_alpha": 16, "fp16": true}')
    path = _write(tmp_path, "run.sh", "torchrun --nproc_per_node=2 train.py --train_args_file "
                  "train_args/sft/qlora/qwen.json\n")
    s = load_config(path)
    assert _facts(s) == ("Qwen/Qwen2.5-7B-Instruct", "qlora", 64, 4, 2048, 2)


def test_swift_sft_reads_its_own_flags(tmp_path):
    path = _write(tmp_path, "run.sh", "CUDA_VISIBLE_DEVICES=0 swift sft --model Qwen/Qwen2.5-7B-Instruct "
                  "--train_type lora --lora_rank 16 --quant_bits 4 --max_length 4096 --torch_dtype bfloat16 "
                  "--gradient_accumulation_steps 16\n")
    s = load_config(path)
    assert _facts(s) == ("Qwen/Qwen2.5-7B-Instruct", "qlora", 16, 4, 4096, 1)
    assert (s.micro_batch, s.grad_ckpt, s.load_dtype) == (1, True, "bf16")


def test_axolotl_train_reads_its_yaml(tmp_path):
    _write(tmp_path, "cfg.yml", "base_model: NousResearch/Llama-2-7b-hf\nadapter: qlora\nload_in_4bit: true\n"
           "lora_r: 32\nsequence_len: 4096\nmicro_batch_size: 2\n")
    s = load_config(_write(tmp_path, "run.sh", "CUDA_VISIBLE_DEVICES=0,1 axolotl train cfg.yml\n"))
    assert _facts(s) == ("NousResearch/Llama-2-7b-hf", "qlora", 32, 4, 4096, 2)


def test_a_deepspeed_json_the_script_writes_itself_is_read(tmp_path):
    path = _write(tmp_path, "run.sh", 'cat > ds.json <<EOF\n{"zero_optimization": {"stage": 3, "offload_optimizer": '
                  '{"device": "cpu"}}}\nEOF\ndeepspeed --num_gpus 2 train.py --model_name_or_path m '
                  "--per_device_train_batch_size 1 --deepspeed ds.json\n")
    s = load_config(path)
    assert (s.zero_stage, s.offload_optimizer, s.n_gpus) == (3, True, 2)


# ---------------------------------------------------------------- patching a script through its entry's table

def test_a_known_scripts_own_flag_is_patched_and_an_unknown_one_is_never_added():
    qwen = load_config(str(SCRIPTS / "qwen_finetune_lora_ds.sh"))
    edits = {e.key_path: e.value for e in edits_for(qwen, [Change("seq_len", 1024, 512), Change("lora_rank", 64, 16)])}
    assert edits == {("model_max_length",): 512, ("lora_r",): 16}
    custom = load_config(str(CUSTOM))
    edits = {e.key_path: e.value for e in edits_for(custom, [Change("seq_len", 2048, 1024),
                                                             Change("attention", "sdpa", "fa2")])}
    assert edits == {("block_size",): 1024}        # no --flash_attn / --attn_implementation added to a foreign script
    from oomdoctor.configs import key_for

    assert key_for(custom, "attention") == (None, None)
    assert key_for(custom, "grad_ckpt") == (str(CUSTOM), "gradient_checkpointing")
    assert key_for(qwen, "seq_len") == (str(SCRIPTS / "qwen_finetune_lora_ds.sh"), "model_max_length")


def test_deepspeed_chat_main_py_reads_its_own_argparse_flags_and_patches_only_what_it_takes():
    # DeepSpeed-Chat step1 main.py: --zero_stage (from $2 with an `if` default), --dtype (fp16 unset), --offload,
    # --lora_dim alone trains every weight, a bare --deepspeed is DeepSpeed's switch and no JSON.
    full = load_config(str(SCRIPTS / "dschat_step1_lora_dim_full.sh"))
    assert (full.method, full.zero_stage, full.precision, full.seq_len, full.deepspeed_file) == ("full", 3, "fp16", 1024,
                                                                                                   None)
    assert any("--only_optimize_lora" in n for n in _notes(full)) and not any("JSON" in n for n in _notes(full))
    lora = load_config(str(SCRIPTS / "dschat_step1_only_optimize_lora.sh"))
    assert (lora.method, lora.lora_rank, lora.precision) == ("lora", 32, "bf16")
    edits = {e.key_path: e.value for e in edits_for(lora, [
        Change("zero_stage", 0, 2), Change("precision", "bf16", "fp16"), Change("micro_batch", 4, 2),
        Change("seq_len", 768, 512), Change("grad_ckpt", False, True), Change("offload_optimizer", False, True)])}
    # store_true switches (--gradient_checkpointing, --offload) take no value: those stay advice
    assert edits == {("zero_stage",): 2, ("dtype",): "fp16", ("per_device_train_batch_size",): 2,
                     ("max_seq_len",): 512}


def test_an_unknown_script_with_cutoff_len_alone_is_not_read_as_llamafactory(tmp_path):
    # Alpaca-CoT's uniform_finetune.py shares --cutoff_len with LLaMA-Factory but names the rank --lora_r
    path = _write(tmp_path, "t.sh", "python3 uniform_finetune.py --model_type chatglm --model_name_or_path m "
                  "--lora_r 32 --per_gpu_train_batch_size 2 --cutoff_len 512\n")
    s = load_config(path)
    assert s.framework == "hf"
    assert (s.lora_rank, s.seq_len, s.micro_batch) == (32, 512, 2)


def test_an_unknown_script_with_llamafactory_flags_beside_cutoff_len_is_still_read_as_llamafactory(tmp_path):
    path = _write(tmp_path, "t.sh", "python my_train.py --model_name_or_path m --stage sft --finetuning_type lora "
                  "--cutoff_len 512\n")
    assert load_config(path).framework == "llamafactory"


def test_litgpt_finetune_lora_reads_its_flags_and_the_scripts_own_constants(tmp_path):
    # lit-gpt finetune/lora.py (2023): --precision and --quantize are flags; micro_batch_size 4, batch_size 128,
    # lora_r 8 are module constants (Lightning-AI/litgpt#459's command)
    path = _write(tmp_path, "t.sh", 'python finetune/lora.py --data_dir data/mydata/ --precision "bf16-true" '
                  '--quantize "bnb.nf4-dq" --checkpoint_dir /models/vicuna-7b-v1.5 --out_dir out\n')
    s = load_config(path)
    assert s.extras["entry"] == "litgpt_lora"
    assert (s.method, s.quant_bits, s.lora_rank) == ("qlora", 4, 8)
    assert (s.micro_batch, s.grad_accum) == (4, 32)
    assert (s.precision, s.load_dtype) == ("bf16", "bf16")       # -true: the weights stay in bf16
    assert s.model == "/models/vicuna-7b-v1.5"


def test_chinese_vicuna_finetune_reads_the_scripts_own_constants(tmp_path):
    # Chinese-Vicuna finetune.py: argparse takes paths and --test_size only; MICRO_BATCH_SIZE 4, BATCH_SIZE 128,
    # CUTOFF_LEN 256, LORA_R 8 and the 8-bit base are module constants (Facico/Chinese-Vicuna#141's command)
    path = _write(tmp_path, "t.sh", "python finetune.py --data_path ./sample/merge_sample.json --test_size 9\n")
    s = load_config(path)
    assert s.extras["entry"] == "chinese_vicuna"
    assert (s.method, s.quant_bits, s.lora_rank, s.seq_len) == ("qlora", 8, 8, 256)
    assert (s.micro_batch, s.grad_accum, s.precision) == (4, 32, "fp16")
    # its batch is a constant in the script: no --per_device_train_batch_size is added to its command line
    assert edits_for(s, [Change("micro_batch", 4, 1), Change("grad_accum", 32, 128)]) == []


def test_chinese_vicuna_finetune_chat_reads_its_flags_and_its_constants(tmp_path):
    # Chinese-Vicuna finetune_chat.py: --micro_batch / --total_batch are flags; CUTOFF_LEN 2048, LoRA r 8 on all
    # seven projections and the 8-bit base are module constants (scripts/finetune_chat.sh, three GPUs:
    # Facico/Chinese-Vicuna#202's run)
    path = _write(tmp_path, "t.sh", "CUDA_VISIBLE_DEVICES=0,1,2 torchrun --nproc_per_node=3 finetune_chat.py "
                  "--data_path d.jsonl --model_path vicuna-13b --micro_batch 4 --total_batch 128 --test_size 0 "
                  "--prompt_type chat\n")
    s = load_config(path)
    assert s.extras["entry"] == "chinese_vicuna_chat"
    assert (s.method, s.quant_bits, s.lora_rank, s.seq_len, s.grad_ckpt) == ("qlora", 8, 8, 2048, True)
    assert set(s.lora_targets) == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    # the total batch is split over the three processes: 128 // 4 // 3
    assert (s.n_gpus, s.micro_batch, s.grad_accum, s.precision) == (3, 4, 10, "fp16")


def test_finetune_chat_accumulation_follows_its_micro_batch_flag_under_the_default_total(tmp_path):
    path = _write(tmp_path, "t.sh", "python finetune_chat.py --model_path m --micro_batch 2 --prompt_type chat\n")
    s = load_config(path)
    assert (s.n_gpus, s.micro_batch, s.grad_accum) == (1, 2, 64)     # BATCH_SIZE 128 // 2 on one process


def test_a_finetune_py_with_alpaca_lora_flags_is_still_alpaca_lora(tmp_path):
    path = _write(tmp_path, "t.sh", "python finetune.py --base_model m --data_path d.json --micro_batch_size 2\n")
    assert load_config(path).extras["entry"] == "alpaca_lora"


def test_litgpt_mixed_precision_keeps_fp32_weights_and_its_constants_are_never_written_as_flags(tmp_path):
    path = _write(tmp_path, "t.sh", "python finetune/lora.py --precision 16-mixed --checkpoint_dir ckpt/llama\n")
    s = load_config(path)
    assert (s.method, s.precision, s.load_dtype) == ("lora", "fp16", "fp32")
    # micro_batch_size is a constant in the script: no --per_device_train_batch_size is added to its command line
    assert edits_for(s, [Change("micro_batch", 4, 1), Change("grad_accum", 32, 128)]) == []


@pytest.mark.parametrize("word", ["'[q_proj,v_proj]'", "'[\"q_proj\", \"v_proj\"]'", "q_proj,v_proj"])
def test_a_lora_target_list_written_as_one_word_gives_the_module_names(tmp_path, word):
    # alpaca-lora's README passes --lora_target_modules '[q_proj,v_proj]' (python-fire reads it as a list)
    path = _write(tmp_path, "t.sh", "python finetune.py --base_model m --micro_batch_size 2 --cutoff_len 256 "
                  f"--lora_r 8 --lora_target_modules {word}\n")
    assert load_config(path).lora_targets == ("q_proj", "v_proj")


def test_swift_celoss_parallel_size_makes_the_sequence_parallel_loss_chunked(tmp_path):
    # ms-swift reads CELOSS_PARALLEL_SIZE from the environment (swift/trainers/utils.py per_token_loss_func_sp):
    # set and positive under sequence parallelism, the loss is ChunkedCrossEntropyLoss
    text = (SCRIPTS / "swift_sequence_parallel_celoss.sh").read_text()
    setup = load_config(_write(tmp_path, "sp.sh", text))
    assert setup.seq_parallel == 8 and setup.loss_kernel == "chunked" and not setup.fused_ce
    assert setup.sources["loss_kernel"].key == "CELOSS_PARALLEL_SIZE"
    assert setup.mechanisms.loss == "chunked"
    unset = load_config(_write(tmp_path, "unset.sh", text.replace("CELOSS_PARALLEL_SIZE=2048 \\\n", "")))
    assert unset.loss_kernel == ""
    zero = load_config(_write(tmp_path, "zero.sh", text.replace("CELOSS_PARALLEL_SIZE=2048", "CELOSS_PARALLEL_SIZE=0")))
    assert zero.loss_kernel == ""
    no_sp = load_config(_write(tmp_path, "nosp.sh", text.replace("--sequence_parallel_size 8", "--logging_first_step true")))
    assert no_sp.seq_parallel == 1 and no_sp.loss_kernel == ""
