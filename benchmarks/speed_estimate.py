"""Micro-benchmark: one oomdoctor.memory.estimate call must take well under a millisecond."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from oomdoctor.facts import Hardware, ModelShape, TrainingSetup  # noqa: E402
from oomdoctor.memory import estimate  # noqa: E402

shape = ModelShape("meta-llama/Llama-2-7b-hf")
hw = Hardware(gpu_gib=80)
setups = [TrainingSetup(method=m, zero_stage=z, n_gpus=8, micro_batch=b)
          for m in ("full", "lora", "qlora") for z in (0, 2, 3) for b in (1, 4)]
for s in setups:
    estimate(s, shape, hw)
n = 0
t = time.perf_counter()
while time.perf_counter() - t < 1.0:
    for s in setups:
        estimate(s, shape, hw)
        n += 1
print(f"{(time.perf_counter() - t) / n * 1e6:.1f} us per estimate ({n} calls)")
