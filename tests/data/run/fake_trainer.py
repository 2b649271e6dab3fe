"""A stand-in for a fine-tuning run, for `oomdoctor run` tests: prints what a HF Trainer run prints (a
LLaMA-Factory-style header, tqdm bars redrawn with \r, loss dicts on stdout, warnings on stderr) and ends
the way it is told:

    python fake_trainer.py ok|oom|kill|hang|ignore-term|spawn [steps] [step_seconds] [--training flags ...]

ok: exits 0 after the Trainer's summary line;
oom: the CUDA OOM traceback on stderr, exit 1; kill: SIGKILL to itself, as
the kernel's OOM killer does (the host ran out of RAM); hang: sleeps until signalled; ignore-term: ignores
SIGTERM and SIGHUP, sleeps; spawn: starts a grandchild in its group that sleeps, then hangs.

When FAKE_NVML_STATE names a file, each step writes there the GPU memory this run "uses" (JSON: pid and MiB
per GPU), which tests/data/run/fakenvml/pynvml.py reports as NVML would.
"""
import json
import os
import signal
import subprocess
import sys
import time

# leading words only: training flags after them (--model_name_or_path ...) are for oomdoctor's config reader
words = []
for word in sys.argv[1:]:
    if word.startswith("--"):
        break
    words.append(word)
mode = words[0] if words else "ok"
steps = int(words[1]) if len(words) > 1 else 5
pause = float(words[2]) if len(words) > 2 else 0.05
state = os.environ.get("FAKE_NVML_STATE")


def use(mib_per_gpu):
    if state:
        tmp = state + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({"pid": os.getpid(), "used_mib": mib_per_gpu}, fh)
        os.replace(tmp, state)


if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

out = sys.stdout
if os.environ.get("PYTORCH_CUDA_ALLOC_CONF"):
    out.write(f"PYTORCH_CUDA_ALLOC_CONF={os.environ['PYTORCH_CUDA_ALLOC_CONF']}\n")
out.write("[INFO|trainer.py:2314] 2024-10-01 10:00:00,000 >> ***** Running training *****\n")
out.write("[INFO|trainer.py:2315] 2024-10-01 10:00:00,000 >>   Num examples = 1,000\n")
out.write(f"[INFO|trainer.py:2320] 2024-10-01 10:00:00,000 >>   Total optimization steps = {steps}\n")
out.flush()
sys.stderr.write("WARNING: `use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.\n")
sys.stderr.flush()
for i in range(1, steps + 1):
    use([2000 + 1500 * i, 1800 + 1400 * i])
    bar = "#" * (i * 20 // steps)
    out.write(f"\r {i * 100 // steps:3d}%|{bar:<20}| {i}/{steps} [00:{i:02d}<00:{steps - i:02d},  1.00s/it]")
    out.flush()
    if i % 2 == 0:
        out.write(f"\n{{'loss': {2.0 - i * 0.01:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-05, 'epoch': {i / steps:.2f}}}\n")
        out.flush()
    time.sleep(pause)
out.write("\n")
out.flush()

if mode == "ok":
    out.write("{'train_runtime': 12.5, 'train_samples_per_second': 8.0, 'train_loss': 1.95, 'epoch': 1.0}\n")
    out.flush()
    sys.exit(0)
if mode == "oom":
    sys.stderr.write("""Traceback (most recent call last):
  File "/workspace/train.py", line 88, in <module>
    trainer.train()
  File "/usr/local/lib/python3.10/dist-packages/transformers/trainer.py", line 3349, in training_step
    self.accelerator.backward(loss, **kwargs)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.02 GiB is free. Process 48213 has 1.50 GiB memory in use. Including non-PyTorch memory, this process has 21.10 GiB memory in use. Of the allocated memory 18.20 GiB is allocated by PyTorch, and 2.44 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
""")
    sys.stderr.flush()
    sys.exit(1)
if mode == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "spawn":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    out.write(f"spawned {child.pid} group {os.getpgrp()}\n")
    out.flush()
while True:                  # hang, ignore-term, spawn: wait for a signal
    time.sleep(0.1)
