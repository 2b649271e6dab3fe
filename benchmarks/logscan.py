"""Time oomdoctor's crash-log scan against `grep -c 'out of memory'` on the same 1 GiB log.

    python benchmarks/logscan.py [--gib 1.0] [--keep]

Writes a synthetic multi-rank training log (loss dicts, tqdm bars, INFO noise, NCCL chatter) with one
CUDA OOM traceback in the middle and one rank's OOM plus a torchrun summary near the end, then runs
grep and parse_log (in a child process, so its peak RSS is measured alone) on the warm file.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

OOM = ("[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU {r} has a total "
       "capacity of 79.14 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.10 GiB "
       "memory in use. Of the allocated memory 70.20 GiB is allocated by PyTorch, and 6.44 GiB is reserved by PyTorch "
       "but unallocated. If reserved but unallocated memory is large try setting "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
FRAMES = ("[rank{r}]: Traceback (most recent call last):\n"
          '[rank{r}]:   File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 3349, in training_step\n'
          "[rank{r}]:     self.accelerator.backward(loss, **kwargs)\n"
          '[rank{r}]:   File "/opt/conda/lib/python3.10/site-packages/torch/autograd/graph.py", line 768, in _engine_run_backward\n'
          "[rank{r}]:     return Variable._execution_engine.run_backward(\n")


def noise_block(rng: random.Random, first_step: int, ranks: int = 8, lines: int = 4000) -> tuple[str, int]:
    out = []
    step = first_step
    for i in range(lines):
        r = rng.randrange(ranks)
        kind = rng.random()
        if kind < 0.35:
            out.append(f"[rank{r}]: {{'loss': {rng.random() * 2:.4f}, 'grad_norm': {rng.random() * 3:.4f}, "
                       f"'learning_rate': 1.9e-05, 'epoch': {step / 5000:.2f}}}\n")
        elif kind < 0.65:
            step += 1
            out.append(f"[rank{r}]: {step % 100:3d}%|███       | {step}/50000 [{step // 60:02d}:{step % 60:02d}<9:00:00,  2.41s/it]\n")
        elif kind < 0.85:
            out.append(f"[INFO|trainer.py:{rng.randrange(9999)}] 2024-05-01 12:{i % 60:02d}:00,123 >> Saving "
                       f"model checkpoint to output/checkpoint-{step} (rank {r}, shard {i % 4})\n")
        else:
            out.append(f"gpu-node-{r}:{1000 + r}:{2000 + i % 97} [{r}] NCCL INFO Channel {i % 32:02d}/0 : {r}[{r}] -> "
                       f"{(r + 1) % ranks}[{(r + 1) % ranks}] via P2P/IPC/read\n")
    return "".join(out), step


def write_log(path: str, target_bytes: int) -> int:
    rng = random.Random(7)
    blocks = []
    step = 0
    for _ in range(16):
        text, step = noise_block(rng, step)
        blocks.append(text.encode())
    written = 0
    middle_done = False
    with open(path, "wb") as fh:
        i = 0
        while written < target_bytes - (1 << 20):
            b = blocks[i % len(blocks)]
            fh.write(b)
            written += len(b)
            i += 1
            if not middle_done and written >= target_bytes // 2:
                oom = (FRAMES + OOM).format(r=5).encode()
                fh.write(oom)
                written += len(oom)
                middle_done = True
        tail = ((FRAMES + OOM).format(r=2) + "E0501 12:00:00.000000 77 torch/distributed/elastic/multiprocessing/api.py:869] "
                "failed (exitcode: 1) local_rank: 2 (pid: 4242) of binary: /usr/bin/python3\n").encode()
        fh.write(blocks[0][: 1 << 19] + tail)
        written += (1 << 19) + len(tail)
    return written


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--keep", action="store_true", help="leave the generated log in place")
    args = ap.parse_args()
    grep = shutil.which("grep")
    tmp = tempfile.mkdtemp(prefix="oomdoctor-bench-")
    path = os.path.join(tmp, "train.log")
    try:
        size = write_log(path, int(args.gib * (1 << 30)))
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=False)     # warm the page cache for both
        grep_s = grep_cpu = None
        if grep:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            count = subprocess.run([grep, "-c", "out of memory", path], capture_output=True, text=True).stdout.strip()
            grep_s = time.perf_counter() - t
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            grep_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        code = ("import sys, time; from oomdoctor.crashlog import parse_log; t = time.perf_counter(); "
                "r = parse_log(sys.argv[1]); d = time.perf_counter() - t; "
                "print(d, len(r.events), [(e.line, e.rank, e.phase) for e in r.events])")
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True,
                             cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))).stdout.split(" ", 2)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rss_mib = r1.ru_maxrss / 1024
        scan_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        scan_s = float(out[0])
        print(f"log: {size / (1 << 30):.2f} GiB, {out[1]} events found: {out[2].strip()}")
        if grep_s is not None:
            print(f"grep -c 'out of memory': {grep_s:.2f} s wall, {grep_cpu:.2f} s CPU ({count} lines)")
        print(f"oomdoctor parse_log:     {scan_s:.2f} s wall, {scan_cpu:.2f} s CPU (incl. interpreter start), "
              f"peak RSS {rss_mib:.0f} MiB")
        if grep_s:
            print(f"ratio parse_log / grep:  {scan_s / grep_s:.1f}x wall, {scan_cpu / max(grep_cpu, 1e-3):.1f}x CPU")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
