"""unsloth's own mechanisms (docs/estimates.md section 36c): its loss by release (the Triton kernel that writes its
backward into the compute-dtype logits, Cut Cross-Entropy, its chunked fused loss), its checkpointing (reentrant;
use_gradient_checkpointing="unsloth" copies each layer's input to the host) and its double-quantized 4-bit weights.
Checked against the tenth fresh sample, unsloth's executed notebooks (calibration_set fresh-2026-12j)."""
from __future__ import annotations

import os
import sys
from dataclasses import replace

from oomdoctor.configs import load_config
from oomdoctor.facts import Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.estimate import _reentrant
from oomdoctor.memory.loss import loss_regime
from oomdoctor.memory.regime import double_quant

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import accuracy  # noqa: E402

LLAMA3_8B = ModelShape(name="meta-llama/Meta-Llama-3-8B", hidden_size=4096, intermediate_size=14336, num_layers=32,
                       num_heads=32, num_kv_heads=8, vocab_size=128256, model_type="llama")
GEMMA3_270M = ModelShape(name="google/gemma-3-270m", hidden_size=640, intermediate_size=2048, num_layers=18,
                         num_heads=4, num_kv_heads=1, head_dim=256, vocab_size=262144, model_type="gemma3_text")
T4 = Hardware(gpu="T4", gpu_gib=14.58, n_gpus=1)


def _notebook(version: str = "2024.8", ckpt: str = "unsloth", **kw) -> TrainingSetup:
    """unsloth's Alpaca notebook template: 4-bit QLoRA r16 on the seven projections, batch 2, fp16 on a T4."""
    extras = {"unsloth_version": version} if version else {}
    if ckpt:
        extras["use_gradient_checkpointing"] = ckpt
    base = dict(framework="trl", method="qlora", quant_bits=4, lora_rank=16, lora_targets=("all",), micro_batch=2,
                seq_len=2048, precision="fp16", load_dtype="fp16", optimizer="adamw_8bit", grad_ckpt=True,
                use_unsloth=True, extras=extras)
    base.update(kw)
    return TrainingSetup(**base)


def test_the_loss_follows_the_release():
    assert loss_regime(_notebook("2024.8"), LLAMA3_8B) == "unsloth"          # fast_cross_entropy_loss
    assert loss_regime(_notebook("2025.4.7"), LLAMA3_8B) == "cce"            # fused_linear_cross_entropy
    # 1024 tokens or fewer still returned the logits until 2025.12 (llama.py `if bsz*q_len <= 1024`)
    assert loss_regime(_notebook("2025.4.7", micro_batch=1, seq_len=1024), LLAMA3_8B) == "unsloth"
    assert loss_regime(_notebook("2025.9.1"), LLAMA3_8B) == "unsloth_fused"
    assert loss_regime(_notebook(""), LLAMA3_8B) == "unsloth_fused"          # no release stated: today's code
    # model types outside unsloth's own forward run the compiled one, whose loss is the fused one
    assert loss_regime(_notebook("2025.8.9"), GEMMA3_270M) == "unsloth_fused"
    # the same run without unsloth is transformers' loss
    assert loss_regime(replace(_notebook("2024.8"), use_unsloth=False), LLAMA3_8B) not in ("unsloth", "unsloth_fused")


def test_the_kernel_keeps_one_compute_dtype_logits_tensor():
    setup = _notebook("2024.8")
    est = estimate(setup, LLAMA3_8B, T4)
    logits = 2 * 2048 * LLAMA3_8B.vocab_size * 2 / 2 ** 30          # fp16 logits, the gradient written into them
    assert abs(est.details["logits_forward_gib"] - logits) < 1e-6
    assert abs(est.details["logits_backward_gib"] - logits) < 1e-6
    plain = estimate(replace(setup, use_unsloth=False), LLAMA3_8B, T4)
    assert plain.details["logits_forward_gib"] > 3 * logits


def test_the_compiled_fused_loss_holds_a_one_gib_chunk():
    setup = _notebook("2025.12.8", method="lora", quant_bits=None, precision="fp32", load_dtype="fp32",
                      micro_batch=4, seq_len=4096)
    est = estimate(setup, GEMMA3_270M, T4)
    tokens = 4 * 4096
    chunk_gib = 8.0 / 4.0                                       # fp32 logits and their gradient, 1 GiB of logits
    grad_inputs_gib = tokens * GEMMA3_270M.hidden_size * 4 / 2 ** 30
    assert abs(est.details["logits_forward_gib"] - (chunk_gib + grad_inputs_gib)) < 1e-3
    # the whole batch's fp32 logits would be 16 GiB
    assert est.details["logits_forward_gib"] < 4


def test_offloaded_checkpointing_keeps_two_layer_inputs_and_true_keeps_every_one():
    offloaded = estimate(_notebook("2024.8", ckpt="unsloth"), LLAMA3_8B, T4)
    kept = estimate(_notebook("2024.8", ckpt=""), LLAMA3_8B, T4)
    per_input = 2 * 2048 * LLAMA3_8B.hidden_size * 2 / 2 ** 30
    assert abs(offloaded.details["checkpoint_inputs_gib"] - kept.details["checkpoint_inputs_gib"]) < 1e-9
    saved = kept.details["activations_gib"] - offloaded.details["activations_gib"]
    assert abs(saved - (LLAMA3_8B.num_layers - 2) * per_input) < 0.05


