"""Config readers: one real-looking file per framework, defaults and provenance, errors with file:line."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from oomdoctor.configs import classify, combine, edits_for, load_config, setup_from_log, with_log_world_size
from oomdoctor.errors import InputError
from oomdoctor.facts import Change, CrashReport, Source
from oomdoctor.words import say

DATA = Path(__file__).parent / "data" / "configs"
EXAMPLES = Path(__file__).resolve().parent / "data" / "reference" / "example-configs"
DEMO = Path(__file__).parents[1] / "oomdoctor" / "data" / "demo" / "train.yaml"


def cfg(name: str) -> str:
    return str(DATA / name)


# ---------------------------------------------------------------- LLaMA-Factory

def test_demo_config_reads_as_full_llama2_finetune_with_file_lines():
    s = load_config(str(DEMO))
    assert (s.framework, s.model, s.method, s.micro_batch, s.grad_accum, s.seq_len, s.precision) == \
        ("llamafactory", "meta-llama/Llama-2-7b-hf", "full", 4, 2, 2048, "bf16")
    assert s.sources["micro_batch"] == Source(file=str(DEMO), key="per_device_train_batch_size", line=26)
    assert s.sources["seq_len"].key == "cutoff_len" and s.sources["seq_len"].line == 13


def test_llamafactory_defaults_fill_unset_fields_and_say_whose():
    s = load_config(str(DEMO))
    # LLaMA-Factory turns gradient checkpointing on itself; HF's eval batch 8 is inherited.
    assert s.grad_ckpt is True and s.eval_batch == 8 and s.attention == "sdpa"
    assert say(s.source_of("grad_ckpt").describe()) == \
        "default of LLaMA-Factory 0.9.4 (disable_gradient_checkpointing: false)"
    assert s.defaults_of == "LLaMA-Factory 0.9.4"
    assert say(s.sources["zero_stage"].describe()) == "default of LLaMA-Factory 0.9.4"
    assert say(s.sources["zero_stage"].describe(), "zh") == "LLaMA-Factory 0.9.4 的默认值"
    assert s.extras["num_train_epochs"] == 3.0 and s.extras["max_samples"] == 1000


def test_llamafactory_lora_with_deepspeed_json_beside_the_yaml():
    s = load_config(cfg("lf_lora_ds.yaml"))
    assert (s.method, s.lora_rank, s.lora_alpha, s.lora_targets) == ("lora", 16, 32, ("q_proj", "v_proj"))
    assert (s.precision, s.attention, s.fused_ce, s.do_eval, s.seq_len) == ("fp16", "fa2", True, True, 4096)
    assert s.deepspeed_file.endswith("ds_z2_offload.json")
    assert (s.zero_stage, s.offload_optimizer, s.offload_params) == (2, True, False)
    assert s.sources["zero_stage"].key == "zero_optimization.stage" and s.sources["zero_stage"].line == 8
    # "auto" bucket = hidden_size² of Qwen2.5-7B (3584), as the HF integration fills it.
    assert s.extras["deepspeed"]["reduce_bucket_size"] == 3584 * 3584
    assert s.extras["deepspeed"]["allgather_bucket_size"] == 500_000_000


def test_llamafactory_finetuning_type_defaults_to_lora(tmp_path):
    text = (DATA / "lf_lora_ds.yaml").read_text().replace("finetuning_type: lora\n", "")
    shutil.copy(DATA / "ds_z2_offload.json", tmp_path)
    (tmp_path / "x.yaml").write_text(text)
    s = load_config(str(tmp_path / "x.yaml"))
    assert s.method == "lora" and say(s.sources["method"].describe()).startswith("default of LLaMA-Factory")


def test_framework_version_changes_cutoff_default(tmp_path):
    p = tmp_path / "old.yaml"
    p.write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: full\n")
    assert load_config(str(p)).seq_len == 2048
    old = load_config(str(p), framework_version="0.9.0")
    assert old.seq_len == 1024 and say(old.sources["seq_len"].describe()) == "default of LLaMA-Factory 0.9.0 (cutoff_len)"
    assert old.extras["weights_dtype_rule"] == "compute"
    assert load_config(str(p)).extras["weights_dtype_rule"] == "checkpoint"


def test_quantization_bit_makes_qlora_and_pt_stage_packs(tmp_path):
    p = tmp_path / "q.yaml"
    p.write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: pt\nfinetuning_type: lora\n"
                 "quantization_bit: 4\ndisable_gradient_checkpointing: true\npure_bf16: true\n")
    s = load_config(str(p))
    assert (s.method, s.quant_bits, s.packing, s.grad_ckpt, s.pure_bf16, s.precision) == \
        ("qlora", 4, True, False, True, "bf16")
    assert s.sources["grad_ckpt"].key == "disable_gradient_checkpointing"


# ---------------------------------------------------------------- errors

def test_yaml_syntax_error_names_file_and_line():
    with pytest.raises(InputError) as e:
        load_config(cfg("lf_bad_syntax.yaml"))
    assert str(e.value).startswith(cfg("lf_bad_syntax.yaml") + ":4: YAML syntax error")


def test_missing_deepspeed_json_names_yaml_and_deepspeed_line():
    with pytest.raises(InputError) as e:
        load_config(cfg("lf_missing_ds.yaml"))
    assert e.value.path == cfg("lf_missing_ds.yaml") and e.value.line == 4
    assert "configs/my_zero3.json" in str(e.value)


def test_wrong_value_type_names_file_and_line():
    with pytest.raises(InputError) as e:
        load_config(cfg("lf_bad_type.yaml"))
    assert str(e.value) == f"{cfg('lf_bad_type.yaml')}:4: per_device_train_batch_size must be a number, got 'abc'"


@pytest.mark.parametrize("content,needle", [
    ("", "empty"), ("- a\n- b\n", "mapping"), ("foo: 1\nbar: 2\n", "not a training config"),
    ("model:\n  name: x\npeft_config:\n  name: lora\n", "LLaMA-Factory v1"),
])
def test_unusable_configs_give_one_clear_error(tmp_path, content, needle):
    p = tmp_path / "x.yaml"
    p.write_text(content)
    with pytest.raises(InputError) as e:
        load_config(str(p))
    assert needle in str(e.value) and str(p) in str(e.value)


def test_missing_and_binary_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_config(str(tmp_path / "nope.yaml"))
    b = tmp_path / "bin.yaml"
    b.write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(InputError, match="binary"):
        load_config(str(b))


# ---------------------------------------------------------------- other frameworks

def test_trl_sft_config_with_peft_and_4bit():
    s = load_config(cfg("trl_sft.yaml"))
    assert (s.framework, s.method, s.quant_bits, s.lora_rank, s.seq_len, s.packing) == ("trl", "qlora", 4, 32, 2048, True)
    # TRL's own defaults: GC on, bf16 on, and a model given by name loads in float32.
    assert (s.grad_ckpt, s.precision, s.load_dtype) == (True, "bf16", "fp32")
    assert say(s.sources["load_dtype"].describe()).endswith("(a model given by name loads in float32)")
    assert say(s.sources["load_dtype"].describe(), "zh").endswith("的默认值（按名称给出的模型以 float32 加载）")
    assert s.sources["seq_len"].key == "max_length" and s.sources["seq_len"].line == 8


def test_hf_training_arguments_json_with_deepspeed():
    s = load_config(cfg("hf_args.json"))
    assert (s.framework, s.micro_batch, s.grad_accum, s.optimizer, s.grad_ckpt) == ("hf", 2, 16, "adamw_bnb_8bit", True)
    assert (s.zero_stage, s.offload_optimizer) == (2, True)
    assert s.sources["micro_batch"].line == 4
    assert s.extras["deepspeed"]["reduce_bucket_size"] == 4096 * 4096


def test_shell_script_command_line_is_a_config():
    s = load_config(cfg("train_hf.sh"))
    assert (s.model, s.micro_batch, s.grad_accum, s.seq_len, s.precision, s.grad_ckpt, s.n_gpus) == \
        ("meta-llama/Llama-2-7b-hf", 8, 4, 1024, "fp16", True, 2)
    assert s.sources["micro_batch"] == Source(file=cfg("train_hf.sh"), key="per_device_train_batch_size", line=6)


def test_axolotl_qlora_with_defaults():
    s = load_config(cfg("axolotl_qlora.yml"))
    assert (s.framework, s.method, s.quant_bits, s.lora_rank, s.lora_alpha, s.lora_targets) == \
        ("axolotl", "qlora", 4, 32, 16, ("all",))
    assert (s.micro_batch, s.eval_batch, s.seq_len, s.packing, s.attention, s.optimizer) == \
        (2, 2, 4096, True, "fa2", "paged_adamw_32bit")
    assert (s.precision, s.load_dtype, s.do_eval, s.grad_ckpt) == ("bf16", "bf16", True, True)
    assert s.sources["eval_batch"].key == "micro_batch_size"


def test_axolotl_unset_keys_take_axolotl_defaults(tmp_path):
    p = tmp_path / "a.yml"
    p.write_text("base_model: NousResearch/Llama-2-7b-hf\n")
    s = load_config(str(p))
    assert (s.method, s.micro_batch, s.seq_len, s.grad_ckpt, s.optimizer) == ("full", 1, 512, False, "adamw_torch_fused")
    assert say(s.sources["seq_len"].describe()) == "default of axolotl 0.18 (sequence_len)"


def test_torchtune_lora_recipe():
    s = load_config(cfg("torchtune_lora.yaml"))
    assert (s.framework, s.model, s.method, s.lora_rank, s.lora_alpha) == \
        ("torchtune", "meta-llama/Llama-3.1-8B", "lora", 16, 32)
    assert s.lora_targets == ("q_proj", "v_proj", "w1", "w2", "w3")
    assert (s.micro_batch, s.grad_accum, s.seq_len, s.precision, s.pure_bf16) == (4, 2, 1024, "bf16", True)
    assert (s.optimizer, s.fused_ce, s.grad_ckpt) == ("adamw_torch_fused", True, True)
    assert s.sources["seq_len"].key == "tokenizer.max_seq_len"


def test_accelerate_fsdp_config_and_combine_with_training_config():
    acc = load_config(cfg("accelerate_fsdp.yaml"))
    assert (acc.fsdp, acc.offload_params, acc.n_gpus, acc.precision) == ("full_shard", True, 4, "bf16")
    run = combine(load_config(str(DEMO)), acc)
    assert (run.model, run.fsdp, run.n_gpus, run.micro_batch) == ("meta-llama/Llama-2-7b-hf", "full_shard", 4, 4)
    assert run.sources["n_gpus"].file == cfg("accelerate_fsdp.yaml")


def test_bare_deepspeed_json_loads_zero_facts():
    s = load_config(cfg("ds_z2_offload.json"))
    assert (s.zero_stage, s.offload_optimizer, s.deepspeed_file) == (2, True, cfg("ds_z2_offload.json"))


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*") if p.suffix in (".yaml", ".yml", ".json")))
def test_every_reference_example_loads(name):
    path = str(EXAMPLES / name)
    assert classify(path) == "config"
    s = load_config(path)
    assert s.micro_batch >= 1 and s.seq_len >= 1
    if not name.startswith(("llamafactory_ds_", "axolotl_deepspeed", "trl_", "llamafactory_fsdp")) \
            or name.startswith("llamafactory_fsdp_qlora"):
        assert s.model, name


def test_shipped_deepspeed_name_is_known_when_the_checkout_is_absent():
    s = load_config(str(EXAMPLES / "llamafactory_llama3_full_sft.yaml"))
    assert s.zero_stage == 3 and s.deepspeed_file is None
    assert any(w.code == "config.ds_shipped" and "ds_z3_config.json" in say(w) for w in s.warnings)


# ---------------------------------------------------------------- classify

def test_classify_configs_and_logs(tmp_path):
    assert classify(str(DEMO)) == "config"
    assert classify(cfg("train_hf.sh")) == "config"
    assert classify(cfg("lf_bad_syntax.yaml")) == "config"      # broken, but meant as a config
    log = tmp_path / "run.log"
    log.write_text("Traceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    assert classify(str(log)) == "log"
    noext = tmp_path / "output"
    noext.write_text("step 1 loss 2.3\nstep 2 loss 2.1\nCUDA out of memory\n")
    assert classify(str(noext)) == "log"
    cfg_noext = tmp_path / "train_config"
    cfg_noext.write_text("model_name_or_path: x\nper_device_train_batch_size: 2\n")
    assert classify(str(cfg_noext)) == "config"


def test_classify_reads_only_the_head_of_a_big_log(tmp_path):
    big = tmp_path / "huge"
    with open(big, "wb") as fh:
        fh.write(b"model_name_or_path: x\n")         # looks like YAML at the start...
        fh.write(b"x" * (1 << 20))                    # ...but is a megabyte of output
    assert classify(str(big)) == "log"


# ---------------------------------------------------------------- setup_from_log

def test_setup_from_log_uses_printed_training_arguments():
    crash = CrashReport(file="run.log", world_size=2, train_args={
        "model_name_or_path": "meta-llama/Llama-2-7b-hf", "per_device_train_batch_size": "4",
        "gradient_accumulation_steps": "2", "bf16": "True", "cutoff_len": "1024", "finetuning_type": "full"})
    s = setup_from_log(crash)
    assert (s.framework, s.micro_batch, s.grad_accum, s.precision, s.seq_len, s.method, s.n_gpus) == \
        ("llamafactory", 4, 2, "bf16", 1024, "full", 2)
    assert s.sources["micro_batch"].file == "run.log"


def test_the_logs_world_size_fills_in_where_no_file_named_the_gpu_count():
    s = load_config(str(DEMO))                       # LLaMA-Factory YAML: the launcher decides the GPUs
    assert s.source_of("n_gpus").file is None
    crash = CrashReport(file="run.log", world_size=4)
    t = with_log_world_size(s, crash)
    assert t.n_gpus == 4 and t.sources["n_gpus"] == Source(file="run.log", key="world_size")
    assert with_log_world_size(s, None) is s
    assert with_log_world_size(s, CrashReport(file="run.log")) is s
    named = s.with_changes(n_gpus=2, sources={**s.sources, "n_gpus": Source(file="accelerate.yaml", key="num_processes")})
    assert with_log_world_size(named, crash).n_gpus == 2        # a launcher file said it: kept


def test_setup_from_log_without_model_is_none():
    assert setup_from_log(CrashReport(file="run.log", train_args={"per_device_train_batch_size": "4"})) is None


# ---------------------------------------------------------------- edits_for

def _by_key(edits):
    return {(Path(e.file).name, e.key_path): e for e in edits}


def test_edits_for_llamafactory_batch_lora_and_new_zero3_json():
    s = load_config(str(DEMO))
    edits = edits_for(s, [Change("micro_batch", 4, 2), Change("grad_accum", 2, 4), Change("method", "full", "lora"),
                          Change("grad_ckpt", True, False), Change("attention", "sdpa", "fa2"),
                          Change("fused_ce", False, True), Change("zero_stage", 0, 3)])
    k = _by_key(edits)
    assert k[("train.yaml", ("per_device_train_batch_size",))].value == 2
    assert k[("train.yaml", ("gradient_accumulation_steps",))].value == 4
    assert k[("train.yaml", ("finetuning_type",))].value == "lora"
    assert k[("train.yaml", ("lora_rank",))].after_key == "finetuning_type"
    assert k[("train.yaml", ("lora_target",))].value == "all"
    assert k[("train.yaml", ("disable_gradient_checkpointing",))].value is True
    assert k[("train.yaml", ("flash_attn",))].value == "fa2"
    assert k[("train.yaml", ("enable_liger_kernel",))].value is True
    assert k[("train.yaml", ("deepspeed",))].value == "ds_z3_config.json"
    new = [e for e in edits if e.create]
    assert len(new) == 1 and new[0].file == os.path.join(str(DEMO.parent), "ds_z3_config.json")
    assert json.loads(new[0].value)["zero_optimization"]["stage"] == 3


def test_edits_for_llamafactory_qlora_and_precision():
    s = load_config(cfg("lf_lora_ds.yaml"))
    k = _by_key(edits_for(s, [Change("method", "lora", "qlora"), Change("precision", "fp16", "bf16")]))
    assert k[("lf_lora_ds.yaml", ("finetuning_type",))].value == "lora"
    assert k[("lf_lora_ds.yaml", ("quantization_bit",))].value == 4
    assert k[("lf_lora_ds.yaml", ("bf16",))].value is True
    assert k[("lf_lora_ds.yaml", ("fp16",))].value is False
    assert ("lf_lora_ds.yaml", ("lora_rank",)) not in k     # already in the file


def test_edits_for_zero_stage_goes_to_the_existing_deepspeed_json():
    s = load_config(cfg("lf_lora_ds.yaml"))
    edits = edits_for(s, [Change("zero_stage", 2, 3), Change("offload_params", False, True)])
    k = _by_key(edits)
    assert k[("ds_z2_offload.json", ("zero_optimization", "stage"))].value == 3
    assert k[("ds_z2_offload.json", ("zero_optimization", "offload_param"))].value["device"] == "cpu"
    assert not any(e.create for e in edits)


def test_edits_for_other_frameworks_use_their_key_names():
    ax = _by_key(edits_for(load_config(cfg("axolotl_qlora.yml")),
                           [Change("micro_batch", 2, 1), Change("seq_len", 4096, 2048), Change("fused_ce", False, True)]))
    assert ax[("axolotl_qlora.yml", ("micro_batch_size",))].value == 1
    assert ax[("axolotl_qlora.yml", ("sequence_len",))].value == 2048
    assert ax[("axolotl_qlora.yml", ("chunked_cross_entropy",))].value is True
    tt = _by_key(edits_for(load_config(cfg("torchtune_lora.yaml")),
                           [Change("micro_batch", 4, 2), Change("seq_len", 1024, 512), Change("method", "lora", "qlora")]))
    assert tt[("torchtune_lora.yaml", ("batch_size",))].value == 2
    assert tt[("torchtune_lora.yaml", ("tokenizer", "max_seq_len"))].value == 512
    assert tt[("torchtune_lora.yaml", ("model", "_component_"))].value == "torchtune.models.llama3_1.qlora_llama3_1_8b"
    trl = _by_key(edits_for(load_config(cfg("trl_sft.yaml")), [Change("seq_len", 2048, 1024), Change("grad_ckpt", True, True)]))
    assert trl[("trl_sft.yaml", ("max_length",))].value == 1024
    sh = _by_key(edits_for(load_config(cfg("train_hf.sh")), [Change("micro_batch", 8, 4)]))
    assert sh[("train_hf.sh", ("per_device_train_batch_size",))].value == 4
    acc = _by_key(edits_for(load_config(cfg("accelerate_fsdp.yaml")), [Change("n_gpus", 4, 8)]))
    assert acc[("accelerate_fsdp.yaml", ("num_processes",))].value == 8


# ---------------------------------------------------------------- words, not sentences

def _unknown_codes(value) -> list[str]:
    """Codes of `value` (a Msg, or a tuple of them, nested in values too) that words/ has no entry for."""
    from oomdoctor.facts import Msg
    from oomdoctor.words import has

    if isinstance(value, Msg):
        return ([] if has(value.code) else [value.code]) + [c for _, v in value.args for c in _unknown_codes(v)]
    if isinstance(value, tuple):
        return [c for v in value for c in _unknown_codes(v)]
    return []


_READABLE = sorted(str(p) for pattern in ("configs/*.*", "scripts/*.sh", "real-configs/*/*.*")
                   for p in (DATA.parent).glob(pattern) if p.name != "MANIFEST.yaml")


@pytest.mark.parametrize("path", _READABLE, ids=[Path(p).relative_to(DATA.parent).as_posix() for p in _READABLE])
def test_every_warning_reason_and_provenance_is_a_words_code(path):
    from oomdoctor.facts import Msg

    try:
        s = load_config(path)
    except InputError as err:
        assert isinstance(err.message, Msg) and not _unknown_codes(err.message), err.message
        return
    said = [src.describe() for src in s.sources.values()] + list(s.warnings)
    said += [m for m in (s.framework_reason, s.version_reason) if m is not None]
    assert all(isinstance(m, Msg) for m in said)
    assert not [c for m in said for c in _unknown_codes(m)]
