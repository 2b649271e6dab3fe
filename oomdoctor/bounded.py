"""Reading small input files (configs, rules, prices, model config.json) so that no file can hang or
exhaust the machine: sizes capped, non-regular files read once and never waited on, YAML aliases
expanded within a budget, nesting depth bounded, JSON's NaN/Infinity refused.

Every check fails as an InputError naming the file (and line): exit 2, never a hang or exit 4.
"""
from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import Any, Callable, Optional

from oomdoctor.errors import InputError
from oomdoctor.facts import msg

# A training config, a rule file or a model's config.json is a few KiB; 16 MiB leaves room for
# generated files while keeping a stray multi-GB file (or /dev/zero) from being read whole.
MAX_FILE_BYTES = 16 << 20
# Nodes visited when every alias is expanded. Real configs have a few thousand at most; a
# "billion laughs" file of 600 bytes expands to 10**9.
MAX_NODES = 1_000_000
MAX_DEPTH = 200


# One edge of a composed YAML document (see `walk`): path, key node, node, parent node, depth.
Edge = tuple[Optional[str], Any, Any, Any, int]

FIFO_WAIT_S = 5.0      # how long a FIFO given as an input may take to get its writer


def open_stream(path: str, wait_s: float | None = None) -> int:
    """A read descriptor on a FIFO or device that never hangs: a FIFO is given `wait_s` for its
    writer to arrive (default FIFO_WAIT_S; `mkfifo p; producer > p & oomdoctor p` races), then reads
    as empty."""
    wait_s = FIFO_WAIT_S if wait_s is None else wait_s
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise InputError(msg("input.cannot_read", reason=err.strerror or str(err)), path) from None
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            import select

            if hasattr(select, "poll"):
                # Linux: with no writer yet, poll waits (no hang-up is reported until a writer has come and gone)
                waiter = select.poll()
                waiter.register(fd, select.POLLIN | select.POLLHUP)
                waiter.poll(int(wait_s * 1000))
    except OSError:
        pass
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def stat_input(path: str, missing: str = "input.no_such_file") -> os.stat_result:
    """os.stat of an input named on the command line, or an InputError that says why not: no such file
    (`missing` is the code to use), a symlink loop, or a character or block device (/dev/zero, a
    terminal, a disk), which is refused at once rather than read without end."""
    import errno

    try:
        st = os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise InputError(msg("input.symlink_loop"), path) from None
        if err.errno in (errno.ENOENT, errno.ENOTDIR):
            raise InputError(msg(missing), path) from None
        raise InputError(msg("input.cannot_read", reason=err.strerror or str(err)), path) from None
    if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        raise InputError(msg("input.device"), path)
    return st


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of `path`, at most `limit` of them (an InputError over it).

    A FIFO waits at most FIFO_WAIT_S for a writer (none means it is empty); a character device
    such as /dev/zero and a directory are refused before they are opened.
    """
    st = stat_input(path, "input.no_such_file")
    if stat.S_ISDIR(st.st_mode):
        raise InputError(msg("input.is_directory"), path)
    if stat.S_ISREG(st.st_mode):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as err:
            raise InputError(msg("input.cannot_read", reason=err.strerror or str(err)), path) from None
    else:
        fd = open_stream(path)
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as err:
        raise InputError(msg("input.cannot_read", reason=err.strerror or str(err)), path) from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputError(msg("input.too_big", limit_mib=limit >> 20), path)
    return b"".join(chunks)


def read_utf8(path: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of a UTF-8 input (a rule file, a price list), read by `read_bytes`; other bytes are an
    InputError with the line where they start."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(msg("input.not_utf8"), path, data.count(b"\n", 0, err.start) + 1) from None


# The roots of the last texts composed, per loader and text: the config reader and the patch writer both need
# the nodes of the same file (values and lines; exact spans), and a big config is composed once per run.
_COMPOSED: dict[tuple[int, str], Any] = {}
_COMPOSED_MAX = 8


def yaml_loader(text: str | None = None) -> Any:
    """The YAML loader every reader uses: libyaml's (~10x faster) when PyYAML was built with it, else the
    pure-Python one. Given the text whose marks a caller will splice at, a BOM-led text gets the pure
    loader: libyaml skips the BOM without counting it, so its offsets would be one character short."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)
    if fast is None or (text is not None and text.startswith("\ufeff")):
        return yaml.SafeLoader
    return fast


def compose_yaml(text: str, path: str | None, *, loader: Any = None) -> Any:
    """`yaml.compose` (libyaml when present), then checked: aliases within budget, no alias cycle,
    nesting within MAX_DEPTH. Returns the root node (None for an empty document); the same text with
    the same loader again returns the same nodes, which callers only read."""
    if loader is None:
        loader = yaml_loader()
    key = (id(loader), text)
    if key in _COMPOSED:
        return _COMPOSED[key]
    root = _compose_checked(text, path, loader)
    if len(_COMPOSED) >= _COMPOSED_MAX:
        _COMPOSED.pop(next(iter(_COMPOSED)))
    _COMPOSED[key] = root
    return root


def _compose_checked(text: str, path: str | None, loader: Any) -> Any:
    import yaml

    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "syntax error"
        raise InputError(msg("input.yaml_syntax", problem=problem), path, mark.line + 1 if mark else None) from None
    except yaml.YAMLError as err:
        raise InputError(msg("input.yaml_syntax", problem=str(err).splitlines()[0] if str(err) else "?"),
                         path) from None
    except RecursionError:
        raise InputError(msg("input.too_deep", depth=MAX_DEPTH), path) from None
    # Without an anchor (`&name`) there is no alias to expand, and without more brackets than MAX_DEPTH no
    # flow nesting that deep (libyaml's own bound depends on the Python and PyYAML build: 3.9's lets 3,000
    # levels through); the walk costs ~20% of a compose, so most files are spared it.
    if root is not None and ("&" in text or text.count("[") + text.count("{") > MAX_DEPTH):
        check_nodes(root, path)
    return root


