"""The whole path through the command line: inputs in any order, views, exit codes, bad input."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oomdoctor.cli import DEMO_DIR, main

DEMO_YAML = DEMO_DIR / "train.yaml"
DEMO_LOG = DEMO_DIR / "train.log"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code, out, err = run(capsys, *argv, "--json")
    assert code != 2, err
    return code, json.loads(out)


def test_demo_plain_report_proposes_a_plan_that_fits(capsys):
    code, out, err = run(capsys, "--demo", "--plain")
    assert code == 1, err
    assert "does not fit" in out
    assert "Plan" in out and "fits:" in out
    assert "--- a/" in out and "+++ b/" in out  # the patch is shown


def test_json_contract_has_the_promised_fields(capsys):
    code, doc = run_json(capsys, str(DEMO_LOG), str(DEMO_YAML))
    assert code == 1
    assert set(doc) >= {"version", "setup", "hardware", "crash", "estimate", "plan", "patch"}
    assert set(doc["setup"]) >= {"model", "params_total", "params_trainable", "method", "micro_batch", "grad_accum",
                                 "seq_len", "precision", "optimizer", "grad_ckpt", "attention", "zero_stage",
                                 "offload", "n_gpus"}
    assert set(doc["hardware"]) >= {"gpu", "gpu_gib", "n_gpus", "source"}
    event = doc["crash"]["events"][0]
    assert set(event) >= {"kind", "tried_gib", "capacity_gib", "free_gib", "allocated_gib",
                          "reserved_unallocated_gib", "device", "rank", "phase", "line"}
    assert set(doc["estimate"]) >= {"peak_gib", "allocated_gib", "fits", "headroom_gib", "components"}
    assert set(doc["estimate"]["components"]) == {"weights", "gradients", "optimizer", "activations", "logits",
                                                  "overhead"}
    step = doc["plan"]["steps"][0]
    assert set(step) >= {"rule", "title", "peak_gib", "fits", "changes"}
    assert set(step["changes"][0]) >= {"file", "key", "from", "to"}


def test_files_are_recognised_in_any_order(capsys):
    _, a = run_json(capsys, str(DEMO_LOG), str(DEMO_YAML))
    _, b = run_json(capsys, str(DEMO_YAML), str(DEMO_LOG))
    assert a["estimate"] == b["estimate"] and a["plan"]["steps"] == b["plan"]["steps"]


def test_llama2_7b_full_bf16_batch4_on_80gb_does_not_fit_and_the_ladder_fixes_it(capsys):
    code, doc = run_json(capsys, str(DEMO_YAML), "--gpu", "A100-80GB")
    assert doc["setup"]["method"] == "full" and doc["setup"]["micro_batch"] == 4
    assert doc["setup"]["seq_len"] == 2048
    assert doc["estimate"]["fits"] is False
    assert doc["plan"]["fits"] is True and doc["plan"]["steps"][-1]["fits"] is True
    assert code == 1
    # Steps come in ladder order: the rule engine's order of the rule book.
    from oomdoctor.planner import load_rules

    order = [r.id for r in load_rules()]
    taken = [order.index(s["rule"]) for s in doc["plan"]["steps"]]
    assert taken == sorted(taken)


def test_a_config_with_a_four_rank_log_is_estimated_for_four_gpus(capsys, tmp_path):
    log = tmp_path / "run.log"
    one_rank_oom = Path(__file__).parent / "data" / "logs" / "f01_torch25_backward.log"
    log.write_text("".join(f"[rank{r}]: {{'loss': 1.1, 'epoch': 0.2}}\n" for r in range(4))
                   + one_rank_oom.read_text())
    code, doc = run_json(capsys, str(log), str(DEMO_YAML))
    assert doc["setup"]["n_gpus"] == 4 and doc["hardware"]["n_gpus"] == 4
    code, alone = run_json(capsys, str(DEMO_LOG), str(DEMO_YAML))     # its log says "n_gpu: 1"
    assert alone["setup"]["n_gpus"] == 1


def test_the_framework_version_the_log_prints_sets_the_regime_unless_the_flag_does(capsys, tmp_path):
    # The demo log's banner says LLaMA-Factory 0.9.1: it loads weights in the compute dtype (< 0.9.4).
    code, doc = run_json(capsys, str(DEMO_LOG), str(DEMO_YAML))
    assert doc["setup"]["framework_version"] == "0.9.1"
    code, doc = run_json(capsys, str(DEMO_YAML), "--gpu", "A100-80GB")
    assert doc["setup"]["framework_version"] == "0.9.4"                  # no log: the default
    code, doc = run_json(capsys, str(DEMO_LOG), str(DEMO_YAML), "--framework-version", "0.9.3")
    assert doc["setup"]["framework_version"] == "0.9.3"                  # the flag wins
    # a fp32 checkpoint: 0.9.1 loads it in bf16, 0.9.4 keeps fp32, so the log's version moves the estimate
    cfg = tmp_path / "fp32" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
                               "intermediate_size": 2816, "num_hidden_layers": 8, "num_attention_heads": 16,
                               "num_key_value_heads": 16, "vocab_size": 32000, "torch_dtype": "float32"}))
    yaml_text = DEMO_YAML.read_text().replace("finetuning_type: full", "finetuning_type: lora")
    lora = tmp_path / "lora.yaml"
    lora.write_text(yaml_text)
    code, with_log = run_json(capsys, str(DEMO_LOG), str(lora), "--model", str(cfg.parent))
    code, without = run_json(capsys, str(lora), "--model", str(cfg.parent), "--gpu", "A100-80GB")
    assert with_log["estimate"]["components"]["weights"] < without["estimate"]["components"]["weights"]


def test_a_host_ram_kill_with_a_config_that_fits_still_gets_a_plan(capsys):
    # The GPU estimate fits, but the log says the host ran out of RAM: the plan answers the host side.
    log = Path(__file__).parent / "data" / "logs" / "f12_deepspeed_sigkill.log"
    cfg = Path(__file__).parent / "data" / "configs" / "lf_lora_ds.yaml"        # ZeRO-2 + optimizer offload
    code, doc = run_json(capsys, str(log), str(cfg), "--gpu", "A100-80GB")
    assert doc["estimate"]["fits"] and doc["plan"]["fits"]
    rules = [s["rule"] for s in doc["plan"]["steps"]]
    assert "OOM021" in rules and "OOM022" in rules
    assert doc["hardware"]["host_ram_gib"] == pytest.approx(251.6, abs=0.1)     # from the log's CPU reading
    assert doc["patch"] and '"device": "none"' in doc["patch"]
    code, out, err = run(capsys, str(log), str(cfg), "--gpu", "A100-80GB", "--plain")
    assert "Plan (it fits; what the crash log points to)" in out and "dmesg" in out


@pytest.mark.parametrize("lang,lead,more", [("en", "yet the run crashed", "uses 0.1 GiB more"),
                                            ("zh", "但训练还是崩溃了", "多用 0.1 GiB")])
def test_the_walkthrough_of_a_host_ram_kill_says_the_estimate_fits_and_what_the_log_points_to(capsys, lang, lead,
                                                                                             more):
    log = Path(__file__).parent / "data" / "logs" / "f12_deepspeed_sigkill.log"
    cfg = Path(__file__).parent / "data" / "configs" / "lf_lora_ds.yaml"
    code, out, err = run(capsys, str(log), str(cfg), "--gpu", "A100-80GB", "--walkthrough", "--plain", "--lang", lang)
    flat = " ".join(out.split())
    assert lead in flat and more in flat, flat[:2000]
    assert "Nothing needs to change" not in flat


def test_config_alone_is_a_preflight_check(capsys):
    code, doc = run_json(capsys, str(DEMO_YAML), "--gpu", "H200")
    assert doc["crash"] is None
    assert doc["hardware"]["source"] == "flag"
    assert code in (0, 1)


def test_log_alone_is_diagnosed(capsys):
    code, out, err = run(capsys, str(DEMO_LOG), "--plain")
    assert code in (0, 1), err
    assert "ran out of gpu memory" in " ".join(out.lower().split())


def test_log_from_stdin(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(DEMO_LOG.read_bytes())))
    code, doc = run_json(capsys, "-", str(DEMO_YAML))
    assert doc["crash"]["events"]


def test_exported_diff_applies_with_git_and_changes_only_values(tmp_path, capsys, monkeypatch):
    work = tmp_path / "repo"
    work.mkdir()
    shutil.copy(DEMO_YAML, work / "train.yaml")
    shutil.copy(DEMO_LOG, work / "train.log")
    original = (work / "train.yaml").read_text()
    monkeypatch.chdir(work)
    code, out, err = run(capsys, "train.log", "train.yaml", "--export", "plan.diff", "--plain")
    assert code == 1, err
    diff = (work / "plan.diff").read_text()
    assert diff.startswith("--- a/train.yaml") or "--- a/train.yaml" in diff
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "apply", "plan.diff"], cwd=work, check=True)
    patched = (work / "train.yaml").read_text()
    assert patched != original
    old_lines, new_lines = original.splitlines(), patched.splitlines()
    import yaml

    old_doc, new_doc = yaml.safe_load(original), yaml.safe_load(patched)
    changed_keys = {k for k in set(old_doc) | set(new_doc) if old_doc.get(k) != new_doc.get(k)}
    # Every line that does not hold a changed key is byte-identical and in the same order.
    kept_old = [l for l in old_lines if l.split(":")[0].strip() not in changed_keys]
    kept_new = [l for l in new_lines if l.split(":")[0].strip() not in changed_keys]
    assert kept_old == kept_new
    assert sum(1 for l in original.splitlines() if l.lstrip().startswith("#")) == \
        sum(1 for l in patched.splitlines() if l.lstrip().startswith("#"))


def test_nothing_is_written_unless_asked(tmp_path, capsys, monkeypatch):
    shutil.copy(DEMO_YAML, tmp_path / "train.yaml")
    shutil.copy(DEMO_LOG, tmp_path / "train.log")
    monkeypatch.chdir(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    run(capsys, "train.log", "train.yaml", "--plain")
    run(capsys, "train.log", "train.yaml", "--json")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def _one_line_error(capsys, *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_missing_file_is_one_line_naming_it(capsys, tmp_path):
    missing = tmp_path / "nope.yaml"
    assert str(missing) in _one_line_error(capsys, str(missing), "--plain")


def test_empty_file_is_one_line_naming_it(capsys, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert str(empty) in _one_line_error(capsys, str(empty), "--plain")


def test_binary_file_is_one_line_naming_it(capsys, tmp_path):
    blob = tmp_path / "model.bin"
    blob.write_bytes(bytes(range(256)) * 64)
    assert str(blob) in _one_line_error(capsys, str(blob), "--plain")


def test_yaml_syntax_error_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: [full\n"
                   "per_device_train_batch_size: 4\n")
    line = _one_line_error(capsys, str(bad), "--gpu", "A100-80GB", "--plain")
    assert f"{bad}:" in line and any(f":{n}" in line for n in (3, 4, 5))


def test_unknown_model_is_incomplete_not_an_error(capsys, tmp_path):
    # The config's facts are still shown, with what the estimate needs; exit 5 (tests/test_configs_incomplete.py).
    cfg = tmp_path / "train.yaml"
    cfg.write_text(DEMO_YAML.read_text().replace("meta-llama/Llama-2-7b-hf", "nobody/NoSuchModel-7b"))
    code, out, err = run(capsys, str(cfg), "--gpu", "A100-80GB", "--plain", "--lang", "en")
    assert code == 5 and err == ""
    assert "NoSuchModel" in out and "--model DIR" in out


def test_config_without_gpu_information_asks_for_gpu(capsys, monkeypatch):
    import oomdoctor.gpus as gpus

    monkeypatch.setattr(gpus, "detect_nvml", lambda: None)
    assert "--gpu" in _one_line_error(capsys, str(DEMO_YAML), "--plain")


def test_bad_flag_is_one_line_exit_2(capsys):
    assert "--no-such-flag" in _one_line_error(capsys, "--no-such-flag")


def test_python_dash_m_runs_the_demo():
    env = dict(os.environ, TERM="dumb")
    proc = subprocess.run([sys.executable, "-m", "oomdoctor", "--demo"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "Plan" in proc.stdout


LAUNCHER = Path(__file__).parent / "data" / "configs" / "accelerate_fsdp.yaml"


def test_a_launcher_config_alone_asks_for_the_training_config(capsys):
    line = _one_line_error(capsys, str(LAUNCHER), "--gpu", "A100-80GB", "--plain")
    assert str(LAUNCHER) in line and "--model" in line


def test_a_launcher_config_is_laid_over_the_training_config(capsys):
    _, alone = run_json(capsys, str(DEMO_YAML), "--gpu", "A100-80GB")
    _, both = run_json(capsys, str(LAUNCHER), str(DEMO_YAML), "--gpu", "A100-80GB")
    assert both["setup"]["model"] == alone["setup"]["model"]
    assert both["setup"]["n_gpus"] > alone["setup"]["n_gpus"]
    assert both["estimate"]["peak_gib"] < alone["estimate"]["peak_gib"]


def test_json_texts_follow_the_language_and_carry_stable_codes(capsys):
    code, out, err = run(capsys, "--demo", "--json", "--lang", "zh")
    doc = json.loads(out)
    skipped = doc["plan"]["skipped"][0]
    assert skipped["reason_code"]["code"] == "plan.skip.no_saving"
    assert skipped["reason"].startswith("它不会降低估算")
    code, out, err = run(capsys, "--demo", "--json")
    assert json.loads(out)["plan"]["skipped"][0]["reason"].startswith("It would not lower the estimate")
    assert json.loads(out)["lang"] == "en"


def test_json_sources_say_where_each_value_came_from_in_the_language_with_codes(capsys):
    _, out, _ = run(capsys, "--demo", "--json", "--lang", "zh")
    setup = json.loads(out)["setup"]
    assert setup["sources"]["micro_batch"].endswith("train.yaml:26（per_device_train_batch_size）")
    assert setup["sources"]["grad_ckpt"] == "LLaMA-Factory 0.9.1 的默认值（disable_gradient_checkpointing: false）"
    assert setup["sources_codes"]["grad_ckpt"] == {
        "code": "config.default.of_note",
        "values": {"framework": "LLaMA-Factory 0.9.1", "note": "disable_gradient_checkpointing: false"}}
    _, out, _ = run(capsys, "--demo", "--json")
    setup = json.loads(out)["setup"]
    assert setup["sources"]["micro_batch"].endswith("train.yaml:26 (per_device_train_batch_size)")
    assert setup["sources"]["packing"] == "default of LLaMA-Factory 0.9.1 (packing is on for stage pt only)"
    assert setup["sources_codes"]["packing"]["values"]["note"] == {"code": "config.default.lf_packing", "values": {}}


def test_list_rules_and_explain_print_json_when_asked(capsys):
    code, out, _ = run(capsys, "--list-rules", "--json", "--lang", "zh")
    rules = json.loads(out)
    assert code == 0 and [r["position"] for r in rules] == list(range(1, len(rules) + 1))
    # the first rung every framework's ladder shares (verl's own cheaper knobs, for verl only, come before it)
    first = next(r for r in rules if not r["frameworks"])
    assert rules[0]["frameworks"] == ["verl"] and not rules[0]["skip_frameworks"]
    assert first["id"] == "OOM001" and first["title"] == "微批大小减半，梯度累积翻倍"
    assert first["costs"][0]["kind"] == "throughput"
    code, out, _ = run(capsys, "--explain", "switch-to-lora", "--json")
    rule = json.loads(out)
    assert rule["id"] == "OOM004" and rule["applicability"] == "needs-consent" and rule["when"] is not None


@pytest.mark.parametrize("lang,words", [
    ("en", ("examples:", "first OOM?", "exit codes:", "prices file (--prices, YAML)", "--accept quality")),
    ("zh", ("示例：", "第一次遇到 OOM？", "退出码：", "价格文件（--prices，YAML）", "--accept quality")),
])
def test_help_has_examples_the_walkthrough_for_a_first_oom_every_exit_code_and_the_prices_format(capsys, lang,
                                                                                                  words):
    with pytest.raises(SystemExit):
        main(["--help", "--lang", lang])
    out = capsys.readouterr().out
    for word in words:
        assert word in out, word
    assert "oomdoctor --walkthrough run.log config.yaml" in out
    codes = out[out.index("exit codes:" if lang == "en" else "退出码："):]
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "130 "):
        assert code in codes
    prices = out[out.index(words[3]):]
    assert "currency:" in prices and "A100-80GB:" in prices and "H100:" in prices


def test_gpus_beyond_what_the_log_names_are_gpus_the_plan_may_spread_over_keeping_the_batch(capsys):
    code, doc = run_json(capsys, str(DEMO_LOG), str(DEMO_YAML), "--gpus", "2")
    assert doc["setup"]["n_gpus"] == 1 and doc["hardware"]["n_gpus"] == 2
    zero3 = [st for st in doc["plan"]["steps"] if any(c["key"] == "n_gpus" for c in st["changes"])]
    assert zero3
    changes = {c["key"]: c["to"] for st in doc["plan"]["steps"] for c in st["changes"]}
    assert changes["n_gpus"] == 2 and changes["grad_accum"] == 1         # 4 × 1 × 2: the effective batch stays 8
