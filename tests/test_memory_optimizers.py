"""The memory-efficient optimizers' states, gradients and step transients (docs/estimates.md section 39, issue
#25): GaLore and APOLLO keep rank x max(m, n) moments and one projection matrix per targeted weight, their
layer-wise variants free each gradient in its hook, Adam-mini keeps one full moment, Muon one momentum buffer for
the hidden matrices, LOMO no moments and no gradient set. Rules read from the optimizers' code
(oomdoctor/memory/optimizers.py cites each)."""
from __future__ import annotations

import os
import sys

import pytest

from oomdoctor.configs import load_config
from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup
from oomdoctor.memory import estimate
from oomdoctor.memory.optimizers import projector_bytes, steps_in_backward

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import accuracy  # noqa: E402

LLAMA2_7B = ModelShape(name="meta-llama/Llama-2-7b-hf", hidden_size=4096, intermediate_size=11008, num_layers=32,
                       num_heads=32, num_kv_heads=32, vocab_size=32000, model_type="llama")
A100 = Hardware(gpu="A100 80GB", gpu_gib=79.15, n_gpus=1)
# one Llama-2-7B decoder layer's linear weights: (smaller side, larger side) of q, k, v, o and gate, up, down
LINEARS = [(4096, 4096)] * 4 + [(4096, 11008)] * 3
EMBED = 32000 * 4096


def _full(**kw) -> TrainingSetup:
    base = dict(framework="llamafactory", method="full", micro_batch=1, seq_len=512, precision="bf16",
                pure_bf16=True, optimizer="adamw_torch")
    base.update(kw)
    return TrainingSetup(**base)  # type: ignore[arg-type]


def _states(setup: TrainingSetup) -> float:
    return estimate(setup, LLAMA2_7B, A100).details["optimizer_states_gib"]


def test_galore_keeps_low_rank_moments_and_one_projector_per_linear_weight():
    # pure bf16: states and projection matrices in bf16; rank 16 is LLaMA-Factory's galore_rank default
    galore = _states(_full(galore=True))
    per_layer = sum(2 * 16 * big * 2 + 16 * small * 2 for small, big in LINEARS)
    rest = (2 * EMBED + 32 * 2 * 4096 + 4096) * 2 * 2           # embeddings, head, norms: AdamW's two moments
    expected = (32 * per_layer + rest) / GIB
    assert abs(galore - expected) < 0.01 * expected
    # untouched code: AdamW's full-size moments, 2 x 6.74B x 2 bytes ~ 25 GiB
    assert _states(_full()) > 10 * galore


def test_galore_rank_from_the_config_and_8bit_moments():
    r1024 = _states(_full(galore=True, extras={"galore_rank": 1024}))
    r16 = _states(_full(galore=True))
    assert r1024 > 5 * r16
    eight = _states(_full(galore=True, optimizer="adamw_8bit", extras={"galore_rank": 1024}))
    # bitsandbytes' 8-bit code: 1 byte + an fp32 absmax per 256 elements in place of bf16's 2 bytes
    assert eight < 0.75 * r1024


def test_galore_fp32_projector_is_the_whole_svd_factor_cpu_check():
    # a CPU check of the rule: GaLore's get_orthogonal_matrix slices Vh / U without a copy for an fp32 weight,
    # so the projection matrix keeps the whole min x min factor's storage; a bf16 weight's is a rank x min copy
    torch = pytest.importorskip("torch")  # the [simulate] extra; the fast suites run without it
    for m, n, rank in ((64, 24, 4), (24, 64, 4)):
        grad = torch.randn(m, n)
        U, _, Vh = torch.linalg.svd(grad, full_matrices=False)
        kept = (Vh[:rank, :] if m >= n else U[:, :rank])
        assert kept.untyped_storage().nbytes() == projector_bytes("galore", m, n, rank, 4)
        cast = kept.to(torch.bfloat16)
        assert cast.untyped_storage().nbytes() == projector_bytes("galore", m, n, rank, 2)


