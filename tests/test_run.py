"""`oomdoctor run -- <command>`: output passed through byte for byte, logs, exit codes, signals, diagnosis.

The commands are tests/data/run/fake_trainer.py (HF-Trainer-style output with \\r progress bars, ending in
success, a CUDA OOM, a SIGKILL from the host, or a hang); NVML is tests/data/run/fakenvml/pynvml.py.
"""
from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_DATA = ROOT / "tests" / "data" / "run"
FAKE = str(RUN_DATA / "fake_trainer.py")
FAKE_NVML = str(RUN_DATA / "fakenvml")
CONFIGS = ROOT / "tests" / "data" / "configs"
MODEL = ROOT / "tests" / "data" / "models" / "sim-llama-2l"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups and ptys are POSIX")


def _env(tmp_path: Path, nvml: str = "fail", **extra: str) -> dict:
    """nvml: "fail" (a fake NVML without a driver: no timeline), "fake" (two fake A100s)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML")}
    env.update(PYTHONPATH=os.pathsep.join([FAKE_NVML, str(ROOT)]), XDG_STATE_HOME=str(tmp_path / "state"),
               LANG="C", LC_ALL="C", TERM="xterm")
    env.pop("OOMDOCTOR_DEBUG", None)
    if nvml == "fail":
        env["FAKE_NVML_FAIL"] = "init"
    else:
        env["FAKE_NVML_GPUS"] = "NVIDIA A100-SXM4-80GB:81920,NVIDIA A100-SXM4-80GB:81920"
        env["FAKE_NVML_STATE"] = str(tmp_path / "nvml-state.json")
    env.update(extra)
    return env


def _oomdoctor(tmp_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "oomdoctor", "run", "--logs", str(tmp_path / "runs"), *args]


def _run(cmd: list[str], env: dict, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=str(cwd), capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _in_pty(cmd: list[str], env: dict, cwd: Path, timeout: float = 120) -> tuple[bytes, bytes, int]:
    """Run with stdin and stdout on a fresh pseudo-terminal, stderr on a pipe: (terminal bytes, stderr, code)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, env=env, cwd=str(cwd), stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                            start_new_session=True)
    os.close(slave)
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    out = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:          # EIO: every writer of the terminal is gone
            break
        if not data:
            break
        out += data
    os.close(master)
    code = proc.wait(timeout=30)
    reader.join(timeout=30)
    return bytes(out), err[0] if err else b"", code


def _runs(tmp_path: Path) -> list[str]:
    return sorted(os.listdir(tmp_path / "runs"))


# ---------------------------------------------------------------- pass-through, log, exit codes


def test_output_through_run_in_a_pipe_is_byte_identical_to_the_bare_commands(tmp_path):
    env = _env(tmp_path)
    bare = _run([sys.executable, FAKE, "ok", "6", "0.01"], env, tmp_path)
    watched = _run(_oomdoctor(tmp_path, "--", sys.executable, FAKE, "ok", "6", "0.01"), env, tmp_path)
    assert watched.returncode == bare.returncode == 0, watched.stderr
    assert b"\r" in bare.stdout and watched.stdout == bare.stdout
    assert bare.stderr in watched.stderr          # the command's stderr stays on stderr, unchanged
    logs = [n for n in _runs(tmp_path) if n.endswith(".log")]
    assert len(logs) == 1 and re.fullmatch(r"\d{8}-\d{6}-fake_trainer\.log", logs[0])
    logged = (tmp_path / "runs" / logs[0]).read_bytes()
    assert logged.replace(bare.stderr, b"", 1) == bare.stdout     # both streams, in the order they came


def test_output_through_run_in_a_pseudo_terminal_is_byte_identical_to_the_bare_commands(tmp_path):
    env = _env(tmp_path)
    bare, bare_err, bare_code = _in_pty([sys.executable, FAKE, "ok", "6", "0.01"], env, tmp_path)
    watched, watched_err, code = _in_pty(_oomdoctor(tmp_path, "--", sys.executable, FAKE, "ok", "6", "0.01"), env,
                                         tmp_path)
    assert code == bare_code == 0, watched_err
    assert b"\r\n" in bare and b"\r " in bare      # the terminal's newline translation, tqdm's redraws
    assert watched == bare
    assert bare_err in watched_err
    # the log holds what the terminal showed, and the stderr that went to a pipe
    log = next(n for n in _runs(tmp_path) if n.endswith(".log"))
    assert (tmp_path / "runs" / log).read_bytes().replace(bare_err, b"", 1) == bare


