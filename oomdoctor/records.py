"""`@record`: `@dataclass(frozen=True)` (or `frozen=False`) at about half the import cost.

For each class, @dataclass compiles generated source for __init__, __repr__, __eq__, __hash__ and the
frozen __setattr__/__delattr__, a few hundred microseconds each; the ~45 classes the plain report
imports spent ~40 ms of a run that should take well under half a second. `record` has dataclasses
build the class with eq=False, repr=False (so only __init__ and the setters are compiled), then gives
it the shared functions below, which read the field names from the class. They return what the
dataclass methods return: tuples of the same fields compared, hashed and shown the same way, and
NotImplemented for another class (tests/test_startup.py checks them against @dataclass's own).
Differences only introspection sees: __dataclass_params__ reads eq=False, repr=False.
"""
from __future__ import annotations

import dataclasses
from _thread import get_ident
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

T = TypeVar("T")

if TYPE_CHECKING:     # typing.dataclass_transform is 3.11+; type checkers read it, the runtime needs none
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: Any) -> Callable[[T], T]:
        return lambda fn: fn


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        names = self.__record_compare__
        return tuple([getattr(self, n) for n in names]) == tuple([getattr(other, n) for n in names])
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(tuple([getattr(self, n) for n in self.__record_hash__]))


_repr_running: set[tuple[int, int]] = set()


def _repr(self: Any) -> str:
    key = (id(self), get_ident())
    if key in _repr_running:            # what dataclasses' recursive_repr guard returns
        return "..."
    _repr_running.add(key)
    try:
        shown = ", ".join([f"{n}={getattr(self, n)!r}" for n in self.__record_repr__])
        return f"{self.__class__.__qualname__}({shown})"
    finally:
        _repr_running.discard(key)


def _make(cls: type, frozen: bool) -> type:
    body = cls.__dict__
    # dataclasses' rule: a __hash__ of None that only came from defining __eq__ is not explicit.
    class_hash = body.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in body))
    own_eq, own_repr = "__eq__" in body, "__repr__" in body
    cls = dataclasses.dataclass(cls, frozen=frozen, eq=False, repr=False)
    fields = dataclasses.fields(cls)
    cls.__record_compare__ = tuple(f.name for f in fields if f.compare)  # type: ignore[attr-defined]
    cls.__record_hash__ = tuple(f.name for f in fields  # type: ignore[attr-defined]
                                if (f.compare if f.hash is None else f.hash))
    cls.__record_repr__ = tuple(f.name for f in fields if f.repr)  # type: ignore[attr-defined]
    if not own_repr:
        cls.__repr__ = _repr  # type: ignore[assignment]
    if not own_eq:
        cls.__eq__ = _eq  # type: ignore[assignment]
    if not explicit_hash:
        # eq with frozen hashes the fields; eq without frozen makes instances unhashable.
        cls.__hash__ = _hash if frozen else None  # type: ignore[assignment]
    return cls


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(*, frozen: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(eq_default=True, frozen_default=True)
def record(cls: Any = None, /, *, frozen: bool = True) -> Any:
    """`@record` is `@dataclass(frozen=True)`; `@record(frozen=False)` is `@dataclass`."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)
