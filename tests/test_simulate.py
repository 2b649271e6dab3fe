"""--simulate on small models: real transformers/peft code on fake tensors (needs torch, transformers, peft)."""
from __future__ import annotations

import dataclasses
import functools
import importlib.util

import pytest

from oomdoctor.facts import Estimate, ModelShape, TrainingSetup, msg
from oomdoctor.simulate import SimulateError, SimulationInterrupted, format_result, trace_step
from oomdoctor.words import say

# torch, transformers and peft are imported when a trace runs, not when the module is collected: under xdist
# every simulate test runs on one worker (tests/conftest.py), and the other never pays their import
pytestmark = [pytest.mark.simulate,
              pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("torch", "transformers", "peft")),
                                 reason="needs torch, transformers and peft")]

SMALL = ModelShape(name="small-llama", model_type="llama", hidden_size=256, intermediate_size=688, num_layers=2,
                   num_heads=4, num_kv_heads=4, vocab_size=32000)
GQA_QWEN = ModelShape(name="small-qwen2", model_type="qwen2", hidden_size=256, intermediate_size=704, num_layers=2,
                      num_heads=4, num_kv_heads=2, vocab_size=151936, tie_word_embeddings=True,
                      attention_bias=True)
# more layers and a small vocabulary so activations, not logits, set the forward peak
DEEP = ModelShape(name="deep-llama", model_type="llama", hidden_size=512, intermediate_size=1376, num_layers=4,
                  num_heads=8, num_kv_heads=8, vocab_size=32000)


def _setup(**values) -> TrainingSetup:
    base = dict(method="lora", micro_batch=2, seq_len=256)
    base.update(values)
    return TrainingSetup(**base)


@functools.cache
def _trace(shape: ModelShape, **values):
    return trace_step(_setup(**values), shape)


def trace(shape: ModelShape, **values):
    return _trace(shape, **values)


def _phase(result, name):
    return next(p for p in result.phases if p.name == name)


def test_weights_bytes_equal_parameter_count_times_dtype_bytes_for_lora():
    r = trace(SMALL)
    frozen = r.params_total - r.params_trainable
    # bf16 base, fp32 adapters (LLaMA-Factory upcast), plus the rotary buffers
    assert r.categories["weights"] == frozen * 2 + r.params_trainable * 4 + r.buffer_bytes
    assert r.dtypes["load"] == "bf16" and r.dtypes["trainable"] == "fp32"


def test_weights_bytes_count_tied_embeddings_once():
    r = trace(GQA_QWEN, method="full", framework="hf")
    assert r.categories["weights"] == r.params_total * 2 + r.buffer_bytes
    untied = trace(dataclasses.replace(GQA_QWEN, tie_word_embeddings=False), method="full", framework="hf")
    assert untied.params_total - r.params_total == GQA_QWEN.vocab_size * GQA_QWEN.hidden_size


def test_weights_stay_constant_through_every_phase():
    r = trace(SMALL, method="full")
    weights = [p.categories["weights"] for p in r.phases]
    assert weights[0] > 0 and weights == [weights[0]] * len(weights)


def test_adamw_states_are_two_fp32_copies_of_the_trainables_from_step_two():
    r = trace(SMALL, method="full", framework="hf", precision="fp32")
    assert _phase(r, "step 1 forward").categories["optimizer"] == 0
    states = _phase(r, "step 2 forward").categories["optimizer"]
    n_tensors_upper = 64   # one 4-byte step counter per parameter tensor
    assert r.params_trainable * 8 <= states <= r.params_trainable * 8 + 4 * n_tensors_upper


def test_second_step_peak_is_not_below_first_for_adam():
    r = trace(SMALL, method="full")
    first = max(p.peak_bytes for p in r.phases if p.step == 1)
    second = max(p.peak_bytes for p in r.phases if p.step == 2)
    assert second >= first
    assert r.peak_phase.startswith("step 2")


def test_foreach_adamw_step_holds_a_full_size_temporary():
    # torch's foreach AdamW takes sqrt of every exp_avg_sq at once: one extra copy of the trainables
    r = trace(SMALL, method="full", framework="hf", precision="fp32")
    opt = _phase(r, "step 2 optimizer").categories
    assert opt["activations"] >= r.params_trainable * 4


def test_lora_peak_is_below_full_peak():
    assert trace(SMALL).peak_bytes < trace(SMALL, method="full").peak_bytes


def test_freeze_trains_only_the_last_layers():
    r = trace(SMALL, method="freeze", freeze_trainable_layers=1)
    per_layer = 4 * 256 * 256 + 3 * 256 * 688 + 2 * 256
    assert r.params_trainable == per_layer
    assert trace(SMALL).peak_bytes < r.peak_bytes < trace(SMALL, method="full").peak_bytes


