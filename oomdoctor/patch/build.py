"""Turn KeyEdits into patched texts and one unified diff that `git apply` and `patch -p1` accept."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any

from ..errors import InputError
from ..facts import KeyEdit, msg
from ..records import record


@record
class FileStat:
    """What the file looked like when it was read; apply_in_place refuses to write if this changed."""

    mtime_ns: int
    size: int
    sha256: str
    encoding: str = ""           # "" for UTF-8, else the UTF-16/32 codec the file is written back in ...
    bom: bytes = b""             # ... after this byte-order mark

    @classmethod
    def of_bytes(cls, data: bytes, st: os.stat_result, encoding: str = "", bom: bytes = b"") -> FileStat:
        return cls(st.st_mtime_ns, len(data), _sha256_hex(data), encoding, bom)


def _sha256_hex(data: bytes) -> str:
    # CPython's built-in SHA-256 (_sha2 from 3.12, _sha256 before) gives hashlib's digest without
    # loading OpenSSL, which costs ~4 ms of the plain report; hashlib where neither is built in.
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


@record
class FilePatch:
    """One file's text before and after the edits."""

    path: str                    # as given in the KeyEdit
    rel_path: str                # relative to the diff's cwd, "/"-separated
    old_text: str
    new_text: str
    old_stat: FileStat | None    # None for a created file
    created: bool = False
    abs_path: str = ""           # where it is read and written (path resolved against the cwd)

    @property
    def diff(self) -> str:
        return unified_diff(self.old_text, self.new_text, self.rel_path, created=self.created)

    def new_bytes(self) -> bytes:
        """The patched text as the file holds text: UTF-8, or the UTF-16/32 (and BOM) it was read in."""
        st = self.old_stat
        if st is not None and st.encoding:
            return st.bom + self.new_text.encode(st.encoding, errors="replace")
        return self.new_text.encode("utf-8")


