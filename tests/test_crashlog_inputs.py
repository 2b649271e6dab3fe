"""How logs arrive: NUL runs, pipes and FIFOs, stdin, gzip, and signals while reading.

Each test here failed on the code before the change it guards: a 4 KiB NUL run made a log "binary";
stdin and gzip were spooled without limit; a FIFO with no writer hung; `<(cat run.log)` was read by
the input sorting and then found empty; SIGTERM and SIGHUP left the spool and the grep children behind.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import oomdoctor.crashlog.source as source
from oomdoctor.crashlog import parse_log
from oomdoctor.errors import InputError
from oomdoctor.pipeline import sort_inputs

ROOT = Path(__file__).parent.parent
LOGS = Path(__file__).parent / "data" / "logs"
OOM_LOG = (LOGS / "f01_torch25_backward.log").read_bytes()
posix_only = pytest.mark.skipif(os.name != "posix" or not hasattr(os, "mkfifo"), reason="FIFOs and signals are POSIX")


def spools(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("oomdoctor-"))


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Spools go to a folder of the test's own, so what is left behind can be counted."""
    import tempfile

    folder = tmp_path / "spool"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


# ------------------------------------------------------------------ NUL bytes (item 8)

def test_a_4_kib_run_of_nul_bytes_in_a_log_is_tolerated(tmp_path):
    p = tmp_path / "flushed.log"
    p.write_bytes(b"step 1 | loss 1.2\n" + b"\x00" * 4096 + b"\n" + OOM_LOG)
    report = parse_log(str(p))
    assert [e.kind for e in report.events] == ["cuda_oom"]
    assert report.events[0].line == OOM_LOG[: OOM_LOG.index(b"torch.OutOfMemoryError")].count(b"\n") + 3


def test_a_log_that_starts_with_a_megabyte_of_nul_bytes_is_read_past_them(tmp_path):
    p = tmp_path / "hole.log"
    p.write_bytes(b"\x00" * (1 << 20) + OOM_LOG)
    assert [e.kind for e in parse_log(str(p)).events] == ["cuda_oom"]


def test_nul_bytes_alone_are_an_empty_log_and_control_bytes_still_a_binary_file(tmp_path):
    p = tmp_path / "zeros.log"
    p.write_bytes(b"\x00" * 100_000)
    with pytest.raises(InputError, match="empty"):
        parse_log(str(p))
    p.write_bytes(b"\x00\x01\x02\x03" * 30_000)
    with pytest.raises(InputError, match="binary"):
        parse_log(str(p))


# ------------------------------------------------------------------ bounded spooling (item 4)

class Endless:
    """stdin carrying `line` repeated `count` times: `yes | oomdoctor -` made finite for the old code."""

    def __init__(self, line: bytes, count: int) -> None:
        self.line, self.left, self.served = line, count, 0
        self.buffer = self

    def read(self, n: int = -1) -> bytes:
        take = min(self.left, max(1, n // len(self.line)))
        self.left -= take
        self.served += take * len(self.line)
        return self.line * take


def test_stdin_beyond_the_spool_cap_is_refused_naming_the_cap(private_tmp, monkeypatch):
    monkeypatch.setattr(source, "SPOOL_MAX_BYTES", 1 << 20)
    monkeypatch.setattr(source, "_stdin_in_place", lambda: None)     # a pipe, whatever fd 0 is under pytest
    stream = Endless(b"y\n", 8 << 20)
    monkeypatch.setattr(sys, "stdin", stream)
    with pytest.raises(InputError) as err:
        parse_log("-")
    assert "more than 1 MiB came through the pipe" in str(err.value) and str(private_tmp) in str(err.value)
    assert stream.served < 4 << 20                  # it stopped reading soon after the cap
    assert spools(private_tmp) == []


def test_a_gzip_bomb_is_stopped_at_the_cap_not_decompressed_to_disk(private_tmp, tmp_path, monkeypatch):
    monkeypatch.setattr(source, "SPOOL_MAX_BYTES", 1 << 20)
    bomb = tmp_path / "run.log.gz"
    bomb.write_bytes(gzip.compress(b"\x00" * (64 << 20), compresslevel=9))
    with pytest.raises(InputError) as err:
        parse_log(str(bomb))
    assert "decompresses to more than 1 MiB" in str(err.value)
    assert spools(private_tmp) == []
    text = tmp_path / "big.log.gz"
    text.write_bytes(gzip.compress(b"[rank0]: {'loss': 1.0}\n" * 200_000))
    with pytest.raises(InputError, match="decompresses to more than 1 MiB"):
        parse_log(str(text))


def test_a_gzip_of_a_binary_file_is_refused_after_its_first_64_kib(private_tmp, tmp_path, monkeypatch):
    reads = []
    real = gzip.GzipFile.read

    def counting(self, n=-1):
        data = real(self, n)
        reads.append(len(data))
        return data

    monkeypatch.setattr(gzip.GzipFile, "read", counting)
    p = tmp_path / "model.bin.gz"
    p.write_bytes(gzip.compress(bytes(range(1, 256)) * (64 << 10)))     # 16 MiB of control-heavy bytes
    with pytest.raises(InputError, match="binary"):
        parse_log(str(p))
    assert sum(reads) <= 2 << 20
    assert spools(private_tmp) == []


def test_a_regular_file_on_stdin_is_mapped_in_place_not_copied(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(OOM_LOG)
    code = ("import os, sys; from oomdoctor.crashlog.source import open_log\n"
            "with open_log('-') as src: print(src.path, src._temp, src.display)")
    with open(log, "rb") as fh:
        out = subprocess.run([sys.executable, "-c", code], stdin=fh, capture_output=True, text=True, check=True,
                             cwd=ROOT).stdout.split()
    if sys.platform.startswith("linux"):
        assert out[0].startswith("/proc/") and out[1] == "False" and out[2] == "<stdin>"
    else:
        assert out[1] == "True"


# ------------------------------------------------------------------ FIFOs and process substitution (item 5)

@posix_only
def test_a_fifo_nobody_writes_to_is_an_empty_log_not_a_hang(tmp_path, capsys, monkeypatch):
    from oomdoctor.cli import main

    monkeypatch.setattr(source, "FIFO_WAIT_S", 0.2)
    fifo = tmp_path / "run.log"
    os.mkfifo(fifo)
    started = time.monotonic()
    code = main([str(fifo), "--plain"])
    err = capsys.readouterr().err
    assert code == 2 and "the log is empty" in err and "\n" not in err.strip()
    assert time.monotonic() - started < 10


@posix_only
def test_a_fifo_whose_writer_comes_late_is_still_read(tmp_path):
    fifo = tmp_path / "late.log"
    os.mkfifo(fifo)

    def write():
        time.sleep(0.5)
        Path(fifo).write_bytes(OOM_LOG)

    writer = threading.Thread(target=write)
    writer.start()
    report = parse_log(str(fifo))
    writer.join(10)
    assert [e.kind for e in report.events] == ["cuda_oom"]


@posix_only
def test_process_substitution_of_a_log_beside_a_config_is_read_once(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    demo = ROOT / "oomdoctor" / "data" / "demo"
    cmd = f'"{sys.executable}" -m oomdoctor <(cat "{demo / "train.log"}") "{demo / "train.yaml"}" --json'
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode in (1, 3), out.stderr

    doc = json.loads(out.stdout)
    assert doc["crash"]["events"][0]["kind"] == "cuda_oom" and doc["setup"]["model"]


@posix_only
def test_sorting_a_fifo_config_hands_its_bytes_to_the_config_reader(tmp_path):
    fifo = tmp_path / "train.yaml"
    os.mkfifo(fifo)
    text = (ROOT / "oomdoctor" / "data" / "demo" / "train.yaml").read_bytes()

    def write():
        with open(fifo, "wb") as fh:
            fh.write(text)

    writer = threading.Thread(target=write)
    writer.start()
    log = tmp_path / "run.log"
    log.write_bytes(OOM_LOG)
    inputs = sort_inputs([str(log), str(fifo)])
    writer.join(10)
    assert (inputs.config, inputs.log) == (str(fifo), str(log))
    assert inputs.streamed == {str(fifo): text}


@posix_only
def test_a_fifo_log_with_a_writer_is_spooled_and_parsed(tmp_path):
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: Path(fifo).write_bytes(OOM_LOG))
    writer.start()
    inputs = sort_inputs([str(fifo)])
    report = parse_log(inputs.log, inputs.log_spool)
    writer.join(10)
    assert report.file == str(fifo) and [e.kind for e in report.events] == ["cuda_oom"]


def fed_fifo(folder: Path, name: str, data: bytes) -> tuple[Path, threading.Thread]:
    """A FIFO named `name` that a thread writes `data` into once (a stream, read only once)."""
    fifo = folder / name
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: Path(fifo).write_bytes(data))
    writer.start()
    return fifo, writer


@posix_only
@pytest.mark.parametrize("streamed", ["train.yaml", "train.log"])
def test_a_stream_input_gives_the_files_report_and_leaves_no_temporary_file(tmp_path, private_tmp, streamed):
    from oomdoctor.pipeline import Options, build_report
    from oomdoctor.views.jsonout import render as render_json

    demo = ROOT / "oomdoctor" / "data" / "demo"
    files = {name: demo / name for name in ("train.yaml", "train.log")}
    expected = render_json(build_report(Options(files=tuple(str(p) for p in files.values()))))
    before = sorted(os.listdir(private_tmp))
    fifo_dir = tmp_path / "fifos"
    fifo_dir.mkdir()
    fifo, writer = fed_fifo(fifo_dir, streamed, files[streamed].read_bytes())
    files[streamed] = fifo
    report = build_report(Options(files=tuple(str(p) for p in files.values())))
    writer.join(10)
    got = json.loads(render_json(report).replace(str(fifo_dir), str(demo)))    # files it proposes go beside the config
    want = json.loads(expected)
    if streamed.endswith(".yaml"):      # a stream cannot be edited in place: no patch, and a warning says so
        assert got.pop("patch") == "" and want.pop("patch")
        assert [w["code"] for w in got.pop("warnings_codes")] == ["crash.input.config_stream"]
        got.pop("warnings"), want.pop("warnings"), want.pop("warnings_codes")
    assert got == want
    assert sorted(os.listdir(private_tmp)) == before


@posix_only
def test_a_config_stream_is_classified_in_memory_without_a_probe_file(tmp_path, monkeypatch):
    import tempfile

    def no_temp_file(*args, **kwargs):
        raise AssertionError("a temporary file was made to classify a stream")

    monkeypatch.setattr(tempfile, "mkstemp", no_temp_file)
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", no_temp_file)
    text = (ROOT / "oomdoctor" / "data" / "demo" / "train.yaml").read_bytes()
    fifo, writer = fed_fifo(tmp_path, "train.yaml", text)
    inputs = sort_inputs([str(fifo)])
    writer.join(10)
    assert (inputs.config, inputs.log, inputs.streamed) == (str(fifo), None, {str(fifo): text})


# ------------------------------------------------------------------ signals

def wait_for(predicate, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@posix_only
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_while_stdin_is_spooled_removes_the_spool_and_exits_130(tmp_path, sig):
    folder = tmp_path / "spool"
    folder.mkdir()
    env = dict(os.environ, TMPDIR=str(folder))
    proc = subprocess.Popen([sys.executable, "-m", "oomdoctor", "-", "--plain"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    proc.stdin.write(b"{'loss': 1.0}\n" * 50_000)
    proc.stdin.flush()                                  # the pipe stays open: oomdoctor waits for more
    assert wait_for(lambda: spools(folder)), "no spool file appeared"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and b"interrupted" in err
    assert spools(folder) == []


@posix_only
def test_sigterm_during_the_scan_kills_the_grep_children(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    pidfile = tmp_path / "grep.pid"
    grep = fake / "grep"
    grep.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
    grep.chmod(0o755)
    log = tmp_path / "big.log"
    with open(log, "wb") as fh:                        # over GREP_MIN_BYTES, so grep does the scan
        for _ in range(5 * 1024):
            fh.write(b"[rank0]: {'loss': 1.0, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.1}\n" * 12)
        fh.write(OOM_LOG)
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.Popen([sys.executable, "-m", "oomdoctor", str(log), "--plain"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert wait_for(lambda: pidfile.exists() and pidfile.read_text().strip()), "the fake grep never started"
    child = int(pidfile.read_text())
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and b"interrupted" in err

    def gone() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        return False

    assert wait_for(gone, 10), "a grep child outlived oomdoctor"


@posix_only
def test_a_config_through_a_fifo_gives_a_plan_and_patches_nothing(tmp_path, capsys):
    """The FIFO is read once, while the inputs are sorted; the config reader gets its bytes, and the
    patch writer is not sent to open it again (a FIFO with no writer left would wait forever)."""

    from oomdoctor.cli import main

    demo = ROOT / "oomdoctor" / "data" / "demo"
    fifo = tmp_path / "train.yaml"
    os.mkfifo(fifo)

    def write():
        time.sleep(0.3)
        fifo.write_bytes((demo / "train.yaml").read_bytes())

    writer = threading.Thread(target=write)
    writer.start()
    code = main([str(demo / "train.log"), str(fifo), "--json"])
    writer.join(10)
    doc = json.loads(capsys.readouterr().out)
    assert code in (1, 3) and doc["setup"]["model"] == "meta-llama/Llama-2-7b-hf" and doc["plan"]["steps"]
    assert doc["patch"] == "" and "crash.input.config_stream" in [w["code"] for w in doc["warnings_codes"]]


@posix_only
def test_process_substitution_of_a_config_beside_a_log(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    demo = ROOT / "oomdoctor" / "data" / "demo"
    cmd = f'"{sys.executable}" -m oomdoctor "{demo / "train.log"}" <(cat "{demo / "train.yaml"}") --json'
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode in (1, 3), out.stderr

    doc = json.loads(out.stdout)
    assert doc["setup"]["model"] == "meta-llama/Llama-2-7b-hf" and doc["patch"] == ""


def test_a_giant_line_before_the_crash_is_not_read_back_to_its_start(tmp_path, monkeypatch):
    # A 24 MiB line (a JSON dump, tqdm redraws glued by CRs), then the crash: the context windows start
    # at a line start found nearby, not by an rfind back to byte 0 that read (and mapped) the whole line.
    import oomdoctor.crashlog.parse as parse

    log = (LOGS / "f01_torch25_backward.log").read_bytes()
    p = tmp_path / "giant.log"
    with open(p, "wb") as fh:
        fh.write(b"{'loss': 1.0}\n")
        fh.writelines(b"x" * (1 << 20) for _ in range(24))
        fh.write(b"\n" + log)
    fed: list[int] = []
    real = parse._feed_region
    monkeypatch.setattr(parse, "_feed_region", lambda src, ctx, lo, hi, *rest: fed.append(hi - lo) or
                        real(src, ctx, lo, hi, *rest))
    report = parse_log(str(p))
    assert report.primary is not None and report.primary.kind == "cuda_oom"
    assert sum(fed) < 4 << 20, fed
