"""Reading config files once, with the line of every value, and typed access that fails as `file:line: message`.

Every file goes through `oomdoctor.bounded` (size cap, alias budget, depth bound, no NaN in JSON) and is
parsed once per run: `parse_file` keeps the parsed Doc for the file as it is on disk, so classifying a
file, reading it, and reading it again under the version a crash log names cost one parse.
Numbers go through `oomdoctor.values`: finite, integral where they must be, and in range.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import Framework, Msg, Source, TrainingSetup, msg
from oomdoctor.lazyre import lazy_re
from oomdoctor.records import record
from oomdoctor.values import BadValue, as_float, as_int

MISSING = object()

# Errors a foreign script's flag may cause without stopping the run: its own parser may well take a
# word ours does not (`--flash_attn False` is FastChat's bool, not LLaMA-Factory's choice). A number
# that is infinite, absurd or out of range is never tolerated: it would reach the memory model.
_SOFT = frozenset({"input.not_a_number", "input.not_an_integer", "config.not_a_bool", "config.not_a_choice",
                   "config.not_a_scalar"})
_TRUE = ("true", "yes", "1", "on", "y")
_FALSE = ("false", "no", "0", "off", "none", "n")


@record(frozen=False)
class Doc:
    """One parsed mapping: values, and the 1-based line of each dotted key path.

    `tolerant` marks the flags of a script that is not ours: a value of the wrong kind becomes a note
    in `notes` and the key reads as absent."""

    path: str
    data: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    kind: str = "yaml"          # yaml | json | cli
    tolerant: bool = False
    notes: list[Msg] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)    # keys set from another file (script overrides)
    inline: dict[str, str] = field(default_factory=dict)   # files a script writes itself (here-documents)
    header: tuple[str, ...] = ()    # a YAML file's opening comment lines, from line 1 (torchtune's `tune run …`)

    def has(self, key: str) -> bool:
        return self.get(key, MISSING) is not MISSING

    def get(self, key: str, default: Any = None) -> Any:
        node: Any = self.data
        if key in node:                     # flat keys may hold dots (`fsdp_config.x` on a command line)
            return node[key]
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def line(self, key: str) -> int | None:
        return self.lines.get(key)

    def file_of(self, key: str) -> str:
        return self.files.get(key, self.path)

    def src(self, key: str) -> Source:
        return Source(file=self.file_of(key), key=key, line=self.lines.get(key))

    def fail(self, key: str, message: Msg | str) -> InputError:
        return InputError(message, self.file_of(key), self.lines.get(key))

    def where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.file_of(key)}:{line}" if line else self.file_of(key)

    def _bad(self, key: str, message: Msg) -> None:
        if self.tolerant and message.code in _SOFT:
            self.notes.append(msg("config.foreign_value", where=self.where(key), key=key, why=message))
            return None
        raise InputError(message, self.file_of(key), self.lines.get(key))

    # ---- typed getters: None when absent or null; file:line errors (or notes, when tolerant) otherwise

    def int_(self, key: str, *, minimum: int | None = None, maximum: int | None = None) -> int | None:
        v = self.get(key)
        if v is None or v == "":
            return None
        try:
            return as_int(v, key, minimum=minimum, maximum=maximum)
        except BadValue as err:
            self._bad(key, err.message)
            return None

    def float_(self, key: str, *, minimum: float | None = None, maximum: float | None = None) -> float | None:
        v = self.get(key)
        if v is None or v == "":
            return None
        try:
            return as_float(v, key, minimum=minimum, maximum=maximum)
        except BadValue as err:
            self._bad(key, err.message)
            return None

    def bool_(self, key: str) -> bool | None:
        v = self.get(key)
        if v is None or v == "":
            return None
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        self._bad(key, msg("config.not_a_bool", key=key, value=_shown(v)))
        return None

    def str_(self, key: str) -> str | None:
        v = self.get(key)
        if v is None:
            return None
        if isinstance(v, (dict, list)):
            self._bad(key, msg("config.not_a_scalar", key=key, kind=type(v).__name__))
            return None
        return str(v).strip()

    def choice(self, key: str, choices: Iterable[str]) -> str | None:
        """The value lower-cased when it is one of `choices`; None when absent."""
        v = self.str_(key)
        if v is None:
            return None
        options = tuple(choices)
        if v.lower() in options:
            return v.lower()
        self._bad(key, msg("config.not_a_choice", key=key, value=_shown(v), choices=options))
        return None


def _shown(value: Any) -> str:
    from oomdoctor.values import _shown as shown

    return shown(value)


# ---------------------------------------------------------------- reading and parsing

# What YAML 1.1 refuses in a stream (C0 controls but tab/LF/CR, DEL, C1 but NEL, the non-characters);
# found here first so the error names the line, not libyaml's "position 110".
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff\ud800-\udfff]")
_NUL_SNIFF_BYTES = 8192


def read_text(path: str, data: bytes | None = None) -> str:
    """A config's text: bounded in size, UTF-8, and free of the control characters YAML refuses. `data`: its
    bytes when already read (a stream read while sorting the inputs), else the file is read."""
    from oomdoctor.bounded import read_bytes

    if data is None and not os.path.exists(path) and not os.path.islink(path):
        raise InputError(msg("config.no_such_file"), path)
    from oomdoctor.textcodec import decode

    raw = decode(read_bytes(path) if data is None else data)    # UTF-16/32 (by BOM or NUL pattern) as UTF-8 bytes
    if b"\0" in raw[:_NUL_SNIFF_BYTES]:
        raise InputError(msg("config.binary"), path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise InputError(msg("config.not_utf8", offset=err.start), path, line) from None
    bad = _FORBIDDEN.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise InputError(msg("config.control_char", char=f"0x{ord(bad.group()):02X}"), path, line)
    return text


# What a web page, a chat or a word processor does to the characters of a config on its way into a paste; none of
# these is a character any config grammar gives a meaning to, and each has an ASCII one the writer typed:
# - a no-break space (U+00A0, U+202F, U+2007) or an ideographic space (U+3000) where a space was: HTML renders
#   indentation and runs of spaces as `&nbsp;`, which a copy keeps;
# - typographic quotes in pairs (“…”, ‘…’): "smart quotes" of macOS, Word and chat apps; a lone ’ is an apostrophe
#   and stays;
# - a full-width colon (U+FF1A) after a key at the start of a line: a Chinese input method's `：`;
# - an em or en dash (U+2014, U+2013) opening a word before a flag's name: `--` autocorrected;
# - zero-width spaces and joiners (U+200B-U+200D, U+2060, a U+FEFF not at the start): invisible, from web pages.
_SPACES = {"\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u3000": " "}
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_SMART_DOUBLE = re.compile("\u201c([^\u201c\u201d\n]*)\u201d")
_SMART_SINGLE = re.compile("(?<![\\w])\u2018([^\u2018\u2019\n]*)\u2019")
_WIDE_COLON = re.compile("(?m)^([ \\t]*-?[ \\t]*[A-Za-z0-9_.\"'-]+)\uff1a")      # a key: ASCII, not a CJK line
_DASHED_FLAG = re.compile("(?<![\\w-])[\u2014\u2013](?=[A-Za-z])")


def mend_characters(text: str) -> tuple[str, tuple[str, ...]]:
    """The text with those characters put back as typed, and what was mended (empty: nothing was)."""
    kinds: list[str] = []
    if any(c in text for c in _SPACES):
        text = text.translate({ord(k): v for k, v in _SPACES.items()})
        kinds.append("nbsp")
    if _ZERO_WIDTH.search(text):
        text = _ZERO_WIDTH.sub("", text)
        kinds.append("zero_width")
    mended = _SMART_SINGLE.sub("'\\1'", _SMART_DOUBLE.sub('"\\1"', text))
    if mended != text:
        text = mended
        kinds.append("quotes")
    mended = _WIDE_COLON.sub("\\1:", text)
    if mended != text:
        text = mended
        kinds.append("colon")
    mended = _DASHED_FLAG.sub("--", text)
    if mended != text:
        text = mended
        kinds.append("dash")
    return text, tuple(kinds)


# A config carried as data of another format on its way into a paste: the text of a web page's HTML source (every
# `"`, `<`, `>`, `&` written as an entity, html.escape's table), or the file as one JSON string (`"a: 1\\nb: 2"`,
# its newlines `\\n` escapes: an API's or a notebook's JSON holding the file).
_ENTITY = re.compile(r"&(?:quot|amp|lt|gt|apos|#39|#x27|#34);")


def unwrap_encoded(text: str) -> tuple[str, str] | None:
    """(the text decoded, how), or None when the text is not one of those encodings of a file."""
    import html
    import json

    bare = text.strip()
    if len(bare) > 2 and bare[0] == '"' and bare[-1] == '"' and "\n" not in bare and "\\n" in bare:
        try:
            inner = json.loads(bare)
        except ValueError:
            inner = None
        if isinstance(inner, str) and "\n" in inner:
            return inner, "json"
    if _ENTITY.search(text) and not any(c in text for c in '"<>'):
        return html.unescape(text), "html"
    return None


# A config pasted from an issue or a chat keeps its Markdown: a code fence (``` or ~~~, CommonMark §4.5) around
# it, prose around the fence, or a `> ` blockquote (§5.1) on every line. No YAML, JSON or shell line is a bare
# fence, so a file with one is read as its first fenced block.
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^`\n]*$")
_QUOTE = re.compile(r"^[ \t]{0,3}> ?")


def _blank(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]         # the line's end only


def unwrap_markdown(text: str, *, fence: bool = True, block: int = 0) -> tuple[str, str | None]:
    """(the config inside a Markdown paste, how it was wrapped: "fence", "quote", "quote+fence" or None).
    Markdown lines are emptied, never removed, and a quote marker is cut from its line: every line stays
    where the file has it, so errors and provenance name the file's own lines (a paste is never patched).
    `fence=False`: the quote markers only; `block`: which fenced block (0 the first), the text unchanged when the
    paste has fewer."""
    lines = text.splitlines(keepends=True)
    how = []
    filled = [ln for ln in lines if ln.strip()]
    if filled and all(_QUOTE.match(ln) for ln in filled):
        lines = [_QUOTE.sub("", ln, count=1) for ln in lines]
        how.append("quote")
    elif fence and any(_QUOTE.match(ln) and _FENCE.match(_QUOTE.sub("", ln, count=1).rstrip("\r\n")) for ln in lines):
        # A reply quoting a config in a fenced block (`> ````), its own words below the quote: the quoted lines
        # lose their marker, and the fence inside says which of them are the config.
        lines = [_QUOTE.sub("", ln, count=1) if _QUOTE.match(ln) else ln for ln in lines]
        how.append("quote")
    start = 0
    for _ in range(block + 1):
        opened = next((i for i in range(start, len(lines)) if _FENCE.match(lines[i].rstrip("\r\n"))), None) \
            if fence else None
        if opened is None:
            break
        found = _FENCE.match(lines[opened].rstrip("\r\n"))
        mark = found.group(1) if found else "```"
        closed = next((j for j in range(opened + 1, len(lines))
                       if re.match(r"^[ \t]{0,3}" + re.escape(mark[0]) + "{%d,}[ \t]*$" % len(mark),
                                   lines[j].rstrip("\r\n"))), len(lines))
        start = closed + 1
    if block and opened is None:
        return text, None
    if opened is not None:
        lines = [_blank(ln) if not opened < i < closed else ln for i, ln in enumerate(lines)]
        how.append("fence")
    return ("".join(lines), "+".join(how)) if how else (text, None)


def unwrap_code_span(text: str) -> str | None:
    """The command inside a Markdown inline code span that runs over several lines (CommonMark §6.1: a single
    backtick opens the span, the next single backtick closes it; the line ends inside it are the command's own),
    or None. A script pasted that way opens a line with the backtick and closes the span at the end of a later
    line, with no backtick between (or never, when the paste was cut before it closed). The lines around the span (prose) are emptied, and every line stays where the
    file has it. Tried only after the file as written gave no training command: a shell's own backticks
    (command substitution) are not a paste."""
    lines = text.splitlines(keepends=True)
    opened = next((i for i, ln in enumerate(lines) if re.match(r"^[ \t]*`[^`]", ln)), None)
    if opened is None:
        return None
    closed = next((j for j in range(opened, len(lines))
                   if lines[j].rstrip().endswith("`") and lines[j].count("`") == 1 + (j == opened)), None)
    if closed is None and lines[opened].count("`") == 1 and not any("`" in ln for ln in lines[opened + 1:]):
        # A paste cut before the span closed: the span runs to the end of the paste.
        out = [_blank(ln) if i < opened else ln for i, ln in enumerate(lines)]
        out[opened] = out[opened].replace("`", "", 1)
        return "".join(out)
    if closed is None or closed == opened or any("`" in lines[k] for k in range(opened + 1, closed)):
        return None
    out = [_blank(ln) if not opened <= i <= closed else ln for i, ln in enumerate(lines)]
    out[opened] = out[opened].replace("`", "", 1)
    end = out[closed].rstrip("\r\n")
    out[closed] = end[:end.rindex("`")] + out[closed][len(end):]
    return "".join(out)


# compiled on first use: a demo's config holds no prose to search (tests/test_startup_paths.py counts what a run compiles)
_INLINE_SPAN = lazy_re(r"(?<!`)`([^`\n]+)`(?!`)")


def unwrap_inline_spans(text: str) -> str | None:
    """Commands written in inline code spans inside prose (a list item's "Test running with ...: `tune run …`";
    CommonMark §6.1: a backtick string opens a span, the next equal backtick string closes it): each line keeps
    the longest span it holds that reads as a command line (three words or more, one of them a flag or a
    `key=value`), in the span's own words, every other line emptied and each line where the file has it; None when
    no line holds such a span."""
    out = []
    found = False
    for ln in text.splitlines(keepends=True):
        spans = [m.group(1).strip() for m in _INLINE_SPAN.finditer(ln)]
        spans = [sp for sp in spans if len(sp.split()) >= 3 and any(w.startswith("-") or "=" in w for w in sp.split())]
        if spans:
            found = True
            out.append(max(spans, key=len) + ("\n" if ln.endswith("\n") else ""))
        else:
            out.append(_blank(ln))
    return "".join(out) if found else None


# A launcher's name as a word inside a line of prose ("… 参数配置： torchrun --nproc_per_node 1 -m pkg …"), up to the
# line's end; compiled on first use, as the spans above
_PROSE_COMMAND = lazy_re(r"(?:^|[\s:：>(（])((?:torchrun|deepspeed|accelerate\s+launch|llamafactory-cli\s+train|"
                         r"tune\s+run|python3?\s+(?:-m\s+\S+|\S+\.py))\s.*)$")


def unwrap_prose_command(text: str) -> str | None:
    """A launch command written inside a line of prose, not in a code block or span (a reply quoting "my settings:
    torchrun --nproc_per_node 1 -m pkg.train --model_name_or_path …" in one line): from the launcher's name to the
    line's end, when three words or more follow it and one is a flag; every other line emptied, each line where the
    file has it. None when no line holds one. Tried after every other reading of a bare paste."""
    out = []
    found = False
    for ln in text.splitlines(keepends=True):
        m = _PROSE_COMMAND.search(ln.rstrip("\n"))
        words = m.group(1).split() if m else []
        if m and len(words) >= 4 and any(w.startswith("--") for w in words):
            found = True
            out.append(m.group(1) + ("\n" if ln.endswith("\n") else ""))
        else:
            out.append(_blank(ln))
    return "".join(out) if found else None


# A config block a web page renders between paragraphs of prose with its fence lost (a tutorial's "### model" YAML
# under a line of prose, or under the fence's language left as a word: "yaml"): the longest run of YAML mapping
# lines (`key: value`, `key:`, `# comment`, blank lines between them), three keys or more; compiled on first use.
_YAML_LINE = lazy_re(r"^(?:[ \t]*#.*|[ \t]*[A-Za-z_][\w.-]*:(?:[ \t].*)?|[ \t]+-[ \t].*)$")
_YAML_KEY = lazy_re(r"^[ \t]*[A-Za-z_][\w.-]*:")


def unwrap_prose_yaml(text: str) -> str | None:
    """The longest run of YAML mapping lines inside prose (a tutorial page's config with the fence lost), every
    other line emptied, each line where the file has it; None when no run holds three keys or the text is
    nothing but such a run (then it is no paste of this form). Tried after every other reading of a bare paste."""
    lines = text.splitlines(keepends=True)
    best: tuple[int, int, int] = (0, 0, 0)          # (keys, first, last+1)
    i = 0
    while i < len(lines):
        if not _YAML_LINE.match(lines[i].rstrip("\r\n")) or not _YAML_KEY.match(lines[i]):
            i += 1
            continue
        j, keys, end = i, 0, i
        while j < len(lines):
            ln = lines[j].rstrip("\r\n")
            if not ln.strip():
                j += 1
                continue
            if not _YAML_LINE.match(ln):
                break
            keys += bool(_YAML_KEY.match(ln))
            j += 1
            end = j
        if keys > best[0]:
            best = (keys, i, end)
        i = max(j, i + 1)
    keys, first, last = best
    if keys < 3 or not any(ln.strip() for ln in lines[:first] + lines[last:]):
        return None
    return "".join(ln if first <= k < last else _blank(ln) for k, ln in enumerate(lines))


# A shell command a web page flattened onto one line: the newlines of its continuations lost, their backslashes
# kept before each flag (`swift sft \ --model X \ --train_type lora …`), and the prose after the block glued to
# its last word (`--use_flash_attn true就能…`, no space between an ASCII word and CJK text). In bash a `\ ` so
# placed would escape the space (bash(1) QUOTING), which no one writes between flags: each is read as the line
# break it was, and the line ends where CJK prose starts. Compiled on first use.
_FLAT_BREAK = lazy_re(r"[ \t]\\[ \t]+(?=--?[A-Za-z])")
_GLUED_PROSE = lazy_re(r"(?<=[\x21-\x7e])[\u3000-\u9fff\uff00-\uffef]")


def unwrap_flattened_command(text: str) -> str | None:
    """Each line holding two or more ` \\ --flag` breaks, split back into its continuation lines and cut where CJK
    prose is glued to it; every other line emptied. None when no line is so flattened."""
    out = []
    found = False
    for ln in text.splitlines(keepends=True):
        body = ln.rstrip("\r\n")
        if len(_FLAT_BREAK.findall(body)) >= 2:
            found = True
            glued = _GLUED_PROSE.search(body)
            body = body[:glued.start()] if glued else body
            out.append(_FLAT_BREAK.sub(" \\\n", body).strip() + "\n")
        else:
            out.append(_blank(ln))
    return "".join(out) if found else None


# Python code a web page shows between paragraphs of prose with its fence lost, and cut where the page (or its
# excerpt) ends: from its first import line to the last line up to which it is whole Python; compiled on first use.
_PY_IMPORT = lazy_re(r"^(?:from[ \t]+[\w.]+[ \t]+import[ \t]|import[ \t]+[\w.]+)")


def unwrap_prose_python(text: str, *, most: int = 400) -> str | None:
    """The Python inside prose: the lines from the first import line on, up to the last line at which they parse
    (a cut paste loses its unfinished call), prose lines before it emptied, each line where the file has it. None
    when no import line has prose before it or no prefix parses. At most `most` cut points are tried."""
    import ast

    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if _PY_IMPORT.match(ln)), None)
    if start is None or not any(ln.strip() for ln in lines[:start]):
        return None
    for end in range(len(lines), max(start, len(lines) - most), -1):
        code = "".join(lines[start:end])
        try:
            ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        return "".join(_blank(ln) for ln in lines[:start]) + code
    return None


_DIFF_HEAD = lazy_re(r"^(diff --git |index [0-9a-f]|--- |\+\+\+ |@@ )")


def unwrap_diff(text: str) -> str | None:
    """The new side of a unified diff (GNU diffutils, "Unified Format": each line of a hunk opens with `+` for an
    added line, `-` for a removed one, a blank for context), as pasted from a review thread: the `+` and context
    lines without their first character, the headers emptied and the removed lines dropped (so line numbers after
    a removed line are the new side's). None unless every non-blank line is a diff line and at least one was
    added. Tried only after the paste as it stands was not read."""
    lines = text.splitlines(keepends=True)
    body = [ln for ln in lines if ln.strip()]
    if not body or not any(ln.startswith("+") and not ln.startswith("+++ ") for ln in body):
        return None
    if not all(ln[0] in "+- \\" or _DIFF_HEAD.match(ln) for ln in body):
        return None
    out = []
    for ln in lines:
        if ln.startswith("-") and not ln.startswith("--- "):
            continue            # a removed line is dropped: emptied, it would end a `\` continuation above it
        if not ln.strip() or _DIFF_HEAD.match(ln) or ln.startswith("\\"):
            out.append(_blank(ln))
        else:
            out.append(ln[1:])
    return "".join(out)


def looks_like_json(text: str, path: str) -> bool:
    """JSON by name, or an unnamed file that opens with a brace; a .yaml/.yml file is YAML whatever it
    opens with (a flow mapping `{a: 1}` is YAML, and its errors are YAML errors)."""
    low = path.lower()
    if low.endswith((".yaml", ".yml")):
        return False
    return low.endswith(".json") or text.lstrip().startswith("{")


def parse_text(text: str, path: str) -> Doc:
    """Parse YAML or JSON text into a Doc; every failure is an InputError naming the file and line."""
    from oomdoctor import lined

    kind = "json" if looks_like_json(text, path) else "yaml"
    notes: list[Msg] = []
    try:
        read = lined.read_json(text, path) if kind == "json" else lined.read_yaml(text, path)
    except InputError:
        # A paste whose straight quotes a chat app or word processor made typographic (“true”, ‘x’): YAML and
        # JSON quote only with ' and ", so the file as meant has them straight. A value masked before pasting
        # (`dataset: ***`) reads as a YAML alias (spec 1.2 §7.1: `*` opens one) that names nothing: it is the
        # string it shows. Tried only when the file does not parse as written.
        straight = _REDACTED.sub(r"\1'\2'", text.translate(_TYPOGRAPHIC)) if kind == "yaml" else \
            text.translate(_TYPOGRAPHIC)
        try:
            if straight == text and kind == "yaml":
                raise
            read = lined.read_json(straight, path) if kind == "json" else lined.read_yaml(straight, path)
        except InputError as err:
            if kind == "yaml":
                read, mended_notes = _mend_yaml(straight, path, err)
                notes.extend(mended_notes)
            else:
                mended = mend_json(straight)
                if mended is None:
                    raise
                read = lined.read_json(mended, path)
                notes.append(msg("config.json_mended", where=path))
    data = _unquote_typographic(read.data)
    if data is None:
        raise InputError(msg("config.empty"), path)
    if isinstance(data, list):
        from oomdoctor.configs.accelerate_env import config_from_env

        env = env_list(data)
        launcher = config_from_env(env) if env is not None else None
        if launcher is not None:
            return Doc(path, launcher, {}, kind, header=())
    if isinstance(data, str) and kind == "yaml" and not notes:
        # A pasted YAML between `'''` lines parses as one quoted scalar (YAML reads `''` as an escaped quote): the
        # Python string it was, read as the file inside it.
        try:
            read, notes = _mend_yaml(text, path, InputError(msg("config.not_a_mapping", kind="str"), path))
            data = _unquote_typographic(read.data)
        except InputError:
            pass
    if not isinstance(data, dict):
        raise InputError(msg("config.not_a_mapping", kind=type(data).__name__), path)
    return Doc(path, data, read.lines, kind, header=_header(text) if kind == "yaml" else (), notes=notes)


def unlabel(path: str, text: str, claims: Callable[[dict], bool]) -> Doc | None:
    """The config a paste holds under a label, or None: one key over an indented mapping (`Accelerate config:` typed
    above a pasted file), or the `- Accelerate config:` item of an environment report (`transformers env`, `trl env`:
    trl docs/source/clis.md), a list of `- key: value` items. Taken only when a reader `claims` what is inside;
    lines stay the file's own. Tried only when the file as a whole is no config."""
    from oomdoctor import lined

    if looks_like_json(text, path):
        return None
    try:
        read = lined.read_yaml(text.translate(_TYPOGRAPHIC), path)
    except InputError:
        return None
    data = _unquote_typographic(read.data)
    found = _labelled(data) if isinstance(data, list) or (isinstance(data, dict) and len(data) == 1) else None
    if found is None or not claims(found[1]):
        return None
    prefix, inner = found
    lines: dict[str, int] = {}
    for path_, line in read.lines.items():
        if path_.startswith(prefix):
            rest = path_[len(prefix):]
            head, _, tail = rest.partition(".")
            lines.setdefault(tail if head.isdigit() and tail else rest, line)     # `label.3.key`: a one-key item
    label = prefix.rstrip(".").split(".")[-1]
    return Doc(path, inner, lines, "yaml", notes=[msg("config.labelled", where=path, label=label)])


def _labelled(data: Any) -> tuple[str, dict] | None:
    """(the dotted prefix of the labelled part, its mapping) of a one-key mapping or an environment report."""
    items: list[tuple[str, Any]] = []
    if isinstance(data, dict) and len(data) == 1:
        items = [(str(k) + ".", v) for k, v in data.items()]
    elif isinstance(data, list):
        items = [(f"{i}.{k}.", v) for i, item in enumerate(data) if isinstance(item, dict) and len(item) == 1
                 for k, v in item.items()]
    for prefix, value in items:
        if isinstance(value, dict) and value:
            return prefix, value
        if isinstance(value, list) and value and all(isinstance(x, dict) and len(x) == 1 for x in value):
            merged: dict = {}
            for x in value:
                merged.update(x)
            return prefix, merged
    return None


def _cut_line(text: str, line: int | None) -> int | None:
    """The line of a YAML paste cut inside its last line: a key cut before its colon (`eval_step` where
    `eval_steps: 500` was), or a value cut inside its quotes (`adapter_path: "./training_res`, a scalar YAML never
    lets run on past the end: spec 1.2 §7.3); the last line that holds anything, when the parser stopped there or
    in the blank lines after it; None otherwise."""
    lines = text.split("\n")
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1) + 1
    if line is None or line < last or last <= 1:
        return None
    tail = lines[last - 1].rstrip()          # a CRLF file's `\r` too
    quoted = re.fullmatch(r"\s*[\w.-]+:\s*([\"'])(.*)", tail)
    if re.fullmatch(r"\s*[\w.-]+", tail) or (quoted is not None and quoted.group(1) not in quoted.group(2)):
        return last
    return None


# The opening line of a Python triple-quoted string holding a pasted YAML (`'\'\'\'`, `config = """`, `yaml.safe_load(\'\'\'`).
_TRIPLE = lazy_re(r"\s*(?:[\w.]+\s*=\s*)?(?:[\w.]+\(\s*)?[rRbBuU]?('\'\'|\"\"\")\s*")


# A shell prompt (`$`, `%`, `>`, `❯`, PowerShell's `PS …>`) and the command that printed the file, typed above it in
# a paste (`$ cat ./config.yaml`): the file starts on the next line.
_PROMPT = lazy_re(r"\s*(?:[$%>\u276f]|PS [^>\n]*>)\s*(?:cat|type|bat|less|more|head|Get-Content|gc)\s+\S+\s*")


def _mend_yaml(text: str, path: str, err: InputError) -> tuple[Any, list[Msg]]:
    """A YAML paste read as the file it shows: the prompt line that printed it blanked, then a last line cut
    inside a key or a quoted value dropped; each said in a note. Tried only when the text does not parse as
    written; `err` is raised again when no mend makes it parse."""
    from oomdoctor import lined

    notes: list[Msg] = []
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is not None and _TRIPLE.fullmatch(lines[first]):
        # The YAML as a Python string literal (`cfg = yaml.safe_load("""` … `""")` in a notebook cell): its delimiter
        # lines are Python's, the lines between them the file.
        quote = _TRIPLE.fullmatch(lines[first]).group(1)                # type: ignore[union-attr]
        text = _blank_line(text, first + 1)
        close = next((i for i in range(len(lines) - 1, first, -1) if lines[i].strip().startswith(quote)), None)
        if close is not None:
            text = _blank_line(text, close + 1)
        notes.append(msg("config.yaml_python_string", where=f"{path}:{first + 1}"))
        try:
            return lined.read_yaml(text, path), notes
        except InputError as again:
            err = again
        lines = text.split("\n")
    if first is not None and _PROMPT.fullmatch(lines[first]):
        text = _blank_line(text, first + 1)
        notes.append(msg("config.yaml_prompt", where=f"{path}:{first + 1}"))
        try:
            return lined.read_yaml(text, path), notes
        except InputError as again:
            err = again
    cut = _cut_line(text, err.line)
    if cut is None:
        raise err
    read = lined.read_yaml(_blank_line(text, cut), path)
    return read, [*notes, msg("config.yaml_cut", where=path, line=cut)]


def _blank_line(text: str, line: int) -> str:
    lines = text.split("\n")
    lines[line - 1] = ""
    return "\n".join(lines)


_PY_WORDS = {"True": "true", "False": "false", "None": "null"}


def mend_json(text: str) -> str | None:
    """A JSON config as pasted, mended the ways a paste breaks it, or None when nothing was to mend: written as a
    Python dict (`True`/`False`/`None`: DeepSpeed, Lightning and others take the config as a dict), a comma left
    before a closing bracket, members pasted without their enclosing braces (`"zero_optimization": {…},`), and a
    paste cut off mid-value (kept up to its last complete member, the open brackets closed). Every line stays
    where it was, so errors and provenance name the file's own lines."""
    out, stack, cut, complete = _scan_json(text)
    if not complete:
        if cut is None:
            return None
        out, stack = out[:cut[0]], cut[1]
    body = "".join(out).rstrip()
    if body.endswith(","):
        body = body[:-1]
    closing = "".join(reversed(stack))
    if not body.lstrip().startswith(("{", "[")):
        body, closing = "{" + body, closing + "}"         # members pasted without their braces
    mended = body + closing + "\n"
    return None if mended.strip() == text.strip() else mended


def _scan_json(text: str) -> tuple[list[str], list[str], tuple[int, list[str]] | None, bool]:
    """(the text with Python's words as JSON's and trailing commas blanked, the brackets still open, where the last
    complete member ended with the brackets open there, whether the text ended outside any string and bracket)."""
    out: list[str] = []
    stack: list[str] = []
    cut: tuple[int, list[str]] | None = None
    i, n, in_str, quote = 0, len(text), False, '"'
    while i < n:
        c = text[i]
        if in_str:
            if c == "\\" and i + 1 < n:
                out.append(c)
                out.append(text[i + 1])
                i += 1
            elif c == quote:
                out.append('"')
                in_str = False
            elif c == '"':
                out.append('\\"')                  # a " inside a Python '…' string
            elif c == "\n":                         # a string cut at the line's end: the paste broke there
                break
            else:
                out.append(c)
        elif c == "#" or text.startswith("//", i) or text.startswith("/*", i):
            # A comment, as DeepSpeed reads its config (hjson: `#`, `//`, `/* */`; deepspeed/runtime/config.py
            # hjson.load): blanked, its newlines kept.
            if text.startswith("/*", i):
                close = text.find("*/", i + 2)
                end = n if close < 0 else close + 2
            else:
                close = text.find("\n", i)
                end = n if close < 0 else close
            out.extend(ch if ch == "\n" else " " for ch in text[i:end])
            i = end
            continue
        elif c.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(_PY_WORDS.get(text[i:j], text[i:j]))
            i = j
            continue
        else:
            in_str = c in "\"'"          # '…': a Python dict's string, as JSON's "…"
            quote = c if in_str else quote
            if c in "{[":
                stack.append("}" if c == "{" else "]")
            elif c in "}]":
                _blank_trailing_comma(out)
                if stack:
                    stack.pop()
            elif c == ",":
                cut = (len(out), list(stack))
            out.append('"' if in_str else c)
        i += 1
    return out, stack, cut, not in_str and not stack and i >= n


def _blank_trailing_comma(out: list[str]) -> None:
    j = len(out) - 1
    while j >= 0 and out[j].isspace():
        j -= 1
    if j >= 0 and out[j] == ",":
        out[j] = " "                                    # JSON allows no comma before a closing bracket


def _unquote_typographic(node: Any) -> Any:
    """A scalar written between typographic quotes (`“true”`, `‘bf16’`) as the plain value it was meant to be: YAML
    quotes only with ' and ", so such a value parses with the quotes as its own first and last characters."""
    if isinstance(node, dict):
        return {k: _unquote_typographic(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_unquote_typographic(v) for v in node]
    if isinstance(node, str) and len(node) >= 2 and node[0] in "\u201c\u2018\u201e" and node[-1] in "\u201d\u2019" \
            and not any(c in node[1:-1] for c in "\u201c\u201d\u2018\u2019\u201e"):
        return node[1:-1]
    return node


_REDACTED = lazy_re(r"(?m)^(\s*(?:-\s+)?[^\s#:][^:#]*:\s+)(\*{2,})\s*$")
_TYPOGRAPHIC = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})


def env_list(data: list) -> dict[str, str] | None:
    """A container's environment as Kubernetes writes it (a list of `{name: X, value: Y}`, core/v1 EnvVar), as a
    mapping; None when the list is anything else."""
    if not data or not all(isinstance(item, dict) and "name" in item for item in data):
        return None
    return {str(item["name"]): str(item.get("value", "")) for item in data}


_HEADER_BYTES = 16 * 1024


def _header(text: str) -> tuple[str, ...]:
    """The comment and blank lines a YAML text opens with (within its first _HEADER_BYTES)."""
    out: list[str] = []
    for line in text[:_HEADER_BYTES].splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        out.append(line)
    return tuple(out)


# One parse per file per run: keyed by the file as it is on disk, so an edited file is read again.
_PARSED: dict[tuple, Doc] = {}
_PARSED_MAX = 16
PARSE_COUNT = [0]           # parses done in this process (benchmarks/configparse.py reads it)


def _identity(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None         # a FIFO or device is read once, never cached by name
    return (os.path.realpath(path), st.st_ino, st.st_size, st.st_mtime_ns)


def parse_file(path: str, text: str | None = None) -> Doc:
    """The parsed Doc of `path` (from cache when the file is unchanged). The Doc's data is shared:
    readers must not change it."""
    ident = _identity(path)
    cached = _PARSED.get(ident) if ident is not None else None
    if cached is None:
        if text is None:
            text = read_text(path)
        cached = parse_text(text, path)
        PARSE_COUNT[0] += 1
        if ident is not None:
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.pop(next(iter(_PARSED)))
            _PARSED[ident] = cached
    # A fresh Doc per caller (its own path spelling, notes and tolerance); the data is shared.
    return Doc(path, cached.data, cached.lines, cached.kind, header=cached.header, notes=list(cached.notes))


# ---------------------------------------------------------------- building a TrainingSetup


@record(frozen=False)
class Builder:
    """Collects canonical fields with their provenance, then builds the TrainingSetup."""

    framework: Framework
    version: str
    defaults_of: str
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    warnings: list[Msg] = field(default_factory=list)
    framework_reason: Msg | None = None
    version_reason: Msg | None = None

    def set(self, name: str, value: Any, source: Source) -> None:
        self.values[name] = value
        self.sources[name] = source

    def default(self, name: str, value: Any, note: Msg | str | None = None) -> None:
        """A value the framework fills in; its Source says whose default and, in `note`, why: a Msg, or the
        key or expression that holds the default, shown as written ("cutoff_len", "2 × lora_rank")."""
        self.values[name] = value
        self.sources[name] = Source(default=self.default_of(note))

    def default_of(self, note: Msg | str | None = None) -> Msg:
        if note is None or note == "":
            return msg("config.default.of", framework=self.defaults_of)
        return msg("config.default.of_note", framework=self.defaults_of, note=note)

    def from_doc(self, name: str, doc: Doc, key: str, value: Any) -> bool:
        """Set `name` from `doc[key]` when the value is present (not None); True when it was set."""
        if value is None:
            return False
        self.set(name, value, doc.src(key))
        return True

    def keep(self, doc: Doc, keys: Iterable[str]) -> None:
        for k in keys:
            v = doc.get(k)
            if v is not None:
                self.extras[k] = v

    def note(self, message: Msg) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    @classmethod
    def over(cls, framework: Framework, label: str, version: str, ctx: Context) -> Builder:
        """A tool read over another framework's regime (xtuner over transformers, AutoTrain over TRL): the setup's
        framework_version is that framework's release, which memory/regime.py reads, and the tool's own release
        names only whose defaults filled the rest, so the regime's release stays unstated."""
        b = cls(framework, "", f"{label} {version}")
        b.framework_reason, b.version_reason = ctx.reason, ctx.version_reason
        return b

    def build(self, *docs: Doc, **fixed: Any) -> TrainingSetup:
        values = {**self.values, **fixed}
        extras = dict(self.extras)
        sources = dict(self.sources)
        for name in _CANONICAL:
            if name not in sources and name not in fixed:
                sources[name] = Source(default=self.default_of())
        for doc in docs:
            for n in doc.notes:
                self.note(n)
        return TrainingSetup(framework=self.framework, framework_version=self.version, extras=extras,
                             warnings=tuple(self.warnings),
                             sources=sources, defaults_of=self.defaults_of, framework_reason=self.framework_reason,
                             version_reason=self.version_reason, **values)


_MEGATRON_FIELDS = ("megatron", "tensor_parallel", "pipeline_parallel", "virtual_pipeline", "expert_parallel",
                    "context_parallel", "sequence_parallel", "distributed_optimizer", "recompute", "recompute_method",
                    "recompute_layers")
_CANONICAL = tuple(n for n in TrainingSetup.__dataclass_fields__
                   if n not in ("framework", "framework_version", "config_file", "deepspeed_file", "extras",
                                "sources", "defaults_of", "model", "framework_reason", "version_reason",
                                "loss_kernel", "total_batch", "no_model", "model_unresolved", "warnings")
                   # Megatron-Core's parallelism: sourced by the readers of Megatron runs only
                   and n not in _MEGATRON_FIELDS)


def overlay(doc: Doc, values: Mapping[str, Any], lines: Mapping[str, int], path: str) -> Doc:
    """`doc` with some keys set from another file (`key=value` overrides on a command line, at
    `lines` of `path`): their Sources name that file."""
    data = _deep_set(doc.data, values)
    files = {**doc.files, **{k: path for k in values}}
    return Doc(doc.path, data, {**doc.lines, **dict(lines)}, doc.kind, doc.tolerant, list(doc.notes), files,
               dict(doc.inline), doc.header)


def _deep_set(data: dict[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for key, value in values.items():
        parts = key.split(".")
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            child = dict(child) if isinstance(child, dict) else {}
            node[part] = child
            node = child
        node[parts[-1]] = value
    return out


@record
class Context:
    """How one file is to be read: the framework release chosen for its defaults and why, and why the
    file was taken for this framework. Scripts add what their entry point says."""

    framework_version: str = ""
    version_reason: Msg | None = None
    reason: Msg | None = None
    entry: Any = None               # the script entry point (configs.entrypoints.Entry) whose flags these are
    launcher: Any = None            # what the script's launcher says (GPU count, ...)
