"""The estimate against published measured peaks (benchmarks/accuracy.py on the calibration set)."""
import os
import sys
from pathlib import Path

import pytest

REF = str(Path(__file__).resolve().parent / "data" / "reference" / "measured_peaks.yaml")


@pytest.fixture(scope="module")
def result():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    import accuracy
    return accuracy.run(verbose=False)


def test_median_error_on_published_peaks_is_at_most_7_5_percent(result):
    # 7.2% measured on 72 rows with the allocator's reserve (one churned block, not half of every transient
    # byte) and 15 rows added at first sight (docs/estimates.md); 6.0% on the 57 earlier rows under the old rule
    assert result["median"] <= 0.075


def test_p90_error_on_published_peaks_is_at_most_24_percent(result):
    # 23.3% measured on the same 72 rows (docs/estimates.md): the remaining misses are allocated figures that
    # are too low (ms-swift Qwen-1, Answer.AI FSDP QLoRA), no longer hidden by the reserve
    assert result["p90"] <= 0.24


def test_by_source_gives_each_publication_its_median_worst_and_components(result):
    import accuracy
    groups = accuracy.by_source(result)
    assert sum(len(rows) for _, rows, _, _ in groups) == len(result["rows"])
    assert len(groups) >= 8
    for name, rows, median, worst in groups:
        assert 0 <= median <= worst
        for row in rows:
            parts = result["parts"][row[0]]
            assert set(parts) == set(accuracy.COMPONENTS) and parts["reserve"] >= 0
    # sorted worst median first
    assert [g[2] for g in groups] == sorted((g[2] for g in groups), reverse=True)


def test_every_oom_case_is_predicted_not_to_fit(result):
    assert result["oom"], "the calibration set holds oom: true cases"
    assert all(ok for _, _, _, ok in result["oom"]), [cid for cid, _, _, ok in result["oom"] if not ok]


def test_exclusions_are_few_and_each_gives_a_reason(result):
    assert len(result["skipped"]) <= 6
    assert all(why for _, why in result["skipped"])
    assert len(result["rows"]) >= 50
