"""Builders (no tests here): a hand-made Report shaped like the demo run (Llama-2-7B full fine-tune, bf16, micro-batch 4,
cutoff_len 2048, one A100 80GB, OOM at the optimizer step), for tests that must not depend on the
crash-log parser, the config reader or the rule engine."""
from __future__ import annotations

from dataclasses import replace

from oomdoctor.facts import (
    Change, CrashEvent, CrashReport, Estimate, Hardware, ModelShape, Plan, Report, Skipped, Source, Step,
    TrainingSetup,
)


def _est(weights, grads, optim, acts, logits, cap=79.1):
    comps = {"weights": weights, "gradients": grads, "optimizer": optim, "activations": acts,
             "logits": logits, "overhead": 1.3}
    alloc = weights + grads + optim + acts + logits
    return Estimate(components=comps, allocated_gib=alloc, peak_gib=alloc + 1.3, capacity_gib=cap)


def hand_report() -> Report:
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
        Step(rule="OOM001", slug="halve-micro-batch", title="Halve the micro-batch, double accumulation",
             changes=(Change("micro_batch", 4, 2), Change("grad_accum", 4, 8)), setup=s1, estimate=e1,
             saved_gib=7.1, costs=("throughput",), why="Activations scale with the micro-batch."),
        Step(rule="OOM004", slug="switch-to-lora", title="Switch to LoRA", changes=(Change("method", "full", "lora"),),
             setup=s2, estimate=e2, saved_gib=89.3, costs=("quality",), applicability="needs-consent",
             why="LoRA trains small adapters only."),
    )
    plan = Plan(steps=steps, skipped=(Skipped("OOM003", "would not lower the estimate"),), fits=True)
    patch = ("--- a/train.yaml\n+++ b/train.yaml\n@@ -5 +5 @@\n-finetuning_type: full\n+finetuning_type: lora\n")
    return Report(inputs=("logs/train.log", cfg), setup=setup, shape=shape, hardware=hw, crash=crash,
                  estimate=est, plan=plan, patch=patch, env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})


def hand_report_no_crash() -> Report:
    return replace(hand_report(), crash=None, inputs=("train.yaml",))