@record
class PatchSet:
    """Every file a plan changes; `diff` is one unified diff of them all."""

    files: tuple[FilePatch, ...] = ()
    cwd: str = ""                # directory the rel_paths are relative to

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)

    def __bool__(self) -> bool:
        return bool(self.files)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (str.splitlines also splits on \\x85, \\u2028, ...)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _header_name(name: str) -> str:
    """A file name for a ---/+++ line that git apply and GNU patch both read back whole."""
    if any(c in name for c in '"\\\t\n\r') or not name.isprintable():
        # C-style quoting, as git writes such names; both tools unquote it. A name that is not UTF-8
        # (its bytes came in as surrogates) is written as those bytes, as git does.
        body = name.encode("utf-8", "surrogateescape").decode("latin-1")
        escaped = "".join({"\"": '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(c)
                          or (c if " " <= c < "\x7f" else f"\\{ord(c):03o}") for c in body)
        return '"' + escaped + '"'
    # A trailing tab ends the name for GNU patch, which would otherwise stop at the first space.
    return name + "\t" if " " in name else name


def unified_diff(old: str, new: str, rel_path: str, *, created: bool = False, context: int = 3) -> str:
    import difflib

    if old == new:
        return ""
    from_name = "/dev/null" if created else _header_name("a/" + rel_path)
    out: list[str] = []
    for line in difflib.unified_diff(split_lines(old), split_lines(new), from_name, _header_name("b/" + rel_path),
                                     n=context, lineterm="\n"):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _format_of(path: str, text: str) -> str:
    lower = path.lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.endswith((".sh", ".bash")) or text.startswith("#!"):
        return "shell"
    return "json" if text.lstrip("\ufeff \t\r\n").startswith("{") else "yaml"


def _rel(abs_path: str, cwd: str) -> str:
    return os.path.relpath(abs_path, cwd).replace(os.sep, "/")


def _under(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def diff_base(abs_paths: Sequence[str], cwd: str, prefer: str | None = None) -> str:
    """The folder the diff's a/ b/ names are relative to: the current folder when every file is below
    it; else `prefer` (the folder the diff is exported to) when every file is below that; else the
    deepest folder holding them all. `git apply` refuses a name with `..` in it, so a name never climbs.
    """
    if all(_under(p, cwd) for p in abs_paths):
        return cwd
    if prefer and all(_under(p, prefer) for p in abs_paths):
        return prefer
    return os.path.commonpath([os.path.dirname(p) for p in abs_paths])


def read_text(path: str, shown_as: str | None = None) -> tuple[str, FileStat]:
    """The file's text (UTF-8, BOM kept) and its stat; errors name it as `shown_as` (the user's spelling)."""
    shown = shown_as or path
    try:
        with open(path, "rb") as fh:
            data = fh.read()
            st = os.fstat(fh.fileno())
    except FileNotFoundError:
        raise InputError(msg("input.no_such_file"), shown) from None
    except OSError as err:
        raise InputError(msg("input.cannot_read", reason=err.strerror or str(err)), shown) from None
    from ..textcodec import bom_length, sniff

    codec = sniff(data)
    if codec is not None:               # UTF-16/32: edited as text, written back in its own encoding
        bom = data[:bom_length(data, codec)]
        return data[len(bom):].decode(codec, errors="replace"), FileStat.of_bytes(data, st, codec, bom)
    try:
        text = data.decode("utf-8")      # not utf-8-sig: a BOM stays in the text and is written back
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(msg("input.not_utf8"), shown, line) from None
    return text, FileStat.of_bytes(data, st)


def _leaf_edits(key_path: tuple[str, ...], value: Any) -> Iterator[tuple[tuple[str, ...], Any]]:
    """A mapping value becomes one edit per leaf, so nested keys merge into what the file has."""
    if isinstance(value, Mapping) and value:
        for key, sub in value.items():
            yield from _leaf_edits(key_path + (str(key),), sub)
    else:
        yield key_path, value


def _setter(fmt: str) -> Callable[..., str]:
    # Only the editor the file needs is imported.
    if fmt == "json":
        from .json_edit import set_json_key

        return set_json_key
    if fmt == "shell":
        from .shell_edit import set_shell_flag

        return set_shell_flag
    from .yaml_edit import set_yaml_key

    return set_yaml_key


@record(frozen=False)
class _Draft:
    """A file's text while the edits are applied to it."""

    path: str
    abs_path: str
    old_text: str | None
    old_stat: FileStat | None
    text: str | None
    yaml_edits: list = field(default_factory=list)     # (key path, value, after_key) not yet set


def _flush_yaml(draft: _Draft) -> None:
    if draft.yaml_edits and draft.text is not None:
        from .yaml_edit import set_yaml_keys

        draft.text = set_yaml_keys(draft.text, draft.yaml_edits, path=draft.path)
    draft.yaml_edits = []


def build_patch(edits: Sequence[KeyEdit], *, cwd: str | None = None, prefer: str | None = None) -> PatchSet:
    """Apply `edits` to the files' texts in memory; files whose text does not change are left out.

    Relative paths are taken relative to `cwd` (default: the current directory), and so are the diff
    headers when every file is below it; otherwise they are relative to `prefer` (the export's folder)
    or to the deepest folder holding every file (see diff_base): PatchSet.cwd says which.
    """
    base = os.path.abspath(cwd if cwd is not None else os.getcwd())
    # One step per (file, key): a later edit of the same key overrides an earlier one, so a value
    # that ends where it started leaves the file's own spelling of it alone.
    steps: dict[tuple, tuple[KeyEdit, tuple[str, ...], Any]] = {}
    for n, edit in enumerate(edits):
        abs_path = os.path.normpath(os.path.join(base, os.fspath(edit.file)))
        if edit.create:
            if not isinstance(edit.value, str):
                raise TypeError(f"KeyEdit(create=True) for {edit.file} needs the whole text as a str")
            steps[(abs_path, "create", n)] = (edit, (), edit.value)
            continue
        if not edit.key_path:
            raise ValueError(f"KeyEdit for {edit.file} has an empty key_path")
        for key_path, value in _leaf_edits(tuple(str(k) for k in edit.key_path), edit.value):
            # The first edit of a key fixes its place in the order (later keys may name it as after_key);
            # the last one fixes its value.
            steps[(abs_path, "set", key_path)] = (edit, key_path, {} if isinstance(value, Mapping) else value)

    drafts: dict[str, _Draft] = {}
    for (abs_path, kind, _), (edit, key_path, value) in steps.items():
        draft = drafts.get(abs_path)
        if draft is None:
            if os.path.exists(abs_path):
                text, stat = read_text(abs_path, os.fspath(edit.file))
                draft = _Draft(os.fspath(edit.file), abs_path, text, stat, text)
            else:
                draft = _Draft(os.fspath(edit.file), abs_path, None, None, None)
            drafts[abs_path] = draft
        if kind == "create":
            # An existing file with other content is replaced wholesale; the diff shows exactly that.
            _flush_yaml(draft)
            draft.text = value
            continue
        if draft.text is None:
            raise InputError(msg("write.no_file_to_edit"), draft.path)
        fmt = _format_of(abs_path, draft.text)
        if fmt == "yaml":
            # gathered and set together: a big YAML file is composed once, not once per key
            draft.yaml_edits.append((key_path, value, edit.after_key))
            continue
        draft.text = _setter(fmt)(draft.text, key_path, value, after_key=edit.after_key, path=draft.path)
    for draft in drafts.values():
        _flush_yaml(draft)

    changed = [d for d in drafts.values()
               if d.old_text is None or (d.text if d.text is not None else "") != d.old_text]
    if changed:
        base = diff_base([d.abs_path for d in changed], base, os.path.abspath(prefer) if prefer else None)
    files = []
    for draft in changed:
        old = draft.old_text if draft.old_text is not None else ""
        new = draft.text if draft.text is not None else ""
        files.append(FilePatch(draft.path, _rel(draft.abs_path, base), old, new, draft.old_stat,
                               created=draft.old_text is None, abs_path=draft.abs_path))
    return PatchSet(tuple(files), base)
