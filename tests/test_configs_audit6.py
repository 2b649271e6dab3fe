"""The readers the sixth first-sight audit (2026-12f) asked for, each by its framework's own rule: ms-swift's
--use_dora, accelerate's FSDP1 sharding strategy written as fsdp_reshard_after_forward, Firefly's own keys beside
the use_unsloth it shares with LLaMA-Factory, and TRL's example scripts known by their ModelConfig flags."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("flag, dora", [("--use_dora true", True), ("--use_dora false", False), ("", False)])
def test_ms_swift_use_dora_makes_the_adapters_dora(tmp_path, flag, dora):
    path = _write(tmp_path, "t.sh", f"swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_type lora {flag}\n")
    s = load_config(path)
    assert (s.framework, s.method, bool(s.use_dora)) == ("ms-swift", "lora", dora)
    if dora:
        assert s.sources["use_dora"].key == "use_dora"


@pytest.mark.parametrize("value, mode", [("FULL_SHARD", "full_shard"), ("SHARD_GRAD_OP", "shard_grad_op"),
                                         ("2", "shard_grad_op"), ("HYBRID_SHARD", "hybrid_shard")])
def test_fsdp1_reshard_after_forward_names_the_sharding_strategy(tmp_path, value, mode):
    path = _write(tmp_path, "a.yaml", "distributed_type: FSDP\nnum_processes: 4\nmixed_precision: bf16\n"
                  f"fsdp_config:\n  fsdp_version: 1\n  fsdp_reshard_after_forward: {value}\n"
                  "  fsdp_offload_params: false\n")
    s = load_config(path)
    assert (s.fsdp, s.n_gpus) == (mode, 4)
    assert s.sources["fsdp"].key == "fsdp_config.fsdp_reshard_after_forward"


@pytest.mark.parametrize("value, mode", [("true", "full_shard"), ("false", "shard_grad_op")])
def test_fsdp2_reshard_after_forward_stays_a_boolean(tmp_path, value, mode):
    path = _write(tmp_path, "a.yaml", "distributed_type: FSDP\nnum_processes: 2\n"
                  f"fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: {value}\n")
    assert load_config(path).fsdp == mode


def test_firefly_file_with_use_unsloth_is_firefly_and_keeps_its_qlora_default(tmp_path):
    path = _write(tmp_path, "x.json", '{"model_name_or_path": "Qwen/Qwen2.5-7B-Instruct", "train_file": "d.jsonl",'
                  ' "template_name": "qwen", "max_seq_length": 1024, "per_device_train_batch_size": 1,'
                  ' "lora_rank": 64, "use_unsloth": true}')
    s = load_config(path)
    assert (s.framework, s.method, s.quant_bits, s.seq_len, s.use_unsloth) == ("hf", "qlora", 4, 1024, True)
    assert s.extras.get("entry") == "firefly"


def test_a_llamafactory_file_with_use_unsloth_stays_llamafactory(tmp_path):
    path = _write(tmp_path, "x.yaml", "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nstage: sft\n"
                  "finetuning_type: lora\ntemplate: qwen\ncutoff_len: 1024\nuse_unsloth: true\n")
    assert load_config(path).framework == "llamafactory"


@pytest.mark.parametrize("flags, trl", [("--use_peft --lora_target_modules all-linear", True),
                                        ("--dataset_name trl-lib/x", True),
                                        ("--learning_rate 1e-5", False)])
def test_a_trl_example_script_is_known_by_a_flag_only_trlparser_defines(tmp_path, flags, trl):
    path = _write(tmp_path, "t.sh", "python examples/scripts/gspo.py --model_name_or_path Qwen/Qwen3-0.6B "
                  f"--per_device_train_batch_size 8 {flags}\n")
    s = load_config(path)
    assert (s.framework == "trl") is trl
    if "--use_peft" in flags:
        assert (s.method, s.lora_rank) == ("lora", 16)        # TRL ModelConfig: lora_r 16


# ---------------------------------------------------------------- a command pasted in an inline code span

SPAN = ("my command:\n`HEAD_IP=127.0.0.1\nray job submit --address=\"http://${HEAD_IP}:8265\" \\\n"
        "   -- python -m openrlhf.cli.train_ppo_ray \\\n   --pretrain Qwen/Qwen2.5-7B-Instruct \\\n"
        "   --actor_num_gpus_per_node 8 \\\n   --micro_train_batch_size 1 \\\n   --zero_stage 3 \\\n   --bf16`\n")


def test_a_command_pasted_in_an_inline_code_span_is_read_and_said_to_be_a_paste(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", SPAN))
    assert (s.framework, s.model, s.n_gpus, s.zero_stage, s.precision) == \
        ("openrlhf", "Qwen/Qwen2.5-7B-Instruct", 8, 3, "bf16")
    assert s.extras["markdown_paste"] == "code span"
    assert s.sources["model"].line == 5              # the file's own line numbers are kept


def test_a_scripts_own_backticks_are_command_substitution_not_a_paste(tmp_path):
    text = "N=`nproc`\ntorchrun --nproc_per_node 2 train.py --model_name_or_path m --per_device_train_batch_size 2\n"
    s = load_config(_write(tmp_path, "run.sh", text))
    assert s.n_gpus == 2 and not s.extras.get("markdown_paste")


def test_unwrap_code_span_needs_a_span_over_several_lines_with_no_backtick_inside():
    from oomdoctor.configs._doc import unwrap_code_span

    assert unwrap_code_span("`a`\n") is None                 # one line: a shell's command substitution
    assert unwrap_code_span("`a\nb `c` d`\n") is None        # backticks inside: not one span
    assert unwrap_code_span("x\n`a \\\n b`\ny\n") == "\na \\\n b\n\n"


# ---------------------------------------------------------------- LitGPT's config hub

LITGPT = """checkpoint_dir: checkpoints/meta-llama/Llama-3.2-3B
precision: {precision}
{quantize}devices: {devices}
num_nodes: 1
{lora}train:
  global_batch_size: 16
  micro_batch_size: 2
  max_seq_length: {seq}
