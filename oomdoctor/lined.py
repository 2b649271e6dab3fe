"""Reading a YAML or JSON input with the position of every key: the one reader behind configs, rule files,
price files and a model's config.json.

The positions come from the composed nodes' marks (`yaml.compose`; JSON is YAML's flow style, so a JSON text
composes too), walked once by `bounded.walk`: every dotted key path, nested keys and list items included
(`a.b.c`, `a.0.b`). Each caller keeps only its own checks (rule keys, price entries, config values).
"""
from __future__ import annotations

import re
from dataclasses import field
from typing import Any

from oomdoctor import bounded
from oomdoctor.errors import InputError
from oomdoctor.facts import msg
from oomdoctor.lazyre import lazy_re
from oomdoctor.records import record


@record(frozen=False)
class Lined:
    """A parsed text and where each key path sits in it.

    `lines`: the 1-based line a message about the key names (the value's line for a scalar, the key's for a
    collection); `nodes`: the key node (None for a list item) and value node of each path, for exact spans.
    A key given twice keeps its first position. `root` is None for an empty document or a JSON text YAML
    cannot compose (then `lines` holds leaf key names only)."""

    path: str
    data: Any = None
    lines: dict[str, int] = field(default_factory=dict)
    nodes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    root: Any = None

    def line(self, key: str) -> int | None:
        return self.lines.get(key)

    def key_line(self, key: str) -> int | None:
        """The 1-based line of the key itself (a list item: the item's line)."""
        pair = self.nodes.get(key)
        if pair is None:
            return None
        return int((pair[1] if pair[0] is None else pair[0]).start_mark.line) + 1

    def position(self, key: str) -> tuple[int, int] | None:
        """The 1-based (line, column) where the value of `key` starts."""
        pair = self.nodes.get(key)
        if pair is None:
            return None
        mark = pair[1].start_mark
        return int(mark.line) + 1, int(mark.column) + 1


def index(lined: Lined) -> Lined:
    """Fill `lines` and `nodes` from `lined.root` (document order; first position of a repeated key wins)."""
    from yaml.nodes import ScalarNode

    lines, nodes = lined.lines, lined.nodes
    for path, key, node, _, _ in bounded.walk(lined.root):
        if not path or path in nodes:
            continue
        nodes[path] = (key, node)
        lines[path] = (node if key is None or isinstance(node, ScalarNode) else key).start_mark.line + 1
    return lined


def read_yaml(text: str, path: str, *, data: bool = True) -> Lined:
    """A YAML text composed within bounded's budgets and indexed; `data`: also constructed (safe tags only).
    Every failure is an InputError naming the file and line."""
    root = bounded.compose_yaml(text, path)
    lined = index(Lined(path, root=root))
    if data and root is not None:
        lined.data = bounded.construct_yaml(root, text, path)
    return lined


def read_json(text: str, path: str) -> Lined:
    """A JSON text: data by `bounded.load_json` (NaN refused, depth bounded with the line), positions by
    composing it as YAML; a valid JSON text that YAML 1.1 reads otherwise gets the line of each leaf key name."""
    _check_json_depth(text, path)
    lined = Lined(path, data=bounded.load_json(text, path))
    try:
        lined.root = bounded.compose_yaml(text, path)
    except InputError:
        lined.root = None
    if lined.root is not None:
        return index(lined)
    for m in re.finditer(r'"([^"\\]+)"\s*:', text):
        lined.lines.setdefault(m.group(1), text.count("\n", 0, m.start()) + 1)
    return lined


def locate(text: str, path: str) -> Lined | None:
    """The positions of a text already read (a config.json whose values are in hand), or None when YAML cannot
    compose it."""
    try:
        return read_yaml(text, path, data=False)
    except InputError:
        return None


_JSON_TOKENS = lazy_re(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _check_json_depth(text: str, path: str) -> None:
    """Refuse JSON nested deeper than bounded.MAX_DEPTH, naming the line where it gets too deep (the
    json module would only raise RecursionError, with no line)."""
    if text.count("[") + text.count("{") <= bounded.MAX_DEPTH:
        return
    depth = 0
    for m in _JSON_TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > bounded.MAX_DEPTH:
                raise InputError(msg("input.too_deep", depth=bounded.MAX_DEPTH), path,
                                 text.count("\n", 0, m.start()) + 1)
        elif c in "]}":
            depth -= 1
