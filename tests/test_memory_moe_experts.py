"""Mixture-of-experts layers as transformers 5 and PEFT run them (docs/estimates.md section 20): PEFT's LoRA on the
3-D expert stacks as parameters (one adapter per stack, the merged W + BA kept per MoE layer until its backward),
the grouped_mm experts' kept routed outputs, gpt-oss's eager attention with a sink column (it has no SDPA path)
and its experts' clamped GLU. Each test states the bytes the code makes; figures from a fake-tensor trace with transformers 5.24 and PEFT 0.21 (benchmarks/moe_trace.py)."""
from __future__ import annotations

from dataclasses import replace

from oomdoctor.facts import GIB, Hardware, TrainingSetup
from oomdoctor.memory import activations, estimate, trainable_params
from oomdoctor.memory.activations import expert_stack_copies, layer_bytes
from oomdoctor.memory.params import peft_expert_stacks
from oomdoctor.memory.regime import regime_of
from oomdoctor.models import _from_catalog

HW = Hardware(gpu="grid", gpu_gib=1e6)
MIXTRAL = _from_catalog("mistralai/Mixtral-8x7B-v0.1")     # h 4096, experts 8 x i 14336, top-2, 32 layers
GPT_OSS = _from_catalog("openai/gpt-oss-20b")                # h 2880, experts 32 x i 2880, top-4


def hf(**kw) -> TrainingSetup:
    base = dict(framework="hf", precision="bf16", load_dtype="bf16", method="lora", lora_rank=16,
                lora_targets=("all",), micro_batch=1, seq_len=2048, grad_ckpt=False, attention="sdpa")
    base.update(kw)
    return TrainingSetup(**base)


def v4(**kw) -> TrainingSetup:
    """The same run stated on transformers 4.x, whose experts are nn.Linear modules."""
    return hf(extras={"transformers_version": "4.46.0"}, **kw)


def test_peft_wraps_each_expert_stack_once_with_gate_and_up_fused_at_twice_the_rank():
    # PEFT 0.21 traced: 22,479,104 trainable for two Mixtral layers; per layer q/k/v/o 425,984, the router's
    # gate.weight 16 x (4096 + 8), gate_up_proj 32 x 8 x (4096 + 28672), down_proj 16 x 8 x (14336 + 4096)
    per_layer = 425_984 + 16 * (4096 + 8) + 32 * 8 * (4096 + 28672) + 16 * 8 * (14336 + 4096)
    assert per_layer == 22_479_104 // 2
    assert trainable_params(hf(), MIXTRAL) == 32 * per_layer
    # on transformers 4.x each expert's w1/w3/w2 is its own nn.Linear with its own r x (in + out) adapter
    per_layer_v4 = 425_984 + 16 * (4096 + 8) + 8 * 16 * 3 * (4096 + 14336)
    assert trainable_params(v4(), MIXTRAL) == 32 * per_layer_v4


def test_attention_only_targets_leave_the_experts_alone():
    assert peft_expert_stacks(hf(lora_targets=("q_proj", "v_proj")), MIXTRAL) == ()
    assert peft_expert_stacks(hf(), GPT_OSS) == ()          # not in PEFT's conversion table: experts not wrapped


def test_every_moe_layer_keeps_its_merged_expert_stacks_until_its_backward():
    setup = hf()
    kept, worst, largest = expert_stack_copies(setup, MIXTRAL, regime_of(setup, MIXTRAL))
    gate_up, down = 8 * 4096 * 28672 * 2, 8 * 14336 * 4096 * 2
    assert (kept, largest) == (gate_up + down, gate_up)
    assert worst == max(gate_up + gate_up, gate_up + down + down)   # each stack's gradient beside the copies left
    moments = estimate(setup, MIXTRAL, HW).moments
    moments_v4 = estimate(v4(), MIXTRAL, HW).moments
    # the end of the forward holds all 32 layers' copies (2.625 GiB each)
    assert moments["forward"] - moments_v4["forward"] >= 32 * kept / GIB
    # checkpointed: only the layer being recomputed holds them
    ckpt, ckpt_v4 = estimate(hf(grad_ckpt=True), MIXTRAL, HW).moments, estimate(v4(grad_ckpt=True), MIXTRAL, HW).moments
    assert ckpt["layers backward"] - ckpt_v4["layers backward"] < 2 * worst / GIB