@pytest.mark.parametrize("mode,expected", [("oom", 1), ("kill", 128 + signal.SIGKILL)])
def test_the_commands_exit_code_passes_through(tmp_path, mode, expected):
    out = _run(_oomdoctor(tmp_path, "--", sys.executable, FAKE, mode, "3", "0.01"), _env(tmp_path), tmp_path)
    assert out.returncode == expected, out.stderr
    code = _run(_oomdoctor(tmp_path, "--", sys.executable, "-c", "import sys; sys.exit(7)"), _env(tmp_path), tmp_path)
    assert code.returncode == 7


def test_a_command_that_cannot_start_is_one_line_and_exit_two(tmp_path):
    out = _run(_oomdoctor(tmp_path, "--", str(tmp_path / "no-such-trainer")), _env(tmp_path), tmp_path)
    assert out.returncode == 2 and out.stdout == b""
    last = out.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("oomdoctor: cannot start ") and last.endswith("no-such-trainer: No such file or directory")
    assert not any(n.endswith(".log") for n in _runs(tmp_path))     # no empty log of a run that never ran


def test_run_without_a_command_is_a_usage_error(tmp_path):
    out = _run([sys.executable, "-m", "oomdoctor", "run"], _env(tmp_path), tmp_path)
    assert out.returncode == 2
    assert "give the command to run after --" in out.stderr.decode()


def test_without_nvml_the_run_says_so_once_and_writes_no_timeline(tmp_path):
    out = _run(_oomdoctor(tmp_path, "--", sys.executable, FAKE, "ok", "2", "0.01"), _env(tmp_path), tmp_path)
    text = out.stderr.decode()
    assert out.returncode == 0 and text.count("no GPU memory timeline") == 1
    assert not any(n.endswith(".timeline.jsonl") for n in _runs(tmp_path))


def test_run_as_first_word_is_the_subcommand_unless_a_file_named_run_is_meant():
    from oomdoctor.cli import subcommand

    assert subcommand(["run", "--", "python", "train.py"], exists=lambda p: False) == "run"
    assert subcommand(["run"], exists=lambda p: False) == "run"
    # a file literally named run: `oomdoctor run` analyses it as before; a `--` asks for the subcommand
    assert subcommand(["run", "train.yaml"], exists=lambda p: p == "run") is None
    assert subcommand(["run", "--", "python", "train.py"], exists=lambda p: p == "run") == "run"
    assert subcommand(["history"], exists=lambda p: False) == "history"
    assert subcommand(["history"], exists=lambda p: p == "history") is None
    assert subcommand(["history", "--clear"], exists=lambda p: True) == "history"
    assert subcommand(["train.log", "run"], exists=lambda p: False) is None
    assert subcommand([], exists=lambda p: False) is None


# ---------------------------------------------------------------- signals


