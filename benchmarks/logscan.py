"""Time oomdoctor's crash-log scan, both engines, against `grep -c 'out of memory'` on the same 1 GiB log.

    python benchmarks/logscan.py [--gib 1.0] [--keep] [--log FILE] [--engines grep,python] [--parts N]

Writes a synthetic multi-rank training log (loss dicts, tqdm bars, INFO noise, NCCL chatter) with one
CUDA OOM traceback in the middle and one rank's OOM plus a torchrun summary near the end, warms the
page cache, then runs `grep -c` (the reference), `grep -n` and parse_log once per scan engine, each
parse in a fresh interpreter so its peak RSS is its own. Wall and CPU of parse_log exclude
interpreter start and imports (printed apart); CPU includes the grep / wc processes it starts. The
engines must agree, else the exit status is 1.
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


CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
import oomdoctor.crashlog.scan as S
from oomdoctor.crashlog import parse_log
imported = time.perf_counter() - t0
S.SCAN_ENGINE = sys.argv[2]
if sys.argv[3] != 'auto':
    S.SPLIT_PARTS = int(sys.argv[3])
c0, t1 = time.process_time(), time.perf_counter()
r = parse_log(sys.argv[1])
wall = time.perf_counter() - t1
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps(dict(wall=wall, cpu=time.process_time() - c0, kids_cpu=kids.ru_utime + kids.ru_stime,
                      rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, kids_rss_mib=kids.ru_maxrss / 1024,
                      import_s=imported, events=[(e.kind, e.line, e.rank, e.phase) for e in r.events],
                      lines=r.lines_total, notes=list(r.notes))))
"""


def time_grep(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one grep run, and its output's first line."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), out.split("\n", 1)[0].strip()


def run_parse(path: str, engine: str, parts: str = "auto") -> dict:
    """parse_log in a fresh interpreter: its own peak RSS, and the CPU of the grep/wc it starts."""
    import json

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", CHILD, path, engine, parts], capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--keep", action="store_true", help="leave the generated log in place")
    ap.add_argument("--log", help="time this existing log instead of writing one")
    ap.add_argument("--engines", default="grep,python", help="oomdoctor scan engines to time (grep, python, auto)")
    ap.add_argument("--parts", default="auto", help="greps per anchor on a big log (auto: half the cores)")
    args = ap.parse_args()
    grep = shutil.which("grep")
    tmp = tempfile.mkdtemp(prefix="oomdoctor-bench-")
    path = args.log or os.path.join(tmp, "train.log")
    try:
        size = os.path.getsize(path) if args.log else write_log(path, int(args.gib * (1 << 30)))
        subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=False)     # warm the page cache for all
        print(f"log: {path}, {size / (1 << 30):.2f} GiB; CPU = user + system, children included")
        grep_s = grep_cpu = None
        if grep:
            # Output to a pipe, as here: GNU grep stops at the first match when its output is /dev/null.
            grep_s, grep_cpu, count = time_grep([grep, "-c", "out of memory", path])
            print(f"{'grep -c out of memory':24s} {grep_s:6.2f} s wall {grep_cpu:6.2f} s CPU  ({count} lines)")
            n_s, n_cpu, _ = time_grep([grep, "-n", "out of memory", path])
            print(f"{'grep -n out of memory':24s} {n_s:6.2f} s wall {n_cpu:6.2f} s CPU  (with line numbers, as oomdoctor)")
        reports = {}
        for engine in args.engines.split(","):
            r = run_parse(path, engine, args.parts)
            reports[engine] = (r["events"], r["lines"], r["notes"])
            cpu = r["cpu"] + r["kids_cpu"]
            ratio = f"  = {r['wall'] / grep_s:4.1f}x / {cpu / max(grep_cpu, 1e-3):4.1f}x grep" if grep_s else ""
            print(f"{'parse_log engine=' + engine:24s} {r['wall']:6.2f} s wall {cpu:6.2f} s CPU{ratio}  "
                  f"peak RSS {r['rss_mib']:.0f} MiB (grep/wc child {r['kids_rss_mib']:.0f} MiB), import {r['import_s']:.2f} s")
        first = next(iter(reports.values()))
        print(f"events: {first[0]}; lines: {first[1]}; notes: {first[2]}")
        if any(v != first for v in reports.values()):
            print("ENGINES DISAGREE:", reports)
            return 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
