"""Shell scripts holding an HF command line: flags are edited in place, nothing else moves."""
import subprocess

from oomdoctor.facts import KeyEdit
from oomdoctor.patch import build_patch

SCRIPT = """#!/bin/bash
# launch on two GPUs
torchrun --nproc_per_node 2 train.py \\
    --model_name_or_path meta-llama/Llama-2-7b-hf \\
    --per_device_train_batch_size 8 \\
    --gradient_accumulation_steps=2 \\
    --bf16 True \\
    --output_dir "out dir"   # comment stays
"""


def test_existing_flags_change_only_their_values(tmp_path):
    (tmp_path / "run.sh").write_text(SCRIPT)
    patch = build_patch([KeyEdit("run.sh", ("per_device_train_batch_size",), 4),
                         KeyEdit("run.sh", ("gradient_accumulation_steps",), 4)], cwd=str(tmp_path))
    new = patch.files[0].new_text
    assert "--per_device_train_batch_size 4 \\" in new
    assert "--gradient_accumulation_steps=4 \\" in new
    changed = [(a, b) for a, b in zip(SCRIPT.splitlines(), new.splitlines()) if a != b]
    assert len(changed) == 2


def test_absent_flag_is_added_after_its_related_flag(tmp_path):
    (tmp_path / "run.sh").write_text(SCRIPT)
    patch = build_patch([KeyEdit("run.sh", ("gradient_checkpointing",), True,
                                 after_key="per_device_train_batch_size")], cwd=str(tmp_path))
    assert "--per_device_train_batch_size 8 --gradient_checkpointing true \\" in patch.files[0].new_text


def test_shell_diff_applies_with_git(tmp_path):
    (tmp_path / "run.sh").write_text(SCRIPT)
    patch = build_patch([KeyEdit("run.sh", ("per_device_train_batch_size",), 2)], cwd=str(tmp_path))
    (tmp_path / "p.diff").write_text(patch.diff)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert "--per_device_train_batch_size 2 \\" in (tmp_path / "run.sh").read_text()