def check_nodes(root: Any, path: str | None) -> None:
    """Walk the node graph as a constructor would (every alias expanded), within MAX_NODES visits
    and MAX_DEPTH levels, refusing an alias that contains itself."""
    import yaml

    visits = 0
    # (node, depth, ancestors-on-path) with an explicit exit marker so the path set stays exact.
    on_path: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            continue
        visits += 1
        if visits > MAX_NODES:
            raise InputError(msg("input.too_many_aliases", nodes=MAX_NODES), path, node.start_mark.line + 1)
        if depth > MAX_DEPTH:
            raise InputError(msg("input.too_deep", depth=MAX_DEPTH), path, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            continue
        if id(node) in on_path:
            raise InputError(msg("input.alias_cycle"), path, node.start_mark.line + 1)
        on_path.add(id(node))
        stack.append((node, depth, True))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1, False))
                stack.append((value, depth + 1, False))
        else:
            stack.extend((child, depth + 1, False) for child in node.value)


def load_yaml(text: str, path: str) -> Any:
    """The data of a YAML text, after compose_yaml's checks."""
    root = compose_yaml(text, path)
    return None if root is None else construct_yaml(root, text, path)


def construct_yaml(root: Any, text: str, path: str) -> Any:
    """The data of a composed document (safe tags only); a value its tag cannot be is an InputError with its line."""
    import yaml

    try:
        return yaml_loader()(text).construct_document(root)
    except yaml.YAMLError as err:       # a bad tag value: `stage: !!int sft`
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InputError(msg("input.yaml_syntax", problem=problem), path, mark.line + 1 if mark else None) from None
    except (ValueError, TypeError, OverflowError) as err:     # `stage: !!int sft`, `!!float 1e400`
        problem = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(msg("input.yaml_syntax", problem=problem), path,
                         _failing_scalar_line(root)) from None
    except RecursionError:
        raise InputError(msg("input.too_deep", depth=MAX_DEPTH), path) from None


def walk(root: Any, leaf: Callable[[Any], bool] | None = None) -> Iterator[Edge]:
    """Every edge under the composed `root`, in document order, as (path, key node, node, parent node, depth):
    `path` is the dotted key path (`a.b.c`; a list item's index is a part: `a.0.b`), None under a key that is
    not a plain scalar; `key` is the key node (None for a list item and the root). Iterative: a collection
    nested hundreds deep costs no recursion; a collection is entered once (an alias used many times is one
    walk, under the first path that reaches it). `leaf(node)` true: its children are not visited."""
    from yaml.nodes import MappingNode, ScalarNode

    if root is None:
        return
    stack: list[Edge] = [("", None, root, None, 0)]
    entered: set[int] = set()
    while stack:
        edge = stack.pop()
        yield edge
        path, _, node, _, depth = edge
        if isinstance(node, ScalarNode) or id(node) in entered or (leaf is not None and leaf(node)):
            continue
        entered.add(id(node))
        prefix = None if path is None else (path + "." if path else "")
        if isinstance(node, MappingNode):
            stack.extend((None if prefix is None or not isinstance(k, ScalarNode) else prefix + k.value,
                          k, v, node, depth + 1) for k, v in reversed(node.value))
        else:
            stack.extend((None if prefix is None else f"{prefix}{i}", None, item, node, depth + 1)
                         for i, item in reversed(list(enumerate(node.value))))


def yaml_nodes(root: Any, leaf: Callable[[Any], bool] | None = None) -> Iterator[Any]:
    """Every node under `root` once (keys and values), in document order, from `walk`."""
    seen: set[int] = set()
    for _, key, node, _, _ in walk(root, leaf):
        for item in (node,) if key is None else (key, node):
            if id(item) not in seen:
                seen.add(id(item))
                yield item


def _failing_scalar_line(root: Any) -> int | None:
    """The line of the first scalar the safe constructor cannot build on its own (error path only)."""
    import yaml

    for node in yaml_nodes(root):
        if isinstance(node, yaml.ScalarNode):
            try:
                yaml.constructor.SafeConstructor().construct_object(node)
            except (ValueError, TypeError, yaml.YAMLError):
                return node.start_mark.line + 1
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def load_json(text: str, path: str, *, constants: bool = False) -> Any:
    """json.loads with NaN/Infinity refused (`constants=True`: read as floats, for a model's config.json, which
    the readers then refuse wherever a size needs a number); nesting past Python's recursion limit (a
    3,000-deep file) is an error naming the file, not a RecursionError."""
    try:
        data = json.loads(text, parse_constant=float if constants else _no_constant)
    except json.JSONDecodeError as err:
        raise InputError(msg("input.json_syntax", problem=err.msg), path, err.lineno) from None
    except RecursionError:
        raise InputError(msg("input.too_deep", depth=MAX_DEPTH), path) from None
    except ValueError as err:
        raise InputError(msg("input.json_constant", name=str(err)), path) from None
    # Python 3.13 decodes nesting far past MAX_DEPTH without a RecursionError: measure it then.
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        raise InputError(msg("input.too_deep", depth=MAX_DEPTH), path)
    return data


def _depth(data: Any) -> int:
    """How deep lists and dicts nest in `data` (iteratively: the data may be deeper than the stack)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest
