"""Any file, any encoding: the byte-level reading every log and config goes through.

A UTF-16/32 log or config, a log with bare CR line ends, a log behind a long NUL run or a 10 GiB hole,
a /proc file, a character device, a symlink loop and a small temporary folder each gave a wrong answer
or a long wait before (the log "empty", "no out-of-memory error found", line numbers lost, 139 s on
/dev/zero, "keeps at most 0 MiB"); each test here failed then.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import oomdoctor.crashlog.source as source
from oomdoctor.crashlog import parse_log
from oomdoctor.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
LOG = (ROOT / "tests" / "data" / "logs" / "f01_torch25_backward.log").read_text(encoding="utf-8")
DEMO = ROOT / "oomdoctor" / "data" / "demo"
CONFIG = (DEMO / "train.yaml").read_text(encoding="utf-8")
ENV = dict(os.environ, PYTHONPATH=str(ROOT), LC_ALL="C.UTF-8")


def events(report) -> list[tuple]:
    return [(e.kind, e.line, e.phase, e.tried_gib) for e in report.events]


def cli(*args: str, stdin: bytes | None = None, env: dict | None = None, timeout: float = 60):
    return subprocess.run([sys.executable, "-m", "oomdoctor", *args], input=stdin, capture_output=True,
                          env=env or ENV, timeout=timeout, cwd=str(ROOT), check=False)


EXPECTED = None


def expected() -> list[tuple]:
    global EXPECTED
    if EXPECTED is None:
        EXPECTED = events(parse_log(str(ROOT / "tests" / "data" / "logs" / "f01_torch25_backward.log")))
        assert EXPECTED and EXPECTED[0][0] == "cuda_oom" and EXPECTED[0][2] == "backward"
    return EXPECTED


# ------------------------------------------------------------------ encodings

@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-be"])
def test_a_utf16_or_utf32_log_file_reads_as_its_utf8_bytes(tmp_path, codec):
    p = tmp_path / "run.log"
    p.write_bytes(LOG.encode(codec))
    assert events(parse_log(str(p))) == expected()


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("name", ["p08_rich_box.log", "fresh/n64_rich_box_tts_init_cuda_call.log",
                                  "heldback/h03_message_inside_chinese_sentence.log"])
def test_a_log_of_box_drawing_or_chinese_text_without_a_bom_reads_as_its_utf8_bytes(tmp_path, codec, name):
    # Rich's frames are U+2500 "─" and kin: in UTF-16 their low byte is NUL, so not every NUL falls on the
    # ASCII side; in UTF-32 the top byte is NUL whatever the script.
    text = (ROOT / "tests" / "data" / "logs" / name).read_text(encoding="utf-8")
    (tmp_path / "u8.log").write_text(text, encoding="utf-8")
    (tmp_path / "other.log").write_bytes(text.encode(codec))
    want = events(parse_log(str(tmp_path / "u8.log")))
    assert want and events(parse_log(str(tmp_path / "other.log"))) == want


def test_stray_nul_bytes_in_utf8_text_are_not_taken_for_utf16():
    from oomdoctor import textcodec

    text = ("step 1 loss 2.0 ─── 训练 \n" * 200).encode("utf-8")
    damaged = b"".join(text[i:i + 37] + b"\0" for i in range(0, len(text), 37))   # NULs on both sides
    assert textcodec.sniff(damaged) is None


def test_a_utf16_log_with_chinese_text_keeps_its_characters(tmp_path):
    text = "训练开始\n" + LOG
    p = tmp_path / "run.log"
    p.write_bytes(text.encode("utf-16"))
    report = parse_log(str(p))
    assert events(report) == [(k, line + 1, ph, t) for k, line, ph, t in expected()]


def test_a_utf16_log_through_a_pipe_gives_the_answer_of_the_file(tmp_path):
    data = LOG.encode("utf-16")
    (tmp_path / "run.log").write_bytes(data)
    by_file = cli(str(tmp_path / "run.log"), "--json")
    by_pipe = cli("-", "--json", stdin=data)
    assert by_file.returncode == by_pipe.returncode == 1, by_file.stderr + by_pipe.stderr
    a, b = json.loads(by_file.stdout)["crash"], json.loads(by_pipe.stdout)["crash"]
    assert a["events"] == b["events"] and a["events"][0]["line"] == expected()[0][1]


def test_a_gzip_log_through_a_pipe_gives_the_answer_of_the_gz_file(tmp_path):
    import gzip

    data = gzip.compress(LOG.encode("utf-8"))
    (tmp_path / "run.log.gz").write_bytes(data)
    by_file = cli(str(tmp_path / "run.log.gz"), "--json")
    by_pipe = cli("-", "--json", stdin=data)
    assert by_file.returncode == by_pipe.returncode == 1, by_file.stderr + by_pipe.stderr
    a, b = json.loads(by_file.stdout)["crash"], json.loads(by_pipe.stdout)["crash"]
    assert a["events"] == b["events"] and a["events"][0]["line"] == expected()[0][1]


def test_broken_gzip_through_a_pipe_is_one_line(tmp_path):
    done = cli("-", "--plain", stdin=b"\x1f\x8b" + bytes(range(256)))
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1, done.stderr


def test_a_log_with_bare_cr_line_ends_keeps_line_numbers_and_phase(tmp_path):
    p = tmp_path / "mac.log"
    p.write_bytes(LOG.replace("\n", "\r").encode("utf-8"))
    assert events(parse_log(str(p))) == expected()


@pytest.mark.parametrize("codec", ["utf-16", "utf-32"])
def test_a_utf16_config_gives_the_plan_of_its_utf8_bytes_and_apply_keeps_its_encoding(tmp_path, codec, capsys,
                                                                                      monkeypatch):
    # The CLI in this process: what is checked is how a file's bytes are read and written back.
    from helpers import run_cli

    (tmp_path / "u8").mkdir()
    (tmp_path / "u16").mkdir()
    (tmp_path / "u8" / "train.yaml").write_bytes(CONFIG.encode("utf-8"))
    (tmp_path / "u16" / "train.yaml").write_bytes(CONFIG.encode(codec))
    runs = {}
    for name in ("u8", "u16"):
        monkeypatch.chdir(tmp_path / name)
        code, out, err = run_cli(capsys, str(DEMO / "train.log"), "train.yaml", "--json")
        assert code == 1, err
        runs[name] = json.loads(out)
    assert runs["u8"]["estimate"] == runs["u16"]["estimate"]
    assert runs["u8"]["patch"] == runs["u16"]["patch"]
    code, _, err = run_cli(capsys, str(DEMO / "train.log"), "train.yaml", "--apply", "--yes")
    assert code == 1, err
    patched = (tmp_path / "u16" / "train.yaml").read_bytes()
    assert patched.decode(codec) != CONFIG and (tmp_path / "u16" / "train.yaml.orig").read_bytes() == \
        CONFIG.encode(codec)


# ------------------------------------------------------------------ NUL runs, holes, odd files

def test_text_after_a_nul_run_longer_than_16_mib_is_found(tmp_path):
    p = tmp_path / "copytruncate.log"
    p.write_bytes(b"\x00" * (17 << 20) + LOG.encode("utf-8"))
    assert [e[0] for e in events(parse_log(str(p)))] == ["cuda_oom"]


def _sparse(path: Path, before: int, after: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(before)
        fh.seek(before)
        fh.write(LOG.encode("utf-8"))
        fh.truncate(before + len(LOG.encode("utf-8")) + after)
    return path


def _has_holes(path: Path) -> bool:
    if not hasattr(os, "SEEK_HOLE"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_HOLE) < os.fstat(fd).st_size
    finally:
        os.close(fd)


@pytest.mark.parametrize("before,after", [(1 << 30, 0), (0, 1 << 30)])
def test_a_crash_beside_a_gigabyte_hole_is_found_without_reading_the_hole(tmp_path, before, after):
    p = _sparse(tmp_path / "sparse.log", before, after)
    if not _has_holes(p):
        pytest.skip("this file system does not report holes")
    report = parse_log(str(p))
    assert [e[0] for e in events(report)] == ["cuda_oom"]
    assert report.events[0].line == expected()[0][1]
    with source.open_log(str(p)) as src:
        assert src.size < 1 << 20           # the data is mapped, not the hole


def test_a_character_device_is_refused_at_once(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    start = time.monotonic()
    r = cli("/dev/zero", "--plain", timeout=30)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode().count("\n") == 1 and "/dev/zero" in r.stderr.decode() and "device" in r.stderr.decode()
    assert time.monotonic() - start < 10
    r = cli(str(DEMO / "train.log"), "/dev/zero", "--plain", timeout=30)
    assert r.returncode == 2 and "device" in r.stderr.decode()


def test_a_proc_file_is_read_not_called_empty():
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc")
    r = cli("/proc/self/status", "--plain")
    assert r.returncode == 0 and b"empty" not in r.stderr, r.stderr
    assert b"no out-of-memory error found" in r.stdout


def test_a_symlink_loop_says_so(tmp_path):
    (tmp_path / "a.log").symlink_to(tmp_path / "b.log")
    (tmp_path / "b.log").symlink_to(tmp_path / "a.log")
    r = cli(str(tmp_path / "a.log"), "--plain")
    assert r.returncode == 2 and b"no such file" not in r.stderr and b"loop" in r.stderr, r.stderr
    with pytest.raises(InputError, match="loop"):
        from oomdoctor.bounded import read_bytes

        read_bytes(str(tmp_path / "a.log"))


def test_a_fifo_log_is_read_as_a_stream(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs")
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "oomdoctor", str(fifo), "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=ENV, cwd=str(ROOT))
    with open(fifo, "wb") as fh:
        fh.write(LOG.encode("utf-16"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert json.loads(out)["crash"]["events"][0]["line"] == expected()[0][1]


# ------------------------------------------------------------------ a small temporary folder

def test_a_piped_log_is_read_with_a_64_mib_temporary_folder(tmp_path, monkeypatch):
    import shutil
    import tempfile

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    usage = shutil.disk_usage(str(tmp_path))
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(total=64 << 20, free=60 << 20))
    monkeypatch.setattr(source, "_stdin_in_place", lambda: None)

    class Pipe:
        def __init__(self, data: bytes) -> None:
            self.data, self.buffer = data, self

        def read(self, n: int = -1) -> bytes:
            out, self.data = self.data[:n], self.data[n:]
            return out

    monkeypatch.setattr(sys, "stdin", Pipe(LOG.encode("utf-8")))
    assert [e[0] for e in events(parse_log("-"))] == ["cuda_oom"]
    assert source._spool_cap(str(folder)) >= 32 << 20
    assert list(folder.iterdir()) == []


def test_a_bare_cr_log_through_a_pipe_keeps_its_line_numbers_and_a_tqdm_log_keeps_its_one_line():
    by_pipe = cli("-", "--json", stdin=LOG.replace("\n", "\r").encode("utf-8"))
    assert by_pipe.returncode == 1, by_pipe.stderr
    event = json.loads(by_pipe.stdout)["crash"]["events"][0]
    assert (event["line"], event["phase"]) == expected()[0][1:3]
    tqdm = b" 37%|###7      | 3/150 [00:40<33:05, 13.5s/it]\r" * 2000 + \
        b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    done = cli("-", "--json", stdin=tqdm)
    assert json.loads(done.stdout)["crash"]["events"][0]["line"] == 1


def test_a_deepspeed_path_longer_than_the_os_allows_is_not_found_not_an_internal_error(tmp_path):
    # The fuzzer's long-line mutation inside `deepspeed: ds_z3_offload.json`: ENAMETOOLONG from stat.
    config = "stage: sft\nfinetuning_type: lora\nmodel_name_or_path: meta-llama/Llama-2-7b-hf\n" \
             "deepspeed: ds_z3_" + "x" * 10_000 + ".json\n"
    (tmp_path / "train.yaml").write_text(config, encoding="utf-8")
    done = cli(str(tmp_path / "train.yaml"), "--gpu", "24GiB", "--plain")
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1, done.stderr[-300:]


def test_a_deepspeed_value_holding_a_line_break_still_gives_a_one_line_error(tmp_path):
    # A quoted YAML value may hold a newline; the "not found" line that quotes it must stay one line.
    config = 'stage: sft\nfinetuning_type: lora\nmodel_name_or_path: meta-llama/Llama-2-7b-hf\n' \
             'deepspeed: "ds_z3\\noffload.json"\n'
    (tmp_path / "train.yaml").write_text(config, encoding="utf-8")
    done = cli(str(tmp_path / "train.yaml"), "--gpu", "24GiB", "--plain")
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1, done.stderr[-300:]
    assert "\u2424".encode() in done.stderr
