"""The closed vocabularies of facts.py (framework, method, precision, phase, crash kind) hold every value the
readers produce from the shipped fixtures, and the configs registry's modules all provide its protocol."""
from __future__ import annotations

import inspect
from pathlib import Path
from typing import get_args

import pytest

from oomdoctor import facts
from oomdoctor.configs import load_config, registry
from oomdoctor.crashlog import parse_log
from oomdoctor.crashlog.parse import GPU_KINDS

DATA = Path(__file__).resolve().parent / "data"
CONFIG_DIRS = ("configs", "real-configs", "scripts")


def _config_files() -> list[Path]:
    return sorted(p for d in CONFIG_DIRS for p in (DATA / d).rglob("*")
                  if p.is_file() and p.suffix in (".yaml", ".yml", ".json", ".sh", ".py"))


def _setups() -> list[facts.TrainingSetup]:
    out = []
    for path in _config_files():
        try:
            out.append(load_config(str(path)))
        except Exception:       # the fixtures of bad input (lf_bad_syntax.yaml, ...) are read by their own tests
            continue
    return out


def test_every_framework_method_and_precision_the_config_readers_give_is_in_its_literal():
    setups = _setups()
    assert len(setups) > 200
    assert {s.framework for s in setups} <= set(get_args(facts.Framework))
    assert {s.method for s in setups} <= set(get_args(facts.Method))
    assert {s.precision for s in setups} <= set(get_args(facts.Precision))
    # the fixtures cover most of each vocabulary, so the check above has something to bite on
    assert len({s.framework for s in setups}) >= 7 and {s.method for s in setups} == set(get_args(facts.Method))


def test_every_crash_kind_and_phase_the_log_parser_gives_is_in_its_literal():
    kinds: set[str] = set()
    phases: set[str] = set()
    for path in sorted((DATA / "logs").rglob("*.log")):
        for event in parse_log(str(path)).events:
            kinds.add(event.kind)
            if event.phase is not None:
                phases.add(event.phase)
    assert len(kinds) >= 10 and len(phases) >= 8
    assert kinds <= set(get_args(facts.CrashKind))
    assert phases <= set(get_args(facts.Phase))


def test_the_parsers_gpu_kinds_are_all_crash_kinds():
    assert set(GPU_KINDS) <= set(get_args(facts.CrashKind))


@pytest.mark.parametrize("name", sorted(registry.FRAMEWORKS))
def test_every_registry_module_provides_the_framework_protocol(name):
    mod = registry.module(name)
    wanted = [n for n in registry.FrameworkModule.__annotations__] + ["detect", "read", "edit"]
    missing = [n for n in wanted if not hasattr(mod, n)]
    assert not missing
    assert mod.FRAMEWORK in get_args(facts.Framework)
    for fn in ("detect", "read", "edit"):
        params = [p for p in inspect.signature(getattr(mod, fn)).parameters.values()
                  if p.default is inspect.Parameter.empty]
        proto = [p for p in inspect.signature(getattr(registry.FrameworkModule, fn)).parameters.values()
                 if p.name != "self"]
        assert len(params) == len(proto), fn
