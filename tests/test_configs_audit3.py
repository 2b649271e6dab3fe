"""Audit 2026-12c: the kinds that came out wrong at first sight on 50 fresh configs, each as a rule of the
framework's own grammar — a Python training script read from its calls' literal arguments, TRL's scripts and
its `trl <cmd>` launch keys, LLaMA-Factory's Ray workers, torchtune's preference losses, ms-swift's unsloth
backend, OpenRLHF's Ray actor group and `ray job submit -- cmd`."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from oomdoctor.configs import edits_for, load_config
from oomdoctor.errors import InputError
from oomdoctor.facts import Change
from oomdoctor.words import say

CORPUS = Path(__file__).parent / "data" / "real-configs"


def _write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return str(p)


# ---------------------------------------------------------------- Python scripts

def test_a_trl_python_script_is_read_from_its_calls_with_trls_defaults_and_lines():
    path = str(CORPUS / "trl" / "py" / "lora_without_regret_sft.py")
    s = load_config(path)
    assert (s.framework, s.model, s.stage, s.method) == ("trl", "Qwen/Qwen2.5-3B-Instruct", "sft", "lora")
    assert (s.lora_rank, s.lora_alpha, s.lora_targets) == (256, 16, ("all",))
    assert (s.micro_batch, s.grad_accum) == (1, 4)
    # SFTConfig's own defaults where the call is silent: max_length 1024, bf16, gradient checkpointing on
    assert (s.seq_len, s.precision, s.grad_ckpt) == (1024, "bf16", True)
    assert s.sources["lora_rank"].line == 8 and s.sources["micro_batch"].line == 12
    assert s.sources["model"].line == 19                  # SFTTrainer(model="…")
    assert any(getattr(w, "code", "") == "config.python_read" for w in s.warnings)


def test_an_unsloth_script_is_qlora_by_unsloths_own_defaults(tmp_path):
    path = _write(tmp_path, "train.py", """
from unsloth import FastLanguageModel
from trl import SFTTrainer, SFTConfig
model, tok = FastLanguageModel.from_pretrained(model_name="unsloth/Qwen3-8B")
model = FastLanguageModel.get_peft_model(model, r=32, lora_alpha=32, use_gradient_checkpointing="unsloth")
trainer = SFTTrainer(model=model, args=SFTConfig(per_device_train_batch_size=2, gradient_accumulation_steps=8))
""")
    s = load_config(path)
    # FastLanguageModel.from_pretrained loads a 4-bit base and sets 2048 tokens unless told otherwise
    assert (s.method, s.quant_bits, s.seq_len, s.use_unsloth) == ("qlora", 4, 2048, True)
    assert (s.lora_rank, s.micro_batch, s.grad_accum, s.grad_ckpt) == (32, 2, 8, True)


def test_a_value_the_script_computes_keeps_its_default_with_a_note_and_a_constant_is_followed(tmp_path):
    path = _write(tmp_path, "train.py", """
from transformers import TrainingArguments, Trainer, AutoModelForCausalLM
MODEL = "meta-llama/Llama-3.1-8B"
model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.bfloat16)
args = TrainingArguments(output_dir="o", per_device_train_batch_size=cfg.batch, bf16=True)
Trainer(model=model, args=args).train()
""")
    s = load_config(path)
    assert (s.framework, s.model, s.method, s.precision, s.load_dtype) == \
        ("hf", "meta-llama/Llama-3.1-8B", "full", "bf16", "bf16")
    assert s.micro_batch == 8                             # TrainingArguments' default, the call's value unknown
    notes = [say(w) for w in s.warnings]
    assert any("per_device_train_batch_size" in n and ":5" in n for n in notes)


def test_a_dpo_config_and_a_bnb_quantised_base_make_a_qlora_dpo_run(tmp_path):
    path = _write(tmp_path, "dpo.py", """
