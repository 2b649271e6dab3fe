"""Time --simulate on a Llama-2-7B-shaped model: seq 2048, micro-batch 1, LoRA r=8 on all linears.

    python benchmarks/simulate.py [--seq 2048] [--batch 1] [--method lora] [--steps 2]

Prints the wall time of the import and of the two traced steps, and the traced peak.
Target: under a minute on 2 CPU cores, imports included.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oomdoctor.facts import GIB, Hardware, ModelShape, TrainingSetup  # noqa: E402
from oomdoctor.words import say  # noqa: E402

LLAMA2_7B = ModelShape(name="meta-llama/Llama-2-7b-hf", model_type="llama", hidden_size=4096,
                       intermediate_size=11008, num_layers=32, num_heads=32, num_kv_heads=32,
                       vocab_size=32000, torch_dtype="bf16")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--method", default="lora", choices=["lora", "qlora", "full", "freeze"])
    ap.add_argument("--steps", type=int, default=2)
    args = ap.parse_args()

    started = time.perf_counter()
    cpu_started = time.process_time()
    from oomdoctor import simulate
    from oomdoctor.memory import estimate

    problem = simulate.available()
    if problem:
        print(say(problem), file=sys.stderr)
        return 2
    imported = time.perf_counter()
    setup = TrainingSetup(framework="llamafactory", method=args.method, micro_batch=args.batch,
                          seq_len=args.seq, quant_bits=4 if args.method == "qlora" else None)
    result = simulate.trace_step(setup, LLAMA2_7B, steps=args.steps,
                                 progress=lambda m: print(f"  {time.perf_counter() - started:5.1f}s {say(m)}",
                                                          file=sys.stderr))
    done = time.perf_counter()
    cpu_s = time.process_time() - cpu_started
    est = estimate(setup, LLAMA2_7B, Hardware(gpu="A100-80GB", gpu_gib=80.0))
    print(simulate.format_result(result, est))
    print()
    print(f"cpu cores: {os.cpu_count()}; import {imported - started:.1f} s; trace {done - imported:.1f} s; "
          f"total {done - started:.1f} s wall, {cpu_s:.1f} s CPU (wall exceeds CPU when the machine is busy)")
    print(f"Llama-2-7B {args.method} seq {args.seq} x batch {args.batch}: traced peak "
          f"{result.peak_bytes / GIB:.2f} GiB in {done - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
