"""`--gpus N` and the guide's GPU answer on configs that name no GPU count: every framework's reader fills
n_gpus with its default (1), and a default is not the inputs saying how many GPUs the run used. The run is
then estimated on N GPUs, as launching its files on N would; a count the inputs state is kept."""
import json
from pathlib import Path

import pytest

from oomdoctor.cli import main
from oomdoctor.guide import Answers, plan_with_answers
from oomdoctor.pipeline import Options
from oomdoctor.session import open_session

HERE = Path(__file__).parent / "data" / "gpus"
# (file, framework the reader must take it for, sharded: the per-GPU estimate falls with more GPUs)
UNNAMED = (
    ("lf_fsdp_qlora.yaml", "llamafactory", True),
    ("lf_full_z3.yaml", "llamafactory", True),
    ("hf_z3.json", "hf", True),
    ("hf_fsdp.json", "hf", True),
    ("axolotl_z3.yml", "axolotl", True),
    ("trl_fsdp.yaml", "trl", True),
    ("torchtune_full_distributed.yaml", "torchtune", True),
    ("../configs/trl_sft.yaml", "trl", False),
    ("../configs/axolotl_qlora.yml", "axolotl", False),
    ("../configs/lf_lora_ds.yaml", "llamafactory", False),   # LoRA, ZeRO-2 offload: little to split
    ("../configs/hf_args.json", "hf", True),
    ("../real-configs/trl/py/lora_without_regret_sft.py", "trl", False),   # a TRL Python script, LoRA under DDP
    ("swift_zero3_nproc_var.sh", "ms-swift", True),          # NPROC_PER_NODE=$NPROC: torchrun, count unnamed
    ("accelerate_launch_no_count.sh", "hf", True),           # accelerate launch on every GPU, FSDP config
)
# Files that decide GPUs and sharding but name no model: a DeepSpeed JSON alone, an accelerate config alone
MODEL_FREE = (("z3.json", "hf"), ("accelerate_fsdp_no_count.yaml", "hf"))


def _json(capsys, *argv):
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    assert code in (0, 1, 3), out
    return json.loads(out)


@pytest.mark.parametrize("name,framework,sharded", UNNAMED, ids=[u[0].split("/")[-1] for u in UNNAMED])
def test_gpus_flag_sets_the_count_a_config_leaves_to_its_framework_default(capsys, name, framework, sharded):
    path = str(HERE / name)
    one = _json(capsys, path, "--gpu", "A100-80GB", "--gpus", "1")
    two = _json(capsys, path, "--gpu", "A100-80GB", "--gpus", "2")
    assert two["setup"]["framework"] == framework
    assert one["setup"]["n_gpus"] == 1
    assert two["setup"]["n_gpus"] == 2 and two["hardware"]["n_gpus"] == 2
    if sharded:
        # ZeRO / FSDP split the model states over the two GPUs: each holds less (FSDP's root unit, embeddings
        # and output layer, stays unsharded through the step, so an 8B QLoRA saves about a fifth, not more)
        assert two["estimate"]["allocated_gib"] < 0.85 * one["estimate"]["allocated_gib"]


@pytest.mark.parametrize("name,framework", MODEL_FREE, ids=[m[0] for m in MODEL_FREE])
def test_gpus_flag_sets_the_count_of_a_deepspeed_or_accelerate_file_alone(capsys, name, framework):
    path = str(HERE / name)
    one = _json(capsys, path, "--model", "meta-llama/Llama-2-7b-hf", "--gpu", "A100-80GB", "--gpus", "1")
    two = _json(capsys, path, "--model", "meta-llama/Llama-2-7b-hf", "--gpu", "A100-80GB", "--gpus", "2")
    assert two["setup"]["framework"] == framework
    assert one["setup"]["n_gpus"] == 1 and two["setup"]["n_gpus"] == 2 and two["hardware"]["n_gpus"] == 2
    # ZeRO-3 / FULL_SHARD: a full fine-tune's model states split over the two GPUs
    assert two["estimate"]["allocated_gib"] < 0.6 * one["estimate"]["allocated_gib"]


def test_a_bare_swift_line_is_one_process_so_more_gpus_are_room_for_the_plan(capsys):
    # without NPROC_PER_NODE / NNODES ms-swift runs `python sft.py`, one process: the line states the count
    from oomdoctor.configs import load_config

    assert load_config(str(HERE / "swift_zero3_bare.sh")).stated("n_gpus")
    assert not load_config(str(HERE / "swift_zero3_nproc_var.sh")).stated("n_gpus")
    doc = _json(capsys, str(HERE / "swift_zero3_bare.sh"), "--gpu", "A100-80GB", "--gpus", "2")
    assert doc["setup"]["n_gpus"] == 1 and doc["hardware"]["n_gpus"] == 2


def test_the_framework_default_is_not_a_stated_count_but_a_launcher_line_is(tmp_path):
    from oomdoctor.configs import load_config

    s = load_config(str(HERE / "lf_fsdp_qlora.yaml"))
    assert "n_gpus" in s.sources and s.sources["n_gpus"].default is not None
    assert not s.stated("n_gpus")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\ntorchrun --nproc_per_node 4 run_clm.py --model_name_or_path meta-llama/Llama-2-7b-hf"
                      " --per_device_train_batch_size 1 --bf16 --output_dir out\n")
    launched = load_config(str(script))
    assert launched.n_gpus == 4 and launched.stated("n_gpus")


def test_a_stated_count_is_kept_and_more_gpus_are_room_for_the_plan(capsys):
    # the accelerate file says four processes: --gpus 8 is what the plan may spread over, not the run's count
    doc = _json(capsys, str(HERE / "trl_fsdp.yaml"), str(HERE / ".." / "configs" / "accelerate_fsdp.yaml"),
                "--gpu", "A100-80GB", "--gpus", "8")
    assert doc["setup"]["n_gpus"] == 4 and doc["hardware"]["n_gpus"] == 8


def test_the_guides_gpu_answer_estimates_a_config_without_a_count_on_that_many_gpus():
    session = open_session(Options(files=(str(HERE / "lf_full_z3.yaml"),), gpu="A100-80GB"))
    assert session.report.setup.n_gpus == 1
    one = plan_with_answers(session, Answers(n_gpus=1))
    two = plan_with_answers(session, Answers(n_gpus=2))
    assert two.setup.n_gpus == 2 and two.hardware.n_gpus == 2
    assert two.estimate.allocated_gib < 0.6 * one.estimate.allocated_gib
