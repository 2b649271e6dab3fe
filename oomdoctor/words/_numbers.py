"""Numbers as every surface shows them: GiB, short GiB for table cells, run times. Same in both languages."""
from __future__ import annotations


def gib(value: float | None, digits: int = 1) -> str:
    """'12.3 GiB'; '?' when unknown."""
    return "?" if value is None else f"{value:.{digits}f} GiB"


def size(value: float | None) -> str:
    """A size a log printed (in GiB) shown with its figure kept: GiB to two decimals from 0.01 GiB up
    ('2.00 GiB', '0.50 GiB'), below that in the unit that still shows it: '1024.00 KiB' as '1.00 MiB',
    '256 bytes' (never '0.00 GiB')."""
    if value is None:
        return "?"
    n = value * (1 << 30)
    if abs(value) >= 0.01 or n == 0:
        return f"{value:.2f} GiB"
    if abs(n) >= 1 << 20:
        return f"{n / (1 << 20):.2f} MiB"
    if abs(n) >= 1 << 10:
        return f"{n / (1 << 10):.2f} KiB"
    return f"{n:.0f} bytes"


def signed_gib(value: float, digits: int = 1) -> str:
    """'−12.3' for a saving, '+1.0' for a cost: the minus sign is U+2212, as in the reports' tables."""
    return f"{value:+.{digits}f}".replace("-", "−")


def gib_short(value: float) -> str:
    """'71 GiB' / '7.1 GiB': a size in a narrow table cell, with its unit (no tenths from 10 up)."""
    return f"{value:.0f} GiB" if value >= 10 else f"{value:.1f} GiB"


def hours(value: float | None) -> str:
    """'45m', '1.6h', '38h', '12d': a run time at a glance; '-' when unknown."""
    if value is None:
        return "-"
    if value < 1:
        return f"{value * 60:.0f}m"
    if value < 10:
        return f"{value:.1f}h"
    if value < 1000:
        return f"{value:.0f}h"
    return f"{value / 24:.0f}d"


def count_words(n: int | None, lang: str = "en") -> str:
    """A parameter count as people say it: '6.74 B' / '67.4 亿', '20.0 M' / '2000 万'; '?' when unknown."""
    if not n:
        return "?"
    if lang == "zh":
        return f"{n / 1e8:.1f} 亿" if n >= 1e8 else f"{n / 1e4:.0f} 万"
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M"