"""


@pytest.mark.parametrize("quantize, lora, method, bits", [
    ("quantize: bnb.nf4\n", "lora_r: 32\nlora_alpha: 16\n", "qlora", 4),
    ("", "lora_r: 32\nlora_alpha: 16\n", "lora", None),
    ("", "", "full", None)])
def test_litgpt_config_hub_file_says_its_method_from_its_lora_and_quantize_keys(tmp_path, quantize, lora, method, bits):
    path = _write(tmp_path, "x.yaml", LITGPT.format(precision="bf16-true", quantize=quantize, devices=1, lora=lora,
                                                     seq=512))
    s = load_config(path)
    assert (s.extras["reader"], s.model, s.method, s.quant_bits, s.seq_len) == \
        ("litgpt", "meta-llama/Llama-3.2-3B", method, bits, 512)
    assert (s.precision, s.load_dtype) == ("bf16", "bf16")   # bf16-true keeps the weights in bf16


@pytest.mark.parametrize("devices, accum, sharded", [(1, 8, False), (2, 4, True), (4, 2, True)])
def test_litgpt_accumulation_is_the_global_batch_over_devices_and_micro_batch(tmp_path, devices, accum, sharded):
    s = load_config(_write(tmp_path, "x.yaml", LITGPT.format(precision="bf16-mixed", quantize="", devices=devices,
                                                              lora="lora_r: 8\n", seq="null")))
    assert (s.n_gpus, s.micro_batch, s.grad_accum) == (devices, 2, accum)
    assert (s.fsdp == "full_shard", s.grad_ckpt) == (sharded, sharded)
    assert (s.precision, s.load_dtype, s.seq_len) == ("bf16", "fp32", 2048)   # bf16-mixed: fp32 weights


def test_litgpt_accumulation_is_patched_through_the_global_batch(tmp_path):
    from oomdoctor.configs import edits_for
    from oomdoctor.facts import Change

    s = load_config(_write(tmp_path, "x.yaml", LITGPT.format(precision="bf16-true", quantize="", devices=1,
                                                              lora="lora_r: 8\n", seq=512)))
    edits = {".".join(e.key_path): e.value for e in edits_for(s, [Change("micro_batch", 2, 1),
                                                                  Change("grad_accum", 8, 16)])}
    assert edits == {"train.micro_batch_size": 1, "train.global_batch_size": 16}
