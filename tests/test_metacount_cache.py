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


class _BatchChild:
    """Stands in for a batch child: answers each job it is given with its index, one line each; `dies_on`
    (a config's vocab_size) makes it exit before answering that job, `hangs_on` makes it run out of time there
    with the lines before it already written."""

    def __init__(self, dies_on: int | None = None, hangs_on: int | None = None) -> None:
        self.batches: list[int] = []
        self.dies_on, self.hangs_on = dies_on, hangs_on

    def __call__(self, args, **kwargs):
        jobs = json.loads(kwargs["input"])
        self.batches.append(len(jobs))
        lines = []
        for i, job in enumerate(jobs):
            vocab = job["config"]["vocab_size"]
            if vocab == self.hangs_on:
                raise subprocess.TimeoutExpired(args, kwargs["timeout"], output="".join(lines).encode())
            if vocab == self.dies_on:
                return subprocess.CompletedProcess(args, -11, stdout="".join(lines), stderr="")
            lines.append(json.dumps({"i": i, "params": 1000 + vocab, "class": "X", "version": "5.24.0"}) + "\n")
        return subprocess.CompletedProcess(args, 0, stdout="model code printing\n" + "".join(lines), stderr="")


def _configs(*vocabs: int) -> list[dict]:
    return [dict(CFG, vocab_size=v) for v in vocabs]


def test_a_batch_counts_every_config_in_one_child_and_keeps_each_on_disk(child, monkeypatch):
    batch = _BatchChild()
    monkeypatch.setattr(metacount.subprocess, "run", batch)
    counts = metacount.meta_count_many(_configs(1, 2, 3, 2))
    assert [c.params for c in counts] == [1001, 1002, 1003, 1002] and batch.batches == [3]
    _forget_in_memory(monkeypatch)
    assert metacount.meta_count(_configs(2)[0]).params == 1002 and child.calls == 0      # read from disk
    assert [c.params for c in metacount.meta_count_many(_configs(3, 4))] == [1003, 1004]
    assert batch.batches == [3, 1]                                                        # only the new one


def test_a_child_that_dies_costs_only_the_config_it_was_on(child, monkeypatch):
    batch = _BatchChild(dies_on=2)
    monkeypatch.setattr(metacount.subprocess, "run", batch)
    counts = metacount.meta_count_many(_configs(1, 2, 3, 4))
    assert [c.params for c in counts] == [1001, None, 1003, 1004]
    assert counts[1].error == "exit -11" and batch.batches == [4, 2]       # the rest went to a new child
    _forget_in_memory(monkeypatch)
    metacount.meta_count_many(_configs(1, 2, 3, 4))
    assert batch.batches == [4, 2, 1]                                      # the failure was not kept


def test_a_batch_past_its_time_limit_keeps_what_it_counted_and_times_out_the_rest(child, monkeypatch):
    batch = _BatchChild(hangs_on=2)
    monkeypatch.setattr(metacount.subprocess, "run", batch)
    counts = metacount.meta_count_many(_configs(1, 2, 3), timeout=5)
    assert counts[0].params == 1001 and [c.error for c in counts[1:]] == ["timeout", "timeout"]
    assert counts[2].seconds == 5 and batch.batches == [3]                 # no second child past the limit


def test_a_batch_without_transformers_counts_nothing(monkeypatch):
    monkeypatch.setenv("OOMDOCTOR_NO_TRANSFORMERS", "1")
    assert [c.error for c in metacount.meta_count_many(_configs(1, 2))] == ["unavailable", "unavailable"]


@pytest.mark.simulate
def test_a_batch_count_equals_the_one_by_one_count_and_a_broken_config_does_not_sink_it(monkeypatch, tmp_path):
    """Real transformers: two children in all (one single count, one batch)."""
    pytest.importorskip("transformers")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(metacount, "_cache", {})
    llama = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000}
    broken = dict(llama, num_attention_heads=0)        # its config class divides by the head count
    qwen2 = dict(llama, model_type="qwen2", tie_word_embeddings=True)
    one = metacount.meta_count(llama, timeout=600)
    assert one.params and not one.error
    _forget_in_memory(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-cache"))    # the batch counts it afresh
    counts = metacount.meta_count_many([broken, llama, {"model_type": "brand_new_lm"}, qwen2], timeout=600)
    assert counts[0].params is None and counts[0].error.startswith("config: ZeroDivisionError")
    assert (counts[1].params, counts[1].cls, counts[1].version) == (one.params, one.cls, one.version)
    assert counts[2].unknown and not counts[2].error
    # tied embeddings: the qwen2 model holds the same weights less one vocabulary-by-hidden matrix, plus biases
    assert counts[3].params == one.params - 1000 * 64 + 2 * (64 + 2 * 2 * 16)


@pytest.mark.simulate
def test_a_real_batch_child_is_stopped_at_its_time_limit(monkeypatch, tmp_path):
    """The limit bounds the whole batch: a child still importing transformers is killed at it, nothing is kept."""
    if not metacount.available():
        pytest.skip("needs torch and transformers")
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(metacount, "_cache", {})
    started = time.monotonic()
    counts = metacount.meta_count_many(_configs(11, 12, 13), timeout=0.3)     # transformers' import takes seconds
    assert time.monotonic() - started < 0.3 + 5          # the kill, not the import, ends it (slack for a busy machine)
    assert [c.error for c in counts] == ["timeout"] * 3 and not (tmp_path / "cache" / "oomdoctor").exists()
