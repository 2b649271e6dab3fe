"""Degrade, do not stop: a config whose model is in no catalog, directory or cache still gets its crash
diagnosed and its facts shown, says in one line what the estimate needs, and exits 5 (incomplete); with
--model DIR holding a config.json the same inputs get an estimate and a plan."""
from __future__ import annotations

import json

import pytest
from helpers import run_cli

from oomdoctor.errors import ExitCode, exit_code
from oomdoctor.pipeline import Options, build_report
from oomdoctor.words import say

CONFIG = """model_name_or_path: acme/NoSuchModel-7B
stage: sft
do_train: true
finetuning_type: lora
lora_rank: 16
cutoff_len: 2048
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
bf16: true
"""
LOG = """Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/site-packages/torch/optim/adamw.py", line 406, in _single_tensor_adamw
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 23.55 GiB \
of which 1.02 GiB is free. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 412.00 MiB is reserved \
by PyTorch but unallocated.
"""
SHAPE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632,
         "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000,
         "max_position_embeddings": 2048, "torch_dtype": "bfloat16"}


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE", "MODELSCOPE_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    (tmp_path / "run.log").write_text(LOG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_exit_code_is_documented_and_distinct():
    assert int(ExitCode.INCOMPLETE) == 5
    assert len({int(c) for c in ExitCode}) == len(list(ExitCode))
    assert "5 incomplete" in say("cli.epilog", "en") and "5 结果不完整" in say("cli.epilog", "zh")


def test_plain_shows_the_crash_and_the_facts_says_what_is_missing_and_exits_5(inputs, capsys):
    code, out, err = run_cli(capsys, "run.log", "cfg.yaml", "--plain", "--lang", "en")
    assert code == ExitCode.INCOMPLETE, err
    assert "Traceback" not in out + err and err == ""
    assert "optimizer step" in out and "1.96 GiB" in out             # the crash diagnosis
    assert "LoRA r=16" in out and "seq 2048" in out                  # the config's facts
    assert "Memory per GPU" not in out                               # no estimate-dependent section
    needs = [line for line in out.splitlines() if "--model DIR" in line or "config.json" in line]
    assert needs and "Hugging Face cache" in out.replace("\n      ", " ")


def test_json_is_strict_has_the_facts_no_estimate_and_the_code(inputs, capsys):
    code, out, _ = run_cli(capsys, "run.log", "cfg.yaml", "--json")
    assert code == ExitCode.INCOMPLETE
    doc = json.loads(out)
    assert doc["estimate"] is None and doc["plan"]["steps"] == []
    assert doc["setup"]["lora_rank"] == 16 and doc["setup"]["seq_len"] == 2048
    assert doc["crash"]["events"][0]["phase"] == "optimizer" and doc["crash"]["events"][0]["tried_gib"] == 1.96
    assert "run.incomplete" in [c["code"] for c in doc["warnings_codes"]]
    assert "model.unknown" in [c["code"] for c in doc["warnings_codes"]]


def test_chinese_says_it_in_chinese(inputs, capsys):
    code, out, _ = run_cli(capsys, "run.log", "cfg.yaml", "--plain", "--lang", "zh")
    assert code == ExitCode.INCOMPLETE
    assert say("run.incomplete", "zh")[:12] in out.replace("\n      ", "")


def test_a_config_alone_degrades_too(inputs, capsys):
    code, out, _ = run_cli(capsys, "cfg.yaml", "--gpu", "24GiB", "--plain", "--lang", "en")
    assert code == ExitCode.INCOMPLETE and "LoRA r=16" in out


def test_with_model_dir_the_same_inputs_are_estimated(inputs, capsys):
    model = inputs / "tiny"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(SHAPE))
    code, out, _ = run_cli(capsys, "run.log", "cfg.yaml", "--model", str(model), "--plain", "--lang", "en")
    assert code in (ExitCode.FITS, ExitCode.PLAN, ExitCode.NO_FIT)
    assert "Memory per GPU" in out


def test_a_broken_model_directory_is_still_bad_input(inputs, capsys):
    model = inputs / "broken"
    model.mkdir()
    (model / "config.json").write_text("[1, 2]")
    code, _, err = run_cli(capsys, "run.log", "cfg.yaml", "--model", str(model), "--plain")
    assert code == ExitCode.BAD_INPUT and len(err.strip().splitlines()) == 1


def test_the_report_itself_says_incomplete(inputs):
    report = build_report(Options(files=("run.log", "cfg.yaml"), cwd=str(inputs)))
    assert report.setup is not None and report.shape is None and report.crash is not None
    assert exit_code(report) == ExitCode.INCOMPLETE


async def test_the_app_opens_on_an_incomplete_report_and_shows_the_crash_and_the_line(inputs):
    from helpers import screen_text

    from oomdoctor.session import open_session
    from oomdoctor.tui.app import OomDoctorApp

    session = open_session(Options(files=("run.log", "cfg.yaml"), cwd=str(inputs)), "en")
    app = OomDoctorApp(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "asked for" in text and "was free" in text             # the crash, in plain words
        assert "acme/NoSuchModel-7B" in text and "2048 tokens" in text  # the config's facts
        await pilot.press("2")
        await pilot.pause()
        assert "--model DIR" in " ".join(screen_text(app).split())    # what the estimate needs


def test_a_model_flag_that_is_not_found_is_the_users_to_fix(inputs, capsys):
    code, _, err = run_cli(capsys, "run.log", "cfg.yaml", "--model", "nobody/typo-7b", "--plain")
    assert code == ExitCode.BAD_INPUT and len(err.strip().splitlines()) == 1 and "typo-7b" in err


@pytest.mark.parametrize("log", [
    "Loading checkpoint shards:  52%|█████▏    | 11/21 [00:41<00:37,  3.78s/it]\nKilled\n",
    "RuntimeError: MPS backend out of memory (MPS allocated: 11.14 GB, other allocations: 6.65 GB, max allowed: "
    "18.13 GB). Tried to allocate 375.40 MB on private pool.\n",
])
def test_a_log_naming_no_card_with_an_unknown_model_still_shows_the_crash(inputs, capsys, log):
    # the card is asked for only to estimate; without the model's shape there is no estimate to make
    (inputs / "run.log").write_text(log, encoding="utf-8")
    code, out, err = run_cli(capsys, "run.log", "cfg.yaml", "--plain", "--lang", "en")
    assert code == ExitCode.INCOMPLETE, err
    assert err == "" and "--gpu" not in out
    assert "Crash" in out and ("killed" in out.lower() or "MPS" in out)
    assert any("--model DIR" in line for line in out.splitlines())
