"""A row of block characters for a series of values: the memory timeline of `oomdoctor run` in plain text
and Markdown."""
from __future__ import annotations

SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], width: int = 40, top: float | None = None) -> str:
    """Values as `width` block characters (each the maximum of its slice), scaled to `top` (else the maximum)."""
    if not values:
        return ""
    top = top or max(values) or 1.0
    n = len(values)
    cells = []
    for i in range(min(width, n)):
        lo, hi = i * n // min(width, n), max(i * n // min(width, n) + 1, (i + 1) * n // min(width, n))
        v = max(values[lo:hi])
        cells.append(SPARK[min(len(SPARK) - 1, max(0, int(v / top * (len(SPARK) - 1) + 0.5)))])
    return "".join(cells)
