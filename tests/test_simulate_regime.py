"""Which dtypes the simulation gives weights, trainables and the forward (pure Python, no torch)."""
from __future__ import annotations

from oomdoctor.facts import ModelShape, TrainingSetup
from oomdoctor.simulate.regime import dtype_name, regime

LLAMA = ModelShape(name="llama", torch_dtype="bf16")
GEMMA_FP32 = ModelShape(name="gemma-2-2b", model_type="gemma2", torch_dtype="fp32")


def test_llamafactory_upcasts_trainables_to_fp32_under_bf16_amp():
    rg = regime(TrainingSetup(framework="llamafactory", method="full", precision="bf16"), LLAMA)
    assert (rg.load_dtype, rg.trainable_dtype, rg.autocast_dtype) == ("bf16", "fp32", "bf16")


def test_llamafactory_pure_bf16_keeps_trainables_bf16_without_autocast():
    rg = regime(TrainingSetup(framework="llamafactory", method="full", pure_bf16=True), LLAMA)
    assert (rg.trainable_dtype, rg.autocast_dtype) == ("bf16", None)


def test_llamafactory_from_094_loads_the_checkpoint_dtype():
    new = regime(TrainingSetup(framework="llamafactory", framework_version="0.9.4", method="lora"), GEMMA_FP32)
    old = regime(TrainingSetup(framework="llamafactory", framework_version="0.9.3", method="lora"), GEMMA_FP32)
    assert new.load_dtype == "fp32" and old.load_dtype == "bf16"


def test_llamafactory_zero3_without_quantization_does_not_upcast():
    rg = regime(TrainingSetup(framework="llamafactory", method="full", zero_stage=3), LLAMA)
    assert rg.trainable_dtype == "bf16"


def test_hf_trainer_keeps_a_bf16_model_in_bf16_but_lora_adapters_are_fp32():
    full = regime(TrainingSetup(framework="hf", method="full"), LLAMA)
    lora = regime(TrainingSetup(framework="hf", method="lora"), LLAMA)
    assert full.trainable_dtype == "bf16" and lora.trainable_dtype == "fp32"


def test_trl_loads_fp32_unless_a_dtype_is_given():
    assert regime(TrainingSetup(framework="trl", method="full"), LLAMA).load_dtype == "fp32"
    assert regime(TrainingSetup(framework="trl", method="full", load_dtype="bfloat16"), LLAMA).load_dtype == "bf16"


def test_qlora_traces_dequantised_weights_in_the_compute_dtype():
    rg = regime(TrainingSetup(method="qlora", quant_bits=4, precision="bf16"), GEMMA_FP32)
    assert rg.load_dtype == "bf16"


def test_llamafactory_checkpointing_is_reentrant_unless_turned_off():
    assert regime(TrainingSetup(), LLAMA).reentrant_ckpt is True
    off = TrainingSetup(extras={"use_reentrant_gc": False})
    assert regime(off, LLAMA).reentrant_ckpt is False


def test_dtype_names_from_configs_are_normalised():
    assert [dtype_name(v) for v in ("bfloat16", "torch.float16", "float32", "auto", None)] == \
        ["bf16", "fp16", "fp32", "bf16", "bf16"]


def test_ms_swift_traces_the_checkpointing_its_version_patches_in():
    v1 = regime(TrainingSetup(framework="ms-swift", framework_version="1.5.1", method="lora", grad_ckpt=True), LLAMA)
    v3 = regime(TrainingSetup(framework="ms-swift", framework_version="3.0.0", method="lora", grad_ckpt=True), LLAMA)
    assert (v1.reentrant_ckpt, v3.reentrant_ckpt) == (False, True)
