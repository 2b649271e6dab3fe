"""Words every surface uses: units, yes/no, languages."""
from __future__ import annotations

WORDS = {
    "common.yes": ("yes", "是"),
    "common.no": ("no", "否"),
    "common.gib": ("{value:.1f} GiB", "{value:.1f} GiB"),
    "common.unknown": ("unknown", "未知"),
    "common.list_sep": (", ", "、"),
    "common.on": ("on", "开"),
    "common.off": ("off", "关"),
    "common.none": ("none", "无"),
}