from peft import LoraConfig
from transformers import BitsAndBytesConfig, AutoModelForCausalLM
from trl import DPOConfig, DPOTrainer
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B-Instruct", quantization_config=bnb)
peft = LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"])
DPOTrainer(model=model, args=DPOConfig(max_length=2048, per_device_train_batch_size=1), peft_config=peft).train()
""")
    s = load_config(path)
    assert (s.framework, s.stage, s.method, s.quant_bits, s.lora_rank) == ("trl", "dpo", "qlora", 4, 16)
    assert (s.lora_targets, s.seq_len) == (("q_proj", "v_proj"), 2048)


def test_no_patch_is_written_into_a_python_script():
    s = load_config(str(CORPUS / "trl" / "py" / "lora_without_regret_sft.py"))
    assert edits_for(s, [Change(field="micro_batch", before=1, after=1), Change(field="seq_len", before=1024,
                                                                                after=512)]) == []


def test_a_python_file_that_makes_no_training_call_is_still_refused(tmp_path):
    path = _write(tmp_path, "helper.py", "import os\nprint(os.listdir('.'))\n")
    with pytest.raises(InputError):
        load_config(path)


# ---------------------------------------------------------------- TRL scripts and `trl <cmd>`

@pytest.mark.parametrize("script,stage", [("trl/scripts/kto.py", "kto"), ("examples/scripts/reward_modeling.py", "rm"),
                                          ("examples/scripts/sft_gpt_oss.py", "sft")])
def test_trls_own_scripts_are_trl_with_the_stage_their_name_says(tmp_path, script, stage):
    path = _write(tmp_path, "run.sh", f"python {script} --model_name_or_path Qwen/Qwen2-0.5B "
                                      "--dataset_name trl-lib/x --use_peft --packing\n")
    s = load_config(path)
    assert (s.framework, s.stage, s.method, s.lora_rank, s.seq_len) == ("trl", stage, "lora", 16, 1024)


def test_an_examples_scripts_file_without_trls_arguments_is_not_taken_for_trl(tmp_path):
    path = _write(tmp_path, "run.sh", "python examples/scripts/train.py --model_name_or_path m "
                                      "--per_device_train_batch_size 2 --bf16\n")
    assert load_config(path).framework == "hf"


def test_trl_cli_launch_keys_in_the_config_file_and_the_subcommands_stage(tmp_path):
    _write(tmp_path, "dpo_config.yaml", "model_name_or_path: Qwen/Qwen2.5-0.5B\nnum_processes: 4\n")
    s = load_config(_write(tmp_path, "launch.sh", "trl dpo --config dpo_config.yaml\n"))
    assert (s.stage, s.n_gpus) == ("dpo", 4)
    assert s.sources["n_gpus"].key == "num_processes"


@pytest.mark.parametrize("profile,zero,fsdp,gpus", [("zero2", 2, None, 8), ("zero3", 3, None, 8),
                                                    ("fsdp2", 0, "full_shard", 8), ("single_gpu", 0, None, 1)])
def test_trls_accelerate_profiles_by_name(tmp_path, profile, zero, fsdp, gpus):
    s = load_config(_write(tmp_path, "run.sh", f"trl sft --model_name_or_path m --accelerate_config {profile}\n"))
    assert (s.zero_stage, s.fsdp, s.n_gpus) == (zero, fsdp, gpus)


def test_a_trl_accelerate_config_path_is_read_as_the_launchers(tmp_path):
    _write(tmp_path, "acc.yaml", "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"
                                 "mixed_precision: bf16\nnum_processes: 2\n")
    s = load_config(_write(tmp_path, "run.sh", "trl sft --model_name_or_path m --accelerate_config acc.yaml\n"))
    assert (s.zero_stage, s.n_gpus) == (3, 2)


# ---------------------------------------------------------------- other frameworks

def test_llamafactory_ray_workers_are_the_gpu_count():
    s = load_config(str(CORPUS / "lf" / "head_qwen3_lora_sft_ray.yaml"))
    assert s.n_gpus == 4 and s.sources["n_gpus"].key == "ray_num_workers"


def test_torchtunes_preference_loss_names_the_stage():
    s = load_config(str(CORPUS / "torchtune" / "head_llama3_1_8B_lora_dpo.yaml"))
    assert s.stage == "dpo" and s.sources["stage"].key == "loss._component_"


def test_ms_swift_unsloth_backend(tmp_path):
    s = load_config(_write(tmp_path, "t.sh", "swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_backend unsloth\n"))
    assert s.use_unsloth is True
    s = load_config(_write(tmp_path, "p.sh", "swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_backend peft\n"))
    assert s.use_unsloth is False


@pytest.mark.parametrize("flags,gpus", [("", 8), ("--actor.num_gpus_per_node 4", 4),
                                        ("--actor.num_nodes 2 --actor.num_gpus_per_node 4", 8)])
def test_openrlhf_ppo_ray_places_its_actor_on_its_own_ray_gpus(tmp_path, flags, gpus):
    s = load_config(_write(tmp_path, "ppo.sh", "python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path "
                                               f"OpenRLHF/Llama-3-8b-sft-mixture --actor.gradient_checkpointing_enable "
                                               f"{flags}\n"))
    assert (s.framework, s.stage, s.model, s.grad_ckpt, s.n_gpus) == \
        ("openrlhf", "ppo", "OpenRLHF/Llama-3-8b-sft-mixture", True, gpus)


def test_ray_job_submit_runs_the_command_after_the_double_dash(tmp_path):
    text = ('ARGS=(\n   --actor.model_name_or_path Qwen/Qwen3-4B\n   # --reward.model_name_or_path x\n'
            '   --ds.zero_stage 3\n)\n'
            'ray job submit --address="http://127.0.0.1:8265" \\\n   -- python3 -m openrlhf.cli.train_ppo_ray \\\n'
            '   ${ARGS[@]}\n')
    s = load_config(_write(tmp_path, "r.sh", text))
    assert (s.framework, s.model, s.zero_stage) == ("openrlhf", "Qwen/Qwen3-4B", 3)


# ---------------------------------------------------------------- the Python reader never fails another way

_FRAGMENTS = ("from trl import SFTConfig, SFTTrainer\n", "SFTConfig(per_device_train_batch_size=2)\n",
              "LoraConfig(r=x, lora_alpha=[1, 2])\n", "TrainingArguments(bf16='yes', max_steps=-1)\n",
              "FastLanguageModel.from_pretrained(model_name=None, load_in_4bit=3)\n", "SFTTrainer(model=1)\n",
              "x = (((((\n", "def f(:\n", "n = 1\nn = 2\nSFTConfig(max_length=n)\n", "\0", "   \t\n",
              "AutoModelForCausalLM.from_pretrained(**kw)\n", "BitsAndBytesConfig(load_in_8bit=True)\n",
              "SFTConfig(per_device_train_batch_size=0, gradient_accumulation_steps=1e400)\n")


@pytest.mark.parametrize("seed", range(40))
def test_any_mix_of_fragments_is_read_or_refused_in_one_line(tmp_path, seed):
    import random

    rng = random.Random(seed)
    text = "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 6)))
    path = _write(tmp_path, "t.py", text)
    try:
        load_config(path)
    except InputError:
        pass


def test_provenance_names_the_call_and_argument_the_script_wrote():
    s = load_config(str(CORPUS / "trl" / "py" / "user_unsloth_llama3_qlora.py"))
    assert s.sources["lora_rank"].key == "FastLanguageModel.get_peft_model(r=)"
    assert s.sources["micro_batch"].key == "TrainingArguments(per_device_train_batch_size=)"
    assert (s.sources["model"].key, s.sources["model"].line) == ("FastLanguageModel.from_pretrained(model_name=)", 10)


# ---------------------------------------------------------------- configs pasted with their Markdown

def _fenced(text: str, path: str) -> str:
    lang = {"sh": "bash", "py": "python", "json": "json"}.get(path.rsplit(".", 1)[-1], "yaml")
    # A fence longer than any backtick fence inside (a docstring's usage block): CommonMark §4.5, a closing fence
    # is at least as long as the opening one, so that is how a writer quotes text that holds a fence.
    inner = max((len(m) for m in re.findall(r"(?m)^[ \t]*(`{3,})", text)), default=2)
    mark = "`" * max(3, inner + 1)
    return f"This is my config:\n\n{mark}{lang}\n{text.rstrip()}\n{mark}\n\nIt fails with **CUDA out of memory**.\n"


def _quoted(text: str, path: str) -> str:
    return "".join(("> " + ln) if ln.strip() else ln for ln in text.splitlines(keepends=True))


def _quoted_fence(text: str, path: str) -> str:
    return _quoted("~~~\n" + text.rstrip() + "\n~~~\n", path)


@pytest.mark.parametrize("wrap", [_fenced, _quoted, _quoted_fence])
def test_every_corpus_config_pasted_with_markdown_gives_the_same_facts(tmp_path, wrap):
    import shutil

    import test_real_configs as corpus

    copy = tmp_path / "real-configs"
    shutil.copytree(CORPUS, copy)
    wrong = []
    for entry in corpus.MANIFEST:
        if entry.get("expect_refused"):
            continue                    # a tool no reader knows: refused plain or pasted
        if corpus._read(entry).extras.get("markdown_paste"):
            continue                    # a file that is itself a paste (as it came from a thread) is not pasted again
        target = copy / entry["file"]
        original = target.read_text(encoding="utf-8")
        target.write_text(wrap(original, entry["file"]), encoding="utf-8")
        try:
            flags = entry.get("flags") or {}
            s = load_config(str(target), framework_version=flags.get("version"), model=flags.get("model"))
            if entry.get("with"):
                from oomdoctor.configs import combine

                s = combine(s, load_config(str(copy / entry["with"])))
            plain = corpus._read(entry)
            fields = [f for f in entry["facts"] if f != "version"]
            diff = [f for f in fields if getattr(s, f) != getattr(plain, f)]
            if diff or not s.extras.get("markdown_paste"):
                wrong.append((entry["file"], diff))
        except InputError as err:
            wrong.append((entry["file"], str(err)))
        finally:
            target.write_text(original, encoding="utf-8")
    assert not wrong, wrong


def test_a_paste_is_not_patched_and_keeps_the_files_own_line_numbers(tmp_path):
    path = _write(tmp_path, "c.yaml", "Config:\n```yaml\nmodel_name_or_path: Qwen/Qwen3-8B\nstage: sft\n"
                                      "finetuning_type: lora\ncutoff_len: 4096\n```\n")
    s = load_config(path)
    assert (s.model, s.seq_len, s.sources["seq_len"].line) == ("Qwen/Qwen3-8B", 4096, 6)
    assert edits_for(s, [Change(field="seq_len", before=4096, after=2048)]) == []
    assert any(getattr(w, "code", "") == "config.markdown_read" for w in s.warnings)


# NovaSky-AI/SkyThought issue 7 (https://github.com/NovaSky-AI/SkyThought/issues/7), 2025-01: every flag on its own
# line, no `\` (paths shortened).
_NO_CONTINUATIONS = """torchrun
--nnodes $NNODES
--master_addr $MASTER_ADDR
--node_rank $NODE_RANK
--nproc_per_node 8  LLaMA-Factory/src/train.py
--deepspeed LLaMA-Factory/examples/deepspeed/ds_z3_config.json
--stage sft
--template qwen25
--model_name_or_path saves/qwen-qwq/full/sft
--do_train
--finetuning_type full
--per_device_train_batch_size 1
--gradient_accumulation_steps 1
--bf16
--flash_attn
--cutoff_len 8192
"""


def test_a_paste_that_lost_its_line_continuations_is_read_as_one_command_with_a_note(tmp_path):
    s = load_config(_write(tmp_path, "single_node.sh", _NO_CONTINUATIONS))
    assert (s.framework, s.method, s.seq_len, s.micro_batch, s.precision) == ("llamafactory", "full", 8192, 1, "bf16")
    assert s.sources["seq_len"].line == 16                # every line keeps its number
    assert any(getattr(w, "code", "") == "config.script.rejoined" for w in s.warnings)


def test_a_script_whose_command_is_found_is_never_rejoined(tmp_path):
    text = "python train.py --model_name_or_path m --per_device_train_batch_size 2 \\\n  --bf16\n--foo 1\n"
    s = load_config(_write(tmp_path, "run.sh", text))
    assert not any(getattr(w, "code", "") == "config.script.rejoined" for w in s.warnings)


# ---------------------------------------------------------------- the kinds 2026-12e found

def test_ms_swift_use_galore(tmp_path):
    s = load_config(_write(tmp_path, "g.sh", "swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_type full "
                                             "--use_galore true\n"))
    assert (s.method, s.galore) == ("full", True)


def test_the_command_in_a_bash_c_string_is_the_training_command_with_the_outer_environment(tmp_path):
    text = ('export CUDA_VISIBLE_DEVICES=0,1\n'
            'srun --nodes=1 -w "$node" --container-image=img bash -c \\\n'
            '"pip install x \\\n&& torchrun --nproc_per_node 2 train.py --model_name_or_path m \\\n'
            '    --per_device_train_batch_size 4 --bf16"\n')
    s = load_config(_write(tmp_path, "slurm.sh", text))
    assert (s.model, s.micro_batch, s.n_gpus, s.precision) == ("m", 4, 2, "bf16")
    assert s.sources["micro_batch"].line == 3


def test_notebook_cells_with_ipython_lines_tuple_names_and_a_model_reloaded_after_training(tmp_path):
    text = ("# %%\n!pip install -q trl peft\n%env WANDB_DISABLED=true\n# %%\n"
            'model_id, output_dir = "Qwen/Qwen3-8B", "out"\n'
            "from trl import SFTConfig, SFTTrainer\n"
            "args = SFTConfig(output_dir=output_dir, per_device_train_batch_size=2, max_length=2048)\n"
            "trainer = SFTTrainer(model=model_id, args=args)\ntrainer.train()\n"
            '# %%\nbase = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-0.6B", dtype="float32")\n')
    s = load_config(_write(tmp_path, "nb.py", text))
    assert (s.model, s.micro_batch, s.seq_len, s.load_dtype) == ("Qwen/Qwen3-8B", 2, 2048, "fp32")
    assert s.sources["model"].line == 8
    assert "load_dtype" not in s.sources or not s.sources["load_dtype"].file     # not the reloaded model's


def test_an_ipython_line_alone_does_not_make_a_script(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "x.py", "!nvidia-smi\n%matplotlib inline\n"))


def test_a_fence_inside_a_yaml_block_scalar_is_not_taken_for_a_paste(tmp_path):
    text = ("base_model: Qwen/Qwen3-8B\nsequence_len: 4096\nmicro_batch_size: 2\nsystem_prompt: |\n"
            "  Answer with code:\n  ```python\n  print(1)\n  ```\n")
    s = load_config(_write(tmp_path, "ax.yaml", text))
    assert (s.framework, s.seq_len, s.micro_batch) == ("axolotl", 4096, 2)
    assert not s.extras.get("markdown_paste")


def test_a_yaml_paste_with_an_oom_sentence_around_it_is_classified_as_a_config(tmp_path):
    from oomdoctor.configs import classify

    path = _write(tmp_path, "c.yaml", "It dies with CUDA out of memory:\n```yaml\nmodel_name_or_path: m\n"
                                      "stage: sft\nfinetuning_type: lora\n```\n")
    assert classify(path) == "config"
    log = _write(tmp_path, "crash.md", "```\nTraceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of "
                                       "memory.\n```\n")
    assert classify(log) == "log"


def test_unsloths_get_peft_model_defaults_and_a_16_bit_base(tmp_path):
    # unsloth/models/llama.py get_peft_model(r=16, lora_alpha=16, use_gradient_checkpointing="unsloth");
    # loader.py from_pretrained(load_in_16bit=True) is a 16-bit LoRA base, not unsloth's default 4-bit one
    path = _write(tmp_path, "u.py", """
from unsloth import FastLanguageModel
model, tok = FastLanguageModel.from_pretrained("unsloth/Qwen3-4B", load_in_16bit=True)
model = FastLanguageModel.get_peft_model(model)
from transformers import TrainingArguments
TrainingArguments(output_dir="o", per_device_train_batch_size=1)
""")
    s = load_config(path)
    assert (s.method, s.quant_bits, s.lora_rank, s.lora_alpha, s.grad_ckpt) == ("lora", None, 16, 16, True)
