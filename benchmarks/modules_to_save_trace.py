"""LoRA with PEFT's modules_to_save (a trainable copy of embed_tokens and lm_head): the estimate against a
fake-tensor trace.

    python benchmarks/modules_to_save_trace.py          # about a minute on two busy cores

ms-swift's new_special_tokens example (calibration row fr-19) trains `--modules_to_save embed_tokens lm_head`
beside LoRA on Qwen2.5-7B. The tracer (oomdoctor/simulate/tracer.py) has no modules_to_save of its own, and
casts every trainable parameter to the regime's trainable dtype; PEFT keeps the copies in the model's dtype
(peft tuners_utils.py `cast_adapter_dtype` upcasts the adapters of BaseTunerLayer modules only, and
ModulesToSaveWrapper is not one), and ms-swift casts only fp16 trainables to fp32 (swift/llm/train/tuner.py at
2ea885eba, "Convert trainable parameters from fp16 to fp32"). This traces Qwen2.5-7B at its real width, cut
to two decoder layers, with those copies in bf16, one GPU, HF loss, checkpointing on, and prints the traced and
estimated allocated peaks (docs/estimates.md section 21). Nothing in oomdoctor/ changes.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from oomdoctor.facts import GIB, Hardware, TrainingSetup  # noqa: E402

MODEL = "Qwen/Qwen2.5-7B"
LAYERS = 2
CELLS = ((1, 512), (8, 2048))       # micro-batch x sequence length


def _apply_keeping_copies(tracer):
    """The tracer's LoRA, with PEFT's modules_to_save copies left in the model's dtype."""
    def apply(model, setup, cfg, rg):
        import peft

        lora = peft.LoraConfig(r=setup.lora_rank, lora_alpha=2 * setup.lora_rank,
                               target_modules=tracer._lora_targets(setup, model),
                               lora_dropout=setup.mechanisms.lora_dropout, task_type="CAUSAL_LM",
                               modules_to_save=list(setup.mechanisms.modules_to_save) or None)
        model = peft.get_peft_model(model, lora)
        want = tracer._TORCH_DTYPES[rg.trainable_dtype]
        for name, p in model.named_parameters():
            if p.requires_grad and p.dtype != want and "modules_to_save" not in name:
                p.data = p.data.to(want)   # still on meta
        return model
    return apply


def main() -> None:
    import oomdoctor.simulate.tracer as tracer
    from oomdoctor.archs import shape_from_config
    from oomdoctor.memory import estimate
    from oomdoctor.memory.estimate import CUBLAS_WORKSPACE_GIB
    from oomdoctor.models import _catalog
    from oomdoctor.simulate import trace_step

    tracer._apply_method = _apply_keeping_copies(tracer)   # type: ignore[attr-defined]
    cfg = dict(_catalog()[0][MODEL.lower()].data["config"])
    cfg["num_hidden_layers"] = LAYERS
    shape = shape_from_config(cfg, MODEL, None)
    print(f"{MODEL} cut to {LAYERS} layers, LoRA r16 all-linear, bf16, checkpointing; allocated GiB")
    print(f"{'modules_to_save':<22} {'batch':>8} {'traced':>8} {'estimate':>9} {'error':>7}  moment")
    for saved in ("", "embed_tokens,lm_head"):
        for micro_batch, seq in CELLS:
            extras = {"lora_dropout": 0.05, **({"modules_to_save": saved} if saved else {})}
            setup = TrainingSetup(framework="hf", method="lora", lora_rank=16, lora_targets=("all",),
                                  micro_batch=micro_batch, seq_len=seq, precision="bf16", load_dtype="bf16",
                                  grad_ckpt=True, attention="sdpa", extras=extras)
            traced = trace_step(setup, shape, hf_config=cfg)
            est = estimate(setup, shape, Hardware(gpu="trace", gpu_gib=1e6))
            est_bytes = (est.allocated_gib - CUBLAS_WORKSPACE_GIB) * GIB
            err = (est_bytes - traced.peak_bytes) / traced.peak_bytes
            print(f"{saved or '-':<22} {micro_batch:>3}x{seq:<4} {traced.peak_bytes / GIB:8.3f} {est_bytes / GIB:9.3f} "
                  f"{err:+7.1%}  {traced.peak_phase} / {est.peak_moment}")


if __name__ == "__main__":
    main()
