"""The stacked memory bar every view draws: one glyph and one colour per component, and the cell arithmetic.

Plain text, the guided walkthrough and the terminal app all draw it from here, without Rich or Textual,
so the bar looks the same everywhere and its arithmetic is tested once.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from oomdoctor.facts import COMPONENTS, Estimate

# One glyph per component: the bar still reads with NO_COLOR or on a monochrome terminal.
GLYPHS: Mapping[str, str] = {
    "weights": "█", "gradients": "▓", "optimizer": "▒",
    "activations": "░", "logits": "≡", "overhead": "·", "reserve": ":",
}
# The 16 ANSI colours only, so a 16-colour terminal over SSH shows every segment distinctly.
COLOURS: Mapping[str, str] = {
    "weights": "blue", "gradients": "magenta", "optimizer": "yellow",
    "activations": "green", "logits": "cyan", "overhead": "bright_black", "reserve": "white",
}


def segments(est: Estimate) -> list[tuple[str, float]]:
    """(component, GiB) in drawing order; peak above the summed components shows as allocator reserve."""
    parts = [(name, max(0.0, float(est.components.get(name, 0.0)))) for name in COMPONENTS]
    rest = est.peak_gib - sum(v for _, v in parts)
    if rest > 0.05:
        parts.append(("reserve", rest))
    return parts


def bar_cells(parts: Sequence[tuple[str, float]], scale_gib: float, width: int) -> list[tuple[str, int]]:
    """Cells per segment on a bar `width` cells wide for `scale_gib`.

    Rounds the running total, not each part, so the bar's length is always round(total/scale*width)
    and no segment drifts by more than one cell.
    """
    if scale_gib <= 0 or width <= 0:
        return [(name, 0) for name, _ in parts]
    out: list[tuple[str, int]] = []
    running = 0.0
    drawn = 0
    for name, value in parts:
        running += value
        end = min(width, round(running / scale_gib * width))
        out.append((name, max(0, end - drawn)))
        drawn = max(drawn, end)
    return out