def test_checkpointing_lowers_forward_activations():
    on = trace(DEEP, seq_len=512, grad_ckpt=True)
    off = trace(DEEP, seq_len=512, grad_ckpt=False)
    act_on = _phase(on, "step 1 forward").categories["activations"]
    act_off = _phase(off, "step 1 forward").categories["activations"]
    assert act_on * 3 < act_off
    assert on.peak_bytes < off.peak_bytes


def test_loss_holds_bf16_logits_their_fp32_upcast_and_log_softmax():
    r = trace(SMALL, seq_len=512)
    logits_elements = 2 * 512 * SMALL.vocab_size
    # bf16 logits (2 B) + fp32 upcast (4 B) + fp32 log-softmax (4 B) at once
    assert _phase(r, "step 1 loss").categories["logits"] == 10 * logits_elements
    # the logits' backward: the fp32 log-softmax, its gradient and the logits' fp32 gradient at once
    assert _phase(r, "step 1 logits backward").categories["logits"] == 12 * logits_elements


def test_eager_attention_keeps_scores_that_sdpa_does_not():
    eager = trace(DEEP, seq_len=1024, grad_ckpt=False, attention="eager")
    sdpa = trace(DEEP, seq_len=1024, grad_ckpt=False, attention="sdpa")
    assert eager.attention == "eager" and sdpa.attention == "sdpa"
    scores = 2 * DEEP.num_heads * 1024 * 1024 * 2    # one layer's bf16 s x s scores
    assert _phase(eager, "step 1 forward").peak_bytes - _phase(sdpa, "step 1 forward").peak_bytes > scores


def test_flash_attention_runs_sdpa_and_says_so():
    r = trace(SMALL, attention="fa2")
    assert r.attention == "sdpa"
    assert msg("simulate.note.fa2") in r.notes
    assert "FlashAttention-2 没有 CPU/假张量内核" in say(msg("simulate.note.fa2"), "zh")


def test_sgd_keeps_no_optimizer_state():
    r = trace(SMALL, method="full", optimizer="sgd")
    assert all(p.categories["optimizer"] == 0 for p in r.phases)


def test_8bit_adam_states_take_about_two_bytes_per_parameter():
    r = trace(SMALL, method="full", optimizer="adamw_8bit")
    states = _phase(r, "step 2 forward").categories["optimizer"]
    assert 2.0 <= states / r.params_trainable <= 2.2
    assert msg("simulate.limit.bnb8bit") in r.limits


def test_zero3_divides_sharded_memory_by_gpus_and_says_so():
    r = trace(SMALL, method="full", zero_stage=3, n_gpus=4)
    one = trace(SMALL, method="full", zero_stage=3, n_gpus=1)
    assert r.peak_bytes < r.traced_peak_bytes
    assert r.categories["weights"] * 4 == pytest.approx(one.categories["weights"], abs=4)
    sharding = next(m for m in r.limits if m.code == "simulate.limit.sharding")
    assert say(sharding) == ("ZeRO-3 sharding is simulated by dividing optimizer states, gradients, weights by 4 GPUs, "
                             "not run (no buckets, no gathered layers)")
    assert say(sharding, "zh").startswith("ZeRO-3 分片没有实际运行，只是把优化器状态、梯度、权重除以 4 张 GPU")
    assert say(r.optimizer) == "AdamW foreach (torch's CUDA default) on an fp32 master copy (DeepSpeed)"


def test_qlora_reports_quantized_weights_and_a_lower_peak():
    r = trace(SMALL, method="qlora", quant_bits=4)
    assert r.quantized_weights_bytes is not None
    linear = 2 * (4 * 256 * 256 + 3 * 256 * 688)
    assert r.quantized_weights_bytes == pytest.approx(linear * 0.516, rel=0.01)   # NF4 + double-quant scales
    assert r.peak_bytes_quantized < r.peak_bytes
    assert msg("simulate.limit.bnb_kernels", bits=4, dtype="bf16") in r.limits


def test_hf_config_dict_builds_that_model():
    cfg = {"model_type": "qwen2", "hidden_size": 128, "intermediate_size": 352, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "tie_word_embeddings": True,
           "torch_dtype": "float32", "architectures": ["Qwen2ForCausalLM"]}
    r = trace_step(_setup(method="full", framework="llamafactory"), SMALL, hf_config=cfg)
    # LLaMA-Factory >= 0.9.4 loads the checkpoint dtype: this config says float32
    assert r.dtypes["load"] == "fp32"
    assert r.params_total < 1_000_000


def test_missing_lora_target_is_a_one_line_error():
    with pytest.raises(SimulateError) as err:
        trace_step(_setup(lora_targets=("query_key_value",)), SMALL)
    assert "query_key_value" in str(err.value) and "\n" not in str(err.value)
    assert err.value.render("zh").startswith("该模型中没有 LoRA 目标 query_key_value（它的线性层有：")


def test_progress_is_reported_and_ctrl_c_stops_cleanly():
    seen = []

    def progress(message) -> None:
        seen.append(message.code)
        if message.code == "simulate.progress.backward":
            raise KeyboardInterrupt

    with pytest.raises(SimulationInterrupted) as stopped:
        trace_step(_setup(), SMALL, progress=progress)
    assert seen[0] == "simulate.progress.loading" and "simulate.progress.forward" in seen
    assert stopped.value.render("zh") == "模拟在完成前被 Ctrl-C 中止；没有写入任何文件"


