"""Words for bad input: values, files, flags."""
from __future__ import annotations

WORDS = {
    "input.not_a_number": ("{key} must be a number, got {value}", "{key} 必须是数字，实际是 {value}"),
    "input.not_an_integer": ("{key} must be an integer, got {value}", "{key} 必须是整数，实际是 {value}"),
    "input.not_finite": ("{key} must be a finite number, got {value}", "{key} 必须是有限的数，实际是 {value}"),
    "input.too_large": ("{key} is too large to be real: {value}", "{key} 太大，不可能是真实值：{value}"),
    "input.below_minimum": ("{key} must be at least {minimum}, got {value}",
                            "{key} 至少应为 {minimum}，实际是 {value}"),
    "input.above_maximum": ("{key} must be at most {maximum}, got {value}",
                            "{key} 至多应为 {maximum}，实际是 {value}"),
}