def test_layerwise_galore_and_apollo_free_each_gradient_in_its_hook():
    for kind in ("galore", "apollo"):
        whole = estimate(_full(**{kind: True}), LLAMA2_7B, A100)
        layerwise = estimate(_full(**{kind: True}, extras={f"{kind}_layerwise": True}), LLAMA2_7B, A100)
        assert steps_in_backward(_full(**{kind: True}, extras={f"{kind}_layerwise": True}))
        assert not steps_in_backward(_full(**{kind: True}))
        # the whole set of bf16 gradients at the step (12.55 GiB) against one parameter's at a time
        assert whole.details["moment_optimizer_gradients_gib"] > 12.0
        assert layerwise.details["moment_optimizer_gradients_gib"] < 0.3
        assert layerwise.peak_gib < whole.peak_gib - 10


def test_apollo_mini_rank_one_and_the_scaled_gradient_temporary():
    apollo = estimate(_full(apollo=True, extras={"apollo_rank": 1}), LLAMA2_7B, A100)
    # embeddings and head keep AdamW: rank-1 moments are ~nothing beside them
    rest = (2 * EMBED + 32 * 2 * 4096 + 4096) * 2 * 2 / GIB
    assert rest < apollo.details["optimizer_states_gib"] < rest + 0.1
    # the step's full-size temporaries: the embedding's sqrt(v), m / sqrt(v) (larger than one MLP's scaled gradient)
    assert apollo.details["optimizer_step_temporaries_gib"] >= 2 * EMBED * 2 / GIB - 1e-6


def test_adam_mini_keeps_one_full_moment_and_muon_one_for_hidden_matrices():
    adamw = _states(_full())
    mini = _states(_full(extras={"use_adam_mini": True}))
    assert 0.49 * adamw < mini < 0.52 * adamw
    muon = _states(_full(extras={"use_muon": True}))
    hidden = 32 * sum(s * b for s, b in LINEARS)
    expected = (hidden * 2 + (2 * EMBED + 32 * 2 * 4096 + 4096) * 2 * 2) / GIB
    assert abs(muon - expected) < 0.01 * expected


def test_lomo_frees_the_gradients_in_backward():
    lomo = estimate(_full(optimizer="lomo"), LLAMA2_7B, A100)
    assert lomo.details["optimizer_states_gib"] == 0.0
    assert lomo.details["moment_optimizer_gradients_gib"] < 0.3


def test_llamafactory_yaml_flags_reach_the_estimate(tmp_path):
    path = tmp_path / "galore.yaml"
    path.write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\ndo_train: true\n"
                    "finetuning_type: full\nuse_galore: true\ngalore_layerwise: true\ngalore_rank: 128\n"
                    "dataset: alpaca_en_demo\ntemplate: llama2\ncutoff_len: 512\nbf16: true\n"
                    "per_device_train_batch_size: 1\ngradient_accumulation_steps: 1\n")
    setup = load_config(str(path))
    assert setup.galore and steps_in_backward(setup)
    # bf16 without pure_bf16: LLaMA-Factory upcasts the trainables to fp32, so each projection matrix is a view of
    # its whole fp32 SVD factor (4096 x 4096 for every Llama-2-7B linear weight), the moments rank 128 fp32
    per_layer = sum(2 * 128 * big * 4 + small * small * 4 for small, big in LINEARS)
    expected = (32 * per_layer + (2 * EMBED + 32 * 2 * 4096 + 4096) * 2 * 4) / GIB
    assert abs(_states(setup) - expected) < 0.01 * expected


def test_galore_fresh_row_fl03_now_scores():
    result = accuracy.run(verbose=False, subset="fresh-2026-12k")
    rows = {row[0]: row for row in result["rows"]}
    # untouched code (86104048): skipped by the floor test, full-size 8-bit states counted (25.54 GiB > 21.23)
    assert "fl-03" in rows


def test_the_note_names_the_optimizer_in_both_languages():
    from oomdoctor.words import say
    est = estimate(_full(galore=True), LLAMA2_7B, A100)
    notes = [n for n in est.notes if n.code == "memory.note.low_memory_optimizer"]
    assert len(notes) == 1
    assert "GaLore" in say(notes[0], "en") and "GaLore" in say(notes[0], "zh")
