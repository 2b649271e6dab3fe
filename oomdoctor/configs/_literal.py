"""One reader of Python literals for the config readers: a parsed expression (an `ast` node) to a plain value.

What it accepts, always: constants (`2048`, `"q_proj"`, `None`, `True`); a sign on a number (`-1`, `+0.5`; the
numbers `ast.literal_eval` signs: int, float, complex); lists, tuples and sets of what it accepts; dict displays of
what it accepts (`dicts=False` leaves them out). What each caller adds, as parameters:

- `names`: how a bare name reads (a printed repr's `true`/`null`, an xtuner config's module-level names, a
  script's constants); without it a name is refused.
- `attribute`: how `a.b` reads (xtuner: the dotted name; a script: `args.flag` as the flag's default,
  `torch.bfloat16` as its dtype).
- `call`: how `f(...)` reads, given the node and the reader of its parts (a printed repr: a dataclass's fields or
  a wrapper's one argument; xtuner: mmengine's `dict(type=..., ...)`); without it a call is refused.
- `operators`: the arithmetic allowed between two numbers (`lora_alpha = lora_rank * 2`), Python's own operators;
  a bool is not a number here and dividing by zero is refused.
- `deep`: False reads a list, tuple, set or dict as `ast.literal_eval` would, the names, attributes, calls and
  arithmetic above applying only to the value itself and to arithmetic's operands (a script's reader, as it has
  always read `{"dtype": torch.bfloat16}`: no value).
- `tuples`: keep tuples and sets as such (as `ast.literal_eval` does) rather than as lists (as JSON has them).
- `lenient`: what it cannot read inside a value is None rather than the refusal of the whole (a printed repr or an
  xtuner config keeps the rest). A dict whose key cannot be read (`{**x}`, a list as a key) is refused either way.

`literal(node, tuples=True)` reads what `ast.literal_eval` reads, as it reads it, but for complex sums (`1+2j`). A refused node gives
`REFUSED`, which the caller turns into its own "no value".
"""
from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from typing import Any, Callable

REFUSED: Any = object()

# Python's own operators (the `operator` module) for the arithmetic a caller allows.
_OPERATORS: Mapping[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv}
ARITHMETIC = tuple(_OPERATORS)
_SIGNS: Mapping[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}

Walk = Callable[[ast.AST], Any]


def literal(node: ast.AST, *, names: Callable[[str], Any] | None = None,
            attribute: Callable[[ast.Attribute, Walk], Any] | None = None,
            call: Callable[[ast.Call, Walk], Any] | None = None,
            operators: tuple[type, ...] = (), dicts: bool = True, deep: bool = True, tuples: bool = False,
            lenient: bool = False) -> Any:
    """The value `node` spells, or REFUSED (see the module's docstring for what each option adds)."""
    reader = _Literal(names, attribute, call, operators, dicts, deep, tuples, lenient)
    try:
        return reader.walk(node)
    except (RecursionError, MemoryError):
        return REFUSED


class _Literal:
    def __init__(self, names: Callable[[str], Any] | None, attribute: Callable[[ast.Attribute, Walk], Any] | None,
                 call: Callable[[ast.Call, Walk], Any] | None, operators: tuple[type, ...], dicts: bool, deep: bool,
                 tuples: bool, lenient: bool) -> None:
        self.names, self.attribute, self.call, self.operators = names, attribute, call, operators
        self.dicts, self.deep, self.tuples, self.lenient = dicts, deep, tuples, lenient
        self.unknown = None if lenient else REFUSED

    def part(self, node: ast.AST) -> Any:
        """A part of a value: in a lenient read, what cannot be read is None."""
        value = self.walk(node)
        return None if self.lenient and value is REFUSED else value

    def member(self, node: ast.AST) -> Any:
        """A member of a container: read as `ast.literal_eval` would where the read is not deep."""
        if self.deep:
            return self.part(node)
        value = literal(node, dicts=self.dicts, tuples=self.tuples, lenient=self.lenient)
        return None if self.lenient and value is REFUSED else value

    def walk(self, n: ast.AST) -> Any:
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.UnaryOp) and type(n.op) in _SIGNS and isinstance(n.operand, ast.Constant) \
                and type(n.operand.value) in (int, float, complex):     # ast.literal_eval's signed numbers
            return _SIGNS[type(n.op)](n.operand.value)
        if isinstance(n, ast.Name):
            return self.names(n.id) if self.names is not None else self.unknown
        if isinstance(n, ast.Attribute):
            return self.attribute(n, self.part) if self.attribute is not None else self.unknown
        if isinstance(n, (ast.List, ast.Tuple, ast.Set)):
            return self.sequence(n)
        if isinstance(n, ast.Dict):
            return self.mapping(n) if self.dicts else self.unknown
        if isinstance(n, ast.BinOp) and type(n.op) in self.operators:
            return self.arithmetic(n)
        if isinstance(n, ast.Call):
            if self.call is not None:
                return self.call(n, self.part)
            if isinstance(n.func, ast.Name) and n.func.id == "set" and not n.args and not n.keywords:
                return set() if self.tuples else []     # ast.literal_eval's one call: the empty set
        return self.unknown

    def sequence(self, n: ast.List | ast.Tuple | ast.Set) -> Any:
        items = [self.member(e) for e in n.elts]
        if any(item is REFUSED for item in items):
            return REFUSED
        if not self.tuples or isinstance(n, ast.List):
            return items
        try:
            return tuple(items) if isinstance(n, ast.Tuple) else set(items)
        except TypeError:                               # an unhashable member of a set
            return REFUSED

    def mapping(self, n: ast.Dict) -> Any:
        out: dict[Any, Any] = {}
        for k, v in zip(n.keys, n.values):
            key = (self.walk(k) if self.deep else self.member(k)) if k is not None else REFUSED   # `{**other}`
            if key is REFUSED or isinstance(key, (dict, list)):
                return REFUSED
            value = self.member(v)
            if value is REFUSED:
                return REFUSED
            try:
                out[key] = value
            except TypeError:                           # an unhashable key
                return REFUSED
        return out

    def arithmetic(self, n: ast.BinOp) -> Any:
        left, right = self.part(n.left), self.part(n.right)
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (left, right))
        if not numbers or (isinstance(n.op, (ast.FloorDiv, ast.Div)) and right == 0):
            return self.unknown
        return _OPERATORS[type(n.op)](left, right)
