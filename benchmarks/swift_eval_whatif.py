"""What-if: every ms-swift example run that evaluates, scored with its evaluation pass.

    python benchmarks/swift_eval_whatif.py

The converter (`benchmarks/accuracy.py` `convert`) gives a calibration row an evaluation pass only when the row
carries `eval_batch`; the `fresh-2026-12` rows (ms-swift's `examples/train/` scripts) carry none, although most
of their runs evaluated. What ms-swift did at the commit that wrote each figure (docs/estimates.md section 36a):

- a validation split is cut whenever `split_dataset_ratio` > 0 or a `val_dataset` is given, and evaluation then
  follows the save strategy (`swift/llm/argument/train_args.py` `Seq2SeqTrainingOverrideArguments.__post_init__`
  at b40f31df7); `split_dataset_ratio` defaulted to 0.01 until 5df8180fd (2025-07-03), 0 after
  (`swift/llm/argument/base_args/data_args.py:34`), where the scripts that kept evaluating say
  `--split_dataset_ratio 0.01`;
- `per_device_eval_batch_size` defaults to 1 (`train_args.py` at b40f31df7), or the script's own figure.

EVAL below is that reading, row by row: the evaluation batch of each row whose run evaluated. Rows left out: fr-08
(the figure's commit is a Megatron benchmark script), fr-17 and fr-31 (written after 5df8180fd without a split).
Printed: the totals and every row that moves. Nothing in oomdoctor/ changes.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import accuracy  # noqa: E402

# row -> per_device_eval_batch_size of its run (the script's flag or ms-swift's default 1)
EVAL = {
    "fr-01": 1, "fr-02": 1, "fr-03": 1, "fr-04": 1, "fr-05": 1, "fr-06": 1, "fr-07": 1, "fr-09": 1, "fr-10": 1,
    "fr-11": 1, "fr-12": 1, "fr-13": 1, "fr-14": 1, "fr-15": 1, "fr-16": 1, "fr-18": 1, "fr-19": 16, "fr-20": 1,
    "fr-21": 1, "fr-22": 1, "fr-23": 8, "fr-24": 8, "fr-25": 1, "fr-26": 1, "fr-27": 4, "fr-28": 4, "fr-29": 1,
    "fr-30": 1, "fr-32": 1, "fr-33": 1, "fr-34": 1, "fr-35": 1, "fr-36": 1, "fr-37": 1, "fr-38": 1, "fr-39": 1,
    "fr-40": 1, "fr-41": 1,
}


def _with_eval(convert):
    def convert_evaluating(case: dict, ref: dict):
        if case.get("id") in EVAL and not case.get("eval_batch"):
            case = dict(case, eval_batch=EVAL[case["id"]])
        return convert(case, ref)
    return convert_evaluating


def main() -> None:
    before = accuracy.run(verbose=False)
    accuracy.convert = _with_eval(accuracy.convert)
    after = accuracy.run(verbose=False)
    print(f"all rows ({len(before['rows'])}): median {before['median']:.1%}, p90 {before['p90']:.1%}"
          f" -> with the evaluation passes: median {after['median']:.1%}, p90 {after['p90']:.1%}")
    was = {r[0]: r[4] for r in before["rows"]}
    for cid, _kind, meas, pred, err in after["rows"]:
        if abs(err - was.get(cid, err)) > 5e-4:
            print(f"{cid:8} measured {meas:6.2f}  predicted {pred:6.2f}  error {was[cid]:+7.1%} -> {err:+7.1%}")


if __name__ == "__main__":
    main()
