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
from hypothesis import given, settings
from hypothesis import strategies as st

import oomdoctor.crashlog.parse as parse_mod
import oomdoctor.crashlog.scan as scan_mod
from oomdoctor.crashlog import parse_log
from oomdoctor.crashlog.source import open_log
from oomdoctor.words import say

LOGS = Path(__file__).parent / "data" / "logs"
DEMO = Path(__file__).parent.parent / "oomdoctor" / "data" / "demo" / "train.log"
FIXTURES = sorted(LOGS.glob("*.log")) + [DEMO]
HAS_GREP = shutil.which("grep") is not None
needs_grep = pytest.mark.skipif(not HAS_GREP, reason="no system grep")

NOISE = b"".join(b"[rank%d]: {'loss': 1.%04d, 'grad_norm': 0.5, 'epoch': 0.%d}\n" % (i % 8, i, i % 10)
                 + b"[INFO|trainer.py:%d] 2024-05-01 12:00:00,123 >> step %d done on rank %d\n" % (i, i, i % 8)
                 for i in range(2000))           # about 190 KiB, 4000 lines


def parse_with(engine: str, path, monkeypatch):
    monkeypatch.setattr(scan_mod, "SCAN_ENGINE", engine)
    return parse_log(str(path))


def said(report) -> list[str]:
    """The report's notes on how the log was read, in English."""
    return [say(n, "en") for n in report.notes]


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
        scan = scan_mod.scan(src, parse_mod.MARKERS, 10, engine="grep")
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


# ------------------------------------------------------------------ big logs: anchors and windows

ANCHORS = (b"emory", b"Traceback (most recent call last)")
NO_ANCHOR = sorted(p.name for p in FIXTURES if not any(a in p.read_bytes() for a in ANCHORS))
# found only near the end of a big log: the anchor-less ones, and a DeepSpeed launcher kill whose
# only 'Memory' is a see_memory_usage line a few lines above it
TAIL_ONLY = NO_ANCHOR + ["f12_deepspeed_sigkill.log"]


def small_tiers(monkeypatch, full: int) -> None:
    """Scan constants scaled down so a log of a few hundred KiB is 'big'."""
    monkeypatch.setattr(scan_mod, "FULL_SCAN_BYTES", full)
    monkeypatch.setattr(scan_mod, "HEAD_SCAN_BYTES", 16 << 10)
    monkeypatch.setattr(scan_mod, "TAIL_SCAN_BYTES", 16 << 10)
    monkeypatch.setattr(scan_mod, "AROUND_BYTES", 16 << 10)


def events(report):
    return [(e.kind, e.line, e.rank, e.phase, e.tried_gib, e.capacity_gib) for e in report.events]


def test_the_fixtures_without_an_anchor_are_kill_lines_a_bare_tf_line_and_logs_without_failures():
    # What the tiered scan can miss in the middle of a big log: a shell or container kill line, and a
    # TensorFlow message cut from its traceback and allocator lines; the rest have no failure at all.
    assert NO_ANCHOR == ["e_context_banner.log", "e_no_oom.log", "f11_sighup_not_oom.log", "f13_shell_killed.log",
                         "f15_docker_137.log", "f19_tf.log", "f26b_metal_internal_lookalike.log"]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
@pytest.mark.parametrize("where", ["middle", "end"])
def test_a_big_log_finds_what_a_full_scan_finds(path, where, tmp_path, monkeypatch):
    """Every fixture inside a log too big for a full scan: the anchors and windows find every failure
    the full scan finds, except a kill line without anchor in the middle (TAIL_ONLY)."""
    p = tmp_path / "big.log"
    with open(p, "wb") as fh:
        fh.write(NOISE)
        fh.write(path.read_bytes().rstrip(b"\n") + b"\n")
        if where == "middle":
            fh.write(NOISE)
    small_tiers(monkeypatch, full=1 << 30)
    whole = parse_with("python", p, monkeypatch)
    assert not any(n.startswith("a big log") for n in said(whole))
    small_tiers(monkeypatch, full=64 << 10)
    tiered = parse_with("python", p, monkeypatch)
    assert any(n.startswith("a big log") for n in said(tiered))
    if where == "middle" and path.name in TAIL_ONLY:
        assert set(events(tiered)) <= set(events(whole))
    else:
        assert events(tiered) == events(whole)
    if HAS_GREP and where == "end":
        assert events(parse_with("grep", p, monkeypatch)) == events(tiered)


