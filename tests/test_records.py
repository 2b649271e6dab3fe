"""`@record` (oomdoctor/records.py) behaves as `@dataclass` at about half the import cost."""
from __future__ import annotations

import dataclasses
import math

import pytest

from oomdoctor.records import record


def _twins(frozen: bool):
    """The same class body under @record and under @dataclass, with fields of every kind."""
    def body():
        return {
            "__annotations__": {"a": "int", "b": "float", "c": "str", "d": "tuple", "e": "object"},
            "b": 0.0,
            "c": dataclasses.field(default="x", compare=False),
            "d": dataclasses.field(default=(), repr=False),
            "e": dataclasses.field(default=None, hash=False),
        }
    fast = record(frozen=frozen)(type("Thing", (), body()))
    slow = dataclasses.dataclass(frozen=frozen)(type("Thing", (), body()))
    return fast, slow


def _samples(cls):
    nan = math.nan
    return [cls(1), cls(1, 2.5), cls(1, c="y"), cls(2, d=(1,)), cls(1, e=[1]), cls(1, nan), cls(1, nan, e=nan)]


@pytest.mark.parametrize("frozen", [True, False])
def test_record_compares_hashes_and_shows_like_dataclass(frozen):
    fast, slow = _twins(frozen)
    fs, ss = _samples(fast), _samples(slow)
    assert [repr(x) for x in fs] == [repr(x) for x in ss]
    for (f1, s1) in zip(fs, ss):
        assert (f1 == object()) == (s1 == object())
        assert f1.__eq__(object()) is NotImplemented and s1.__eq__(object()) is NotImplemented
        for (f2, s2) in zip(fs, ss):
            assert (f1 == f2) == (s1 == s2) and (f1 != f2) == (s1 != s2)
    assert fs[5] == fs[5] and ss[5] == ss[5]           # the same NaN object: equal, as tuples compare
    if frozen:
        hashable = [i for i, s in enumerate(ss) if not isinstance(s.e, list)]
        assert [hash(fs[i]) for i in hashable] == [hash(ss[i]) for i in hashable]
        with pytest.raises(dataclasses.FrozenInstanceError):
            fs[0].a = 5
    else:
        assert fast.__hash__ is None and slow.__hash__ is None
    assert [f.name for f in dataclasses.fields(fast)] == [f.name for f in dataclasses.fields(slow)]
    assert dataclasses.replace(fs[0], a=7) == fast(7)


def test_record_shows_a_record_inside_itself_as_dots_like_dataclass():
    fast, slow = _twins(False)
    f, s = fast(1), slow(1)
    f.e, s.e = [f], [s]
    assert repr(f) == repr(s) == "Thing(a=1, b=0.0, c='x', e=[...])"


def test_record_keeps_methods_the_class_defines():
    @record
    class Own:
        a: int

        def __repr__(self) -> str:
            return "own"

        def __hash__(self) -> int:
            return 7

    assert repr(Own(1)) == "own" and hash(Own(1)) == 7 and Own(1) == Own(1)


def test_every_fact_and_stage_record_matches_its_dataclass_twin():
    """Each class built with @record against a @dataclass built from the same fields, on its defaults."""
    import importlib

    mods = ["oomdoctor.facts", "oomdoctor.pipeline", "oomdoctor.planner.rules", "oomdoctor.planner.engine",
            "oomdoctor.planner.registry", "oomdoctor.crashlog.formats", "oomdoctor.crashlog.context",
            "oomdoctor.crashlog.parse", "oomdoctor.crashlog.source", "oomdoctor.patch.build", "oomdoctor.gpus",
            "oomdoctor.calibrate", "oomdoctor.configs._doc"]
    checked = 0
    for name in mods:
        for cls in vars(importlib.import_module(name)).values():
            if not (isinstance(cls, type) and "__record_compare__" in cls.__dict__):
                continue
            frozen = cls.__dataclass_params__.frozen
            twin = dataclasses.make_dataclass(
                cls.__name__, [(f.name, f.type, dataclasses.field(
                    default=f.default, default_factory=f.default_factory, repr=f.repr, hash=f.hash,
                    compare=f.compare)) for f in dataclasses.fields(cls)], frozen=frozen)
            required = [f for f in dataclasses.fields(cls)
                        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
            kw = {f.name: 1 for f in required}
            a, b = cls(**kw), twin(**kw)
            assert repr(a).replace(cls.__qualname__, cls.__name__, 1) == repr(b), cls
            assert (a == cls(**kw)) == (b == twin(**kw)), cls
            if frozen:
                try:
                    expected = hash(b)
                except TypeError:          # a mapping default: unhashable either way
                    with pytest.raises(TypeError):
                        hash(a)
                else:
                    assert hash(a) == expected, cls
            checked += 1
    assert checked >= 30
