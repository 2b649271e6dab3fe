"""Set one key of a JSON text (DeepSpeed configs) by splicing at spans our own scanner records.

`json.loads` forgets positions, so a small recursive scanner keeps, for every value, where it
starts and ends; the editor then replaces or inserts text and leaves all other bytes alone.
It accepts what DeepSpeed's `json.load` accepts: strict JSON plus NaN / Infinity.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..facts import msg
from .scalars import json_value, same_value

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = (("true", True), ("false", False), ("null", None),
             ("NaN", float("nan")), ("Infinity", float("inf")), ("-Infinity", float("-inf")))


@dataclass
class JNode:
    kind: str                 # object | array | scalar
    start: int                # offset of the first character
    end: int                  # offset just past the last character
    value: Any = None         # python value (scalars only)
    pairs: list[tuple[str, int, JNode]] = field(default_factory=list)   # (key, key offset, value) for objects
    items: list[JNode] = field(default_factory=list)

    def python(self) -> Any:
        if self.kind == "object":
            return {k: v.python() for k, _, v in self.pairs}
        if self.kind == "array":
            return [v.python() for v in self.items]
        return self.value

    def find(self, key: str) -> tuple[str, int, JNode] | None:
        found = None
        for pair in self.pairs:
            if pair[0] == key:
                found = pair
        return found


class _Scanner:
    def __init__(self, text: str, path: str | None) -> None:
        self.text = text
        self.path = path

    def fail(self, pos: int, problem: str) -> InputError:
        """`problem` names a write.json_problem.* code: the scanner's complaint, in the user's language."""
        return InputError(msg("input.json_syntax", problem=msg(f"write.json_problem.{problem}")), self.path,
                          self.text.count("\n", 0, pos) + 1)

    def ws(self, pos: int) -> int:
        m = _WS.match(self.text, pos)
        assert m is not None            # it matches the empty string too
        return m.end()

    def document(self) -> JNode:
        pos = self.ws(1 if self.text.startswith("\ufeff") else 0)
        node = self.value(pos)
        end = self.ws(node.end)
        if end != len(self.text):
            raise self.fail(end, "extra_text")
        return node

    def value(self, pos: int, depth: int = 0) -> JNode:
        if depth > 200:
            raise self.fail(pos, "too_deep")
        ch = self.text[pos:pos + 1]
        if ch == "{":
            return self.object(pos, depth)
        if ch == "[":
            return self.array(pos, depth)
        return self.scalar(pos)

    def object(self, pos: int, depth: int) -> JNode:
        text = self.text
        node = JNode("object", pos, pos)
        pos = self.ws(pos + 1)
        if text[pos:pos + 1] == "}":
            node.end = pos + 1
            return node
        while True:
            m = _STRING.match(text, pos)
            if not m:
                raise self.fail(pos, "expected_key")
            key = json.loads(m.group())
            pos = self.ws(m.end())
            if text[pos:pos + 1] != ":":
                raise self.fail(pos, "expected_colon")
            child = self.value(self.ws(pos + 1), depth + 1)
            node.pairs.append((key, m.start(), child))
            pos = self.ws(child.end)
            if text[pos:pos + 1] == ",":
                pos = self.ws(pos + 1)
                continue
            if text[pos:pos + 1] == "}":
                node.end = pos + 1
                return node
            raise self.fail(pos, "expected_comma_brace")

    def array(self, pos: int, depth: int) -> JNode:
        text = self.text
        node = JNode("array", pos, pos)
        pos = self.ws(pos + 1)
        if text[pos:pos + 1] == "]":
            node.end = pos + 1
            return node
        while True:
            child = self.value(pos, depth + 1)
            node.items.append(child)
            pos = self.ws(child.end)
            if text[pos:pos + 1] == ",":
                pos = self.ws(pos + 1)
                continue
            if text[pos:pos + 1] == "]":
                node.end = pos + 1
                return node
            raise self.fail(pos, "expected_comma_bracket")

    def scalar(self, pos: int) -> JNode:
        text = self.text
        ch = text[pos:pos + 1]
        if ch == '"':
            m = _STRING.match(text, pos)
            if not m:
                raise self.fail(pos, "bad_string")
            return JNode("scalar", pos, m.end(), json.loads(m.group()))
        for word, literal in _LITERALS:
            if text.startswith(word, pos):
                return JNode("scalar", pos, pos + len(word), literal)
        m = _NUMBER.match(text, pos)
        if m and m.end() > pos:
            number = m.group()
            parsed = float(number) if any(c in number for c in ".eE") else int(number)
            return JNode("scalar", pos, m.end(), parsed)
        raise self.fail(pos, "expected_value" if ch else "end_of_file")


def scan(text: str, path: str | None = None) -> JNode:
    return _Scanner(text, path).document()


def _leading(text: str, pos: int) -> str:
    """The whitespace between the start of the line holding `pos` and the first non-blank character."""
    start = text.rfind("\n", 0, pos) + 1
    m = re.compile(r"[ \t]*").match(text, start)
    assert m is not None                # it matches the empty string too
    return m.group()


def _indent_step(root: JNode, text: str) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.kind == "object" and node.pairs:
            key_pos = node.pairs[0][1]
            if "\n" in text[node.start:key_pos]:
                outer, inner = _leading(text, node.start), _leading(text, key_pos)
                if inner.startswith(outer) and len(inner) > len(outer):
                    return inner[len(outer):]
        stack.extend(v for _, _, v in node.pairs)
        stack.extend(node.items)
    return "  "


def _render(keys: Sequence[str], value: Any, indent: str, step: str, eol: str, multiline: bool) -> str:
    """`"k1": {"k2": value}` for absent keys, spread over lines like the file when it is multi-line."""
    text = json_value(value)
    for depth in range(len(keys) - 1, 0, -1):
        inner_indent = indent + step * depth
        pair = json.dumps(keys[depth], ensure_ascii=False) + ": " + text
        if multiline:
            text = "{" + eol + inner_indent + pair + eol + indent + step * (depth - 1) + "}"
        else:
            text = "{" + pair + "}"
    return json.dumps(keys[0], ensure_ascii=False) + ": " + text


def set_json_key(text: str, key_path: Sequence[str], value: Any, *,
                 after_key: str | None = None, path: str | None = None) -> str:
    keys = [str(k) for k in key_path]
    if not keys:
        raise ValueError("empty key path")
    root = scan(text, path)
    eol = "\r\n" if "\r\n" in text else "\n"
    step = _indent_step(root, text)
    node = root
    for depth, key in enumerate(keys):
        if node.kind != "object":
            where = ".".join(keys[:depth]) or msg("write.top_level")
            raise InputError(msg("write.json_not_object", key=".".join(keys), where=where), path,
                             text.count("\n", 0, node.start) + 1)
        pair = node.find(key)
        if pair is None:
            pretty = node is root or "\n" in text[root.start:root.end]
            return _insert(text, node, keys[depth:], value, after_key, step, eol, pretty)
        _, key_pos, child = pair
        if depth == len(keys) - 1:
            if same_value(child.python(), value if not isinstance(value, tuple) else list(value)):
                return text
            return text[:child.start] + json_value(value, text[child.start:child.end]) + text[child.end:]
        if child.kind == "object":
            node = child
            continue
        if child.kind == "scalar" and child.value is None:
            indent = _leading(text, key_pos)
            multiline = "\n" in text[root.start:root.end]
            rest = _render(["_"] + keys[depth + 1:], value, indent, step, eol, multiline)
            return text[:child.start] + rest[len('"_": '):] + text[child.end:]
        raise InputError(msg("write.json_not_object", key=".".join(keys), where=".".join(keys[:depth + 1])), path,
                         text.count("\n", 0, child.start) + 1)
    raise AssertionError("unreachable")


def _insert(text: str, obj: JNode, keys: list[str], value: Any, after_key: str | None, step: str, eol: str,
            pretty: bool) -> str:
    if not obj.pairs and not pretty:
        return text[:obj.start + 1] + _render(keys, value, "", step, eol, False) + text[obj.end - 1:]
    if not obj.pairs:
        outer = _leading(text, obj.start)
        inner = outer + step
        entry = _render(keys, value, inner, step, eol, True)
        return text[:obj.start + 1] + eol + inner + entry + eol + outer + text[obj.end - 1:]
    anchor = obj.find(after_key.split(".")[-1]) if after_key else None
    if anchor is None:
        anchor = obj.pairs[-1]
    first_key_pos = obj.pairs[0][1]
    multiline = "\n" in text[obj.start:first_key_pos]
    if multiline:
        indent = _leading(text, first_key_pos)
        entry = "," + eol + indent + _render(keys, value, indent, step, eol, True)
    else:
        entry = ", " + _render(keys, value, "", step, eol, False)
    pos = anchor[2].end
    return text[:pos] + entry + text[pos:]