def test_grouped_mm_experts_keep_one_routed_output_per_token_and_expert():
    setup = hf(attention="eager")
    rg = regime_of(setup, GPT_OSS)
    now = layer_bytes(setup, GPT_OSS, rg, 2048, trains_weights=False)
    before = layer_bytes(replace(setup, extras={"transformers_version": "4.55.0"}), GPT_OSS, rg, 2048,
                         trains_weights=False)
    assert now.saved - before.saved == 2 * 2880 * 4    # bf16, hidden 2880, top-4


def test_gpt_oss_has_no_sdpa_path_so_a_default_sdpa_run_is_eager():
    assert estimate(hf(attention="sdpa"), GPT_OSS, HW).allocated_gib == \
        estimate(hf(attention="eager"), GPT_OSS, HW).allocated_gib
    assert estimate(hf(attention="flash_attention_2"), GPT_OSS, HW).allocated_gib < \
        estimate(hf(attention="eager"), GPT_OSS, HW).allocated_gib


def test_gpt_oss_eager_attention_keeps_one_bf16_probability_tensor_with_the_sink_column(monkeypatch):
    # a saved-tensor dump of one GptOssAttention (bf16, eager, 2048 tokens): q, the repeated k and v, softmax's
    # output 64 heads x 2049 columns, the row max's int64 indices, and a view of the probabilities for the value
    # matmul; the general eager path keeps an fp32 softmax and its bf16 cast instead
    setup = hf(attention="eager")
    rg = regime_of(setup, GPT_OSS)
    sinks = layer_bytes(setup, GPT_OSS, rg, 2048, trains_weights=False)
    monkeypatch.setattr(activations, "ATTN_SINKS", ())
    plain = layer_bytes(setup, GPT_OSS, rg, 2048, trains_weights=False)
    assert sinks.saved - plain.saved == 2 * 64 * 2049 + 8 * 64 - (4 + 2) * 64 * 2048


def test_gpt_oss_experts_keep_their_clamped_glu_three_rows_more_than_swiglu(monkeypatch):
    # GptOssExperts._apply_gate keeps the clamped gate, up + 1 and glu beside gate_up and the sigmoid: three
    # intermediate-wide bf16 rows per (token, expert), intermediate 2880, top-4
    setup = hf()
    rg = regime_of(setup, GPT_OSS)
    now = layer_bytes(setup, GPT_OSS, rg, 2048, trains_weights=False)
    monkeypatch.setattr(activations, "CLAMPED_GLU", frozenset())
    swiglu = layer_bytes(setup, GPT_OSS, rg, 2048, trains_weights=False)
    assert now.saved - swiglu.saved == 2 * 3 * 2880 * 4


def test_llama4_sends_every_token_through_all_sixteen_experts():
    scout = _from_catalog("meta-llama/Llama-4-Scout-17B-16E")   # h 5120, 16 experts x i 8192, top-1
    setup = hf(lora_targets=("q_proj", "k_proj", "v_proj", "o_proj"))
    rg = regime_of(setup, scout)
    now = layer_bytes(setup, scout, rg, 2048, trains_weights=False)
    as_top1 = layer_bytes(setup, replace(scout, model_type="llama4_top1"), rg, 2048, trains_weights=False)
    # the repeated input (16 x h) and gate_up + silu(gate) of the 15 experts a top-1 MLP would not run, in bf16
    # (a saved-tensor dump of one Llama4TextMoe: 163,840 + 524,288 + 262,144 bytes per token for all 16)
    assert now.saved - as_top1.saved == 2 * 16 * 5120 + 2 * 15 * 3 * 8192
