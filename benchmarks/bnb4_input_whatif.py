"""What-if: 4-bit bitsandbytes keeps no input for backward (bitsandbytes >= 0.43.2).

    python benchmarks/bnb4_input_whatif.py

The memory model counts the input of every bitsandbytes linear as kept for backward, outside the saved-tensor
hooks of non-reentrant checkpointing (`memory/activations.py` `_hook_escape`, `_save_bnb_inputs`): that is
MatMul4Bit up to bitsandbytes 0.43.1 (`ctx.tensors = (A, B)`). From 0.43.2 (9e753741, 2024-07-16, "fix QLoRA mem
bug: delete useless buffered activation") MatMul4Bit keeps `(None, B)`; MatMul8bitLt still keeps A. This scores
every calibration row with both terms dropped for 4-bit runs and prints the rows that move (docs/estimates.md
section 18). Nothing in oomdoctor/ changes. Rows that state a bitsandbytes release of 0.43.2 or later already drop
them (`activations.bnb_keeps_input`, section 36b), so they do not move here.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402

from oomdoctor.memory import activations  # noqa: E402


def _without_4bit_inputs(layer_bytes):
    def wrapped(setup, shape, rg, seq, **kw):
        if setup.quant_bits != 4:
            return layer_bytes(setup, shape, rg, seq, **kw)
        kept = activations._save_bnb_inputs, activations._hook_escape
        activations._save_bnb_inputs = lambda *a, **k: None
        activations._hook_escape = lambda *a, **k: 0.0
        try:
            return layer_bytes(setup, shape, rg, seq, **kw)
        finally:
            activations._save_bnb_inputs, activations._hook_escape = kept
    return wrapped


def main() -> None:
    before = accuracy.run(verbose=False, subset="all")
    est_module = sys.modules["oomdoctor.memory.estimate"]
    est_module.layer_bytes = _without_4bit_inputs(est_module.layer_bytes)   # type: ignore[attr-defined]
    after = accuracy.run(verbose=False, subset="all")
    was = {row[0]: row[4] for row in before["rows"]}
    print("row      kept (today)  not kept (bnb >= 0.43.2)")
    for row in after["rows"]:
        if abs(row[4] - was[row[0]]) > 0.001:
            print(f"{row[0]:<8} {was[row[0]] * 100:+12.1f}% {row[4] * 100:+12.1f}%")
    print(f"all rows: median {before['median'] * 100:.1f}% p90 {before['p90'] * 100:.1f}% -> "
          f"median {after['median'] * 100:.1f}% p90 {after['p90'] * 100:.1f}%")


if __name__ == "__main__":
    main()
