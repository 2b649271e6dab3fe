"""Time reading a big training config (a 4 MiB YAML with ~150k keys was parsed seven
times per run, 6.8 s).

    python benchmarks/configparse.py [--mib 4] [-n 3]

Writes a LLaMA-Factory YAML of about `--mib` MiB (a real header, then filler keys) to a temporary folder and
prints, for the configs/ side of a run (classify + read + read again under the version a crash log names,
as pipeline.read_setup does):
- how many times the file was parsed (configs._doc.PARSE_COUNT; the target is 1),
- the median wall time of that side, and of one bare `yaml.compose` of the same text for comparison,
- the median wall time of a whole `oomdoctor CONFIG --gpu 80GiB --plain` run in a fresh process, which also
  includes the patch writer, which reuses the reader's compose (bounded.compose_yaml) for the values it changes.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HEADER = """### model
model_name_or_path: meta-llama/Llama-2-7b-hf
### method
stage: sft
finetuning_type: full
### train
per_device_train_batch_size: 4
gradient_accumulation_steps: 2
cutoff_len: 2048
bf16: true
"""


def write_config(path: str, mib: float) -> int:
    lines = [HEADER]
    size, i = len(HEADER), 0
    while size < mib * (1 << 20):
        line = f"extra_key_{i:06d}: value_{i}\n"
        lines.append(line)
        size += len(line)
        i += 1
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
    return i


def configs_side(path: str) -> tuple[float, int]:
    """Wall seconds and parses of what the pipeline asks of configs/ for one run with a log."""
    from oomdoctor import configs
    from oomdoctor.configs import _doc

    _doc._PARSED.clear()
    before = _doc.PARSE_COUNT[0]
    start = time.perf_counter()
    configs.classify(path)
    setup = configs.load_config(path)
    configs.load_config(path, log_versions={"llamafactory": "0.9.0"})
    wall = time.perf_counter() - start
    assert setup.seq_len == 2048
    return wall, _doc.PARSE_COUNT[0] - before


def bare_compose(path: str) -> float:
    import yaml

    text = open(path, encoding="utf-8").read()
    start = time.perf_counter()
    yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return time.perf_counter() - start


def whole_run(path: str) -> float:
    script = os.path.join(os.path.dirname(sys.executable), "oomdoctor")
    cmd = [sys.executable, script] if os.path.isfile(script) else [sys.executable, "-m", "oomdoctor"]
    start = time.perf_counter()
    subprocess.run(cmd + [path, "--gpu", "80GiB", "--plain"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=float, default=4.0)
    ap.add_argument("-n", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.yaml")
        keys = write_config(path, args.mib)
        sides = [configs_side(path) for _ in range(args.n)]
        composes = [bare_compose(path) for _ in range(args.n)]
        runs = [whole_run(path) for _ in range(args.n)]
        print(f"config: {os.path.getsize(path) / (1 << 20):.1f} MiB, {keys + 8} keys ({args.n} runs each, seconds)")
        print(f"  configs/ side (classify + read + re-read for the log's version): "
              f"median {statistics.median(s[0] for s in sides):.2f}, parses per run {sides[0][1]}")
        print(f"  one bare yaml.compose of the text:                            median {statistics.median(composes):.2f}")
        print(f"  whole run, oomdoctor CONFIG --gpu 80GiB --plain:              median {statistics.median(runs):.2f}")


if __name__ == "__main__":
    main()
