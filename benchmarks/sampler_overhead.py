"""CPU cost of `oomdoctor run`'s NVML sampler at its default rate (2 Hz), as a share of one core.

    python benchmarks/sampler_overhead.py [--seconds 20] [--interval 0.5] [--gpus 8] [--procs 4] [--real]

Runs run/sampler.py's Sampler for --seconds against tests/data/run/fakenvml/pynvml.py (a pure-Python NVML with
--gpus cards and --procs processes on each; the real module with --real, where a driver is present), writing
its timeline to a temporary file, and reports the sampler thread's CPU time (time.thread_time inside the
thread) and the whole process's CPU time over an idle process's, each divided by the wall time. The bound the
run watcher promises is under 1% of one core at 2 Hz.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, ROOT)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--procs", type=int, default=4, help="processes of the run on each GPU (fake NVML)")
    ap.add_argument("--real", action="store_true", help="use the installed pynvml and this machine's GPUs")
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="oomdoctor-bench-")
    try:
        if not args.real:
            sys.path.insert(0, os.path.join(ROOT, "tests", "data", "run", "fakenvml"))
            os.environ["FAKE_NVML_GPUS"] = ",".join(["NVIDIA H100 80GB HBM3:81559"] * args.gpus)
            state = os.path.join(tmp, "state.json")
            with open(state, "w") as fh:
                json.dump({"pid": os.getpid(), "used_mib": [30000] * args.gpus}, fh)
            os.environ["FAKE_NVML_STATE"] = state
            os.environ["FAKE_NVML_OTHER"] = "1200"
        from oomdoctor.run.sampler import RunPids, Sampler, load_nvml

        nvml, why = load_nvml()
        if nvml is None:
            from oomdoctor.words import say

            print(say(why), file=sys.stderr)
            return 2
        # an idle process's CPU over the same time, as the baseline
        cpu0, wall0 = _cpu(), time.monotonic()
        time.sleep(min(5.0, args.seconds / 4))
        idle = (_cpu() - cpu0) / (time.monotonic() - wall0)
        timeline_path = os.path.join(tmp, "timeline.jsonl")
        with open(timeline_path, "w") as timeline:
            sampler = Sampler(nvml, interval_s=args.interval, timeline=timeline, pids=RunPids(os.getpgrp()))
            cpu0, wall0 = _cpu(), time.monotonic()
            sampler.start()
            time.sleep(args.seconds)
            sampler._stop.set()
            sampler._thread.join()
            wall = time.monotonic() - wall0
            process = (_cpu() - cpu0) / wall - idle
        n_gpus = len(sampler.gpus)
        rate = sampler.samples / wall
        print(f"{sampler.samples} samples of {n_gpus} GPU(s) in {wall:.1f} s ({rate:.2f}/s per GPU, interval "
              f"{args.interval} s, {'real NVML' if args.real else 'fake NVML'})")
        print(f"sampler thread CPU: {sampler.cpu_s * 1000 / max(1, sampler.samples):.2f} ms per sample, "
              f"{sampler.cpu_s / wall:.3%} of one core")
        print(f"process CPU over idle: {process:.3%} of one core")
        ok = sampler.cpu_s / wall < 0.01
        print(f"bound (< 1% of one core): {'holds' if ok else 'DOES NOT HOLD'}")
        return 0 if ok else 1
    finally:
        for name in os.listdir(tmp):
            os.unlink(os.path.join(tmp, name))
        os.rmdir(tmp)


if __name__ == "__main__":
    raise SystemExit(main())
