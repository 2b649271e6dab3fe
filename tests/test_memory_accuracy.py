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


def test_median_error_on_published_peaks_is_at_most_7_percent(result):
    assert result["median"] <= 0.07       # issue #15's acceptance


def test_p90_error_on_published_peaks_is_at_most_22_percent(result):
    # 18% on the 57 rows before thirteen more ms-swift Qwen-1 rows (ms-40..ms-52) were added at first sight:
    # with them 21.9% (docs/estimates.md)
    assert result["p90"] <= 0.22


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
