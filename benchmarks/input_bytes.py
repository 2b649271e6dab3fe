"""Odd files, timed: a crash beside a 10 GiB hole, a 20 MiB NUL run, UTF-16, bare CR, /dev/zero, a piped
log with a 64 MiB temporary folder, a 150 MB single-line log, a 100k-key YAML.

    python benchmarks/input_bytes.py

Each case runs `python -m oomdoctor FILE --plain` as a user would; printed: exit code, wall time and peak
RSS of the child (getrusage), and whether the crash was found.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = (ROOT / "tests" / "data" / "logs" / "f01_torch25_backward.log").read_bytes()


def run(args: list[str], stdin: bytes | None = None, env: dict | None = None) -> tuple[int, float, float, bytes]:
    """(exit code, wall s, peak RSS MiB of this child alone, stdout + stderr)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as given:
        given.write(stdin or b"")
        given.seek(0)
        proc = subprocess.Popen([sys.executable, "-m", "oomdoctor", *args, "--plain"], stdin=given, stdout=out,
                                stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        out.seek(0)
        return proc.returncode, wall, usage.ru_maxrss / 1024, out.read()


def sparse(path: Path, before: int, after: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(before)
        fh.seek(before)
        fh.write(LOG)
        fh.truncate(before + len(LOG) + after)
    return path


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small-tmp", metavar="DIR", help="a small temporary folder for the piped case, e.g. "
                        "a 64 MiB tmpfs: mount -t tmpfs -o size=64m tmpfs DIR")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="oomdoctor-bytes-"))
    small_tmp = Path(args.small_tmp) if args.small_tmp else folder / "tmp"
    small_tmp.mkdir(exist_ok=True)
    cases = []
    try:
        cases.append(("crash then a 10 GiB hole", [str(sparse(folder / "after.log", 0, 10 << 30))], None, None))
        cases.append(("a 10 GiB hole then the crash", [str(sparse(folder / "before.log", 10 << 30, 0))], None, None))
        (folder / "nul.log").write_bytes(b"\0" * (20 << 20) + LOG)
        cases.append(("20 MiB of NUL bytes then the crash", [str(folder / "nul.log")], None, None))
        (folder / "u16.log").write_bytes(LOG.decode().encode("utf-16"))
        cases.append(("UTF-16 log file", [str(folder / "u16.log")], None, None))
        cases.append(("UTF-16 log through a pipe", ["-"], LOG.decode().encode("utf-16"), None))
        (folder / "cr.log").write_bytes(LOG.replace(b"\n", b"\r"))
        cases.append(("bare-CR log", [str(folder / "cr.log")], None, None))
        cases.append(("/dev/zero", ["/dev/zero"], None, None))
        cases.append((f"piped log, TMPDIR={small_tmp}", ["-"], LOG, {"TMPDIR": str(small_tmp)}))
        with open(folder / "one.log", "wb") as fh:
            fh.writelines(b"x" * (1 << 20) for _ in range(150))
        cases.append(("150 MB on one line", [str(folder / "one.log")], None, None))
        lines = ["stage: sft", "finetuning_type: lora", "model_name_or_path: meta-llama/Llama-2-7b-hf",
                 "per_device_train_batch_size: 4"] + [f"extra_key_{i}: {i}" for i in range(100_000)]
        (folder / "big.yaml").write_text("\n".join(lines) + "\n")
        cases.append(("100k-key YAML config", [str(folder / "big.yaml"), "--gpu", "24GiB"], None, None))
        print(f"{'case':60s} exit   wall s   peak RSS MiB  crash found")
        for name, args, stdin, env in cases:
            code, wall, rss, out = run(args, stdin, env)
            found = b"CUDA ran out of GPU memory" in out
            print(f"{name[:60]:60s} {code:4d} {wall:8.2f} {rss:14.0f}  {'yes' if found else 'no'}")
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