def _start(tmp_path: Path, *words: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(_oomdoctor(tmp_path, "--", sys.executable, FAKE, *words), env=env or _env(tmp_path),
                            cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def _wait_for(proc: subprocess.Popen, needle: bytes, timeout: float = 60) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen += line
    assert needle in seen, seen
    return seen


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:       # a zombie waiting for a reaper is gone too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _group_gone(pgid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_reaches_the_whole_group_and_oomdoctor_exits_128_plus_it(tmp_path, sig):
    proc = _start(tmp_path, "spawn", "1", "0.01")
    seen = _wait_for(proc, b"spawned")
    grandchild, group = (int(x) for x in re.search(rb"spawned (\d+) group (\d+)", seen).groups())
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert _group_gone(group) and _gone(grandchild)
    assert not any(n.endswith((".tmp", ".part")) for n in _runs(tmp_path))


def test_a_command_that_ignores_sigterm_is_killed_on_the_second_and_nothing_survives(tmp_path):
    proc = _start(tmp_path, "ignore-term", "1", "0.01")
    _wait_for(proc, b"100%")
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert proc.poll() is None           # the command ignores it: oomdoctor waits
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGKILL


# ---------------------------------------------------------------- diagnosis, timeline, history


def _lines_with_times(proc: subprocess.Popen) -> list[tuple[float, str]]:
    got: list[tuple[float, str]] = []

    def read() -> None:
        for raw in iter(proc.stderr.readline, b""):
            got.append((time.monotonic(), raw.decode("utf-8", "replace")))
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc.stdout.read()
    proc.wait(timeout=120)
    reader.join(timeout=30)
    return got


def _config_args() -> list[str]:
    return ["--config", str(CONFIGS / "lf_sim_lora.yaml"), "--model", str(MODEL)]


def test_a_cuda_oom_is_diagnosed_within_one_second_of_the_commands_exit(tmp_path):
    env = _env(tmp_path, nvml="fake")
    proc = subprocess.Popen(_oomdoctor(tmp_path, *_config_args(), "--", sys.executable, FAKE, "oom", "4", "0.3"),
                            env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    lines = _lines_with_times(proc)
    assert proc.returncode == 1
    text = "".join(line for _, line in lines)
    exited = next(t for t, line in lines if line.startswith("torch.OutOfMemoryError"))
    diagnosed = next(t for t, line in lines if "CUDA ran out of GPU" in line)
    assert diagnosed - exited < 1.0, diagnosed - exited
    assert "pre-flight: " in text and "2 x NVIDIA A100-SXM4-80GB" in text
    assert "Setup  LoRA r=8" in text                  # the config joined the captured log
    assert "GPU memory as the watcher saw it" in text and "GPU 1 NVIDIA A100-SXM4-80GB: peak" in text
    assert re.search(r"GPU 0 NVIDIA A100-SXM4-80GB: peak (\d+\.\d+) GiB", text)
    assert any(ch in text for ch in "▂▃▄▅▆▇█")       # the sparkline


def test_a_host_kill_is_named_as_the_likely_oom_killer(tmp_path):
    out = _run(_oomdoctor(tmp_path, "--", sys.executable, FAKE, "kill", "2", "0.01"), _env(tmp_path), tmp_path)
    assert out.returncode == 137
    assert "out-of-memory killer (host RAM, not GPU memory)" in out.stderr.decode()


def test_the_timeline_holds_two_samples_per_second_per_gpu_and_the_runs_own_memory(tmp_path):
    env = _env(tmp_path, nvml="fake", FAKE_NVML_OTHER="1500")
    out = _run(_oomdoctor(tmp_path, *_config_args(), "--", sys.executable, FAKE, "ok", "10", "0.2"), env, tmp_path)
    assert out.returncode == 0, out.stderr
    seconds = float(re.search(rb"finished \(exit 0\) after (\d+\.\d+) s", out.stderr).group(1))
    timeline = next(n for n in _runs(tmp_path) if n.endswith(".timeline.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "runs" / timeline).read_text().splitlines()]
    last_step = {0: 2000 + 1500 * 10, 1: 1800 + 1400 * 10}      # what the fake trainer holds at its last step
    for gpu in (0, 1):
        mine = [r for r in rows if r["gpu"] == gpu]
        assert len(mine) / seconds >= 2.0, (len(mine), seconds)
        assert max(r["run_mib"] for r in mine) == last_step[gpu]
    gpu0 = [r for r in rows if r["gpu"] == 0]
    assert {r["other_mib"] for r in gpu0} == {1500.0}          # the other process is not the run
    assert all(r["total_mib"] == 81920.0 for r in rows)


def test_a_successful_run_is_recorded_shown_in_the_next_preflight_and_cleared(tmp_path):
    env = _env(tmp_path, nvml="fake")
    first = _run(_oomdoctor(tmp_path, *_config_args(), "--", sys.executable, FAKE, "ok", "4", "0.1"), env, tmp_path)
    assert first.returncode == 0, first.stderr
    assert b"recorded in " in first.stderr
    history_file = tmp_path / "state" / "oomdoctor" / "history.jsonl"
    entry = json.loads(history_file.read_text().splitlines()[0])
    # the fake trainer's last step holds 2000 + 1500 * 4 MiB on GPU 0
    assert entry["peak_gib"] == pytest.approx((2000 + 1500 * 4) / 1024, abs=0.01)
    assert entry["gpu"] == "NVIDIA A100-SXM4-80GB" and entry["n_gpus"] == 2 and entry["micro_batch"] == 2
    check = _run(_oomdoctor(tmp_path, *_config_args(), "--check", "--", sys.executable, FAKE, "ok"), env, tmp_path)
    assert check.returncode == 0
    assert b"measured here: 7.8 GiB last time, 7.8 GiB at most, 1 run (oomdoctor history)" in check.stderr
    # the plain report for the same model on the same GPU shows it too
    plain = _run([sys.executable, "-m", "oomdoctor", str(CONFIGS / "lf_sim_lora.yaml"), "--model", str(MODEL),
                  "--plain"], env, tmp_path)
    assert b"measured here: 7.8 GiB" in plain.stderr
    listed = _run([sys.executable, "-m", "oomdoctor", "history"], env, tmp_path)
    assert listed.returncode == 0 and b"1 run recorded in " in listed.stdout and b"NVIDIA A100-SXM4-80GB" in listed.stdout
    cleared = _run([sys.executable, "-m", "oomdoctor", "history", "--clear"], env, tmp_path)
    assert cleared.returncode == 0 and b"removed 1 recorded run" in cleared.stderr and not history_file.exists()
    empty = _run([sys.executable, "-m", "oomdoctor", "history"], env, tmp_path)
    assert b"no run recorded yet" in empty.stdout


def test_check_stops_before_launch_with_the_reports_exit_code(tmp_path):
    marker = tmp_path / "ran"
    out = _run(_oomdoctor(tmp_path, *_config_args(), "--gpu", "24GiB", "--check", "--", sys.executable, "-c",
                          f"open({str(marker)!r}, 'w')"), _env(tmp_path), tmp_path)
    assert out.returncode == 0 and not marker.exists()
    assert b"pre-flight: " in out.stderr and b"fits" in out.stderr
    assert not (tmp_path / "runs").exists() and not list(tmp_path.glob("oomdoctor-command-*"))


@pytest.mark.parametrize("lang,heading", [("en", "GPU memory timeline"), ("zh", "显存时间线")])
def test_run_markdown_report_holds_the_crash_and_the_timeline_and_parses(tmp_path, lang, heading):
    markdown_it = pytest.importorskip("markdown_it")
    env = _env(tmp_path, nvml="fake")
    out = _run(_oomdoctor(tmp_path, *_config_args(), "--markdown", "--lang", lang, "--", sys.executable, FAKE, "oom",
                          "3", "0.3"), env, tmp_path)
    assert out.returncode == 1
    saved = next(n for n in _runs(tmp_path) if n.endswith(".md"))
    text = (tmp_path / "runs" / saved).read_text(encoding="utf-8")
    assert text in out.stderr.decode("utf-8")
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert heading in headings
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(rows) >= 3                       # the timeline table's header and one row per GPU at least
    fences = [t for t in tokens if t.type == "fence"]
    assert any("torch.OutOfMemoryError" in f.content for f in fences)
    assert any(f.content.startswith("GPU 0  ") and "GPU 1  " in f.content for f in fences)


def _big_config(tmp_path: Path) -> Path:
    """lf_verify_full.yaml at batch 32 x 4096: it does not fit the fake log's 23.64 GiB card."""
    text = (CONFIGS / "lf_verify_full.yaml").read_text()
    text = text.replace("cutoff_len: 2048", "cutoff_len: 4096").replace("per_device_train_batch_size: 8",
                                                                         "per_device_train_batch_size: 32")
    text = text.replace("../models/sim-llama-2l", str(MODEL))
    path = tmp_path / "big.yaml"
    path.write_text(text)
    return path


def test_retry_with_yes_applies_the_plan_keeps_a_backup_and_launches_once_more(tmp_path):
    config = _big_config(tmp_path)
    before = config.read_text()
    out = _run(_oomdoctor(tmp_path, "--config", str(config), "--retry", "--yes", "--", sys.executable, FAKE, "oom",
                          "2", "0.01"), _env(tmp_path), tmp_path)
    assert out.returncode == 1                       # the second launch's code (the fake trainer fails again)
    after = config.read_text()
    assert after != before and "per_device_train_batch_size: 32" not in after
    assert (tmp_path / "big.yaml.orig").read_text() == before
    logs = [n for n in _runs(tmp_path) if n.endswith(".log")]
    assert len(logs) == 2
    assert b"--retry: launching again: " in out.stderr
    # the plan's environment reaches the second launch only
    assert out.stdout.count(b"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") == 1


def test_retry_without_a_terminal_or_yes_changes_nothing(tmp_path):
    config = _big_config(tmp_path)
    before = config.read_text()
    out = _run(_oomdoctor(tmp_path, "--config", str(config), "--retry", "--", sys.executable, FAKE, "oom", "2",
                          "0.01"), _env(tmp_path), tmp_path)
    assert out.returncode == 1
    assert b"add --yes to apply the plan and launch again" in out.stderr
    assert config.read_text() == before and not (tmp_path / "big.yaml.orig").exists()
    assert len([n for n in _runs(tmp_path) if n.endswith(".log")]) == 1


def test_a_log_file_literally_named_run_is_still_analysed_as_before(tmp_path):
    (tmp_path / "run").write_bytes((ROOT / "tests" / "data" / "logs" / "f01_torch25_backward.log").read_bytes())
    out = _run([sys.executable, "-m", "oomdoctor", "run", "--plain"], _env(tmp_path), tmp_path)
    assert out.returncode == 1, out.stderr
    assert b"CUDA ran out of GPU" in out.stdout and not (tmp_path / "oomdoctor-runs").exists()


def test_a_failing_diagnosis_never_hides_the_commands_exit_code(tmp_path, monkeypatch, capfd):
    import oomdoctor.run as watcher
    from oomdoctor.cli import main

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the report")

    monkeypatch.setattr(watcher, "_diagnose", broken)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("OOMDOCTOR_DEBUG", raising=False)
    monkeypatch.setitem(sys.modules, "pynvml", None)        # no NVML: no timeline
    code = main(["run", "--logs", str(tmp_path / "runs"), "--", sys.executable, FAKE, "oom", "2", "0.01"])
    err = capfd.readouterr().err
    assert code == 1
    assert "internal error in the diagnosis (RuntimeError: a bug in the report)" in err


def test_a_run_that_ends_on_its_own_sigint_is_stopped_not_diagnosed(tmp_path):
    out = _run(_oomdoctor(tmp_path, "--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGINT)"),
               _env(tmp_path), tmp_path)
    assert out.returncode == 128 + signal.SIGINT
    text = out.stderr.decode()
    assert "the run was stopped by SIGINT (exit 130)" in text and "diagnosis" not in text


def test_nvml_with_the_hosts_pids_falls_back_to_what_the_device_gained(tmp_path):
    """Inside a container NVML names the host's pids: the run's memory is the device's gain since launch."""
    env = _env(tmp_path, nvml="fake", FAKE_NVML_PID_OFFSET="4000000")
    out = _run(_oomdoctor(tmp_path, *_config_args(), "--", sys.executable, FAKE, "ok", "4", "0.2"), env, tmp_path)
    assert out.returncode == 0, out.stderr
    entry = json.loads((tmp_path / "state" / "oomdoctor" / "history.jsonl").read_text().splitlines()[0])
    assert entry["peak_gib"] == pytest.approx((2000 + 1500 * 4) / 1024, abs=0.01)
    timeline = next(n for n in _runs(tmp_path) if n.endswith(".timeline.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "runs" / timeline).read_text().splitlines()]
    assert all(r["run_mib"] is None for r in rows if r["used_mib"] > 300)     # once the run holds memory
