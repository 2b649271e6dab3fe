"""Readings the 2026-12s draw (docs/configs.md, eighteenth round) needed, one test per class of paste or launcher."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import classify, load_config
from oomdoctor.errors import InputError


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


def test_the_hyperparameters_lit_gpt_printed_below_its_command_are_the_runs(tmp_path):
    # lit-gpt finetune/lora.py prints its module constants (fabric.print(hparams)) before training: those ran,
    # whatever the script's constants were in the release oomdoctor knows.
    text = ("python finetune/lora.py --checkpoint_dir checkpoints/org/m --precision bf16-true\n"
            "{'devices': 1, 'override_max_seq_length': 512, 'batch_size': 8, 'micro_batch_size': 2, 'lora_r': 4, "
            "'lora_alpha': 16, 'learning_rate': 0.0002}\nGlobal seed set to 1337\n")
    s = load_config(_write(tmp_path, "p.txt", text))
    assert (s.model, s.lora_rank, s.seq_len, s.micro_batch, s.grad_accum) == ("org/m", 4, 512, 2, 4)
    assert s.sources["micro_batch"].line == 2


def test_a_printed_mapping_with_reprs_and_a_cut_reads_as_its_config(tmp_path):
    # litgpt prints setup()'s arguments with pprint: PosixPath(...), dataclass reprs, object reprs; the paste cut.
    text = ("{'checkpoint_dir': PosixPath('checkpoints/org/m'),\n 'data': JSON(json_path=PosixPath('d.json'),\n"
            "              prompt_style=<litgpt.prompts.Llama3 object at 0x7f72>),\n 'devices': 1,\n 'lora_r': 8,\n"
            " 'precision': 'bf16-true',\n 'train': TrainArgs(global_batch_size=8,\n                    micro_batch_size=1,\n"
            "                    max_seq_length=2048,\n                    learning_rate=0.\n")
    s = load_config(_write(tmp_path, "p.txt", text))
    assert (s.framework, s.model, s.lora_rank, s.micro_batch, s.grad_accum, s.seq_len) == \
        ("litgpt", "org/m", 8, 1, 8, 2048)


def test_a_json_printed_under_a_title_and_cut_drops_only_its_cut_entry(tmp_path):
    text = ('---------------train config---------------\n{\n    "model_name_or_path": "org/m",\n'
            '    "stage": "sft",\n    "finetuning_type": "lora",\n    "cutoff_len": 8192,\n'
            '    "per_device_train_batch_size": 1,\n    "gradient_accumulation_steps": 4,\n    "ddp_timeout": 1')
    s = load_config(_write(tmp_path, "p.txt", text))
    assert (s.framework, s.method, s.seq_len, s.grad_accum) == ("llamafactory", "lora", 8192, 4)


def test_the_config_torchtune_printed_as_it_started_is_read_with_its_command(tmp_path):
    # log_config: "Running <RecipeClass> with resolved config:" then the YAML; here cut before `model:`, the
    # command wrapped by an 86-column terminal, so the overrides and GPUs come from the joined command.
    text = ("user@host:~/work$ tune run --nproc_per_node 4 lora_finetune_distributed --config my.yaml "
            "gradient_accumulation_steps=2 enable_activation_checkpointing=True ba\n"
            "tch_size=8\nRunning with torchrun...\n"
            "INFO:torchtune.utils._logging:Running LoRAFinetuneRecipeDistributed with resolved config:\n\n"
            "batch_size: 8\ncheckpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\n"
            "  checkpoint_dir: /tmp/Llama-3.2-11B-Vision-Instruct/\n  checkpoint_files:\n  - m\n")
    s = load_config(_write(tmp_path, "p.txt", text))
    assert (s.framework, s.model, s.method, s.micro_batch, s.grad_accum, s.grad_ckpt, s.n_gpus) == \
        ("torchtune", "meta-llama/Llama-3.2-11B-Vision-Instruct", "lora", 8, 2, True, 4)


def test_an_autotrain_config_is_autotrains_not_axolotls(tmp_path):
    # Both name a base_model; AutoTrain's file has task + params (autotrain/parser.py), quantized only with peft.
    text = ("task: llm-sft\nbase_model: org/m\nproject_name: p\nparams:\n  block_size: 2048\n  batch_size: 1\n"
            "  peft: true\n  quantization: int4\n  gradient_accumulation: 2\n  mixed_precision: fp16\n")
    s = load_config(_write(tmp_path, "c.yml", text))
    assert (s.framework, s.model, s.method, s.quant_bits, s.seq_len, s.grad_accum, s.precision) == \
        ("trl", "org/m", "qlora", 4, 2048, 2, "fp16")
    full = load_config(_write(tmp_path, "f.yml", "task: llm-dpo\nbase_model: org/m\nparams:\n  quantization: int4\n"))
    assert (full.method, full.quant_bits, full.stage, full.micro_batch, full.grad_accum) == ("full", None, "dpo", 2, 4)


def test_a_yaml_diff_in_a_fenced_diff_block_reads_as_the_file_it_makes(tmp_path):
    text = ("configs/train.yaml:8\n```diff\n@@ -0,0 +1,4 @@\n+model_name_or_path: org/m\n+gradient_checkpointing: true\n"
            "+per_device_train_batch_size: 2\n+max_seq_length: 4096\n```\n")
    s = load_config(_write(tmp_path, "p.md", text))
    assert (s.model, s.grad_ckpt, s.micro_batch, s.seq_len) == ("org/m", True, 2, 4096)
    assert "diff" in s.extras["markdown_paste"]


def test_the_deepspeed_json_pasted_below_its_command_is_the_file_it_names(tmp_path):
    text = ("deepspeed --num_gpus 4 src/train_bash.py \\\n    --deepspeed ds_config.json \\\n    --stage sft \\\n"
            "    --model_name_or_path org/m \\\n    --finetuning_type lora \\\n    --cutoff_len 4096 \\\n    --fp16\n\n"
            "ds config:\n{\n  \"train_micro_batch_size_per_gpu\": \"auto\",\n  \"zero_optimization\": {\n"
            "    \"stage\": 3,\n    \"allgather_partitions\": true,\n    \"allgather_bucket_size\": 5")
    s = load_config(_write(tmp_path, "p.md", text))
    assert (s.framework, s.n_gpus, s.zero_stage) == ("llamafactory", 4, 3)


def test_the_config_deepspeed_printed_as_it_started_reads_as_its_json(tmp_path):
    # DeepSpeedConfig.print: `  name ...... value` under the logger's prefix; zero_config a JSON dump, here cut
    # inside a string where the paste stopped.
    pre = "[2021-03-27 17:02:52,849] [INFO] [config.py:741:print]   "
    text = (f"{pre}train_batch_size ............. 16\n{pre}train_micro_batch_size_per_gpu  4\n"
            f"{pre}world_size ................... 2\n{pre}zero_config .................. {{\n"
            '    "contiguous_gradients": true,\n    "cpu_offload": true,\n    "stage": 2,\n    "param_per')
    s = load_config(_write(tmp_path, "p.txt", text))
    assert (s.micro_batch, s.grad_accum, s.n_gpus, s.zero_stage, s.offload_optimizer) == (4, 2, 2, 2, True)


def test_megatron_lms_pretrain_gpt_reads_its_dashed_arguments_from_bash_arrays(tmp_path):
    text = ("GPUS_PER_NODE=8\nDISTRIBUTED_ARGS=(\n    --nproc_per_node $GPUS_PER_NODE\n    --nnodes 1\n)\n"
            "MODEL_ARGS=(\n    --num-layers 32\n    --seq-length 4096\n)\nTRAINING_ARGS=(\n    --micro-batch-size 1\n"
            "    --global-batch-size 256\n    --bf16\n)\nPARALLEL_ARGS=(\n    --tensor-model-parallel-size 1\n"
            "    --pipeline-model-parallel-size 4\n    --use-distributed-optimizer\n    --sequence-parallel\n)\n"
            "torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${PARALLEL_ARGS[@]}\n")
    s = load_config(_write(tmp_path, "run.sh", text))
    assert (s.megatron, s.n_gpus, s.seq_len, s.pipeline_parallel, s.distributed_optimizer, s.precision) == \
        (True, 8, 4096, 4, True, "bf16")
    # 256 sequences over 8 / (1 x 4) = 2 data-parallel ranks at a micro-batch of 1
    assert s.grad_accum == 128
    # validate_args turns sequence parallelism off without tensor parallelism
    assert s.sequence_parallel is False


def test_a_dashed_flag_still_singles_out_the_entry_point_that_needs_it(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python lora.py --model org/m --train --batch-size 2 "
                                               "--lora-layers 8\n"))
    assert (s.framework, s.micro_batch) == ("mlx-lm", 2)


XTUNER = ("# Model\npretrained_model_name_or_path = 'org/m'\n# Data\nmax_length = 2048\npack_to_max_length = True\n"
          "sequence_parallel_size = 1\nbatch_size = 1  # per_device\naccumulative_counts = 16\n"
          "accumulative_counts *= sequence_parallel_size\n"
          "model = dict(\n    type=SupervisedFinetune,\n    llm=dict(\n        type=AutoModelForCausalLM.from_pretrained,\n"
          "        pretrained_model_name_or_path=pretrained_model_name_or_path,\n"
          "        quantization_config=dict(type=BitsAndBytesConfig, load_in_4bit=True)),\n"
          "    lora=dict(type=LoraConfig, r=64, lora_alpha=16))\n"
          "optim_wrapper = dict(type=AmpOptimWrapper, accumulative_counts=accumulative_counts, dtype='float16')\n")


def test_an_xtuner_python_config_is_read_from_its_top_level_assignments(tmp_path):
    s = load_config(_write(tmp_path, "qwen_qlora.py", "from mmengine.optim import AmpOptimWrapper\n" + XTUNER))
    assert (s.model, s.method, s.quant_bits, s.lora_rank, s.lora_alpha, s.seq_len, s.packing, s.micro_batch,
            s.grad_accum, s.precision, s.grad_ckpt) == ("org/m", "qlora", 4, 64, 16, 2048, True, 1, 16, "fp16", True)


def test_an_xtuner_config_pasted_after_its_command_and_cut_takes_the_commands_gpus_and_zero(tmp_path):
    text = ("OOM on 8 GPUs:\n\nNPROC_PER_NODE=8 xtuner train my_cfg --deepspeed deepspeed_zero3 > out 2>&1 &\n\n"
            + XTUNER.split("model = dict(")[0] + "tokenizer = dict(\n    type=AutoTokenizer.from_pretrained,\n    pretrain")
    s = load_config(_write(tmp_path, "p.md", text))
    assert (s.model, s.seq_len, s.grad_accum, s.n_gpus, s.zero_stage) == ("org/m", 2048, 16, 8, 3)


@pytest.mark.parametrize("name,text", [
    ("job.toml", "[job]\ndump_folder = \"./outputs\"\n\n[training]\nlocal_batch_size = 16\nseq_len = 4096\n"),
    ("config_registry.py", "from torchtitan.config import TrainingConfig\n\ndef llama3_debug():\n    return 1\n"),
])
def test_a_torchtitan_config_is_named_in_one_line(tmp_path, name, text):
    path = _write(tmp_path, name, text)
    with pytest.raises(InputError) as err:
        load_config(path)
    assert err.value.message.code == "config.torchtitan"
    assert classify(path) == "config"


def test_an_unknown_script_named_for_lora_trains_lora_when_no_flag_says_a_method(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "deepspeed toolbench/train/train_long_seq_lora.py --model_name_or_path m "
                                               "--per_device_train_batch_size 1 --model_max_length 8192\n"))
    assert (s.method, s.seq_len) == ("lora", 8192)
    assert any(w.code == "config.script.lora_by_name" for w in s.warnings)
    plain = load_config(_write(tmp_path, "full.sh", "deepspeed train_long_seq.py --model_name_or_path m "
                                                    "--per_device_train_batch_size 1\n"))
    assert plain.method == "full"


def test_use_flash_attn_in_a_trl_style_yaml_is_flash_attention_2(tmp_path):
    s = load_config(_write(tmp_path, "c.yaml", "model_name_or_path: m\nuse_flash_attn: true\nmax_seq_length: 4096\n"))
    assert s.attention == "fa2"


PRINTABLE = ("lf/", "axolotl/", "hfargs/", "deepspeed/", "litgpt/")


@pytest.mark.parametrize("form", ["json_titled", "python_repr"])
def test_every_sampled_corpus_config_printed_by_its_run_gives_the_same_facts(tmp_path, form):
    # The class, not the paste: a config as a run prints it (a JSON dump under a title, or Python's repr as pprint
    # writes it) reads as the file itself, for every 4th plain YAML/JSON of these frameworks in the corpus.
    import json
    import pprint
    import shutil

    import test_real_configs as corpus
    import yaml

    copy = tmp_path / "real-configs"
    shutil.copytree(corpus.CORPUS, copy)
    chosen = [e for e in corpus.MANIFEST if e["file"].startswith(PRINTABLE) and e["file"].endswith((".yaml", ".json"))
              and not e.get("with") and not e.get("flags") and not e.get("expect_refused")
              and not corpus._read(e).extras.get("markdown_paste")][::4]
    assert len(chosen) >= 25
    wrong = []
    for entry in chosen:
        try:
            data = yaml.safe_load((copy / entry["file"]).read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue                    # a JSON as a thread mended it (comments, single quotes): not a run's print
        if not isinstance(data, dict):
            continue
        text = ("---------- train config ----------\n" + json.dumps(data, indent=4, default=str)
                if form == "json_titled" else pprint.pformat(data, width=100))
        target = copy / (entry["file"] + ".printed.txt")
        target.write_text(text + "\n", encoding="utf-8")
        s = load_config(str(target))
        plain = corpus._read(entry)
        diff = [f for f in entry["facts"] if f != "version" and getattr(s, f) != getattr(plain, f)]
        if diff:
            wrong.append((entry["file"], diff))
    assert not wrong, wrong


@pytest.mark.parametrize("name, tool", [("xtuner/head_qwen_7b_qlora_tiny_codes_e1.py", "xtuner 0.2.0"),
                                        ("autotrain/head_llm_finetuning_qwen.yml", "AutoTrain Advanced 0.8.36")])
def test_a_tool_read_over_another_frameworks_regime_does_not_lend_it_its_release(name, tool):
    from oomdoctor.memory.regime import _transformers_version as transformers_version
    from oomdoctor.views.describe import framework_name

    s = load_config(str(Path(__file__).parent / "data" / "real-configs" / name))
    # memory/regime.py reads an hf/trl setup's framework_version as the transformers or TRL release: the tool's
    # own release (xtuner 0.2.0, AutoTrain 0.8.36) is not one, so the regime's release stays unstated
    assert s.framework in ("hf", "trl") and s.framework_version == ""
    assert transformers_version(s) != (0, 2, 0)
    assert framework_name(s) == tool
