"""The rules audit 25 added (tests/data/logs/audit25/SOURCES.md), each on a log written here: what the rule reads is
read, and the look-alike without it is not."""
from __future__ import annotations

import pytest

from oomdoctor.crashlog import parse_log

_BODY = ("GPU 0 has a total capacity of 23.64 GiB of which 1.61 GiB is free. Process 1624541 has 22.02 GiB memory in "
         "use. Of the allocated memory 20.13 GiB is allocated by PyTorch, and 1.47 GiB is reserved by PyTorch but "
         "unallocated.")


def _events(tmp_path, text: str):
    log = tmp_path / "run.log"
    log.write_text(text + "\n", encoding="utf-8")
    return parse_log(str(log)).events


@pytest.mark.parametrize("line", [
    f"error:{_BODY}",                      # a blog's paste, its own prefix glued on
    f"报错如下：{_BODY}",                    # a Chinese sentence ending in a full-width colon
    f"[rank3]: {_BODY}",
])
def test_torch_oom_report_cut_one_sentence_deeper_is_read_from_its_capacity_sentence(tmp_path, line):
    # torch >= 2.1's caching allocator alone writes "GPU N has a total capacity of T of which F is free."
    (ev,) = _events(tmp_path, line)
    assert ev.kind == "cuda_oom" and ev.tried_gib is None and ev.device == 0
    assert (ev.capacity_gib, ev.free_gib, ev.allocated_gib) == (23.64, 1.61, 20.13)


@pytest.mark.parametrize("line", [
    "My GPU 0 has a total capacity of 24 GiB, so the 7B model should fit.",
    "GPU 0 has a total capacity of 24 GiB of which I use half.",
])
def test_a_capacity_sentence_in_prose_is_not_a_headless_report(tmp_path, line):
    assert _events(tmp_path, line) == ()


MSG = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
       "23.65 GiB of which 3.31 MiB is free.")


def _phase(tmp_path, frames: list[tuple[str, str, str]]) -> str | None:
    lines = ["Traceback (most recent call last):"]
    for path, func, stmt in frames:
        lines += [f'  File "{path}", line 12, in {func}', f"    {stmt}"]
    log = tmp_path / "run.log"
    log.write_text("\n".join([*lines, MSG]) + "\n", encoding="utf-8")
    ev = parse_log(str(log)).primary
    assert ev is not None and ev.kind == "cuda_oom"
    return ev.phase


def test_a_method_called_on_the_model_is_named_by_the_method_not_by_the_receiver(tmp_path):
    # `model.save_weights(path)` calls save_weights; only calling the module (`model(x)`) runs its forward pass
    saving = [("/app/trainer.py", "trainer_thread", "self.checkpoint()"),
              ("/app/trainer.py", "checkpoint", "model.save_weights(path)")]
    assert _phase(tmp_path, saving) == "save"
    calling = [("/app/trainer.py", "trainer_thread", "self.checkpoint()"),
               ("/app/trainer.py", "checkpoint", "logits = model(batch)")]
    assert _phase(tmp_path, calling) == "forward"
    named = [("/app/trainer.py", "trainer_thread", "self.checkpoint()"), ("/app/nets.py", "model", "h = w @ x")]
    assert _phase(tmp_path, named) == "forward"
