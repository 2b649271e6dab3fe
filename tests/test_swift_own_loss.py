"""ms-swift computes the SFT loss itself, on the full logits, when a batch carries weighted loss scales or the run
is sequence parallel: Liger's fused loss, asked for, does not run (swift/trainers/seq2seq_trainer.py compute_loss)."""
from __future__ import annotations

import os

from oomdoctor.configs import load_config
from oomdoctor.facts import ModelShape
from oomdoctor.memory.loss import loss_regime

SCRIPTS = os.path.join(os.path.dirname(__file__), "data", "real-configs", "scripts")
QWEN25_3B = ModelShape(name="Qwen/Qwen2.5-3B", hidden_size=2048, intermediate_size=11008, num_layers=36,
                       num_heads=16, num_kv_heads=2, vocab_size=151936, model_type="qwen2")

AGENT = """CUDA_VISIBLE_DEVICES=0 \\
swift sft \\
    --model Qwen/Qwen2.5-3B \\
    --tuner_type lora \\
    --dataset AI-ModelScope/function-calling-chatml#10000 \\
    --loss_scale {scale} \\
    --torch_dtype bfloat16 \\
    --per_device_train_batch_size 1 \\
    --max_length 2048 \\
    --use_liger_kernel true
"""


def _agent(tmp_path, scale: str):
    p = tmp_path / "train.sh"
    p.write_text(AGENT.format(scale=scale))
    setup = load_config(str(p))
    return setup, loss_regime(setup, QWEN25_3B)


def test_weighted_loss_scale_takes_the_loss_away_from_liger(tmp_path):
    setup, regime = _agent(tmp_path, "hermes")
    # the setup says what the script asks for; the estimate says what runs
    assert setup.fused_ce and setup.mechanisms.loss_scale == "hermes"
    assert regime not in ("fused", "cce", "chunked")
    assert _agent(tmp_path, "last_round+react")[1] not in ("fused", "cce", "chunked")


def test_binary_loss_scales_keep_ligers_fused_loss(tmp_path):
    # ignore_empty_think weighs 0 or 1: ms-swift turns it into labels and passes them to the model
    assert _agent(tmp_path, "ignore_empty_think")[1] == "fused"
    assert _agent(tmp_path, "last_round")[1] == "fused"
    think = load_config(os.path.join(SCRIPTS, "swift_think_liger.sh"))
    assert think.fused_ce and loss_regime(think, QWEN25_3B) == "fused"


def test_sequence_parallel_runs_swifts_chunked_loss_even_with_liger():
    setup = load_config(os.path.join(SCRIPTS, "swift_seq_parallel_long.sh"))
    assert setup.seq_parallel == 8 and setup.fused_ce
    assert setup.loss_kernel == "chunked" and loss_regime(setup, QWEN25_3B) == "chunked"
