"""Frameworks as a registry: one module each, one key table that reads and patches, no import cycle,
every kind of file classified from its keys with the reason said."""
from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

import pytest

from oomdoctor.configs import classify, edits_for, key_for, load_config, registry
from oomdoctor.configs._keys import DEEPSPEED, LAUNCHER
from oomdoctor.facts import Change
from oomdoctor.words import say

PACKAGE = Path(importlib.import_module("oomdoctor.configs").__file__).parent
DATA = Path(__file__).parent / "data" / "configs"


def _imports(path: Path) -> set[str]:
    """Every oomdoctor.configs module a file imports, at module level or inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "oomdoctor.configs":
                # `from oomdoctor.configs import registry` imports the submodule; a name that is not one
                # (`import load_config`) comes from the package's front door.
                for a in node.names:
                    sub = (PACKAGE / f"{a.name}.py").exists()
                    found.add(f"oomdoctor.configs.{a.name}" if sub else "oomdoctor.configs")
            elif node.module.startswith("oomdoctor.configs"):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("oomdoctor.configs"))
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in PACKAGE.glob("*.py"):
        name = "oomdoctor.configs" if path.stem == "__init__" else f"oomdoctor.configs.{path.stem}"
        graph[name] = {m for m in _imports(path) if m != name}
    return graph


def test_configs_package_has_no_import_cycle_even_through_function_level_imports():
    graph = _graph()
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_no_framework_module_imports_the_package_front_door():
    # Framework modules reach each other only through the registry's names, never `from oomdoctor.configs import`.
    graph = _graph()
    for name in registry.FRAMEWORKS.values():
        assert "oomdoctor.configs" not in graph[name], name
        assert "oomdoctor.configs.registry" not in graph[name], name


@pytest.mark.parametrize("name", list(registry.FRAMEWORKS))
def test_every_registered_module_has_the_same_parts(name):
    mod = registry.module(name)
    for part in ("NAME", "FRAMEWORK", "LABEL", "PACKAGE", "DEFAULT_VERSION", "KEYS", "detect", "version", "read", "edit"):
        assert hasattr(mod, part), f"{name} lacks {part}"
    assert mod.NAME == name
    for fieldname, key in mod.KEYS.items():
        assert key.field == fieldname


# One file per kind, the framework it is and the key the reason names.
KINDS = [
    ("llamafactory", "model_name_or_path: m\nstage: sft\nfinetuning_type: lora\n", ".yaml", "stage"),
    ("hf", '{"model_name_or_path": "m", "per_device_train_batch_size": 2, "output_dir": "o"}', ".json",
     "model_name_or_path"),
    ("trl", "model_name_or_path: m\nuse_peft: true\nmax_length: 512\n", ".yaml", "use_peft"),
    ("firefly", '{"model_name_or_path": "m", "train_file": "d.jsonl", "max_seq_length": 512, "lora_rank": 16}',
     ".json", "train_file"),
    ("axolotl", "base_model: m\nmicro_batch_size: 1\n", ".yml", "base_model"),
    ("torchtune", "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\nbatch_size: 2\n", ".yaml",
     "_component_"),
    ("deepspeed", '{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": 2}', ".json",
     "zero_optimization"),
    ("accelerate", "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_processes: 2\n", ".yaml",
     "distributed_type"),
    ("script", "#!/bin/bash\ntorchrun --nproc_per_node 2 train.py --model_name_or_path m "
               "--per_device_train_batch_size 2\n", ".sh", "train.py"),
]


@pytest.mark.parametrize("kind,text,ext,evidence", KINDS, ids=[k[0] for k in KINDS])
def test_each_kind_of_file_is_classified_from_its_keys_and_the_report_says_why(tmp_path, kind, text, ext, evidence):
    path = tmp_path / f"cfg{ext}"
    path.write_text(text)
    assert classify(str(path)) == "config"
    s = load_config(str(path))
    expected = {"llamafactory": "llamafactory", "hf": "hf", "trl": "trl", "firefly": "hf", "axolotl": "axolotl",
                "torchtune": "torchtune", "deepspeed": "hf", "accelerate": "hf", "script": "hf"}[kind]
    assert s.framework == expected
    reader = {"trl": "hf", "script": "hf"}.get(kind, kind)
    assert s.extras["reader"] == reader
    assert evidence in say(s.framework_reason)
    assert s.version_reason is not None and s.framework_version in say(s.version_reason)


def test_firefly_argument_json_is_not_taken_for_llamafactory(tmp_path):
    # Firefly's lora_rank is also a LLaMA-Factory key; its train_file / max_seq_length / train_mode are not.
    p = tmp_path / "qwen-7b-sft-qlora.json"
    p.write_text(json.dumps({"output_dir": "out", "model_name_or_path": "Qwen/Qwen2.5-7B-Instruct",
                             "train_file": "./data/train.jsonl", "template_name": "qwen", "train_mode": "qlora",
                             "per_device_train_batch_size": 2, "gradient_accumulation_steps": 8,
                             "max_seq_length": 3072, "lora_rank": 32, "lora_alpha": 16, "fp16": True}))
    s = load_config(str(p))
    assert s.extras["reader"] == "firefly"
    assert (s.method, s.quant_bits, s.lora_rank, s.seq_len, s.micro_batch, s.precision) == \
        ("qlora", 4, 32, 3072, 2, "fp16")
    assert s.sources["seq_len"].key == "max_seq_length"


# ---------------------------------------------------------------- one table reads and patches

ROUND_TRIP = [
    ("demo", "micro_batch", 2), ("demo", "seq_len", 1024), ("demo", "grad_accum", 8),
    ("axolotl_qlora.yml", "micro_batch", 1), ("axolotl_qlora.yml", "seq_len", 2048),
    ("axolotl_qlora.yml", "lora_rank", 8),
    ("torchtune_lora.yaml", "micro_batch", 2), ("torchtune_lora.yaml", "seq_len", 512),
    ("torchtune_lora.yaml", "lora_rank", 8),
    ("trl_sft.yaml", "seq_len", 1024), ("trl_sft.yaml", "micro_batch", 1),
    ("hf_args.json", "micro_batch", 1), ("train_hf.sh", "micro_batch", 4), ("train_hf.sh", "seq_len", 512),
]


@pytest.mark.parametrize("name,fieldname,value", ROUND_TRIP)
def test_a_field_is_patched_under_the_key_it_was_read_from(name, fieldname, value):
    from oomdoctor.cli import DEMO_DIR

    path = str(DEMO_DIR / "train.yaml") if name == "demo" else str(DATA / name)
    s = load_config(path)
    src = s.sources[fieldname]
    assert src.file is not None
    edits = edits_for(s, [Change(fieldname, getattr(s, fieldname), value)])
    keys = {(e.file, ".".join(e.key_path)): e.value for e in edits}
    assert keys[(src.file, src.key)] == value
    assert key_for(s, fieldname) == (src.file, src.key)


def test_key_for_names_where_an_unset_field_would_be_written_in_this_frameworks_release(tmp_path):
    old = tmp_path / "old.yaml"
    old.write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: freeze\n"
                   "num_layer_trainable: 3\n")
    s = load_config(str(old))
    assert s.framework_version == "0.7.0"
    assert key_for(s, "freeze_trainable_layers") == (str(old), "num_layer_trainable")
    assert key_for(s, "seq_len") == (str(old), "cutoff_len")
    assert key_for(s, "zero_stage") == (str(old), "deepspeed")
    new = tmp_path / "new.yaml"
    new.write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: freeze\n")
    t = load_config(str(new))
    assert key_for(t, "freeze_trainable_layers") == (str(new), "freeze_trainable_layers")
    ax = load_config(str(DATA / "axolotl_qlora.yml"))
    assert key_for(ax, "seq_parallel") == (str(DATA / "axolotl_qlora.yml"), "context_parallel_size")
    acc = load_config(str(DATA / "accelerate_fsdp.yaml"))
    assert key_for(acc, "n_gpus")[1] == "num_processes"


def test_an_older_releases_key_name_is_what_a_patch_writes(tmp_path):
    p = tmp_path / "old.yaml"
    p.write_text("model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: freeze\n"
                 "name_module_trainable: mlp\nflash_attn: false\n")
    s = load_config(str(p))
    edits = {".".join(e.key_path): e.value for e in edits_for(s, [Change("freeze_trainable_layers", 2, 1),
                                                                   Change("attention", "sdpa", "fa2")])}
    assert edits == {"num_layer_trainable": 1, "flash_attn": True}


def test_key_tables_place_deepspeed_and_launcher_keys_in_their_files():
    ds = registry.module("deepspeed").KEYS
    assert ds["zero_stage"].file == DEEPSPEED
    acc = registry.module("accelerate").KEYS
    assert acc["n_gpus"].file == LAUNCHER