@pytest.mark.parametrize("engine", ["python"] + (["grep"] if HAS_GREP else []))
def test_an_oom_among_thousands_of_memory_mentions_in_a_big_log_is_still_found(engine, tmp_path, monkeypatch):
    monkeypatch.setattr(parse_mod, "KEEP_PER_MARKER", 50)
    small_tiers(monkeypatch, full=64 << 10)
    chatter = b"".join(b"step %d | loss 1.2 | peak_memory_active: 20.%d GiB\n" % (i, i % 10) for i in range(3000))
    p = tmp_path / "torchtune.log"
    with open(p, "wb") as fh:
        fh.write(chatter)
        fh.write((LOGS / "f02_legacy_runtimeerror.log").read_bytes())
        fh.write(chatter)
    r = parse_with(engine, p, monkeypatch)
    assert [(e.kind, e.line) for e in r.events] == [("cuda_oom", 3000 + 18)]
    assert any("'memory'" in n and "first and the last 50" in n for n in said(r)), r.notes
    assert any("'out of mem', 'OutOfMemory' searched in every line" in n for n in said(r)), r.notes


def test_the_big_log_note_says_when_only_the_first_and_last_tracebacks_got_windows(tmp_path, monkeypatch):
    small_tiers(monkeypatch, full=64 << 10)
    monkeypatch.setattr(scan_mod, "AROUND_KEEP", 2)
    warning = (b"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
               b"ValueError: a retried data-loader error\n")
    p = tmp_path / "warnings.log"
    with open(p, "wb") as fh:
        for _ in range(6):
            fh.write(NOISE[:40000] + warning)
    note = next(n for n in said(parse_with("python", p, monkeypatch)) if n.startswith("a big log"))
    assert note.endswith("either side of the first and the last 2 of 6 tracebacks"), note


@needs_grep
def test_a_40_mib_log_with_failures_in_the_middle_and_a_kill_at_the_end(tmp_path, monkeypatch):
    p = tmp_path / "nohup.out"
    block = NOISE * 16                                       # 3 MiB, 64000 lines
    with open(p, "wb") as fh:
        for _ in range(6):
            fh.write(block)
        fh.write(b"[rank1]: OOM at step 812, skipping the batch: CUDA out of memory. Tried to allocate 2.00 GiB. "
                 b"GPU 1 has a total capacity of 79.15 GiB of which 1.12 GiB is free.\n")
        for _ in range(6):
            fh.write(block)
        fh.write((LOGS / "f06_cublas_alloc.log").read_bytes())        # a traceback, no 'memory'
        for _ in range(2):
            fh.write(block)
        fh.write(b"Killed\n")
    assert p.stat().st_size > scan_mod.FULL_SCAN_BYTES
    per_block = block.count(b"\n")
    by_grep = parse_with("grep", p, monkeypatch)
    assert [(e.kind, e.line, e.rank) for e in by_grep.events] == [
        ("cuda_oom", 6 * per_block + 1, 1), ("cublas_alloc", 12 * per_block + 1 + 18, None),
        ("host_oom", 14 * per_block + 1 + 18 + 1, None)]
    assert by_grep.lines_total == 14 * per_block + 1 + 18 + 1
    assert any(n.startswith("a big log: 'memory', 'Traceback' searched in every line") for n in said(by_grep))
    assert parse_with("python", p, monkeypatch) == by_grep
    from oomdoctor.views.jsonout import crash_dict
    doc = crash_dict(by_grep)
    assert doc["notes"] == said(by_grep) and doc["lines_total"] == by_grep.lines_total


@given(st.lists(st.integers(min_value=0, max_value=3000), max_size=60, unique=True), st.integers(min_value=1, max_value=8),
       st.sampled_from(["python", "grep"] if HAS_GREP else ["python"]))
@settings(max_examples=40, deadline=None)
def test_capped_search_keeps_the_first_and_last_hits_and_counts_or_says_it_did_not(positions, keep, engine):
    """However the hits fall, a capped search returns exactly the first and the last `keep`, and its
    total is either right or None (more than it kept)."""
    import tempfile

    lines = [b"step %d | loss 1.0 | nothing to see\n" % i for i in range(3001)]
    for i in positions:
        lines[i] = b"step %d | peak memory 20 GiB\n" % i
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "hits.log"
        p.write_bytes(b"".join(lines))
        starts = sorted(sum(len(x) for x in lines[:i]) + lines[i].index(b"emory") for i in positions)
        with open_log(str(p)) as src:
            if engine == "python":
                k = scan_mod._python_pass(src, (b"emory",), keep)[b"emory"]
            else:
                k = scan_mod._GrepPass.start(src, (b"emory",), keep, cap=keep).result()[b"emory"]
        offsets = [off for off, _line in k.items()]
        want = starts if len(starts) <= 2 * keep else starts[:keep] + starts[-keep:]
        assert offsets == want
        assert k.total in (len(starts), None) and (k.total is not None or len(starts) > 2 * keep)


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
    assert any("'Killed' 40000 times" in n and "first and the last 50" in n for n in said(r)), r.notes