def test_format_result_lists_phases_components_and_versions():
    r = trace(SMALL)
    est = Estimate(components={"weights": 0.03, "gradients": 0.0, "optimizer": 0.0, "activations": 0.01,
                               "logits": 0.1, "overhead": 0.5}, allocated_gib=0.14, peak_gib=0.64,
                   capacity_gib=24.0)
    text = format_result(r, est)
    for word in ("step 2 logits backward", "step 2 layers backward", "weights", "logits", "torch", "transformers", "peft", "estimate is",
                 "CUDA context"):
        assert word in text
    assert "not traced" in text   # overhead
    assert "estimate is" not in format_result(r, None)


def test_live_bytes_counts_each_storage_once_and_frees_it():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from oomdoctor.simulate.tracer import LiveBytes

    tracker = LiveBytes(vocab_size=7)
    with FakeTensorMode(), tracker:
        tracker.enter(1, "forward")
        a = torch.empty(1024, dtype=torch.float32)
        view = a[:10]                       # same storage: nothing new
        b = a.to(torch.bfloat16)            # 2 KiB more
        assert tracker.live == 4096 + 2048
        del a, view
        assert tracker.live == 2048         # storage gone with its last tensor
        logits = torch.empty(3, 7)
        assert tracker.by_cat["logits"] == 3 * 7 * 4
        del b, logits
    assert tracker.live == 0
    assert tracker.phase_peaks[(1, "forward")][0] == 4096 + 2048   # a was freed before logits came


def test_deepspeed_bf16_keeps_fp32_master_and_states_in_the_optimizer():
    r = trace(SMALL, method="full", zero_stage=2, n_gpus=1)
    assert r.dtypes["trainable"] == "bf16"
    states = _phase(r, "step 2 forward").categories["optimizer"]
    # fp32 master copy (4 B) + exp_avg and exp_avg_sq (8 B) per trainable parameter, plus step counters
    assert r.params_trainable * 12 <= states <= r.params_trainable * 12 + 4 * 64


def test_moe_lora_runs_the_expert_code():
    moe = ModelShape(name="small-mixtral", model_type="mixtral", hidden_size=256, intermediate_size=512,
                     num_layers=2, num_heads=4, num_kv_heads=2, vocab_size=32000, num_experts=4,
                     experts_per_token=2)
    r = trace(moe, seq_len=128)
    dense = trace(dataclasses.replace(moe, num_experts=0, model_type="llama"), seq_len=128)
    # every expert is resident: the MoE model holds more weights than its dense twin
    assert r.categories["weights"] > dense.categories["weights"]


def test_simulate_json_prints_the_traced_phases_beside_the_estimates_moments(capsys):
    import json
    from pathlib import Path

    from oomdoctor.cli import main

    config = Path(__file__).parent / "data" / "configs" / "lf_sim_lora.yaml"
    model = Path(__file__).parent / "data" / "models" / "sim-llama-2l"
    code = main([str(config), "--model", str(model), "--gpu", "24GiB", "--simulate", "--json"])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert code in (0, 1)
    run = doc["simulations"][0]
    assert run["label"] == "as configured"
    phases = {(p["step"], p["phase"]) for p in run["traced"]["phases"]}
    assert {(2, name) for name in ("forward", "loss", "logits backward", "layers backward", "optimizer")} <= phases
    assert set(run["estimate"]["moments"]) >= {"forward", "loss", "logits backward", "layers backward", "optimizer"}
    assert set(run["traced"]["components"]) == {"weights", "gradients", "optimizer", "activations", "logits"}
    assert abs(run["gap"]["relative"]) < 0.05
    assert "loading torch" in err         # progress goes to stderr, JSON alone to stdout
    assert run["traced"]["limits_codes"][0] == {"code": "simulate.limit.no_cuda", "values": {}}
    assert run["traced"]["limits"][0].startswith("no CUDA context")


def test_simulate_speaks_chinese_on_stderr_and_in_its_json(capsys):
    import json
    from pathlib import Path

    from oomdoctor.cli import main

    config = Path(__file__).parent / "data" / "configs" / "lf_sim_lora.yaml"
    model = Path(__file__).parent / "data" / "models" / "sim-llama-2l"
    main([str(config), "--model", str(model), "--gpu", "24GiB", "--simulate", "--json", "--lang", "zh"])
    out, err = capsys.readouterr()
    traced = json.loads(out)["simulations"][0]["traced"]
    assert "oomdoctor：正在加载 torch、transformers 和 peft" in err and "第 2/2 步：反向传播" in err
    assert traced["limits"][0].startswith("不含 CUDA 上下文")
    assert traced["optimizer"] == "AdamW foreach（torch 在 CUDA 上的默认实现）"
