"""Numbers as every surface shows them: GiB, short GiB for table cells, run times. Same in both languages."""
from __future__ import annotations


def gib(value: float | None, digits: int = 1) -> str:
    """'12.3 GiB'; '?' when unknown."""
    return "?" if value is None else f"{value:.{digits}f} GiB"


def signed_gib(value: float, digits: int = 1) -> str:
    """'−12.3' for a saving, '+1.0' for a cost: the minus sign is U+2212, as in the reports' tables."""
    return f"{value:+.{digits}f}".replace("-", "−")


def gib_short(value: float) -> str:
    """'71G' / '7.1G': a size in a narrow table cell."""
    return f"{value:.0f}G" if value >= 10 else f"{value:.1f}G"


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
