"""transformers' meta-device count is kept on disk in the user's cache directory, keyed by the config and
transformers' version: a second report of the same unknown model type does not import transformers again."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from oomdoctor import metacount

CFG = {"model_type": "brand_new_lm", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 100}


class _Child:
    """Stands in for the child process: counts its calls and answers what it is told to."""

    def __init__(self, answer: dict | None = None, timeout: bool = False) -> None:
        self.calls, self.answer, self.timeout = 0, answer, timeout

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.timeout:
            raise subprocess.TimeoutExpired(args[0], kwargs.get("timeout", 1))
        return subprocess.CompletedProcess(args[0], 0, stdout=json.dumps(self.answer) + "\n", stderr="")


@pytest.fixture
def child(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(metacount, "available", lambda: True)
    monkeypatch.setattr(metacount, "_transformers_version", lambda: "5.24.0")
    monkeypatch.setattr(metacount, "_cache", {})
    fake = _Child({"params": 12345, "class": "BrandNewForCausalLM", "version": "5.24.0"})
    monkeypatch.setattr(metacount.subprocess, "run", fake)
    return fake


def _forget_in_memory(monkeypatch):
    monkeypatch.setattr(metacount, "_cache", {})          # a new process: only the disk remembers


def test_a_second_report_reads_the_count_from_disk_without_a_child(child, monkeypatch, tmp_path):
    first = metacount.meta_count(CFG)
    assert first.params == 12345 and child.calls == 1
    files = os.listdir(tmp_path / "cache" / "oomdoctor" / "metacount")
    assert len(files) == 1 and files[0].endswith(".json")
    _forget_in_memory(monkeypatch)
    again = metacount.meta_count(CFG)
    assert child.calls == 1 and (again.params, again.cls, again.version) == (12345, "BrandNewForCausalLM", "5.24.0")


def test_another_config_or_transformers_version_is_counted_afresh(child, monkeypatch):
    metacount.meta_count(CFG)
    _forget_in_memory(monkeypatch)
    metacount.meta_count(dict(CFG, vocab_size=101))
    assert child.calls == 2
    _forget_in_memory(monkeypatch)
    monkeypatch.setattr(metacount, "_transformers_version", lambda: "5.25.0")
    metacount.meta_count(CFG)
    assert child.calls == 3


def test_transformers_not_knowing_the_type_is_kept_too(child, monkeypatch):
    child.answer = {"unknown": True, "version": "5.24.0"}
    assert metacount.meta_count(CFG).unknown
    _forget_in_memory(monkeypatch)
    assert metacount.meta_count(CFG).unknown and child.calls == 1


def test_a_timeout_is_not_kept(child, monkeypatch, tmp_path):
    child.timeout = True
    assert metacount.meta_count(CFG, timeout=0.01).error == "timeout"
    assert not (tmp_path / "cache" / "oomdoctor").exists()
    _forget_in_memory(monkeypatch)
    metacount.meta_count(CFG, timeout=0.01)
    assert child.calls == 2


def test_nothing_is_written_when_the_cache_directory_cannot_be_made(child, monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert metacount.meta_count(CFG).params == 12345           # the count is still given
    assert blocker.read_text() == "not a directory"


def test_a_relative_cache_home_is_ignored_and_the_working_directory_stays_clean(child, monkeypatch, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    metacount.meta_count(CFG)
    assert os.listdir(project) == []
    assert os.listdir(tmp_path / "home" / ".cache" / "oomdoctor" / "metacount")


def test_a_damaged_cache_file_is_counted_again(child, monkeypatch, tmp_path):
    metacount.meta_count(CFG)
    folder = tmp_path / "cache" / "oomdoctor" / "metacount"
    (folder / os.listdir(folder)[0]).write_text("{\"params\": \"many\"")
    _forget_in_memory(monkeypatch)
    assert metacount.meta_count(CFG).params == 12345 and child.calls == 2


def test_a_count_from_the_models_own_code_is_not_kept(child, monkeypatch, tmp_path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "modeling_x.py").write_text("")
    monkeypatch.setenv("OOMDOCTOR_TRUST_REMOTE_CODE", "1")
    cfg = dict(CFG, auto_map={"AutoModelForCausalLM": "modeling_x.XForCausalLM"})
    assert metacount.meta_count(cfg, str(model_dir)).params == 12345
    assert not (tmp_path / "cache" / "oomdoctor").exists()
