"""One validation layer for numbers read from any file or flag.

Every value that reaches the memory model or a patch passes through here where it is read: finite,
integral where it must be, and inside its range. A bad value raises BadValue carrying a Msg; the
reader that knows the file and line turns it into an InputError (`Doc.fail`, the model reader, ...).
PyYAML reads `1e-4` as a string and JSON `1e9` as a float: both are accepted as numbers here.
"""
from __future__ import annotations

import math
from typing import Any

from oomdoctor.facts import Msg, msg

# Larger than any count a training run has (tokens, parameters, bytes); bounds text like a
# 400-digit integer before int() or float() has to work on it.
MAX_ABS = 2.0 ** 62
_MAX_TEXT = 64


class BadValue(ValueError):
    """A value that is not the number it should be; `message` says why, in words/input.py codes."""

    def __init__(self, message: Msg) -> None:
        super().__init__(message.code)
        self.message = message


def _number(value: Any, key: str | Msg) -> float | int:
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict, tuple)):
        raise BadValue(msg("input.not_a_number", key=key, value=_shown(value)))
    if isinstance(value, int):
        if abs(value) > MAX_ABS:
            raise BadValue(msg("input.too_large", key=key, value=_shown(value)))
        return value
    if isinstance(value, float):
        number: float | int = value
    else:
        text = str(value).strip().replace("_", "")
        if not text or len(text) > _MAX_TEXT:
            raise BadValue(msg("input.not_a_number", key=key, value=_shown(value)))
        try:
            number = int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                raise BadValue(msg("input.not_a_number", key=key, value=_shown(value))) from None
    if isinstance(number, float) and not math.isfinite(number):
        raise BadValue(msg("input.not_finite", key=key, value=_shown(value)))
    if abs(number) > MAX_ABS:
        raise BadValue(msg("input.too_large", key=key, value=_shown(value)))
    return number


def as_int(value: Any, key: str | Msg, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (`8`, `8.0`, `"8"`, `"1e3"`) within [minimum, maximum]; BadValue otherwise."""
    number = _number(value, key)
    if isinstance(number, float):
        if number != int(number):
            raise BadValue(msg("input.not_an_integer", key=key, value=_shown(value)))
        number = int(number)
    _check_range(number, key, value, minimum, maximum)
    return number


def as_float(value: Any, key: str | Msg, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """A finite number within [minimum, maximum]; BadValue otherwise."""
    number = float(_number(value, key))
    _check_range(number, key, value, minimum, maximum)
    return number


def _check_range(number: float, key: str | Msg, value: Any, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and number < minimum:
        raise BadValue(msg("input.below_minimum", key=key, value=_shown(value), minimum=minimum))
    if maximum is not None and number > maximum:
        raise BadValue(msg("input.above_maximum", key=key, value=_shown(value), maximum=maximum))


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        # repr of an int past 4,300 digits raises (CPython's int_max_str_digits); hex has no limit
        text = hex(value)
        return f"{text[:20]}... ({value.bit_length()} bits)"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
