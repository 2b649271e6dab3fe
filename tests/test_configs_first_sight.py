"""The readers the first-sight audit of 2026-12 asked for, each by its general rule: OpenRLHF's entry points
(flat and dotted options; the command in a here-document, a variable or a bash array), ms-swift named as
itself, torchtune builders mapped to hub ids by their own version, the LLaMA-Factory v1 format, and --model
standing in for a model only the running script knows."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import edits_for, key_for, load_config
from oomdoctor.configs.shell import read_script
from oomdoctor.configs.torchtune import model_from_builder
from oomdoctor.errors import InputError
from oomdoctor.facts import Change
from oomdoctor.words import say

CORPUS = Path(__file__).parent / "data" / "real-configs"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------- the shell: here-documents read into a variable, arrays

def test_read_d_empty_takes_the_whole_here_document_with_its_continuations_joined():
    script = read_script("read -r -d '' CMD <<EOF\nmod.train \\\n  --a 1 \\\n  --b 2\nEOF\nrun $CMD\n", "x.sh")
    assert [w.text for w in script.commands[-1].words] == ["run", "mod.train", "--a", "1", "--b", "2"]


def test_read_without_d_stops_at_the_first_line():
    script = read_script("read CMD <<EOF\none two\nthree\nEOF\nrun $CMD\n", "x.sh")
    assert [w.text for w in script.commands[-1].words] == ["run", "one", "two"]


def test_an_array_expands_to_its_elements_quoted_or_not():
    text = 'M=org/model\nargs=(\n  --model "$M"\n  --x "a b"\n)\nrun "${args[@]}" end\nrun2 ${args[*]}\n'
    script = read_script(text, "x.sh")
    assert [w.text for w in script.commands[0].words] == ["run", "--model", "org/model", "--x", "a b", "end"]
    assert [w.text for w in script.commands[1].words][:3] == ["run2", "--model", "org/model"]


def test_an_array_element_only_the_running_script_knows_stays_unknown():
    script = read_script('args=(--model "$UNSET" --n 2)\nrun "${args[@]}"\n', "x.sh")
    words = script.commands[0].words
    assert [w.text for w in words if w.known] == ["run", "--model", "--n", "2"]
    assert any(not w.known for w in words)


# ---------------------------------------------------------------- OpenRLHF

OPENRLHF_ARRAY = """#!/bin/bash
MODEL=Qwen/Qwen2.5-14B-Instruct
args=(
    --pretrain "$MODEL"
    --max_len 2048
    --train_batch_size 32
    --micro_train_batch_size 2
    --zero_stage 2
    --bf16
    --load_in_4bit
    --lora_rank 16
    --lora_alpha 32
    --target_modules q_proj k_proj v_proj o_proj
    --gradient_checkpointing
    --adam_offload
)
deepspeed --include localhost:0,1 --module openrlhf.cli.train_sft "${args[@]}"
"""


def test_openrlhf_from_a_bash_array(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", OPENRLHF_ARRAY))
    assert (s.framework, s.model, s.method, s.quant_bits, s.lora_rank, s.lora_alpha) == \
        ("openrlhf", "Qwen/Qwen2.5-14B-Instruct", "qlora", 4, 16, 32)
    assert s.lora_targets == ("q_proj", "k_proj", "v_proj", "o_proj")
    # --train_batch_size is the global batch: 32 // (2 per GPU × 2 GPUs)
    assert (s.n_gpus, s.micro_batch, s.grad_accum, s.seq_len) == (2, 2, 8, 2048)
    assert (s.zero_stage, s.offload_optimizer, s.offload_params, s.grad_ckpt, s.precision) == (2, True, False, True,
                                                                                               "bf16")


def test_openrlhf_flat_defaults_are_its_argparse_defaults(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "deepspeed --module openrlhf.cli.train_dpo --pretrain org/m\n"))
    assert (s.stage, s.method, s.seq_len, s.micro_batch, s.zero_stage, s.grad_ckpt) == ("dpo", "full", 2048, 8, 2, False)
    assert s.precision == "fp32"            # no --bf16: DeepSpeed runs without bf16 in the flat releases


def test_openrlhf_dotted_options_default_to_bf16_and_adam_offload_is_the_optimizer_only(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "deepspeed --num_gpus 4 --module openrlhf.cli.train_rm "
                                               "--model.model_name_or_path org/m --ds.zero_stage 3 "
                                               "--ds.adam_offload --train.micro_batch_size 2\n"))
    assert (s.stage, s.precision, s.zero_stage, s.offload_optimizer, s.offload_params) == ("rm", "bf16", 3, True, False)
    assert (s.n_gpus, s.grad_accum) == (4, 16)          # 128 by default // (2 × 4)


def test_openrlhf_ppo_sample_is_prompt_plus_generation(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "deepspeed --module openrlhf.cli.train_ppo --pretrain org/m "
                                               "--prompt_max_len 1024 --generate_max_len 3072 --bf16\n"))
    assert (s.stage, s.seq_len) == ("ppo", 4096)


# ---------------------------------------------------------------- ms-swift

def test_ms_swift_is_named_as_itself_and_its_subcommand_says_the_stage(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "NPROC_PER_NODE=2 swift pt --model org/m --tuner_type full "
                                               "--sequence_parallel_size 2 --torch_dtype bfloat16\n"))
    assert (s.framework, s.stage, s.n_gpus, s.seq_parallel, s.precision) == ("ms-swift", "pt", 2, 2, "bf16")
    assert s.extras["transformers_version"]         # the memory model still knows which transformers


def test_ms_swift_run_through_torchrun_by_its_cli_script(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python -m torch.distributed.run --nproc_per_node 4 "
                                               "/opt/ms-swift/swift/cli/rlhf.py --rlhf_type dpo --model org/m "
                                               "--torch_dtype float16 --train_type lora\n"))
    assert (s.framework, s.stage, s.precision, s.n_gpus, s.method) == ("ms-swift", "dpo", "fp16", 4, "lora")


# ---------------------------------------------------------------- torchtune

@pytest.mark.parametrize("builder,hub", [
    ("torchtune.models.llama3_3.lora_llama3_3_70b", "meta-llama/Llama-3.3-70B-Instruct"),
    ("torchtune.models.phi4.phi4_14b", "microsoft/phi-4"),
    ("torchtune.models.llama3_2_vision.qlora_llama3_2_vision_90b", "meta-llama/Llama-3.2-90B-Vision-Instruct"),
    ("torchtune.models.llama4.lora_llama4_scout_17b_16e", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    ("torchtune.models.llama3_1.lora_llama3_1_8b", "meta-llama/Llama-3.1-8B"),
])
def test_a_builder_name_gives_the_hub_id_of_its_own_version(builder, hub):
    assert model_from_builder(builder) == hub


def test_the_header_download_names_the_model_only_when_it_is_the_checkpointers_directory(tmp_path):
    text = (CORPUS / "torchtune" / "head_phi4_14B_lora_single_device.yaml").read_text()
    assert load_config(_write(tmp_path, "a.yaml", text)).model == "microsoft/phi-4"
    moved = text.replace("checkpoint_dir: /tmp/phi-4", "checkpoint_dir: /data/my-phi")
    moved = moved.replace("torchtune.models.phi4.lora_phi4_14b", "torchtune.models.llama3_3.lora_llama3_3_70b")
    assert load_config(_write(tmp_path, "b.yaml", moved)).model == "meta-llama/Llama-3.3-70B-Instruct"


# ---------------------------------------------------------------- LLaMA-Factory v1

V1 = CORPUS / "lf" / "v1"


def test_v1_is_read_with_its_own_key_names_in_the_provenance():
    s = load_config(str(V1 / "train_lora_sft.yaml"))
    assert (s.framework, s.method, s.lora_rank, s.lora_alpha) == ("llamafactory", "lora", 32, 64)
    assert s.sources["lora_rank"].key == "peft_config.r" and s.sources["lora_rank"].line
    assert s.sources["micro_batch"].key == "micro_batch_size"
    assert any(getattr(w, "code", "") == "config.lf_v1_read" for w in s.warnings)


def test_v1_defaults_differ_from_v0(tmp_path):
    s = load_config(_write(tmp_path, "v1.yaml", "model: org/m\npeft_config:\n  name: lora\nmicro_batch_size: 2\n"))
    # LoraParams r 8, lora_alpha 16 (v0 would say 2 × rank); bf16 and checkpointing on; no accumulation
    assert (s.lora_rank, s.lora_alpha, s.precision, s.grad_ckpt, s.grad_accum, s.seq_len) == (8, 16, "bf16", True, 1,
                                                                                              2048)
    s = load_config(_write(tmp_path, "v1b.yaml", "model: org/m\nmicro_batch_size: 2\nglobal_batch_size: 16\n"
                                                 "quant_config:\n  name: bnb\npeft_config:\n  name: lora\n"))
    assert (s.method, s.quant_bits, s.grad_accum) == ("qlora", 4, 8)     # bnb without a bit count: 4-bit


def test_no_patch_is_written_into_a_v1_file():
    s = load_config(str(V1 / "train_lora_sft.yaml"))
    assert edits_for(s, [Change("micro_batch", 2, 1)]) == []
    assert key_for(s, "seq_len") == (str(V1 / "train_lora_sft.yaml"), "cutoff_len")     # where it says it
    assert key_for(s, "grad_accum") == (None, None)                                     # nothing to write to


def test_an_early_v1_draft_is_refused_in_one_line(tmp_path):
    with pytest.raises(InputError) as e:
        load_config(_write(tmp_path, "d.yaml", "model:\n  name: x\npeft_config:\n  name: lora\n"))
    assert "LLaMA-Factory v1" in str(e.value) and "\n" not in str(e.value) and e.value.line == 1
    assert "v1" in say(e.value.message, "zh")


def test_a_torchtune_recipe_is_never_taken_for_v1():
    s = load_config(str(CORPUS / "torchtune" / "head_phi4_14B_full.yaml"))
    assert s.framework == "torchtune"


def test_v1_through_llamafactory_cli(tmp_path):
    (tmp_path / "v1.yaml").write_text((V1 / "quantization.yaml").read_text())
    s = load_config(_write(tmp_path, "run.sh", "CUDA_VISIBLE_DEVICES=0,1 llamafactory-cli sft v1.yaml\n"))
    assert (s.method, s.quant_bits, s.n_gpus) == ("qlora", 4, 2)


# ---------------------------------------------------------------- --model for a model only the running script knows

LF_UNSET = "llamafactory-cli train --model_name_or_path $MODEL --stage sft --finetuning_type lora --cutoff_len 1024\n"


def test_model_stands_in_for_an_unset_variable(tmp_path):
    path = _write(tmp_path, "run.sh", LF_UNSET)
    s = load_config(path, model="org/given")
    assert (s.model, s.method, s.seq_len) == ("org/given", "lora", 1024)
    s = load_config(path)
    assert s.model == "" and s.model_unresolved == "$MODEL"
    assert any(getattr(w, "code", "") == "config.script.model_unknown" for w in s.warnings)


def test_the_v1_command_says_the_stage(tmp_path):
    (tmp_path / "v1.yaml").write_text((V1 / "train_lora_sft.yaml").read_text())
    s = load_config(_write(tmp_path, "run.sh", "llamafactory-cli dpo v1.yaml\n"))
    assert s.stage == "dpo" and s.sources["stage"].key == "dpo"


def test_ms_swift_is_estimated_as_the_memory_model_knows_ms_swift():
    # The memory model's reference rows name ms-swift "swift" with the transformers release as its version.
    from dataclasses import replace

    from oomdoctor.facts import Hardware, ModelShape
    from oomdoctor.memory import estimate

    shape = ModelShape(name="org/m", hidden_size=4096, intermediate_size=14336, num_layers=32, num_heads=32,
                       num_kv_heads=8, vocab_size=32000)
    hw = Hardware(gpu="H100 80GB", gpu_gib=79.1, n_gpus=1)
    for script in ("swift_think_liger.sh", "swift_qlora_bnb_no_dtype.sh", "swift_pt_full_packing.sh"):
        s = load_config(str(CORPUS / "scripts" / script))
        same = replace(s, framework="swift", framework_version=s.extras["transformers_version"])
        assert estimate(s, shape, hw).peak_gib == pytest.approx(estimate(same, shape, hw).peak_gib), script
