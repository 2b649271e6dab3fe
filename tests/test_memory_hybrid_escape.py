"""What bitsandbytes keeps past non-reentrant checkpointing in a hybrid model's token-mixer layers
(docs/estimates.md section 22): each quantized linear keeps its own input (`ctx.tensors`), so a Mamba mixer keeps
in_proj's, x_proj's, dt_proj's and out_proj's inputs where an attention layer keeps q/k/v's and o_proj's."""
from __future__ import annotations

from dataclasses import replace

from oomdoctor.facts import Hardware, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.activations import layer_bytes
from oomdoctor.memory.regime import regime_of
from oomdoctor.models import _from_catalog

JAMBA = _from_catalog("ai21labs/Jamba-v0.1")     # h 4096, 32 layers, 28 of them Mamba (d_inner 8192, dt_rank 256)


def qlora(**kw) -> TrainingSetup:
    base = dict(framework="hf", precision="bf16", load_dtype="bf16", method="qlora", quant_bits=4, lora_rank=8,
                lora_targets=("all",), micro_batch=1, seq_len=4096, grad_ckpt=True, attention="flash_attention_2",
                extras={"transformers_version": "4.40.0", "gradient_checkpointing_kwargs": {"use_reentrant": False}})
    base.update(kw)
    return TrainingSetup(**base)


def test_jamba_mamba_layers_keep_their_four_quantized_inputs_past_the_checkpoint():
    setup = qlora()
    rg = regime_of(setup, JAMBA)
    hybrid = layer_bytes(setup, JAMBA, rg, 4096, trains_weights=False)
    as_attention = layer_bytes(setup, replace(JAMBA, linear_attn_linears=()), rg, 4096, trains_weights=False)
    mixer = 2 * (4096 + 8192 + 256 + 8192)      # in_proj (h), x_proj (d_inner), dt_proj (dt_rank), out_proj (d_inner)
    attention = 2 * (4096 + 4096)               # q/k/v's shared normed input, o_proj's input
    assert hybrid.hook_escape - as_attention.hook_escape == 28 * (mixer - attention) / 32
    hw = Hardware(gpu="grid", gpu_gib=1e6)
    assert estimate(setup, JAMBA, hw).components["activations"] > \
        estimate(setup, replace(JAMBA, linear_attn_linears=()), hw).components["activations"]

