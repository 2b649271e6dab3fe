"""What several test modules share: paths, hand-made reports, the demo in a scratch folder, driving the CLI
and the app. Test modules import from here (never from each other); conftest.py registers the fixtures."""
from __future__ import annotations

import io
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from oomdoctor.facts import (
    Change,
    CrashEvent,
    CrashReport,
    Estimate,
    Hardware,
    ModelShape,
    Plan,
    Report,
    Skipped,
    Source,
    Step,
    Text,
    TrainingSetup,
    msg,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
DEMO_DIR = ROOT / "oomdoctor" / "data" / "demo"


# ---------------------------------------------------------------- files

def read_yaml(path: Path):
    """A YAML data file of the tests, read with libyaml's safe loader where PyYAML has one (the same values as
    yaml.safe_load, ~8x faster): the manifests the parametrized tests are built from are read when the module
    is collected, by every xdist worker and every CPython session."""
    import yaml

    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def write_exact(path: Path, text: str) -> Path:
    """Write `text` byte for byte (no newline translation; Path.write_text(newline=) is Python 3.10+)."""
    path.write_bytes(text.encode("utf-8"))
    return path


# ---------------------------------------------------------------- runs on the demo and the fixtures

# Inputs as a user gives them on the command line: files, and --gpu where no log names the card.
FIXTURE_INPUTS = [
    ("oomdoctor/data/demo/train.log", "oomdoctor/data/demo/train.yaml"),
    ("tests/data/advise/lora_a100_40g.log", "tests/data/advise/lora_a100_40g.yaml"),
    ("tests/data/advise/fa2_t4.yaml", "--gpu", "T4"),
    ("tests/data/configs/hf_args.json", "--gpu", "16GiB"),
    ("tests/data/configs/train_hf.sh", "--gpu", "24GiB"),
    ("tests/data/configs/trl_sft.yaml", "--gpu", "80GiB"),
    ("tests/data/configs/axolotl_qlora.yml", "--gpu", "8GiB"),
    ("tests/data/logs/f12_deepspeed_sigkill.log",),
    ("tests/data/logs/p01_interleaved_ranks.log", "tests/data/advise/lora_a100_40g.yaml"),
    ("tests/data/logs/f01_five_other_processes.log", "tests/data/configs/trl_sft.yaml"),
    ("tests/data/logs/e_no_oom.log",),
]


def options_of(args: tuple[str, ...]):
    """pipeline.Options for FIXTURE_INPUTS-style arguments (paths relative to the repository)."""
    from oomdoctor.pipeline import Options

    gpu = args[args.index("--gpu") + 1] if "--gpu" in args else None
    files = tuple(str(ROOT / a) for a in args if a not in ("--gpu", gpu))
    return Options(files=files, gpu=gpu, cwd=str(ROOT))


def session_of(args: tuple[str, ...], lang: str = "en"):
    from oomdoctor.session import open_session

    return open_session(options_of(args), lang)


def report_of(args: tuple[str, ...]):
    return session_of(args).report


# ---------------------------------------------------------------- the CLI

def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """oomdoctor's exit code, stdout and stderr for `argv`."""
    from oomdoctor.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- the demo in a scratch folder

@pytest.fixture
def demo(tmp_path, monkeypatch):
    """The demo config and log copied into a scratch folder, and the report the CLI would build there."""
    from oomdoctor.pipeline import Options, build_report

    for name in ("train.yaml", "train.log"):
        shutil.copy(DEMO_DIR / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    opts = Options(files=("train.yaml", "train.log"), cwd=str(tmp_path))
    report = build_report(opts)
    assert report.plan.steps, "the demo must need a plan"
    return report, opts, tmp_path


# ---------------------------------------------------------------- the app

def screen_text(app) -> str:
    """What the terminal shows right now, as plain text."""
    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


async def settle(pilot) -> None:
    """Let a key's message start its worker, the worker finish, and the screen redraw."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# ---------------------------------------------------------------- a hand-made report

def _est(weights, grads, optim, acts, logits, cap=79.1):
    comps = {"weights": weights, "gradients": grads, "optimizer": optim, "activations": acts,
             "logits": logits, "overhead": 1.3}
    alloc = weights + grads + optim + acts + logits
    return Estimate(components=comps, allocated_gib=alloc, peak_gib=alloc + 1.3, capacity_gib=cap)


def hand_report() -> Report:
    """A Report shaped like the demo run (Llama-2-7B full fine-tune, bf16, micro-batch 4, cutoff_len 2048, one
    A100 80GB, OOM at the optimizer step), built by hand for tests that must not depend on the crash-log
    parser, the config reader or the rule engine."""
    cfg = "train.yaml"
    src = {"micro_batch": Source(cfg, "per_device_train_batch_size", 14),
           "grad_accum": Source(cfg, "gradient_accumulation_steps", 15),
           "seq_len": Source(cfg, "cutoff_len", 9),
           "method": Source(cfg, "finetuning_type", 5)}
    setup = TrainingSetup(config_file=cfg, model="meta-llama/Llama-2-7b-hf", method="full", micro_batch=4,
                          grad_accum=4, seq_len=2048, precision="bf16", optimizer="adamw_torch",
                          grad_ckpt=True, sources=src, defaults_of="LLaMA-Factory 0.9.4")
    shape = ModelShape(name="Llama-2-7b-hf", params_total=6_738_415_616)
    hw = Hardware(gpu="NVIDIA A100-SXM4-80GB", gpu_gib=79.1, n_gpus=1, source="log")
    crash = CrashReport(file="logs/train.log", events=(CrashEvent(
        kind="cuda_oom", line=412, tried_gib=3.44, capacity_gib=79.15, free_gib=1.87, allocated_gib=75.63,
        reserved_unallocated_gib=0.61, device=0, phase="optimizer"),), step=0)
    est = _est(25.1, 25.1, 50.2, 9.4, 4.9)
    s1 = setup.with_changes(micro_batch=2, grad_accum=8)
    e1 = _est(25.1, 25.1, 50.2, 4.7, 2.5)
    s2 = s1.with_changes(method="lora")
    e2 = _est(12.6, 0.1, 0.2, 4.7, 2.5)
    steps = (
        Step(rule="OOM001", slug="halve-micro-batch",
             title=Text("Halve the micro-batch, double accumulation", "微批大小减半，梯度累积加倍"),
             changes=(Change("micro_batch", 4, 2), Change("grad_accum", 4, 8)), setup=s1, estimate=e1,
             saved_gib=7.1, costs=("throughput",),
             why=Text("Activations scale with the micro-batch.", "激活值与微批大小成正比。")),
        Step(rule="OOM004", slug="switch-to-lora", title=Text("Switch to LoRA", "改用 LoRA"),
             changes=(Change("method", "full", "lora"),), setup=s2, estimate=e2, saved_gib=89.3,
             costs=("quality",), applicability="needs-consent",
             why=Text("LoRA trains small adapters only.", "LoRA 只训练小的适配器。")),
    )
    plan = Plan(steps=steps, skipped=(Skipped("OOM003", msg("plan.skip.no_change")),), fits=True)
    patch = ("--- a/train.yaml\n+++ b/train.yaml\n@@ -5 +5 @@\n-finetuning_type: full\n+finetuning_type: lora\n")
    return Report(inputs=("logs/train.log", cfg), setup=setup, shape=shape, hardware=hw, crash=crash,
                  estimate=est, plan=plan, patch=patch, env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})


def hand_report_no_crash() -> Report:
    return replace(hand_report(), crash=None, inputs=("train.yaml",))
