"""Proof 2: analytic allocated_gib vs a traced training step of the real transformers/peft code on fake tensors.

The tracer here is tests/fake_trace.py on purpose, not the product's oomdoctor.simulate: a minimal, separate
oracle (a TorchDispatchMode counting live storages; tied weights stay tied, as after from_pretrained), so the
analytic model is not judged only by code that shares its assumptions. tests/test_simulate_vs_estimate.py
checks the product's tracer against the same model. Skipped when torch/transformers/peft are absent.
"""
import itertools
import os
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")
sys.path.insert(0, os.path.dirname(__file__))

from fake_trace import GridCase, trace_peak_bytes  # noqa: E402
from oomdoctor.facts import Hardware, ModelShape, TrainingSetup  # noqa: E402
from oomdoctor.memory import estimate  # noqa: E402
from oomdoctor.memory.estimate import CUBLAS_WORKSPACE_GIB  # noqa: E402

MIB = 1 << 20


def _grid():
    shapes = [dict(layers=2, hidden=256, inter=688, heads=8, kv_heads=8, vocab=32000),
              dict(layers=3, hidden=512, inter=1376, heads=8, kv_heads=2, vocab=64000, tied=True),
              dict(layers=2, hidden=1024, inter=2752, heads=16, kv_heads=4, vocab=152064)]
    regimes = [dict(method="full", dtype="fp32", amp=True), dict(method="full", dtype="bf16", amp=False),
               dict(method="lora", dtype="bf16", amp=True), dict(method="lora", dtype="bf16", amp=False),
               dict(method="freeze", dtype="bf16", amp=False)]
    runs = [dict(grad_ckpt=False, attention="sdpa", optimizer="adamw", batch=1, seq=512),
            dict(grad_ckpt=True, attention="sdpa", optimizer="sgd", batch=4, seq=256),
            dict(grad_ckpt=False, attention="eager", optimizer="adamw", batch=2, seq=128)]
    cases = []
    for i, (s, r) in enumerate(itertools.product(shapes, regimes)):
        cases.append(GridCase(**s, **r, **runs[i % len(runs)]))
    cases.append(GridCase(layers=2, hidden=256, inter=688, heads=8, kv_heads=2, vocab=32000, method="full",
                          dtype="bf16", amp=False, grad_ckpt=True, batch=8, seq=128))
    cases += [GridCase(layers=4, hidden=256, inter=688, heads=8, kv_heads=4, vocab=32000, method=m, dtype="bf16",
                       amp=False, batch=1, seq=2048, grad_ckpt=gc) for m in ("full", "lora") for gc in (True, False)]
    cases += [GridCase(layers=2, hidden=512, inter=1376, heads=8, kv_heads=8, vocab=32000, method=m, dtype="fp32",
                       amp=True, optimizer="adamw_fused", seq=512, batch=2) for m in ("full", "lora")]
    cases += [GridCase(layers=2, hidden=256, inter=688, heads=4, kv_heads=4, vocab=48000, method="full",
                       dtype="fp32", amp=False, seq=256, batch=2, optimizer=o) for o in ("adamw", "sgd")]
    cases += [GridCase(layers=3, hidden=384, inter=1024, heads=6, kv_heads=2, vocab=32000, method=m, dtype="bf16",
                       amp=amp, seq=1024, batch=1, grad_ckpt=True, optimizer="adamw_fused")
              for m in ("full", "lora", "freeze") for amp in (True, False)]
    # tied embeddings without autocast: the summed lm_head + embedding gradient sets the peak
    cases += [GridCase(layers=2, hidden=512, inter=1376, heads=8, kv_heads=2, vocab=64000, tied=True, method="full",
                       dtype=d, amp=False, seq=256, batch=2, optimizer="sgd") for d in ("fp32", "bf16")]
    return cases


def analytic_bytes(c: GridCase) -> float:
    shape = ModelShape("grid", hidden_size=c.hidden, intermediate_size=c.inter, num_layers=c.layers,
                       num_heads=c.heads, num_kv_heads=c.kv_heads, vocab_size=c.vocab, tie_word_embeddings=c.tied,
                       torch_dtype=c.dtype)
    setup = TrainingSetup(
        framework="hf", framework_version="4.57", load_dtype=c.dtype, method=c.method, lora_rank=c.lora_rank,
        lora_targets=("all",), freeze_trainable_layers=c.freeze_layers,
        precision="bf16" if (c.amp or c.dtype == "bf16") else "fp32", pure_bf16=not c.amp and c.dtype == "bf16",
        grad_ckpt=c.grad_ckpt, attention=c.attention,
        optimizer={"adamw": "adamw_torch", "adamw_fused": "adamw_torch_fused", "sgd": "sgd"}[c.optimizer],
        micro_batch=c.batch, seq_len=c.seq)
    return (estimate(setup, shape, Hardware(gpu_gib=80)).allocated_gib - CUBLAS_WORKSPACE_GIB) * (1 << 30)


GRID = _grid()


def test_grid_spans_every_setting_the_estimate_distinguishes():
    seen = lambda name: {getattr(c, name) for c in GRID}  # noqa: E731
    assert seen("method") == {"full", "lora", "freeze"} and seen("dtype") == {"fp32", "bf16"}
    assert seen("amp") == {True, False} and seen("grad_ckpt") == {True, False} and seen("tied") == {True, False}
    assert seen("attention") == {"sdpa", "eager"} and seen("optimizer") >= {"adamw", "sgd"}
    assert any(c.kv_heads < c.heads for c in GRID) and any(c.kv_heads == c.heads for c in GRID)


@pytest.mark.parametrize("case", GRID, ids=lambda c: f"{c.method}-{c.dtype}-{'amp' if c.amp else 'pure'}-h{c.hidden}"
                         f"-v{c.vocab}-{c.attention}-{'gc' if c.grad_ckpt else 'nogc'}-{c.optimizer}-b{c.batch}s{c.seq}")
def test_analytic_allocated_matches_traced_peak(case):
    traced = trace_peak_bytes(case)
    predicted = analytic_bytes(case)
    assert abs(predicted - traced) <= max(0.05 * traced, 32 * MIB), \
        f"traced {traced / MIB:.1f} MiB, analytic {predicted / MIB:.1f} MiB ({(predicted - traced) / traced:+.1%})"
