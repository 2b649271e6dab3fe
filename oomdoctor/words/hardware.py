"""Words for the card: a --gpu name or size oomdoctor cannot use."""
from __future__ import annotations

WORDS = {
    "hardware.unknown_gpu": ("unknown GPU {name}; known: {known}; or give a size such as --gpu 24GiB",
                             "未知的 GPU {name}；已知型号：{known}；也可以直接给出显存大小，例如 --gpu 24GiB"),
    "hardware.size_not_positive": ("--gpu {text}: the size must be positive", "--gpu {text}：显存大小必须为正数"),
}
