"""The evaluation forward during training: what it holds beside the weights and optimizer states."""
from __future__ import annotations

from oomdoctor.configs import load_config
from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate

QWEN3_8B = ModelShape(name="Qwen/Qwen3-8B", hidden_size=4096, intermediate_size=12288, num_layers=36, num_heads=32,
                      num_kv_heads=8, vocab_size=151936, params_total=8_190_735_360)
H100 = Hardware(gpu="H100 80GB", gpu_gib=80.0, n_gpus=1)


def _liger_run(**changes) -> TrainingSetup:
    base = TrainingSetup(framework="hf", method="lora", precision="bf16", micro_batch=1, seq_len=8192,
                         grad_ckpt=True, attention="fa2", fused_ce=True, loss_kernel="liger", do_eval=True,
                         eval_batch=1)
    return base.with_changes(**changes)


def test_liger_materialises_the_logits_when_it_evaluates():
    # Liger fuses the loss into the output projection only when the module is training; the evaluation forward
    # computes every logit and the model's loss upcasts them: 8192 x 151936 x (2 + 8) bytes = 11.6 GiB
    liger = estimate(_liger_run(), QWEN3_8B, H100)
    assert liger.phase == "eval"
    assert abs(liger.components["logits"] - 8192 * 151936 * 10 / GIB) < 0.01


def test_a_fused_loss_that_runs_in_evaluation_too_keeps_the_logits_out_of_it():
    # a fused loss named otherwise (torchtune's, Cut Cross-Entropy's) evaluates fused: no logits-sized tensor
    fused = estimate(_liger_run(loss_kernel="linear"), QWEN3_8B, H100)
    liger = estimate(_liger_run(), QWEN3_8B, H100)
    assert fused.phase == "train"
    assert liger.allocated_gib - fused.allocated_gib > 5.0


def test_zero3_keeps_its_gradient_partition_through_an_evaluation_and_zero2_does_not():
    # ZeRO-3 allocates its flat gradient partition at init and never frees it (stage3.py __init__): an
    # evaluation forward holds it beside the weights and the optimizer states
    ds = dict(method="full", zero_stage=3, n_gpus=4, deepspeed_file="zero3.json")
    evaluating = estimate(_liger_run(**ds), QWEN3_8B, H100)
    grads = 8_190_735_360 * 2 / 4 / GIB
    assert evaluating.phase == "eval"
    assert abs(evaluating.components["gradients"] - grads) < 0.01
    # ZeRO-2 releases its partition buffer after each reduction, and the step frees the gradients
    zero2 = estimate(_liger_run(**{**ds, "zero_stage": 2}), QWEN3_8B, H100)
    assert zero2.phase == "eval" and zero2.components["gradients"] == 0.0


def test_readers_name_liger_so_the_estimate_can_tell_it_from_other_fused_losses(tmp_path):
    lf = tmp_path / "lf.yaml"
    lf.write_text("model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\nenable_liger_kernel: true\n"
                  "cutoff_len: 2048\n")
    hf = tmp_path / "args.json"
    hf.write_text('{"model_name_or_path": "Qwen/Qwen2.5-7B", "use_liger_kernel": true, "bf16": true}')
    for path in (lf, hf):
        setup = load_config(str(path))
        assert setup.fused_ce and setup.loss_kernel == "liger", path.name
    off = tmp_path / "off.yaml"
    off.write_text("model_name_or_path: Qwen/Qwen2.5-7B\nstage: dpo\nfinetuning_type: lora\nenable_liger_kernel: true\n")
    assert load_config(str(off)).loss_kernel == ""      # LLaMA-Factory patches Liger in for pt and sft only
