"""The crash-log scan finds every marker anywhere in the file, and its two engines agree.

Big logs are searched by the system grep (one pass, all markers), small ones and grep-less systems
in-process; both must give the same CrashReport. Timings live in benchmarks/logscan.py, not here.
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

import oomdoctor.crashlog.parse as parse_mod
import oomdoctor.crashlog.source as source_mod
from oomdoctor.crashlog import parse_log
from oomdoctor.crashlog.source import open_log

LOGS = Path(__file__).parent / "data" / "logs"
DEMO = Path(__file__).parent.parent / "oomdoctor" / "data" / "demo" / "train.log"
FIXTURES = sorted(LOGS.glob("*.log")) + [DEMO]
HAS_GREP = shutil.which("grep") is not None
needs_grep = pytest.mark.skipif(not HAS_GREP, reason="no system grep")

NOISE = b"".join(b"[rank%d]: {'loss': 1.%04d, 'grad_norm': 0.5, 'epoch': 0.%d}\n" % (i % 8, i, i % 10)
                 + b"[INFO|trainer.py:%d] 2024-05-01 12:00:00,123 >> step %d done on rank %d\n" % (i, i, i % 8)
                 for i in range(2000))           # about 190 KiB, 4000 lines


def parse_with(engine: str, path, monkeypatch):
    monkeypatch.setattr(source_mod, "SCAN_ENGINE", engine)
    return parse_log(str(path))


def write_noise(fh, blocks: int) -> None:
    for _ in range(blocks):
        fh.write(NOISE)


# ------------------------------------------------------------------ both engines agree

@needs_grep
@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_grep_and_in_process_scans_give_the_same_report_on_every_fixture(path, monkeypatch):
    assert parse_with("grep", path, monkeypatch) == parse_with("python", path, monkeypatch)


@needs_grep
def test_forced_grep_engine_really_runs_grep():
    with open_log(str(LOGS / "f01_torch25_backward.log")) as src:
        scan = src.scan_markers(parse_mod.MARKERS, 10, engine="grep")
    assert scan.method == "grep" and scan.offsets


@pytest.fixture(scope="module")
def mixed_log(tmp_path_factory) -> Path:
    """About 8 MiB: an OOM traceback, a bare `Killed`, a torchrun -9 summary, CRLF and ANSI messages in the middle."""
    p = tmp_path_factory.mktemp("mixed") / "mixed.log"
    with open(p, "wb") as fh:
        write_noise(fh, 10)
        fh.write((LOGS / "f01_torch25_backward.log").read_bytes())
        write_noise(fh, 10)
        fh.write(b"Killed\n")
        write_noise(fh, 10)
        fh.write((LOGS / "f11_torchrun_sigkill.log").read_bytes())
        write_noise(fh, 5)
        fh.write((LOGS / "e_crlf.log").read_bytes())
        write_noise(fh, 5)
        fh.write((LOGS / "e_ansi.log").read_bytes())
        write_noise(fh, 5)
    return p


@needs_grep
def test_both_engines_agree_on_a_multi_mib_log_with_hits_in_the_middle(mixed_log, monkeypatch):
    by_grep = parse_with("grep", mixed_log, monkeypatch)
    in_process = parse_with("python", mixed_log, monkeypatch)
    assert by_grep == in_process
    kinds = [e.kind for e in by_grep.events]
    assert kinds.count("host_oom") >= 2 and kinds.count("cuda_oom") >= 3, by_grep.events


def test_bare_killed_in_the_middle_is_found_at_its_line(mixed_log, monkeypatch):
    report = parse_with("python", mixed_log, monkeypatch)
    lines = mixed_log.read_bytes().split(b"\n")
    killed_line = lines.index(b"Killed") + 1
    assert any(e.kind == "host_oom" and e.line == killed_line for e in report.events)
    assert report.lines_total == len(lines) - 1


@needs_grep
def test_bare_killed_and_exitcode_minus_9_deep_in_a_300_mib_log_are_found(tmp_path, monkeypatch):
    # Before the grep engine, logs over 256 MiB only had the three GPU markers searched end to end.
    p = tmp_path / "nohup.out"
    block = NOISE * 64                                       # 12 MiB, 256000 lines
    with open(p, "wb") as fh:
        for _ in range(12):
            fh.write(block)
        fh.write(b"Killed\n")
        for _ in range(1):
            fh.write(block)
        fh.write(b"E0501 12:00:00.000000 77 torch/distributed/elastic/multiprocessing/api.py:869] "
                 b"failed (exitcode: -9) local_rank: 3 (pid: 4242) of binary: /usr/bin/python3\n")
        for _ in range(12):
            fh.write(block)
    assert p.stat().st_size > 300 << 20
    report = parse_with("auto", p, monkeypatch)
    per_block = block.count(b"\n")
    assert [(e.kind, e.line) for e in report.events] == [("host_oom", 12 * per_block + 1),
                                                         ("host_oom", 13 * per_block + 2)]
    assert report.failed_ranks == (3,)
    assert report.lines_total == 25 * per_block + 2


# ------------------------------------------------------------------ repeats, caps, failures

def test_a_log_that_repeats_killed_thousands_of_times_keeps_first_and_last_hits_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(parse_mod, "KEEP_PER_MARKER", 50)
    p = tmp_path / "spam.log"
    with open(p, "wb") as fh:
        fh.write(b"Killed\n" * 20000)
        fh.write((LOGS / "f02_legacy_runtimeerror.log").read_bytes())
        fh.write(b"Killed\n" * 20000)
    engines = ("python", "grep") if HAS_GREP else ("python",)
    reports = [parse_with(e, p, monkeypatch) for e in engines]
    assert all(r == reports[0] for r in reports)
    r = reports[0]
    assert {e.kind for e in r.events} == {"host_oom", "cuda_oom"}
    assert [e.line for e in r.events if e.kind == "cuda_oom"] == [20000 + 18]
    assert any("'Killed' 40000 times" in n and "first and the last 50" in n for n in r.notes), r.notes


@needs_grep
def test_a_grep_whose_output_does_not_match_the_file_is_not_trusted(tmp_path, monkeypatch):
    fake = tmp_path / "grep"
    fake.write_text("#!/bin/sh\necho '1:0:Killed'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    real = parse_with("python", LOGS / "f13_shell_killed.log", monkeypatch)
    monkeypatch.setattr(source_mod.shutil, "which", lambda name: str(fake) if name == "grep" else shutil.which(name))
    with open_log(str(LOGS / "f13_shell_killed.log")) as src:
        assert src.scan_markers(parse_mod.MARKERS, 10, engine="grep").method == "python"
    assert parse_with("grep", LOGS / "f13_shell_killed.log", monkeypatch) == real


@needs_grep
@pytest.mark.skipif(os.name != "posix", reason="grep memory cap is POSIX-only")
def test_a_line_longer_than_greps_memory_cap_falls_back_to_the_in_process_scan(tmp_path, monkeypatch):
    monkeypatch.setattr(source_mod, "GREP_MEMORY_BYTES", 16 << 20)
    with open_log(str(LOGS / "f13_shell_killed.log")) as src:      # the cap itself leaves grep working
        assert src.scan_markers(parse_mod.MARKERS, 10, engine="grep").method == "grep"
    p = tmp_path / "tqdm.log"
    with open(p, "wb") as fh:
        fh.write(b" 3/150 [00:40<33:05, 13.5s/it]\r" * 800_000)      # one 24 MiB line of redraws
        fh.write(b"\nKilled\n")
    with open_log(str(p)) as src:
        assert src.scan_markers(parse_mod.MARKERS, 10, engine="grep").method == "python"
    report = parse_with("grep", p, monkeypatch)
    assert [(e.kind, e.line) for e in report.events] == [("host_oom", 2)]


def test_line_numbers_count_from_the_nearer_checkpoint(tmp_path):
    p = tmp_path / "lines.log"
    p.write_bytes(b"a\n" * 1000 + b"b\n" * 1000)
    with open_log(str(p)) as src:
        src._checkpoint(4000, 2000)                          # the end: 2000 newlines before it
        assert src.line_number(3998) == 2000                 # counted back from the end
        assert src.line_number(2) == 2                       # counted up from the start
        assert src.line_number(2000) == 1001
