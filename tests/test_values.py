"""The one validation layer for numbers: finite, integral where it must be, inside its range."""
from __future__ import annotations

import pytest

from oomdoctor.values import BadValue, as_float, as_int
from oomdoctor.words import say


@pytest.mark.parametrize("value,expected", [(8, 8), (8.0, 8), ("8", 8), (" 16 ", 16), ("1e3", 1000), ("4_096", 4096)])
def test_integers_come_from_ints_integral_floats_and_numeric_text(value, expected) -> None:
    assert as_int(value, "k", minimum=1) == expected


@pytest.mark.parametrize("value,code", [
    (float("inf"), "input.not_finite"), ("nan", "input.not_finite"), ("1e400", "input.not_finite"),
    (10 ** 400, "input.too_large"), ("9" * 400, "input.not_a_number"), (True, "input.not_a_number"),
    ("sft", "input.not_a_number"), ([1], "input.not_a_number"), (2.5, "input.not_an_integer"),
    (0, "input.below_minimum"), (-5, "input.below_minimum"),
])
def test_bad_integers_say_why(value, code) -> None:
    with pytest.raises(BadValue) as err:
        as_int(value, "cutoff_len", minimum=1)
    assert err.value.message.code == code
    assert "cutoff_len" in say(err.value.message, "en") and "cutoff_len" in say(err.value.message, "zh")


def test_floats_are_finite_and_in_range() -> None:
    assert as_float("1e-4", "lr", minimum=0) == pytest.approx(1e-4)
    with pytest.raises(BadValue):
        as_float(".inf", "factor")
    with pytest.raises(BadValue) as err:
        as_float(1.5, "headroom", maximum=0.9)
    assert err.value.message.code == "input.above_maximum"
