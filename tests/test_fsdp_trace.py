"""FSDP2's per-rank peak, traced: torch's own fully_shard on the fake process group (benchmarks/fsdp_trace.py)
against the estimate, on a small Llama at two ranks. Slow tier: about a minute on a busy CPU."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

import fsdp_trace  # noqa: E402


@pytest.mark.slow
def test_fsdp2_rank_peak_is_within_ten_percent_of_the_estimate_and_shrinks_with_sharding():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("torch.testing._internal.distributed.fake_pg")
    shape = fsdp_trace.shape_of(2, hidden=64, inter=176, vocab=1024)
    traced = {n: fsdp_trace.trace(n, shape, 1, 16) for n in (2, 4)}
    for n, peak in traced.items():
        est = fsdp_trace.estimated(n, shape, 1, 16)
        assert abs(est - peak) / peak < 0.10, (n, peak, est)
    assert traced[4] < traced[2]
