"""Time oomdoctor's crash-log scan against `grep -c 'out of memory'` on the same file, for three shapes:

    python benchmarks/logscan.py [--shape standard|memory|longline|all] [--gib G] [--repeat N]
                                 [--keep] [--log FILE] [--engines grep,python]

- standard (1 GiB): a multi-rank training log (loss dicts, tqdm bars, INFO noise, NCCL chatter) with one
  CUDA OOM traceback in the middle and one rank's OOM plus a torchrun summary near the end;
- memory (2 GiB): "memory" on every line (a memory logger printing each step), one OOM in the middle;
- longline (100 MB): a single line of tqdm redraws glued by carriage returns, an OOM glued at its end.

The page cache is warmed, then `grep -c` (the reference) and parse_log (once per scan engine, each in a
fresh interpreter so its peak RSS is its own) run N times each, alternating; the table gives the
median and the spread (min-max). parse_log's wall and CPU exclude interpreter start and imports
(printed apart); CPU includes the grep and wc processes it starts. The engines must agree, else the
exit status is 1.
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


def write_memory_log(path: str, target_bytes: int) -> int:
    """Every line mentions memory (a per-step memory logger); one legacy OOM message in the middle."""
    block = "".join(f"[rank{i % 8}]: step {i} | loss {1 + (i % 97) / 100:.2f} | peak_memory_active: {20 + i % 9}.{i % 10} GiB "
                    f"| memory/max_reserved: {30 + i % 7}.1 GiB\n" for i in range(20000)).encode()
    oom = (b"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 3 has a total capacity "
           b"of 79.14 GiB of which 1.31 GiB is free. Including non-PyTorch memory, this process has 77.82 GiB memory in "
           b"use. Of the allocated memory 72.40 GiB is allocated by PyTorch, and 4.91 GiB is reserved by PyTorch but "
           b"unallocated.\n")
    written = 0
    with open(path, "wb") as fh:
        while written < target_bytes:
            fh.write(block)
            written += len(block)
            if oom and written >= target_bytes // 2:
                fh.write(oom)
                written += len(oom)
                oom = b""
    return written


def write_longline_log(path: str, target_bytes: int) -> int:
    """One line: a progress bar redrawn by carriage returns for the whole run, the OOM glued at the end."""
    unit = b" 37%|###7      | 3/150 [00:40<33:05, 13.5s/it]\r"
    oom = (b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           b"79.15 GiB of which 1.20 GiB is free.\n")
    count = max(1, (target_bytes - len(oom)) // len(unit))
    with open(path, "wb") as fh:
        chunk = unit * 100_000
        left = count
        while left:
            take = min(left, 100_000)
            fh.write(chunk if take == 100_000 else unit * take)
            left -= take
        fh.write(oom)
    return count * len(unit) + len(oom)


SHAPES = {"standard": (write_log, 1.0), "memory": (write_memory_log, 2.0), "longline": (write_longline_log, 100e6 / (1 << 30))}


CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
import oomdoctor.crashlog.scan as S
from oomdoctor.crashlog import parse_log
from oomdoctor.words import say
imported = time.perf_counter() - t0
S.SCAN_ENGINE = sys.argv[2]
c0, t1 = time.process_time(), time.perf_counter()
r = parse_log(sys.argv[1])
wall = time.perf_counter() - t1
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps(dict(wall=wall, cpu=time.process_time() - c0, kids_cpu=kids.ru_utime + kids.ru_stime,
                      rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, kids_rss_mib=kids.ru_maxrss / 1024,
                      import_s=imported, events=[(e.kind, e.line, e.rank, e.phase) for e in r.events],
                      lines=r.lines_total, notes=[say(n) for n in r.notes])))
"""


def time_grep(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of one grep run, and its output's first line."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), out.split("\n", 1)[0].strip()


def run_parse(path: str, engine: str) -> dict:
    """parse_log in a fresh interpreter: its own peak RSS, and the CPU of the grep/wc it starts."""
    import json

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", CHILD, path, engine], capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout)


def spread(values: list[float]) -> str:
    values = sorted(values)
    return f"{values[len(values) // 2]:5.2f} s ({values[0]:.2f}-{values[-1]:.2f})"


def bench(shape: str, path: str, size: int, engines: list[str], repeat: int) -> bool:
    grep = shutil.which("grep")
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=False)     # warm the page cache for all
    print(f"\n== {shape}: {path}, {size / (1 << 30):.2f} GiB; {repeat} runs each, median (min-max); CPU = user + system")
    greps: list[tuple[float, float]] = []
    runs: dict[str, list[dict]] = {e: [] for e in engines}
    for _ in range(repeat):
        if grep:
            # Output to a pipe, as here: GNU grep stops at the first match when its output is /dev/null.
            wall, cpu, count = time_grep([grep, "-c", "out of memory", path])
            greps.append((wall, cpu))
        for engine in engines:
            runs[engine].append(run_parse(path, engine))
    if greps:
        print(f"{'grep -c out of memory':24s} {spread([w for w, _ in greps])} wall {spread([c for _, c in greps])} CPU  ({count} lines)")
    reports = {}
    for engine, rs in runs.items():
        walls = [r["wall"] for r in rs]
        cpus = [r["cpu"] + r["kids_cpu"] for r in rs]
        ratio = ""
        if greps:
            g = sorted(w for w, _ in greps)
            ratio = f"  = {sorted(walls)[len(walls) // 2] / g[len(g) // 2]:4.2f}x grep -c (median/median)"
        r = rs[-1]
        print(f"{'parse_log engine=' + engine:24s} {spread(walls)} wall {spread(cpus)} CPU{ratio}")
        print(f"{'':24s} peak RSS {max(x['rss_mib'] for x in rs):.0f} MiB (grep/wc child {max(x['kids_rss_mib'] for x in rs):.0f} MiB), "
              f"import {r['import_s']:.2f} s")
        reports[engine] = (r["events"], r["lines"], r["notes"])
    first = next(iter(reports.values()))
    print(f"events: {first[0]}; lines: {first[1]}")
    for engine, (_events, _lines, notes) in reports.items():
        for note in notes:
            print(f"note ({engine}): {note}")
    # the notes may differ: the in-process pass counts a marker's hits in C, a capped grep does not
    if any(v[:2] != first[:2] for v in reports.values()):
        print("ENGINES DISAGREE:", reports)
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="standard", choices=sorted(SHAPES) + ["all"])
    ap.add_argument("--gib", type=float, help="size of the generated log (default: 1 standard, 2 memory, 0.093 longline)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="leave the generated logs in place")
    ap.add_argument("--log", help="time this existing log instead of writing one")
    ap.add_argument("--engines", default="auto,python", help="oomdoctor scan engines to time (auto, grep, python)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="oomdoctor-bench-")
    ok = True
    try:
        if args.log:
            return 0 if bench("given", args.log, os.path.getsize(args.log), args.engines.split(","), args.repeat) else 1
        for shape in (sorted(SHAPES, key=list(SHAPES).index) if args.shape == "all" else [args.shape]):
            writer, gib = SHAPES[shape]
            path = os.path.join(tmp, f"{shape}.log")
            size = writer(path, int((args.gib or gib) * (1 << 30)))
            ok = bench(shape, path, size, args.engines.split(","), args.repeat) and ok
            if not args.keep:
                os.unlink(path)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
