"""verl's published fit lines: the micro-batch bisections in examples/tuning/*/qwen2-*_grpo-lora_*_h100_fsdp_vllm.sh.

    python benchmarks/verl_tuning.py [--code DIR]

Each script's first comment records a bisection of `nproc_per_gpu` on its H100s (√ ran, × did not: "32√ → 64× →
48√ ..."; docs/perf/device_tuning.rst lists the scripts as the minimum resources). The script sets the actor's
micro-batch, the log-prob micro-batches and the mini-batch from it. For the largest √ and the smallest × this
prints oomdoctor's per-GPU peak, the moment that sets it and whether it fits, reading each script as
`oomdoctor SCRIPT --gpu H100 --json` does with that value; `--code DIR` runs another checkout's oomdoctor (the
untouched commit, for a first-sight figure). Data: tests/data/reference/verl-tuning/ (SOURCES.tsv).

A verdict is `fits`, `OOM`, or `may not fit` when the peak is an upper bound over the card (the JSON's
`length_bound_gib`: the scripts pack real lengths with use_remove_padding, which a config cannot know;
docs/estimates.md §31); `packed ≤` is then the mean tokens per sample under which the estimate fits. A `may not fit`
is not an OOM call: it matches a √ and a ×, and is counted apart as not confident.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "reference", "verl-tuning")
_BISECT = re.compile(r"^nproc_per_gpu=\d+\s*#\s*(.+)$", re.M)


def fit_line(text: str) -> tuple[int, int]:
    """(largest value that ran, smallest that did not) from the script's bisection comment."""
    steps = re.findall(r"(\d+)\s*([√×])", _BISECT.search(text).group(1))   # type: ignore[union-attr]
    ran = [int(v) for v, mark in steps if mark == "√"]
    failed = [int(v) for v, mark in steps if mark == "×"]
    return max(ran), min(v for v in failed if v > max(ran))


def peak(code: str, text: str, nproc: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.sh")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(re.sub(r"^nproc_per_gpu=\d+", f"nproc_per_gpu={nproc}", text, flags=re.M))
        out = subprocess.run([sys.executable, "-m", "oomdoctor", path, "--gpu", "H100", "--json"], capture_output=True,
                             text=True, cwd=code, env={**os.environ, "PYTHONPATH": code, "PYTHONDONTWRITEBYTECODE": "1"})
    return json.loads(out.stdout)["estimate"]


def main(argv: list[str]) -> None:
    code = os.path.abspath(argv[argv.index("--code") + 1]) if "--code" in argv else os.path.join(HERE, "..")
    print(f"{'script':42} {'nproc':>5} {'ran':>4} {'peak GiB':>9} {'moment':>16} {'verdict':>12} {'packed ≤':>8}")
    right = total = confident = 0
    for name in sorted(f for f in os.listdir(DATA) if f.endswith(".sh")):
        with open(os.path.join(DATA, name), encoding="utf-8") as fh:
            text = fh.read()
        ok, bad = fit_line(text)
        for nproc, ran in ((ok, True), (bad, False)):
            e = peak(code, text, nproc)
            bounded = not e["fits"] and e.get("length_bound_gib", 0) > 0
            verdict = "fits" if e["fits"] else "may not fit" if bounded else "OOM"
            total += 1
            confident += not bounded
            right += bounded or e["fits"] == ran
            tokens = e["details"].get("verl_packed_fit_tokens")
            print(f"{name:42} {nproc:>5} {'√' if ran else '×':>4} {e['peak_gib']:>9.1f} {e['peak_moment']:>16} "
                  f"{verdict:>12} {'' if tokens is None else int(tokens):>8}")
    print(f"verdicts not contradicting the published bisection: {right}/{total} ({confident} confident)")


if __name__ == "__main__":
    main(sys.argv[1:])
