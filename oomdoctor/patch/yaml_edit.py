"""Set one key of a YAML text by splicing at the spans `yaml.compose` reports.

Every byte outside the replaced value (comments, quoting, key order, blank lines, CRLF) stays.
Marks must be character offsets into the str we splice: libyaml's are (and it is ~10x faster),
except after a BOM, so its spans are checked and the pure-Python loader is the fallback.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..bounded import compose_yaml, walk, yaml_loader, yaml_nodes
from ..errors import InputError
from ..facts import msg
from ..lazyre import lazy_re
from .scalars import same_value, yaml_scalar

_ALIAS_AFTER_KEY = lazy_re(r"[ \t]*:[ \t]*(\*[^\s,\[\]{}]+)")


def _yaml() -> Any:
    import yaml

    return yaml


def line_ending(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def compose(text: str, path: str | None) -> Any:
    yaml = _yaml()
    loader = yaml_loader(text)
    root = compose_yaml(text, path, loader=loader)          # aliases and depth bounded there
    if loader is yaml.SafeLoader or _spans_match(root, text):
        return root
    return compose_yaml(text, path, loader=yaml.SafeLoader)     # the pure loader's marks are character offsets


def _spans_match(root: Any, text: str) -> bool:
    """True when every plain key's span reads back as the key: the marks are offsets into `text`."""
    yaml = _yaml()
    for _, key_node, _, _, _ in walk(root):
        if isinstance(key_node, yaml.ScalarNode) and not key_node.style and key_node.value \
                and text[key_node.start_mark.index:key_node.end_mark.index] != key_node.value:
            return False
    return True


def _construct(node: Any) -> Any:
    yaml = _yaml()
    return yaml.SafeLoader("").construct_document(node)


def _find_pair(mapping: Any, key: str) -> tuple[Any, Any] | None:
    scalar = _yaml().ScalarNode
    for key_node, value_node in reversed(mapping.value):  # duplicate keys: the last one wins, as in every loader
        if key_node.value == key and isinstance(key_node, scalar):
            return key_node, value_node
    return None


def _content_end(node: Any, text: str) -> int:
    """Offset just past the last character that belongs to `node` (block scalars lose their trailing breaks).

    Iterative, each node once: a block collection nested hundreds deep, or one that repeats an
    alias many times, costs one visit per distinct node."""
    yaml = _yaml()
    best = node.start_mark.index
    for item in yaml_nodes(node, leaf=lambda n: n.flow_style):
        if isinstance(item, yaml.ScalarNode) or item.flow_style:
            end = item.end_mark.index
            if isinstance(item, yaml.ScalarNode) and item.style in ("|", ">"):
                while end > item.start_mark.index and text[end - 1] in "\r\n":
                    end -= 1
            best = max(best, end)
        else:
            best = max(best, item.start_mark.index)
    return best


def _line_end(text: str, pos: int) -> int:
    """Offset of the line break (or end of text) of the line holding `pos`."""
    nl = text.find("\n", pos)
    if nl < 0:
        return len(text)
    return nl - 1 if nl > 0 and text[nl - 1] == "\r" else nl


def _indent_step(root: Any) -> int:
    """The file's indentation step: the column difference between a key and its nested keys."""
    yaml = _yaml()
    stack = [root] if root is not None else []
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode) and not node.flow_style:
            for key_node, value_node in node.value:
                if isinstance(value_node, yaml.MappingNode) and not value_node.flow_style and value_node.value:
                    step = value_node.value[0][0].start_mark.column - key_node.start_mark.column
                    if step > 0:
                        return step
                stack.append(value_node)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return 2


def _key_text(key: str) -> str:
    return yaml_scalar(str(key))


def _block_lines(keys: Sequence[str], value: Any, column: int, step: int) -> list[str]:
    lines = []
    for depth, key in enumerate(keys[:-1]):
        lines.append(" " * (column + depth * step) + _key_text(key) + ":")
    lines.append(" " * (column + (len(keys) - 1) * step) + _key_text(keys[-1]) + ": " + yaml_scalar(value))
    return lines


def _flow_entry(keys: Sequence[str], value: Any) -> str:
    text = yaml_scalar(value)
    for key in reversed(keys[1:]):
        text = "{" + _key_text(key) + ": " + text + "}"
    return _key_text(keys[0]) + ": " + text


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _skip_properties(text: str, start: int, end: int) -> int:
    """Step over an anchor (&a) or tag (!!str) that the node's start mark includes."""
    while start < end and text[start] in "&!":
        m = re.compile(r"[^\s]+[ \t]*").match(text, start)
        start = m.end() if m else end
    return start


