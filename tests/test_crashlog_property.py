"""Whatever bytes a user hands over, parse_log returns a report or raises InputError; nothing else escapes."""
from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomdoctor.crashlog import parse_log
from oomdoctor.errors import InputError
from oomdoctor.facts import CrashReport

LOGS = Path(__file__).parent / "data" / "logs"
SEEDS = sorted(p.read_bytes() for p in LOGS.glob("*.log"))
PIECES = [b"CUDA out of memory. Tried to allocate ", b"2.00 GiB", b". GPU ", b"0 has a total capacity of ", b"\n",
          b"\r\n", b"\r", b"[rank3]: ", b"0: ", b"Killed", b"exitcode: -9", b"Traceback (most recent call last):\n",
          b'  File "x.py", line 1, in backward\n', b"OutOfMemoryError", b"\x1b[31m", b"\xff\xfe", b"\x00",
          b"(GPU 0; ", b"MA 1.0 GB         Max_MA 2.0 GB         CA 3 GB         Max_CA 3 GB", b" 12/100 [00:01<00:10,  1.0s/it]",
          b"trainable params: 1,000 || all params: 2,000", b"--per_device_train_batch_size 4 --cutoff_len", b"Arguments(\n",
          b"x" * 20000]


def _check(tmp_path, data: bytes) -> None:
    p = tmp_path / "fuzz.log"
    p.write_bytes(data)
    try:
        report = parse_log(str(p))
    except InputError as err:
        assert "\n" not in str(err)
        return
    assert isinstance(report, CrashReport)
    for ev in report.events:
        assert ev.line >= 1
        assert ev.kind


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES) | st.binary(max_size=40), max_size=30))
def test_random_logs_built_from_marker_pieces_never_crash(tmp_path, parts):
    _check(tmp_path, b"".join(parts))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SEEDS), st.data())
def test_mutated_fixture_logs_never_crash(tmp_path, seed, data):
    cut = data.draw(st.integers(0, len(seed)))
    junk = data.draw(st.binary(max_size=30))
    at = data.draw(st.integers(0, len(seed)))
    mutated = seed[:at] + junk + seed[at:cut] if at <= cut else seed[:cut]
    _check(tmp_path, mutated)
