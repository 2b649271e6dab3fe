"""The estimate against published measured peaks (benchmarks/accuracy.py on the calibration set)."""
import os
import sys

import pytest

REF = "/work/shared/reference/measured_peaks.yaml"
pytestmark = pytest.mark.skipif(not os.path.exists(REF), reason="reference measurements not present")


def _run():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    import accuracy
    return accuracy.run(verbose=False)


def test_median_error_on_published_peaks_stays_below_15_percent():
    # Target in issue 3 is 10% / 25%; these are the figures reached so far (see report), kept as a floor.
    result = _run()
    assert result["median"] <= 0.15
    assert result["p90"] <= 0.40


def test_lora_oom_case_is_predicted_not_to_fit():
    result = _run()
    assert any(ok for cid, _, _, ok in result["oom"] if cid == "lg-29")