def set_yaml_key(text: str, key_path: Sequence[str], value: Any, *,
                 after_key: str | None = None, path: str | None = None) -> str:
    """Return `text` with `key_path` set to `value`; unchanged when it already holds that value."""
    yaml = _yaml()
    keys = [str(k) for k in key_path]
    if not keys:
        raise ValueError("empty key path")
    root = compose(text, path)
    step = _indent_step(root)
    eol = line_ending(text)
    if isinstance(root, yaml.ScalarNode) and root.value in ("", "~", "null") and not root.style:
        root = None                              # "---" alone, or an explicit null document: nothing to keep
    if root is None:
        # Empty document (or only comments): append the keys as top-level lines.
        block = eol.join(_block_lines(keys, value, 0, step))
        sep = "" if not text or text.endswith("\n") else eol
        return text + sep + block + eol

    node = root
    for depth, key in enumerate(keys):
        where = ".".join(keys[:depth]) or msg("write.top_level")
        if not isinstance(node, yaml.MappingNode):
            raise InputError(msg("write.yaml_not_mapping", key=".".join(keys), where=where), path,
                             node.start_mark.line + 1)
        pair = _find_pair(node, key)
        if pair is None:
            return _insert(text, node, keys[depth:], value, after_key, step, eol)
        key_node, value_node = pair
        if depth == len(keys) - 1:
            return _replace(text, key_node, value_node, value, node.flow_style, path)
        if isinstance(value_node, yaml.MappingNode):
            node = value_node
            continue
        if isinstance(value_node, yaml.ScalarNode) and _construct(value_node) in (None, ""):
            return _fill_null(text, node, key_node, value_node, keys[depth + 1:], value, step, eol)
        raise InputError(msg("write.yaml_not_mapping", key=".".join(keys), where=".".join(keys[:depth + 1])),
                         path, value_node.start_mark.line + 1)
    raise AssertionError("unreachable")


def set_yaml_keys(text: str, edits: Sequence[tuple[Sequence[str], Any, str | None]], *,
                  path: str | None = None) -> str:
    """Set several keys from one compose of `text`: values the file holds are replaced and absent keys
    inserted at spans of that one node tree (spliced from the end, so earlier positions stay valid).
    Each compose of a 100k-key file costs seconds, so a plan that adds keys must not compose per key.
    Edits whose places depend on each other (a parent two edits create, a null parent filled, an
    `after_key` another edit adds, an empty mapping) are set one by one, which gives the same bytes."""
    yaml = _yaml()
    edits = [(tuple(str(k) for k in keys), value, after) for keys, value, after in edits]
    # A key set twice, or a key and one inside it, are set in order: the second edit sees the first one's text.
    paths = {keys for keys, _, _ in edits}
    nested = any(keys[:n] in paths for keys in paths for n in range(1, len(keys)))
    root = compose(text, path) if len(paths) == len(edits) > 1 and not nested else None
    if not isinstance(root, yaml.MappingNode):
        for keys, value, after in edits:
            text = set_yaml_key(text, keys, value, after_key=after, path=path)
        return text
    splices: list[tuple[int, int, str]] = []
    rest = []
    replaced: set[int] = set()
    for keys, value, after in edits:
        found = _existing_leaf(root, keys)
        if found is None:
            rest.append((keys, value, after))
            continue
        parent, key_node, value_node = found
        splice = _replacement(text, key_node, value_node, value, parent.flow_style, path)
        if splice is not None:
            splices.append(splice)
            replaced.add(id(value_node))
    inserts = _insert_splices(text, root, rest, replaced) if rest else []
    if inserts is not None:
        splices += inserts
        rest = []
    splices.sort(key=lambda s: (s[0], s[1]))
    if any(a[1] > b[0] for a, b in zip(splices, splices[1:])):      # overlapping spans: one at a time
        rest = edits
        splices = []
    for start, end, new in reversed(splices):
        text = _splice(text, start, end, new)
    for keys, value, after in rest:
        text = set_yaml_key(text, keys, value, after_key=after, path=path)
    return text


def _insert_splices(text: str, root: Any, edits: Sequence[tuple[Sequence[str], Any, str | None]],
                    replaced: set[int]) -> list[tuple[int, int, str]] | None:
    """The splices that insert absent keys, all placed in the tree of `root` as set_yaml_key would place
    them one after another; None when one edit's place depends on another's (see set_yaml_keys), or
    lies inside a value another edit replaces (`replaced`: node ids).

    One after another, keys inserted at one spot of one mapping stack up: a key placed after the
    mapping's last entry goes after those already there (the last of them is now the last entry), a key
    placed after a named key goes straight after that key, before the others placed after it."""
    yaml = _yaml()
    step, eol = _indent_step(root), line_ending(text)
    at: dict[int, tuple[int, list[tuple[str, str]]]] = {}   # position -> (mapping id, [(key, text)] in order)
    placed: dict[tuple[int, str], int] = {}                  # (mapping id, inserted key) -> its position
    for keys, value, after_key in edits:
        node, depth = root, 0
        while True:                              # down to the mapping that lacks keys[depth]
            if not isinstance(node, yaml.MappingNode) or id(node) in replaced:
                return None
            pair = _find_pair(node, keys[depth])
            if pair is None:
                break
            if depth == len(keys) - 1:
                return None                      # present after all: one by one
            node, depth = pair[1], depth + 1
        if (id(node), keys[depth]) in placed or not node.value:
            return None                          # a parent another edit creates; an empty mapping
        named = after_key.split(".")[-1] if after_key else None
        anchor = _find_pair(node, named) if named else None
        if node.flow_style:
            new = ", " + _flow_entry(keys[depth:], value)
        else:
            column = node.value[0][0].start_mark.column
            new = eol + eol.join(_block_lines(keys[depth:], value, column, step))
        if named is not None and (id(node), named) in placed:        # after a key an earlier edit inserted
            pos = placed[(id(node), named)]
            group = at[pos][1]
            index = [k for k, _ in group].index(named) + 1
        else:
            end = _content_end((anchor or node.value[-1])[1], text)
            pos = end if node.flow_style else _line_end(text, end)
            owner, group = at.setdefault(pos, (id(node), []))
            if owner != id(node):
                return None                      # a nested mapping's end is its parent's: order unclear
            index = 0 if anchor is not None else len(group)
        group.insert(index, (keys[depth], new))
        placed[(id(node), keys[depth])] = pos
    return [(pos, pos, "".join(t for _, t in group)) for pos, (_, group) in at.items()]