@needs_grep
def test_a_grep_whose_output_does_not_match_the_file_is_not_trusted(tmp_path, monkeypatch):
    fake = tmp_path / "grep"
    fake.write_text("#!/bin/sh\necho '1:0:Killed'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    real = parse_with("python", LOGS / "f13_shell_killed.log", monkeypatch)
    monkeypatch.setattr(scan_mod.shutil, "which", lambda name: str(fake) if name == "grep" else shutil.which(name))
    with open_log(str(LOGS / "f13_shell_killed.log")) as src:
        assert scan_mod.scan(src, parse_mod.MARKERS, 10, engine="grep").method == "python"
    assert parse_with("grep", LOGS / "f13_shell_killed.log", monkeypatch) == real


@needs_grep
@pytest.mark.skipif(os.name != "posix", reason="grep memory cap is POSIX-only")
def test_a_line_longer_than_greps_memory_cap_falls_back_to_the_in_process_scan(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "GREP_MEMORY_BYTES", 16 << 20)
    with open_log(str(LOGS / "f13_shell_killed.log")) as src:      # the cap itself leaves grep working
        assert scan_mod.scan(src, parse_mod.MARKERS, 10, engine="grep").method == "grep"
    p = tmp_path / "tqdm.log"
    with open(p, "wb") as fh:
        fh.write(b" 3/150 [00:40<33:05, 13.5s/it]\r" * 800_000)      # one 24 MiB line of redraws
        fh.write(b"\nKilled\n")
    with open_log(str(p)) as src:
        assert scan_mod.scan(src, parse_mod.MARKERS, 10, engine="grep").method == "python"
    report = parse_with("grep", p, monkeypatch)
    assert [(e.kind, e.line) for e in report.events] == [("host_oom", 2)]


def test_line_numbers_count_from_the_nearer_checkpoint(tmp_path):
    p = tmp_path / "lines.log"
    p.write_bytes(b"a\n" * 1000 + b"b\n" * 1000)
    with open_log(str(p)) as src:
        src.checkpoint(4000, 2000)                          # the end: 2000 newlines before it
        assert src.line_number(3998) == 2000                 # counted back from the end
        assert src.line_number(2) == 2                       # counted up from the start
        assert src.line_number(2000) == 1001


# ------------------------------------------------------------------ work that does not grow with the hits

@pytest.mark.parametrize("engine", ["python"] + (["grep"] if HAS_GREP else []))
def test_a_marker_on_every_line_is_capped_before_its_hits_are_collected(engine, tmp_path, monkeypatch):
    """With 'memory' on each of 120,000 lines, only about the first and the last `keep` hits are ever
    handled in Python (the rest are counted in C, or not at all), and the one real OOM is still found."""
    keep = 50
    monkeypatch.setattr(parse_mod, "KEEP_PER_MARKER", keep)
    small_tiers(monkeypatch, full=1 << 20)
    handled = []
    real_add, real_raw = scan_mod._Kept.add, scan_mod._Kept.add_raw
    monkeypatch.setattr(scan_mod._Kept, "add", lambda self, item: (handled.append(1), real_add(self, item))[1])
    monkeypatch.setattr(scan_mod._Kept, "add_raw", lambda self, rows: (handled.append(len(rows)), real_raw(self, rows))[1])
    line = b"step %d | loss 1.0 | peak_memory_active: 20.1 GiB\n"
    p = tmp_path / "memory.log"
    with open(p, "wb") as fh:
        fh.write(b"".join(line % i for i in range(60_000)))
        fh.write((LOGS / "f02_legacy_runtimeerror.log").read_bytes())
        fh.write(b"".join(line % i for i in range(60_000, 120_000)))
    report = parse_with(engine, p, monkeypatch)
    assert [(e.kind, e.line) for e in report.events] == [("cuda_oom", 60_000 + 18)]
    assert sum(handled) < 20 * keep, sum(handled)


def test_a_log_of_giant_lines_is_scanned_in_process_not_by_grep(tmp_path, monkeypatch):
    """A single 6 MiB line of progress redraws: grep would hold it whole and find nothing faster, so
    the automatic engine searches in-process (which cuts lines) and finds the OOM glued at its end."""
    started = []
    monkeypatch.setattr(scan_mod._GrepPass, "start", classmethod(lambda cls, *a, **k: started.append(a) or None))
    p = tmp_path / "tqdm.log"
    with open(p, "wb") as fh:
        fh.write(b" 37%|###7      | 3/150 [00:40<33:05, 13.5s/it]\r" * 130_000)
        fh.write(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                 b"capacity of 79.15 GiB of which 1.20 GiB is free.\n")
    assert p.stat().st_size > scan_mod.GREP_MIN_BYTES
    report = parse_with("auto", p, monkeypatch)
    assert started == []
    assert [(e.kind, e.line, e.tried_gib, e.phase) for e in report.events] == [("cuda_oom", 1, 2.0, "train")]
