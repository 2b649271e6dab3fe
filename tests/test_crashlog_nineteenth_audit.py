"""Forms the nineteenth first-sight audit found unread, each on a constructed line: a library's message without its
class, an app's own words for a caught failure, torch's words in a title with its author's label after them."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.crashlog import parse_log

GIB = float(1 << 30)


def one(tmp_path: Path, text: str):
    p = tmp_path / "run.log"
    p.write_text(text, encoding="utf-8")
    return parse_log(str(p))


@pytest.mark.parametrize("text,kind,tried_bytes", [
    # CuPy's pool words, with their class and without it as a framework prints str(e)
    ("cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 512 bytes (total 2048 bytes)\n", "cuda_oom", 512),
    ("Exception in main training loop: out of memory to allocate 8388608 bytes (total 1073741824 bytes)\n"
     "Traceback (most recent call last):\n", "cuda_oom", 8388608),
])
def test_words_of_the_nineteenth_audit_read_to_the_byte(tmp_path, text, kind, tried_bytes):
    ev = one(tmp_path, text).primary
    assert ev is not None and ev.kind == kind
    assert ev.tried_gib is not None and abs(ev.tried_gib * GIB - tried_bytes) <= 1


def test_comfyuis_own_line_for_a_caught_oom_is_the_failure(tmp_path):
    report = one(tmp_path, "got prompt\n[ERROR] Got an OOM, unloading all loaded models.\nPrompt executed in 3.20 seconds\n")
    assert [e.kind for e in report.events] == ["cuda_oom"]


def test_comfyuis_line_after_the_allocators_message_is_the_same_failure(tmp_path):
    report = one(tmp_path, "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                           "capacity of 15.98 GiB of which 1.00 GiB is free.\n\nGot an OOM, unloading all loaded models.\n")
    assert [e.kind for e in report.events] == ["hip_oom"]
    assert report.primary.tried_gib == pytest.approx(2.0)


@pytest.mark.parametrize("title", ["# KSampler Allocation on device (ERROR Message)\n",
                                   "# VAEDecode: Allocation on device - error\n",
                                   "# Allocation on device [exception]\n"])
def test_torchs_words_in_a_title_with_its_authors_label_after_them(tmp_path, title):
    ev = one(tmp_path, title + "\nIt stops at the sampler.\n").primary
    assert ev is not None and ev.kind == "cuda_oom"


@pytest.mark.parametrize("title", ["# Allocation on device 1 is slower than on device 0\n",
                                   "# Tensor allocation on device cuda:1 instead of cuda:0\n"])
def test_a_title_about_where_tensors_are_placed_is_no_failure(tmp_path, title):
    assert one(tmp_path, title + "\nThe model runs but slowly.\n").primary is None
