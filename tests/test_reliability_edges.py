"""Edges that were exit 4 or a silent wrong answer: numbers too long to be numbers, --export through a
symlink or over a read-only file, a rule's env script setting PATH or LD_PRELOAD, a YAML flow mapping
reported as JSON, DeepSpeed's zero_optimization given as a list. Each test failed before its fix.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from oomdoctor.cli import DEMO_DIR, main

DIGITS_331 = "9" * 331


@pytest.mark.parametrize("line", [
    (f"[12345.678] Out of memory: Killed process {DIGITS_331} (python) total-vm:{DIGITS_331}kB, "
     f"anon-rss:{DIGITS_331}kB, file-rss:0kB, shmem-rss:0kB"),
    f"host:1:2 [0] NCCL WARN Failed to CUDA calloc {DIGITS_331} bytes",
], ids=["oom_killer", "nccl_calloc"])
def test_a_331_digit_number_in_a_log_line_is_not_an_internal_error(tmp_path, capsys, line):
    log = tmp_path / "run.log"
    log.write_text("step 1\n" + line + "\n", encoding="utf-8")
    code = main([str(log), "--plain"])
    err = capsys.readouterr().err
    assert code in (0, 1) and "internal error" not in err, err


@pytest.mark.parametrize("number", ["0x" + "f" * 4400, "0b" + "1" * 15000], ids=["hex", "binary"])
def test_a_yaml_integer_past_4300_digits_is_bad_input_naming_the_line(tmp_path, capsys, number):
    cfg = tmp_path / "train.yaml"
    cfg.write_text("stage: sft\nfinetuning_type: lora\nmodel_name_or_path: meta-llama/Llama-2-7b-hf\n"
                   f"per_device_train_batch_size: {number}\n", encoding="utf-8")
    code = main([str(cfg), "--plain", "--gpu", "24GiB"])
    err = capsys.readouterr().err
    assert code == 2 and f"{cfg}:4:" in err and "too large" in err and err.count("\n") == 1


@pytest.fixture()
def proj(tmp_path: Path, monkeypatch) -> Path:
    for name in ("train.yaml", "train.log"):
        (tmp_path / name).write_bytes((DEMO_DIR / name).read_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_export_refuses_a_symlink_to_a_file_and_a_dangling_one(proj, capsys):
    (proj / "target").write_text("keep\n")
    (proj / "plan.diff").symlink_to(proj / "target")
    (proj / "dangling.diff").symlink_to(proj / "elsewhere" / "made.diff")
    for name in ("plan.diff", "dangling.diff"):
        code = main(["train.log", "train.yaml", "--export", name, "--plain"])
        err = capsys.readouterr().err
        assert code == 2 and "symbolic link" in err and err.count("\n") == 1
    assert (proj / "target").read_text() == "keep\n" and not (proj / "elsewhere").exists()


def test_export_refuses_a_read_only_file(proj, capsys):
    (proj / "plan.diff").write_text("old\n")
    os.chmod(proj / "plan.diff", 0o444)
    code = main(["train.log", "train.yaml", "--export", "plan.diff", "--plain"])
    err = capsys.readouterr().err
    assert code == 2 and "read-only" in err
    assert (proj / "plan.diff").read_text() == "old\n"


def test_export_to_a_device_behind_a_symlink_still_works(proj, capsys):
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    (proj / "sink.diff").symlink_to("/dev/null")
    code = main(["train.log", "train.yaml", "--export", "sink.diff", "--plain"])
    assert code == 1, capsys.readouterr().err


ENV_RULE = """\
rules:
  - id: ENV1
    slug: sneaky-env
    order: 1
    title: Set a variable
    why: Because.
    category: runtime
    costs: [{{kind: none, text: Nothing.}}]
    applicability: safe
    actions:
      - env: {{name: {name}, value: "/tmp/evil"}}
"""


@pytest.mark.parametrize("name", ["PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "BASH_ENV", "DYLD_INSERT_LIBRARIES"])
def test_a_rule_may_not_set_variables_that_choose_what_the_shell_runs(tmp_path, capsys, name):
    (tmp_path / "env.yaml").write_text(ENV_RULE.format(name=name), encoding="utf-8")
    code = main(["--rules", str(tmp_path), "--list-rules"])
    err = capsys.readouterr().err
    assert code == 2 and f"{tmp_path / 'env.yaml'}:11:" in err and name in err


def test_a_rule_may_still_set_an_ordinary_variable(tmp_path, capsys):
    (tmp_path / "env.yaml").write_text(ENV_RULE.format(name="PYTORCH_CUDA_ALLOC_CONF"), encoding="utf-8")
    assert main(["--rules", str(tmp_path), "--list-rules"]) == 0


def test_a_broken_flow_mapping_in_a_yaml_file_is_a_yaml_error(tmp_path, capsys):
    cfg = tmp_path / "train.yaml"
    cfg.write_text("{stage: sft, finetuning_type: lora,, model_name_or_path: meta-llama/Llama-2-7b-hf}\n")
    code = main([str(cfg), "--plain", "--gpu", "24GiB"])
    err = capsys.readouterr().err
    assert code == 2 and "YAML syntax error" in err and "JSON" not in err


def test_a_flow_mapping_yaml_config_is_read(tmp_path, capsys):
    cfg = tmp_path / "train.yaml"
    cfg.write_text("{stage: sft, finetuning_type: lora, model_name_or_path: meta-llama/Llama-2-7b-hf, "
                   "per_device_train_batch_size: 4, cutoff_len: 1024}\n")
    code = main([str(cfg), "--plain", "--gpu", "24GiB"])
    assert code in (0, 1, 3), capsys.readouterr().err


def test_deepspeed_zero_optimization_given_as_a_list_is_refused_naming_the_file(tmp_path, capsys):
    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 1, "zero_optimization": [{"stage": 3}]}')
    (tmp_path / "train.yaml").write_text("stage: sft\nfinetuning_type: full\nmodel_name_or_path: "
                                         "meta-llama/Llama-2-7b-hf\ndeepspeed: ds.json\n"
                                         "per_device_train_batch_size: 1\n")
    code = main([str(tmp_path / "train.yaml"), "--plain", "--gpu", "80GiB"])
    err = capsys.readouterr().err
    assert code == 2 and "ds.json:1:" in err and "zero_optimization must be a mapping" in err
