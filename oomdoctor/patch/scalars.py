"""Text for one scalar value, in YAML or JSON, and the test for "already that value".

YAML plain scalars are only written when no reader would take them for something else:
PyYAML (YAML 1.1: yes/on/1e-4-as-string) and YAML 1.2 readers (1e-4 as a float) must agree.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ..lazyre import lazy_re

# Strings a YAML 1.1 or 1.2 reader resolves to bool/null; quoting them keeps them strings.
_YAML_WORDS = frozenset(
    "y n yes no on off true false null ~ .inf -.inf +.inf .nan".split()
)
# Anything a YAML 1.1 or 1.2 reader might take for a number (ints in any base, floats with or
# without a dot or exponent sign, sexagesimal 1:30, underscores) is quoted when it is a string.
_NUMBERISH = re.compile(
    r"""[-+]?(
        [0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?
      | \.[0-9_]+([eE][-+]?[0-9]+)?
      | 0[xob][0-9a-fA-F_]+
      | [0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?
      | \.(inf|Inf|INF|nan|NaN|NAN)
    )""",
    re.VERBOSE,
)
# Characters that start an indicator or break a plain scalar in block or flow context.
_PLAIN_BAD_FIRST = set("-?:,[]{}#&*!|>'\"%@`")
# "?" ends a plain scalar in PyYAML's flow context ({a: b?c} does not parse), so it is quoted everywhere.
_PLAIN_BAD_ANYWHERE = (": ", " #", ",", "[", "]", "{", "}", "?", "\t")
# YAML printable set (YAML 1.1 §5.1 / PyYAML reader); everything else must be escaped.
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")
_DQ_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0",
               "\x85": "\\N", "\u2028": "\\L", "\u2029": "\\P", "\ufeff": "\\uFEFF"}


def _shortest_exponent(value: float) -> tuple[str, str]:
    """Fewest mantissa digits that read back as exactly `value`: (mantissa, exponent digits with sign)."""
    for digits in range(17):
        text = f"{value:.{digits}e}"
        if float(text) == value:
            break
    mantissa, exponent = text.split("e")
    return mantissa, exponent


def yaml_float(value: float, exponent: bool | None = None) -> str:
    """1e-05 -> 1.0e-5: PyYAML only reads floats with a dot and a signed exponent (pyyaml#173).

    exponent: True/False keeps the replaced value's notation; None picks one by magnitude
    (learning rates below 1e-3 read better as 5.0e-5, as LLaMA-Factory's examples write them).
    """
    value = float(value)
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if exponent is None:
        exponent = value != 0 and not 1e-3 <= abs(value) < 1e7
    if not exponent:
        text = repr(value)
        if "e" not in text:
            return text
    mantissa, exp = _shortest_exponent(value)
    if "." not in mantissa:
        mantissa += ".0"
    sign = "-" if exp.startswith("-") else "+"
    return f"{mantissa}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"


def yaml_plain_ok(text: str) -> bool:
    """True when `text` can be written unquoted and every YAML reader reads it back as this string."""
    if not text or text != text.strip() or _NON_PRINTABLE.search(text):
        return False
    if any(c in text for c in "\n\r\x85\u2028\u2029\ufeff"):
        return False
    if text.lower() in _YAML_WORDS or _NUMBERISH.fullmatch(text):
        return False
    if text[0] in _PLAIN_BAD_FIRST or text.endswith(":"):
        return False
    if any(bad in text for bad in _PLAIN_BAD_ANYWHERE):
        return False
    # Last word to PyYAML's own resolver: dates, "=", "<<" and whatever else it would not read as str.
    import yaml

    return yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False)) == "tag:yaml.org,2002:str"


def yaml_double_quoted(text: str) -> str:
    out = []
    for ch in text:
        if ch in _DQ_ESCAPES:
            out.append(_DQ_ESCAPES[ch])
        elif _NON_PRINTABLE.match(ch):
            code = ord(ch)
            out.append(f"\\x{code:02X}" if code < 0x100 else f"\\u{code:04X}" if code < 0x10000 else f"\\U{code:08X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def yaml_single_quoted_ok(text: str) -> bool:
    # Single quotes cannot escape, and line breaks inside them fold: fall back to double quotes.
    return not _NON_PRINTABLE.search(text) and not any(c in text for c in "\n\r\x85\u2028\u2029\ufeff\t")


def yaml_scalar(value: Any, style: str | None = None, old_text: str | None = None) -> str:
    """YAML text for a scalar. `style` is the replaced node's quote style ("'", '"' or None);
    `old_text` is the replaced value's text, whose float notation (0.0002 or 2.0e-4) is kept."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        text = "true" if value else "false"
        # torchtune configs write True/False; keep the file's capitalisation of the replaced bool.
        if old_text and old_text.strip() in ("True", "False"):
            return text.capitalize()
        if old_text and old_text.strip() in ("TRUE", "FALSE"):
            return text.upper()
        return text
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return yaml_float(value, _exponent_style(old_text))
    if isinstance(value, str):
        if style == "'" and yaml_single_quoted_ok(value):
            return "'" + value.replace("'", "''") + "'"
        if style == '"':
            return yaml_double_quoted(value)
        if yaml_plain_ok(value):
            return value
        if yaml_single_quoted_ok(value) and '"' in value and "'" not in value:
            return "'" + value + "'"
        return yaml_double_quoted(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_scalar(v) for v in value) + "]"
    if isinstance(value, Mapping) and not value:
        return "{}"
    raise TypeError(f"cannot write a {type(value).__name__} as a YAML scalar: {value!r}")


def _exponent_style(old_text: str | None) -> bool | None:
    if old_text is None or not _FLOAT_TEXT.fullmatch(old_text.strip()):
        return None
    return "e" in old_text.lower()


def json_value(value: Any, old_text: str | None = None) -> str:
    """JSON text for a scalar or list (objects are written by the JSON editor, which knows the indent)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"JSON has no {value!r}")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(json_value(v) for v in value) + "]"
    if isinstance(value, float) and not isinstance(value, bool) and _exponent_style(old_text):
        mantissa, exp = _shortest_exponent(value)     # keep DeepSpeed's 5e8 notation
        return f"{mantissa}e{'-' if exp.startswith('-') else ''}{exp.lstrip('+-').lstrip('0') or '0'}"
    if value is None or isinstance(value, (bool, int, float, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping) and not value:
        return "{}"
    raise TypeError(f"cannot write a {type(value).__name__} as a JSON value: {value!r}")


_FLOAT_TEXT = lazy_re(r"[-+]?(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _bucket(value: Any) -> tuple[str, Any]:
    if value is None:
        return ("null", None)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_bucket(v) for v in value))
    return (type(value).__name__, value)


def same_value(old: Any, new: Any, *, number_types: bool = False) -> bool:
    """True when the file already holds `new`: 1e-4 written as text equals 0.0001, True is not 1.

    number_types: 1 is not 1.0. YAML has !!int and !!float, and a reader gets one or the other;
    JSON has one number type, so DeepSpeed's 5e8 already holds 500000000."""
    if isinstance(old, str) and isinstance(new, (int, float)) and not isinstance(new, bool):
        if _FLOAT_TEXT.fullmatch(old.strip()):
            old = float(old.replace("_", ""))
    a, b = _bucket(old), _bucket(new)
    if a[0] != b[0]:
        return False
    if a[0] == "number":
        if number_types and isinstance(a[1], float) != isinstance(b[1], float):
            return False
        if isinstance(a[1], int) and isinstance(b[1], int):
            return a[1] == b[1]         # exact: two integers past 2**53 can share one float
        return float(a[1]) == float(b[1])
    return a == b
