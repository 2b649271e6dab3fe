"""What-if: DeepSpeed's optimizer step as DeepSpeed 0.16 and torch's AdamW run it.

    python benchmarks/ds_step_whatif.py

The memory model holds DeepSpeed's fp32 gradient partition whole at the step (4 bytes per trainable parameter
over N, `memory/estimate.py` `_model_states` step_grads) and no optimizer temporaries under DeepSpeed. What the
code does (DeepSpeed 38327e07f, docs/estimates.md sections 17 and 21):

- ZeRO-3 steps one sub-group at a time (`runtime/zero/stage3.py` step -> `_prepare_fp32_grad_for_sub_group`:
  `self.flatten(...)` in half precision, then `.to(fp32)`; `_release_sub_group` drops it); sub-groups are cut at
  `sub_group_size` partitioned elements (`_create_fp16_sub_groups`, default 1e9, ms-swift's and Qwen's configs
  1e9). ZeRO-1/2 step one parameter group at a time the same way (`stage_1_and_2.py` step, "Step 4:- get rid of
  the fp32 gradients").
- Without an "optimizer" block in the DeepSpeed config the HF Trainer builds its own optimizer and hands it to
  DeepSpeed (transformers `integrations/deepspeed.py` deepspeed_optim_sched: `trainer.create_optimizer()`):
  `adamw_torch` before transformers defaulted to the fused kernel on torch >= 2.8, whose foreach step makes one
  fp32 temporary of the sub-group (`torch/optim/adamw.py` `_multi_tensor_adamw`: `_foreach_sqrt(exp_avg_sqs)`).
  ms-swift's `swift/config/zero{2,3}.json`, LLaMA-Factory's and axolotl's configs have no optimizer block;
  Qwen's `finetune/ds_config_zero3.json` names AdamW, which DeepSpeed runs as its fused kernel (no temporary).

So the step holds, beside the states: per sub-group (ZeRO-3) or parameter group (ZeRO-1/2, the decay group ~ all
parameters), 2 + 4 bytes (half flattened copy and its fp32 cast) and then 4 + 4 (fp32 gradients and the foreach
temporary) where the HF Trainer's torch AdamW runs. This scores every calibration row with that step and prints
the rows that move. Nothing in oomdoctor/ changes.
"""
from __future__ import annotations

import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

import oomdoctor.memory  # noqa: E402,F401

est_module = sys.modules["oomdoctor.memory.estimate"]

SUB_GROUP = 1e9          # deepspeed/runtime/zero/config.py sub_group_size default; ms-swift's and Qwen's configs
FUSED_DS_OPTIMIZER = ("qwen finetune",)   # frameworks whose DeepSpeed config names an optimizer (fused kernel)


def _step_as_run(zero_shard):
    def wrapped(setup, shape, hw, counts, ms, T):
        sharded, notes = zero_shard(setup, shape, hw, counts, ms, T)
        if not sharded.step_grads or setup.extras.get("not_deepspeed"):
            return sharded, notes
        n = max(1, setup.n_gpus)
        group = T / n if setup.zero_stage < 3 else min(T / n, SUB_GROUP)
        torch_adamw = not setup.extras.get("ds_optimizer_block") and "fused" not in (setup.optimizer or "")
        step = group * (8.0 if torch_adamw else 6.0)
        return dataclasses.replace(sharded, step_grads=step, temp=0.0), notes
    return wrapped


def _with_config_optimizer(convert):
    def wrapped(case, ref):
        out = convert(case, ref)
        fw = str(case.get("framework") or "").lower()
        if not isinstance(out, str) and any(f in fw for f in FUSED_DS_OPTIMIZER):
            out[0].extras["ds_optimizer_block"] = True
        if not isinstance(out, str) and "colossalai" in fw:
            out[0].extras["not_deepspeed"] = True     # LowLevelZero: its own step (section 19), left as it is
        return out
    return wrapped


def main() -> None:
    before = accuracy.run(verbose=False, subset="all")
    est_module._zero_shard = _step_as_run(est_module._zero_shard)   # type: ignore[attr-defined]
    accuracy.convert = _with_config_optimizer(accuracy.convert)
    after = accuracy.run(verbose=False, subset="all")
    was = {row[0]: row[4] for row in before["rows"]}
    print("row      today     step as run")
    for row in after["rows"]:
        if abs(row[4] - was[row[0]]) > 0.001:
            print(f"{row[0]:<8} {was[row[0]] * 100:+7.1f}% {row[4] * 100:+9.1f}%")
    print(f"all rows: median {before['median'] * 100:.1f}% p90 {before['p90'] * 100:.1f}% -> "
          f"median {after['median'] * 100:.1f}% p90 {after['p90'] * 100:.1f}%")


if __name__ == "__main__":
    main()
