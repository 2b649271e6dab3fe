"""Liger-Kernel's whole-model patch replaces the decoder layers' RMSNorm and SwiGLU product, which keep fewer tensors
for backward than transformers' own modules (liger_kernel/ops/rms_norm.py, ops/swiglu.py), and the frameworks' Liger
switches reach the memory model."""
from __future__ import annotations

from dataclasses import replace

from oomdoctor.configs import load_config
from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.activations import layer_bytes
from oomdoctor.memory.regime import regime_of

A100 = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=1)
LLAMA3_8B = ModelShape(name="meta-llama/Meta-Llama-3-8B", model_type="llama", hidden_size=4096,
                       intermediate_size=14336, num_layers=32, num_heads=32, num_kv_heads=8, vocab_size=128256)
LIGER = {"use_liger_kernel": True}


def full(**kw) -> TrainingSetup:
    # axolotl: its fused loss (fused_ce) is a key of its own, so the layers are Liger's only where extras say so
    base = dict(framework="axolotl", method="full", load_dtype="bf16", precision="bf16", micro_batch=4, seq_len=1024,
                grad_ckpt=True, attention="sdpa", packing=True, fused_ce=True)
    base.update(kw)
    return TrainingSetup(**base)


def saved(setup: TrainingSetup, shape: ModelShape = LLAMA3_8B) -> float:
    return layer_bytes(setup, shape, regime_of(setup, shape), setup.seq_len, trains_weights=True).saved


def test_liger_norms_and_swiglu_drop_the_fp32_copies_normalised_tensors_and_silu_output():
    h, inter = 4096, 14336
    # each of the two norms: HF keeps x.float() (4h) and, its weight training, the normalised tensor (2h); Liger
    # keeps its bf16 input (2h). The product: HF keeps silu(gate) beside gate and up, Liger recomputes it.
    dropped = 2 * (4 * h + 2 * h - 2 * h) + 2 * inter
    assert saved(full()) - saved(full(extras=LIGER)) == dropped


def test_liger_lowers_the_backward_moment_of_a_checkpointed_full_finetune():
    # FSDP over 8 GPUs (Liger-Kernel's README chart: Llama-3-8B, batch 8, FSDP1 on 8 A100s): activations dominate
    long = dict(micro_batch=8, seq_len=4096, fsdp="full_shard", n_gpus=8)
    eight = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=8)
    plain = estimate(full(**long), LLAMA3_8B, eight)
    patched = estimate(full(extras=LIGER, **long), LLAMA3_8B, eight)
    per_token = saved(full(**long)) - saved(full(extras=LIGER, **long))
    # the one layer recomputed under checkpointing keeps per_token less for each of its 8 x 4096 tokens
    assert plain.details["layer_saved_gib"] - patched.details["layer_saved_gib"] == \
        per_token * 8 * 4096 / GIB
    assert patched.peak_moment == plain.peak_moment == "layers backward"
    assert plain.allocated_gib - patched.allocated_gib >= per_token * 8 * 4096 / GIB
    assert patched.details["model_states_gib"] == plain.details["model_states_gib"]


def test_models_liger_does_not_patch_keep_their_own_modules():
    qwen1 = replace(LLAMA3_8B, name="Qwen/Qwen-7B", model_type="qwen")
    assert saved(full(extras=LIGER), qwen1) == saved(full(), qwen1)
    # torchtune builds its own modules: no HF model to patch
    tune = full(framework="torchtune", extras=LIGER)
    assert saved(tune) == saved(full(framework="torchtune"))


def test_axolotl_switches_are_read_one_by_one(tmp_path):
    p = tmp_path / "axo.yaml"
    p.write_text("base_model: meta-llama/Meta-Llama-3-8B\nsequence_len: 2048\nmicro_batch_size: 1\n"
                 "plugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rms_norm: true\n"
                 "liger_glu_activation: false\nliger_fused_linear_cross_entropy: true\n")
    mech = load_config(str(p)).mechanisms
    assert (mech.liger_norm, mech.liger_glu) == (True, False)
    p.write_text(p.read_text().replace("liger_rms_norm: true\nliger_glu_activation: false", "liger_swiglu: true"))
    mech = load_config(str(p)).mechanisms
    assert (mech.liger_norm, mech.liger_glu) == (False, True)


def test_one_switch_patches_every_module_in_trainer_and_llamafactory_configs(tmp_path):
    trl = tmp_path / "trl.yaml"
    trl.write_text("model_name_or_path: meta-llama/Meta-Llama-3-8B\nper_device_train_batch_size: 2\n"
                   "max_length: 1024\nbf16: true\nuse_liger_kernel: true\n")
    lf = tmp_path / "lf.yaml"
    lf.write_text("model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: lora\n"
                  "per_device_train_batch_size: 2\ncutoff_len: 1024\nbf16: true\nenable_liger_kernel: true\n")
    for path in (trl, lf):
        mech = load_config(str(path)).mechanisms
        assert (mech.liger_norm, mech.liger_glu) == (True, True), path.name
    trl.write_text(trl.read_text().replace("use_liger_kernel: true", "use_liger_kernel: false"))
    mech = load_config(str(trl)).mechanisms
    assert (mech.liger_norm, mech.liger_glu) == (False, False)


def test_a_plan_step_that_turns_the_one_switch_on_patches_the_layers_too():
    from oomdoctor.planner.registry import with_values

    # the plan's fused-loss rung sets enable_liger_kernel / use_liger_kernel, the whole-model switch there
    for framework in ("llamafactory", "hf", "trl", "ms-swift", "openrlhf"):
        before = full(framework=framework, fused_ce=False)
        after = with_values(before, {"fused_ce": True}).mechanisms
        assert (before.mechanisms.liger_norm, after.liger_norm, after.liger_glu) == (False, True, True), framework
    # axolotl's fused loss is its own key: the layers stay transformers' own
    after = with_values(full(fused_ce=False), {"fused_ce": True}).mechanisms
    assert (after.liger_norm, after.liger_glu) == (False, False)
