"""Mixture-of-experts layers as transformers runs them: the estimate against a fake-tensor trace.

    python benchmarks/moe_trace.py [--layers 2] [--only SUBSTRING]      (also: python benchmarks/grid.py --moe)

Each cell is a published MoE model's config (catalog, `oomdoctor/data/models.yaml`) at its real width and expert
count, cut to a few decoder layers (every one of them a MoE layer) so a trace takes seconds, traced for two
HF-Trainer-style steps on fake tensors (`oomdoctor.simulate`) and compared with `estimate(...).allocated_gib`
minus the cuBLAS workspace; activations side by side at the traced peak. transformers picks its default experts
implementation (`grouped_mm` since 5.x: modeling_utils.get_correct_experts_implementation).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from oomdoctor.facts import GIB, Hardware, TrainingSetup  # noqa: E402

HW = Hardware(gpu="grid", gpu_gib=1e6)
BOUND = 0.05
_HF = dict(framework="hf", precision="bf16", load_dtype="bf16")
_LORA = dict(method="lora", lora_rank=16, lora_targets=("all",))
_FULL = dict(method="full", optimizer="adamw_torch")
MODELS = ("mistralai/Mixtral-8x7B-v0.1", "Qwen/Qwen1.5-MoE-A2.7B", "Qwen/Qwen3-30B-A3B", "openai/gpt-oss-20b",
          "meta-llama/Llama-4-Scout-17B-16E", "deepseek-ai/DeepSeek-V2-Lite", "zai-org/GLM-4.5-Air",
          "zai-org/GLM-4.7-Flash")
# PEFT 0.21's "all-linear" wraps Llama4Router (an nn.Linear whose forward returns a tuple) and then fails on the
# tuple (peft/tuners/lora/layer.py Linear.forward `result.dtype`): attention and the shared expert instead, as
# axolotl's Scout examples target them (gate/up/down_proj are only the shared expert's in a MoE layer)
TARGETS = {"meta-llama/Llama-4-Scout-17B-16E": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                "down_proj")}
# model-specific cells beside SETUPS: gpt-oss's eager attention with a sink column keeps heads x (seq + 1) per
# token per layer, so a longer unchecked sequence checks that term's growth (docs/estimates.md section 22)
EXTRA = {"openai/gpt-oss-20b": (dict(_HF, **_LORA, grad_ckpt=False, micro_batch=1, seq_len=4096),)}
SETUPS = (dict(_HF, **_LORA, grad_ckpt=False, micro_batch=1, seq_len=2048),
          dict(_HF, **_LORA, grad_ckpt=True, micro_batch=1, seq_len=4096),
          dict(_HF, **_FULL, grad_ckpt=False, micro_batch=1, seq_len=2048),
          dict(_HF, **_FULL, grad_ckpt=True, micro_batch=2, seq_len=2048))


def cut(config: dict, layers: int) -> dict:
    """The config with `layers` decoder layers, every one a MoE layer (the per-layer lists cut to match)."""
    cfg = dict(config)
    cfg["num_hidden_layers"] = layers
    for key, value in list(cfg.items()):     # YAML 1.1 reads 1e-05 as a string; transformers wants a float
        if key.endswith("_eps") and isinstance(value, (int, str)):
            cfg[key] = float(value)
    if "first_k_dense_replace" in cfg:
        cfg["first_k_dense_replace"] = 0
        # transformers 5.24 GLM-4.7-Flash reads its own per-layer list, default ["dense"] + ["sparse"] * (L - 1)
        # (models/glm4_moe_lite/configuration_glm4_moe_lite.py): every layer a MoE layer here
        cfg["mlp_layer_types"] = ["sparse"] * layers
    for key in ("decoder_sparse_step", "interleave_moe_layer_step", "moe_layer_freq"):
        if key in cfg:
            cfg[key] = 1
    if isinstance(cfg.get("moe_layers"), list):
        cfg["moe_layers"] = list(range(layers))
    if isinstance(cfg.get("mlp_only_layers"), list):
        cfg["mlp_only_layers"] = []
    for key in ("layer_types", "no_rope_layers"):
        if isinstance(cfg.get(key), list):
            cfg[key] = list(cfg[key][:layers])
    return cfg


def cells(layers: int, only: str = "") -> list:
    from oomdoctor.archs import shape_from_config
    from oomdoctor.models import _catalog

    out = []
    for model_id in MODELS:
        if only and only.lower() not in model_id.lower():
            continue
        cfg = cut(dict(_catalog()[0][model_id.lower()].data["config"]), layers)
        shape = shape_from_config(cfg, model_id, None)
        for values in SETUPS + EXTRA.get(model_id, ()):
            if values["method"] == "lora" and model_id in TARGETS:
                values = dict(values, lora_targets=TARGETS[model_id])
            setup = TrainingSetup(**values)
            name = (f"{model_id.split('/')[-1]} L{layers} {setup.method}{' ckpt' if setup.grad_ckpt else ''} "
                    f"{setup.micro_batch}x{setup.seq_len}")
            out.append((name, shape, setup, cfg))
    return out


def measure(shape, setup, cfg) -> dict:
    from oomdoctor.memory import estimate, trainable_params
    from oomdoctor.memory.estimate import CUBLAS_WORKSPACE_GIB
    from oomdoctor.simulate import trace_step

    traced = trace_step(setup, shape, hf_config=cfg)
    est = estimate(setup, shape, HW)
    return dict(traced=traced.peak_bytes / GIB, est=est.allocated_gib - CUBLAS_WORKSPACE_GIB,
                phase=traced.peak_phase, moment=est.peak_moment,
                act_traced=traced.categories.get("activations", 0) / GIB,
                act_est=est.components.get("activations", 0.0),
                weights_traced=traced.categories.get("weights", 0) / GIB, weights_est=est.components.get("weights", 0.0),
                trainable_traced=traced.params_trainable, trainable_est=trainable_params(setup, shape))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    worst, errors = 0.0, []
    for name, shape, setup, cfg in cells(args.layers, args.only):
        started = time.perf_counter()
        try:
            r = measure(shape, setup, cfg)
        except Exception as err:   # noqa: BLE001 - a family the tracer cannot run is reported, not fatal
            print(f"   n/a   {name}: {type(err).__name__}: {str(err).splitlines()[0][:160]}", flush=True)
            continue
        error = (r["est"] - r["traced"]) / r["traced"]
        worst = max(worst, abs(error))
        errors.append(error)
        print(f"{error:+7.1%}  traced {r['traced']:7.2f}  est {r['est']:7.2f} GiB  act {r['act_traced']:6.2f} / "
              f"{r['act_est']:6.2f}  weights {r['weights_traced']:6.2f} / {r['weights_est']:6.2f}  "
              f"{r['phase']:16} {r['moment']:16} {name}  ({time.perf_counter() - started:.0f} s)", flush=True)
    over = sum(abs(e) > BOUND for e in errors)
    print(f"{len(errors)} cells: worst |error| {worst:.1%}, {over} above {BOUND:.0%}")
    return 0 if not over else 1


if __name__ == "__main__":
    raise SystemExit(main())