def _existing_leaf(root: Any, keys: Sequence[str]) -> tuple[Any, Any, Any] | None:
    """(mapping, key node, value node) of `keys` when every key on the way exists, else None."""
    yaml = _yaml()
    node = root
    for depth, key in enumerate(keys):
        if not isinstance(node, yaml.MappingNode):
            return None
        pair = _find_pair(node, key)
        if pair is None:
            return None
        if depth == len(keys) - 1:
            return node, pair[0], pair[1]
        node = pair[1]
    return None


def _replace(text: str, key_node: Any, value_node: Any, value: Any, in_flow: bool, path: str | None) -> str:
    splice = _replacement(text, key_node, value_node, value, in_flow, path)
    return _splice(text, *splice) if splice else text


def _replacement(text: str, key_node: Any, value_node: Any, value: Any, in_flow: bool,
                 path: str | None) -> tuple[int, int, str] | None:
    """The splice (start, end, new text) that sets an existing key's value; None when it already holds it."""
    yaml = _yaml()
    start, end = value_node.start_mark.index, value_node.end_mark.index
    if start < key_node.end_mark.index:
        # An alias (*name): its node's marks point at the anchor. Replace the alias text itself.
        m = _ALIAS_AFTER_KEY.match(text, key_node.end_mark.index)
        if m is None:
            raise InputError(msg("write.value_is_alias", key=key_node.value), path, key_node.start_mark.line + 1)
        if isinstance(value_node, yaml.ScalarNode) and \
                same_value(_construct(value_node), value, number_types=True):
            return None
        return (m.start(1), m.end(1), yaml_scalar(value))
    if isinstance(value_node, yaml.ScalarNode):
        if same_value(_construct(value_node), value, number_types=True):
            return None
        start = _skip_properties(text, start, end)
        end = _content_end(value_node, text)
        new = yaml_scalar(value, value_node.style if isinstance(value, str) else None, text[start:end])
        if start == end and text[start - 1:start] == ":":
            new = " " + new                      # "key:" with an empty value
        return (start, end, new)
    if isinstance(value, (list, tuple)) and same_value(_construct(value_node), list(value), number_types=True):
        return None
    new = yaml_scalar(value)
    if value_node.flow_style:
        return (start, end, new)
    # A block collection replaced by a scalar: from the key's end to the collection's last character.
    return (key_node.end_mark.index, _content_end(value_node, text), ": " + new)


def _insert(text: str, mapping: Any, keys: list[str], value: Any, after_key: str | None, step: int, eol: str) -> str:
    anchor = None
    if after_key:
        anchor = _find_pair(mapping, after_key.split(".")[-1])
    if anchor is None and mapping.value:
        anchor = mapping.value[-1]
    if mapping.flow_style:
        entry = _flow_entry(keys, value)
        if anchor is None:
            pos = mapping.start_mark.index + 1
            return _splice(text, pos, pos, entry)
        pos = _content_end(anchor[1], text)
        return _splice(text, pos, pos, ", " + entry)
    if anchor is None:
        # An empty block mapping has no keys to copy the column from; it only arises as a document root.
        column = mapping.start_mark.column
        pos = mapping.start_mark.index
        return _splice(text, pos, pos, eol.join(_block_lines(keys, value, column, step)) + eol)
    column = mapping.value[0][0].start_mark.column
    pos = _line_end(text, _content_end(anchor[1], text))
    return _splice(text, pos, pos, eol + eol.join(_block_lines(keys, value, column, step)))


def _fill_null(text: str, mapping: Any, key_node: Any, value_node: Any, keys: list[str], value: Any, step: int, eol: str) -> str:
    """`parent:` (null or empty) gains its first nested key."""
    start, end = key_node.end_mark.index, _content_end(value_node, text)
    if mapping.flow_style:
        text_new = ": " + "{" + _flow_entry(keys, value) + "}"
        return _splice(text, start, end, text_new)
    text = _splice(text, start, end, ":")
    pos = _line_end(text, start)
    lines = _block_lines(keys, value, key_node.start_mark.column + step, step)
    return _splice(text, pos, pos, eol + eol.join(lines))
