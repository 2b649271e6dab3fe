"""Paths a log names are hints: `oomdoctor LOG` never exits 2 because of what a log contains.

A log's command line (DeepSpeed's launcher list, a shell trace, an HF arguments dump) names model
directories, output dirs and DeepSpeed JSONs of the machine the run had. Here they point anywhere:
nowhere, the current directory, `/`, a device, a binary file, a directory with a broken config.json.
"""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oomdoctor.cli import main

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.15 GiB of which 1.20 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in use. "
       "Of the allocated memory 75.80 GiB is allocated by PyTorch, and 1.62 GiB is reserved by PyTorch but unallocated.")
KILL = "exits with return code = -9"
KEYS = ("model_name_or_path", "output_dir", "deepspeed", "dataset_dir", "adapter_name_or_path", "cache_dir",
        "base_model", "model", "resume_from_checkpoint", "config")


@pytest.fixture(scope="module")
def odd_places(tmp_path_factory) -> list[str]:
    """Paths a log may name that exist here but are no model, config or output of this run."""
    root = tmp_path_factory.mktemp("odd")
    binary = root / "weights.bin"
    binary.write_bytes(bytes(range(256)) * 16)
    broken = root / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    nested = root / "dir-config"
    (nested / "config.json").mkdir(parents=True)
    numbers = root / "numbers-model"
    numbers.mkdir()
    (numbers / "config.json").write_text('{"model_type": "llama", "hidden_size": -4096, "num_hidden_layers": 0, '
                                         '"vocab_size": 1e400}', encoding="utf-8")
    bad_ds = root / "ds.json"
    bad_ds.write_text('{"zero_optimization": {"stage": "three"}, "train_micro_batch_size_per_gpu": -1}',
                      encoding="utf-8")
    return [".", "..", "/", os.getcwd(), str(root), str(binary), str(broken), str(nested), str(bad_ds),
            str(numbers), str(nested / "config.json"), "/dev/null", "/dev/zero", "/root/models/Llama-2-13b-hf",
            "path_to_rm_checkpoint", "~/missing/ds_z3.json", "C:\\Users\\me\\model", "", "-", "--"]


def command_line(style: str, pairs: list[tuple[str, str]]) -> str:
    if style == "launcher":
        items = ["/usr/bin/python3", "-u", "src/train.py", "--local_rank=0"]
        for key, value in pairs:
            items += [f"--{key}", value]
        return (f"[2024-05-02 10:00:01,020] [ERROR] [launch.py:321:sigkill_handler] {items!r} {KILL}")
    if style == "shell":
        return "+ torchrun --nproc_per_node 2 src/train.py " + " ".join(f"--{k} {v}" for k, v in pairs)
    if style == "yaml":
        return "\n".join(f"{k}: {v}" for k, v in pairs)
    return "TrainingArguments(\n" + "\n".join(f"{k}={v}," for k, v in pairs) + "\n)"


def run(tmp_path, capsys, text: str, *flags: str) -> int:
    log = tmp_path / "run.log"
    log.write_text(text + "\n", encoding="utf-8")
    code = main([str(log), *flags])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(style=st.sampled_from(["launcher", "shell", "yaml", "dump"]),
       pairs=st.lists(st.tuples(st.sampled_from(KEYS), st.integers(0, 10_000)), min_size=1, max_size=6),
       junk=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\n\r"),
                    max_size=12),
       flags=st.sampled_from([("--plain",), ("--json",), ("--plain", "--gpu", "A100-80GB"), ("--json", "--gpu", "24GiB")]),
       ending=st.sampled_from([OOM, KILL, "Killed", ""]))
def test_paths_named_in_a_log_never_make_it_bad_input(tmp_path, capsys, odd_places, style, pairs, junk, flags, ending):
    named = [(key, (odd_places[i % len(odd_places)] + junk * (i % 3 == 0)) or "x") for key, i in pairs]
    code, captured = run(tmp_path, capsys, command_line(style, named) + "\n" + ending, *flags)
    assert code in (0, 1, 3), (code, captured.err)
    if "--json" in flags:
        json.loads(captured.out)


def test_the_deepspeed_launcher_line_of_the_issue_gives_a_report_not_bad_input(tmp_path, capsys):
    line = command_line("launcher", [("stage", "rm"), ("model_name_or_path", "/root/autodl-tmp/Llama-2-13b-hf"),
                                     ("output_dir", "path_to_rm_checkpoint"), ("deepspeed", "ds_config.json")])
    for flags in (("--plain",), ("--plain", "--gpu", "A100-80GB")):
        code, captured = run(tmp_path, capsys, line, *flags)
        assert code in (0, 1), captured.err
        assert "out of host RAM" in " ".join(captured.out.split())


def test_a_setup_read_from_a_log_patches_no_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = command_line("launcher", [("model_name_or_path", "meta-llama/Llama-2-7b-hf"), ("finetuning_type", "full"),
                                     ("per_device_train_batch_size", "8"), ("cutoff_len", "4096")])
    code, captured = run(tmp_path, capsys, OOM.replace("79.15", "39.39") + "\n" + line, "--json")
    doc = json.loads(captured.out)
    assert doc["setup"]["model"] == "meta-llama/Llama-2-7b-hf" and doc["plan"]["steps"]
    assert doc["patch"] == "" and code in (1, 3)
    assert any("no file of yours is patched" in w for w in doc["warnings"])


def test_a_missing_deepspeed_json_named_by_the_log_is_a_note(tmp_path, capsys):
    line = command_line("launcher", [("model_name_or_path", "meta-llama/Llama-2-7b-hf"),
                                     ("deepspeed", "/nowhere/ds_z3_offload.json")])
    code, captured = run(tmp_path, capsys, line, "--plain", "--gpu", "A100-80GB")
    assert code in (0, 1, 3)
    shown = " ".join(captured.out.split())
    assert "note:" in shown and "/nowhere/ds_z3_offload.json" in shown.split("note:", 1)[1], captured.out


def test_the_users_own_bad_model_flag_is_still_bad_input(tmp_path, capsys):
    line = command_line("launcher", [("model_name_or_path", "meta-llama/Llama-2-7b-hf")])
    code, captured = run(tmp_path, capsys, line, "--plain", "--gpu", "A100-80GB", "--model", "no-such-model-xyz")
    assert code == 2 and "no-such-model-xyz" in captured.err
