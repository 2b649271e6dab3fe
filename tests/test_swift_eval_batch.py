"""ms-swift evaluates one sample per device unless the script says otherwise: its arguments override
TrainingArguments' per_device_eval_batch_size 8 with 1 (swift/trainers/arguments.py:130 at 3602360a5; 3.0
swift/llm/argument/train_args.py:32 at b40f31df7), so an evaluating `swift sft` script's evaluation pass holds one
sample's activations and logits, not eight."""
from __future__ import annotations

import os
from dataclasses import replace

from oomdoctor.configs import load_config
from oomdoctor.facts import Hardware, ModelShape
from oomdoctor.memory import estimate

SCRIPTS = os.path.join(os.path.dirname(__file__), "data", "real-configs", "scripts")
QWEN25_7B = ModelShape(name="Qwen/Qwen2.5-7B-Instruct", hidden_size=3584, intermediate_size=18944, num_layers=28,
                       num_heads=28, num_kv_heads=4, vocab_size=152064, model_type="qwen2")
A100 = Hardware(gpu="A100 80GB", gpu_gib=79.15)

SCRIPT = """CUDA_VISIBLE_DEVICES=0 \\
swift sft \\
    --model Qwen/Qwen2.5-7B-Instruct \\
    --tuner_type lora \\
    --dataset AI-ModelScope/alpaca-gpt4-data-en#500 \\
    --torch_dtype bfloat16 \\
    --per_device_train_batch_size 1 \\
    --eval_strategy steps \\
    --eval_steps 50 {extra}\\
    --max_length 2048
"""


def _read(tmp_path, extra: str = ""):
    p = tmp_path / "train.sh"
    p.write_text(SCRIPT.format(extra=extra))
    return load_config(str(p))


def test_swift_evaluates_one_sample_per_device_by_default(tmp_path):
    setup = _read(tmp_path)
    assert setup.framework == "ms-swift" and setup.do_eval
    assert setup.eval_batch == 1
    # the evaluation pass holds one sample's logits: with TrainingArguments' 8 it would be the peak of this LoRA run
    est = estimate(setup, QWEN25_7B, A100)
    assert est.phase == "train"
    eight = estimate(replace(setup, eval_batch=8), QWEN25_7B, A100)
    assert eight.phase == "eval" and eight.peak_gib > est.peak_gib + 10


def test_the_scripts_own_eval_batch_wins(tmp_path):
    assert _read(tmp_path, "--per_device_eval_batch_size 4 ").eval_batch == 4


def test_other_trainer_scripts_keep_trainingarguments_eight(tmp_path):
    p = tmp_path / "train.sh"
    p.write_text("python train.py --model_name_or_path Qwen/Qwen2.5-7B-Instruct --do_train --do_eval "
                 "--per_device_train_batch_size 1 --bf16 true\n")
    assert load_config(str(p)).eval_batch == 8


def test_swift_grpo_script_with_eval_strategy_is_not_an_eight_sample_eval():
    setup = load_config(os.path.join(SCRIPTS, "swift_grpo_moe_full_zero3_offload.sh"))
    assert setup.do_eval and setup.eval_batch == 1
