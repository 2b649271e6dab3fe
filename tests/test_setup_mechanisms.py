"""The framework keys the readers keep become one typed record (`TrainingSetup.mechanisms`): each framework's
spelling of a mechanism turns on the same field, and the memory model reads the field, never the key."""
from __future__ import annotations

import pytest

from oomdoctor.facts import Hardware, ModelShape, TrainingSetup, mechanisms_of
from oomdoctor.memory import estimate

A100 = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=1)
LLAMA2_7B = ModelShape(name="meta-llama/Llama-2-7b-hf", hidden_size=4096, intermediate_size=11008, num_layers=32,
                       num_heads=32, num_kv_heads=32, vocab_size=32000)


@pytest.mark.parametrize("key", ["modules_to_save", "additional_target", "lora_modules_to_save"])
def test_every_spelling_of_modules_to_save_trains_the_same_copies(key):
    # PEFT's own key, LLaMA-Factory's additional_target and axolotl's lora_modules_to_save name one mechanism
    names = "embed_tokens, lm_head" if key == "additional_target" else ["embed_tokens", "lm_head"]
    setup = TrainingSetup(framework="hf", method="lora", extras={key: names})
    assert setup.mechanisms.modules_to_save == ("embed_tokens", "lm_head")
    plain = estimate(TrainingSetup(framework="hf", method="lora"), LLAMA2_7B, A100)
    copies = estimate(setup, LLAMA2_7B, A100)
    # two whole vocab x hidden copies train beside the adapters
    assert copies.details["params_trainable"] - plain.details["params_trainable"] == 2 * 32000 * 4096


@pytest.mark.parametrize("extras, expected", [
    ({"double_quantization": "false"}, False),          # LLaMA-Factory
    ({"bnb_4bit_use_double_quant": True}, True),        # axolotl
    ({"use_bnb_nested_quant": "true"}, True),           # TRL
    ({"quantize": "bnb.nf4-dq"}, True),                 # LitGPT
    ({"quantize": "bnb.nf4"}, False),
    ({}, None),                                         # the framework's default decides
])
def test_double_quantization_read_from_each_frameworks_key(extras, expected):
    assert mechanisms_of(extras).double_quant is expected


def test_double_quantization_changes_the_frozen_weights():
    nested = TrainingSetup(framework="hf", method="qlora", quant_bits=4, extras={"bnb_4bit_use_double_quant": True})
    plain = TrainingSetup(framework="hf", method="qlora", quant_bits=4)
    # 8-bit absmax constants instead of fp32 ones: about 0.05 bytes less per quantized weight
    assert estimate(nested, LLAMA2_7B, A100).details["frozen_weights_gib"] < \
        estimate(plain, LLAMA2_7B, A100).details["frozen_weights_gib"] - 0.2


def test_deepspeed_auto_bucket_counts_as_unset():
    auto = TrainingSetup(zero_stage=3, n_gpus=4, extras={"stage3_prefetch_bucket_size": "auto",
                                                         "reduce_bucket_size": "auto"})
    unset = TrainingSetup(zero_stage=3, n_gpus=4)
    assert auto.mechanisms.zero_prefetch_bucket is None
    assert estimate(auto, LLAMA2_7B, A100).details["gather_buffers_gib"] == \
        estimate(unset, LLAMA2_7B, A100).details["gather_buffers_gib"]


def test_a_stated_bucket_is_taken_as_written():
    small = TrainingSetup(zero_stage=3, n_gpus=4, extras={"stage3_prefetch_bucket_size": 0})
    unset = TrainingSetup(zero_stage=3, n_gpus=4)
    assert small.mechanisms.zero_prefetch_bucket == 0.0
    assert estimate(small, LLAMA2_7B, A100).details["gather_buffers_gib"] < \
        estimate(unset, LLAMA2_7B, A100).details["gather_buffers_gib"]


def test_a_changed_setup_reads_its_own_keys():
    off = TrainingSetup(framework="torchtune")
    on = off.with_changes(extras={"activation_offloading": "true"})
    assert off.mechanisms.activation_offload is False
    assert on.mechanisms.activation_offload is True


@pytest.mark.parametrize("extras, epochs", [
    ({"num_train_epochs": 2}, 2.0),        # HF TrainingArguments, LLaMA-Factory
    ({"num_epochs": "4"}, 4.0),            # axolotl
    ({"epochs": 1}, 1.0),                  # torchtune
    ({"num_train_epochs": "auto"}, None),  # unreadable: the advisor falls back to its own assumption
])
def test_run_length_read_from_each_frameworks_key(extras, epochs):
    assert mechanisms_of(extras).epochs == epochs


def test_the_advisors_token_count_follows_the_stated_samples():
    from oomdoctor.advise.timing import total_tokens

    few = TrainingSetup(seq_len=1024, extras={"max_samples": 1000, "num_train_epochs": 1})
    many = TrainingSetup(seq_len=1024, extras={"num_examples": "4000", "num_train_epochs": 1})
    assert total_tokens(few)[0] == 1000 * 1024
    assert total_tokens(many)[0] == 4000 * 1024


def test_no_stage_after_the_readers_reads_extras():
    # The pipeline, the estimate, the tracer and the advisor read typed fields (and `mechanisms`); `extras` holds
    # what the patch side passes through, which only the config readers and the mechanisms record name.
    import ast
    from pathlib import Path

    package = Path(__file__).parent.parent / "oomdoctor"
    paths = [package / "pipeline.py"] + [path for folder in ("memory", "simulate", "advise")
                                         for path in sorted((package / folder).rglob("*.py"))]
    readers = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        readers += [f"{path.relative_to(package)}:{node.lineno}" for node in ast.walk(tree)
                    if isinstance(node, ast.Attribute) and node.attr == "extras"]
    assert readers == []


def test_a_torchtune_loss_kernel_is_a_field_the_loss_model_reads():
    from oomdoctor.memory.loss import loss_regime

    linear = TrainingSetup(framework="torchtune", fused_ce=True, loss_kernel="linear")
    chunked = TrainingSetup(framework="torchtune", fused_ce=True, loss_kernel="chunked")
    assert (linear.mechanisms.loss, chunked.mechanisms.loss) == ("linear", "chunked")
    assert (loss_regime(linear, LLAMA2_7B), loss_regime(chunked, LLAMA2_7B)) == ("fused", "chunked")
    assert loss_regime(chunked.with_changes(fused_ce=False, loss_kernel=""), LLAMA2_7B) == "tt_fp32"
