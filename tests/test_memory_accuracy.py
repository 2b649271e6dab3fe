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


def test_p90_error_on_published_peaks_is_at_most_18_percent(result):
    assert result["p90"] <= 0.18


def test_every_oom_case_is_predicted_not_to_fit(result):
    assert result["oom"], "the calibration set holds oom: true cases"
    assert all(ok for _, _, _, ok in result["oom"]), [cid for cid, _, _, ok in result["oom"] if not ok]


def test_exclusions_are_few_and_each_gives_a_reason(result):
    assert len(result["skipped"]) <= 6
    assert all(why for _, why in result["skipped"])
    assert len(result["rows"]) >= 50