def test_unsloth_checkpoints_reentrant_and_quantizes_twice():
    setup = _notebook("2024.8", extras={"transformers_version": "5.0"})
    assert _reentrant(setup, LLAMA3_8B)                 # transformers 5's default is not what unsloth runs
    assert not _reentrant(replace(setup, use_unsloth=False), LLAMA3_8B)
    assert double_quant(setup) and not double_quant(replace(setup, use_unsloth=False))


def test_a_script_says_which_checkpointing_it_asked_for(tmp_path):
    script = """from unsloth import FastLanguageModel
from trl import SFTTrainer, SFTConfig
model, tokenizer = FastLanguageModel.from_pretrained(model_name="unsloth/llama-3-8b-bnb-4bit", max_seq_length=2048)
model = FastLanguageModel.get_peft_model(model, r=16, use_gradient_checkpointing={ckpt})
trainer = SFTTrainer(model=model, args=SFTConfig(per_device_train_batch_size=2, gradient_accumulation_steps=4))
"""
    for ckpt, offload in (('"unsloth"', True), ("True", False)):
        path = tmp_path / f"train_{offload}.py"
        path.write_text(script.format(ckpt=ckpt))
        setup = load_config(str(path))
        assert setup.use_unsloth and setup.grad_ckpt
        assert setup.mechanisms.unsloth_offload is offload
    path = tmp_path / "default.py"
    path.write_text(script.replace(", use_gradient_checkpointing={ckpt}", ""))
    assert load_config(str(path)).mechanisms.unsloth_offload          # get_peft_model's default is "unsloth"


def test_tenth_fresh_sample_bounds():
    result = accuracy.run(verbose=False, subset="fresh-2026-12j")
    assert len(result["rows"]) == 18
    median, p90 = accuracy.summary(result["rows"])
    # untouched code (fc699a1) on the same rows: 142.3% median, 520.5% p90, every row over
    assert median < 0.10 and p90 < 0.35


def test_the_crash_log_banner_gives_the_release_and_so_the_loss(tmp_path):
    from oomdoctor.crashlog.parse import parse_log

    log = tmp_path / "crash.log"
    log.write_text("==((====))==  Unsloth 2024.8: Fast Llama patching. Transformers = 4.44.2.\n"
                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total "
                   "capacity of 14.75 GiB of which 1.10 GiB is free.\n")
    versions = parse_log(str(log)).versions
    assert versions.get("unsloth") == "2024.8"
    path = tmp_path / "train.py"
    path.write_text('from unsloth import FastLanguageModel\n'
                    'model, tok = FastLanguageModel.from_pretrained(model_name="unsloth/llama-3-8b-bnb-4bit")\n'
                    'model = FastLanguageModel.get_peft_model(model, r=16)\n')
    setup = load_config(str(path), log_versions=versions)
    assert setup.mechanisms.unsloth_version == "2024.8"
    assert loss_regime(setup, LLAMA3_8B) == "unsloth"
    assert loss_regime(load_config(str(path)), LLAMA3_8B) == "unsloth_fused"     # no banner: today's release


def test_unsloth_cli_is_an_unsloth_run_with_its_checkpointing(tmp_path):
    for flags, offload in (("", True), (' --use_gradient_checkpointing "unsloth"', True),
                           (" --use_gradient_checkpointing True", False)):
        path = tmp_path / "run.sh"
        path.write_text(f'python unsloth-cli.py --model_name "unsloth/llama-3-8b"{flags}\n')
        setup = load_config(str(path))
        assert setup.use_unsloth and setup.grad_ckpt
        assert setup.mechanisms.unsloth_offload is offload


def test_llamafactory_use_unsloth_and_use_unsloth_gc_offload_the_layer_inputs(tmp_path):
    base = ("model_name_or_path: meta-llama/Meta-Llama-3-8B\nstage: sft\nfinetuning_type: lora\nlora_target: all\n"
            "quantization_bit: 4\ncutoff_len: 2048\nper_device_train_batch_size: 2\nbf16: true\n")
    for extra, unsloth, offload in (("", False, False), ("use_unsloth: true\n", True, True),
                                    ("use_unsloth_gc: true\n", False, True)):
        path = tmp_path / "train.yaml"
        path.write_text(base + extra)
        setup = load_config(str(path))
        assert setup.use_unsloth is unsloth and setup.mechanisms.unsloth_offload is offload
    # the offloaded inputs: the same run keeps two layers' inputs instead of every layer's
    kept = estimate(load_config(str(_write(tmp_path, "a.yaml", base))), LLAMA3_8B, T4)
    gc = estimate(load_config(str(_write(tmp_path, "b.yaml", base + "use_unsloth_gc: true\n"))), LLAMA3_8B, T4)
    per_input = 2 * 2048 * LLAMA3_8B.hidden_size * 2 / 2 ** 30
    assert kept.details["activations_gib"] - gc.details["activations_gib"] >= (LLAMA3_8B.num_layers - 2) * per_input - 0.01


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path
