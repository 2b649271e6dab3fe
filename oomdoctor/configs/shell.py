"""A reader for the shell scripts people launch training with: not a shell, but enough of one to know
what the training command's words are.

It follows assignments (`X=…`, `export X=…`, `declare -x`), expansions (`$X`, `${X}`, `${X:-default}`,
`${X:=default}`, `${X:+alt}`, word splitting of unquoted expansions), quoting, line continuations,
comments, here-documents (their text is kept by the file they write), `for X in …` loops (the first
value), and simple integer arithmetic `$((A * B))`. What it cannot know without running something
(`$(nvidia-smi …)`, `$1`, `$RANDOM`, a variable never set) stays unknown: such a word carries the reason.
Nothing is ever executed.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from oomdoctor.records import record

# A placeholder in a documented command (`--model_name_or_path <your_path_to_model>`): a name in angle brackets, as
# usage text writes the value to put there (POSIX utility argument syntax, docopt), ending the word. A shell would
# take `<` and `>` for redirections, but such a command is a template, so the word is a value it does not give.
_PLACEHOLDER = re.compile(r"<[A-Za-z_][\w.-]*>(?=[\s\\;|&\"']|$)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?=)")
_OPS = ("&&", "||", ";;", ";", "&", "|", "(", ")")
_KEYWORDS = frozenset({"for", "select", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "case", "esac", "{", "}",
                       "!", "time", "function", "in"})
_MAX_EXPANSION = 1 << 16        # a value longer than this is not a training flag; keeps `X=$X$X` loops small


@record
class Word:
    """One word of a command after expansion. `unknown` says why its value is not known (then `text`
    is the word as written)."""

    text: str
    line: int
    unknown: str | None = None

    @property
    def known(self) -> bool:
        return self.unknown is None


@record
class Command:
    words: tuple[Word, ...]
    env: Mapping[str, Word]         # exported variables and this command's own `X=… cmd` prefixes
    line: int


@record
class Script:
    path: str
    commands: tuple[Command, ...]
    variables: Mapping[str, Word] = field(default_factory=dict)     # every variable at the end
    heredocs: Mapping[str, str] = field(default_factory=dict)       # file written -> its text
    loops: tuple[tuple[str, int, int], ...] = ()                    # (variable, values, line) of multi-value loops
    # a variable whose value has parts only the run knows: its text with the known parts expanded, the others as
    # written (`CMD="python $DIR/train.py … $EXTRA"`), what a shell handed "$CMD" passes on
    partial: Mapping[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------- lexing

@record
class _Tok:
    kind: str                   # word | op | nl | redir | heredoc
    line: int
    parts: tuple = ()           # word: ((kind, payload, quoted), ...)
    text: str = ""              # op / redir text, heredoc body
    raw: str = ""               # the word as written


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.line = 1
        self.toks: list[_Tok] = []
        self.pending: list[tuple[str, bool, int]] = []     # heredoc delimiters waiting for the next newline

    def run(self) -> list[_Tok]:
        s = self.s
        n = len(s)
        while self.i < n:
            c = s[self.i]
            if c == "\\" and s.startswith("\n", self.i + 1):
                self.i += 2
                self.line += 1
            elif c in " \t\r":
                self.i += 1
            elif c == "\n":
                self.toks.append(_Tok("nl", self.line))
                self.i += 1
                self.line += 1
                if self.pending:
                    self._heredocs()
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c == "<" and _PLACEHOLDER.match(s, self.i):
                self._word()
            elif s.startswith("<<<", self.i):
                # a here-string (bash(1), Here Strings: `cmd <<< word`): a redirection of one word, no body
                self.toks.append(_Tok("redir", self.line, text="<<<"))
                self.i += 3
            elif s.startswith("<<", self.i):
                self._heredoc_op()
            elif c in "<>" or (c.isdigit() and re.match(r"\d+[<>]", s[self.i:self.i + 3])):
                m = re.match(r"\d*(>>|>&|<&|&>|>\||<>|>|<)-?", s[self.i:])
                op = m.group() if m else c          # the test above makes it match
                self.toks.append(_Tok("redir", self.line, text=op))
                self.i += len(op)
            elif c == "&" and s.startswith("&>", self.i):
                self.toks.append(_Tok("redir", self.line, text="&>"))
                self.i += 2
            elif c in ";&|()":
                op = next(o for o in _OPS if s.startswith(o, self.i))
                self.toks.append(_Tok("op", self.line, text=op))
                self.i += len(op)
            else:
                self._word()
        return self.toks

    def _word(self) -> None:
        s, start, line = self.s, self.i, self.line
        parts: list[tuple[str, Any, bool]] = []
        lit: list[str] = []

        def flush(quoted: bool = False) -> None:
            if lit:
                parts.append(("lit", "".join(lit), quoted))
                lit.clear()

        n = len(s)
        while self.i < n:
            c = s[self.i]
            held = _PLACEHOLDER.match(s, self.i) if c == "<" else None
            if held is not None:
                flush()
                parts.append(("placeholder", held.group(), False))
                self.i = held.end()
                continue
            if c in " \t\r\n;&|()<>":
                break
            if c == "\\":
                if s.startswith("\n", self.i + 1):
                    self.i += 2
                    self.line += 1
                    continue
                lit.append(s[self.i + 1:self.i + 2])
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                end = n if end < 0 else end
                flush()
                parts.append(("lit", s[self.i + 1:end], True))
                self.line += s.count("\n", self.i, end)
                self.i = end + 1
            elif c == '"':
                flush()
                self.i += 1
                parts.extend(self._double())
            elif c == "$":
                flush()
                parts.append(self._dollar(quoted=False))
            elif c == "`":
                end = s.find("`", self.i + 1)
                end = n if end < 0 else end
                flush()
                parts.append(("cmd", s[self.i + 1:end], False))
                self.line += s.count("\n", self.i, end)
                self.i = end + 1
            else:
                lit.append(c)
                self.i += 1
        flush()
        self.toks.append(_Tok("word", line, parts=tuple(parts), raw=s[start:self.i]))

    def _double(self) -> list[tuple[str, Any, bool]]:
        s, n = self.s, len(self.s)
        parts: list[tuple[str, Any, bool]] = []
        lit: list[str] = []
        while self.i < n and s[self.i] != '"':
            c = s[self.i]
            if c == "\\" and self.i + 1 < n and s[self.i + 1] in '$`"\\\n':
                if s[self.i + 1] == "\n":
                    self.line += 1
                else:
                    lit.append(s[self.i + 1])
                self.i += 2
            elif c == "$":
                if lit:
                    parts.append(("lit", "".join(lit), True))
                    lit.clear()
                parts.append(self._dollar(quoted=True))
            elif c == "`":
                end = s.find("`", self.i + 1)
                end = n if end < 0 else end
                if lit:
                    parts.append(("lit", "".join(lit), True))
                    lit.clear()
                parts.append(("cmd", s[self.i + 1:end], True))
                self.i = end + 1
            else:
                if c == "\n":
                    self.line += 1
                lit.append(c)
                self.i += 1
        self.i += 1
        if lit or not parts:
            parts.append(("lit", "".join(lit), True))
        return parts

    def _dollar(self, quoted: bool) -> tuple[str, Any, bool]:
        s = self.s
        i = self.i
        if s.startswith("$((", i):
            end = _matching(s, i + 1, "(", ")")
            self.i = end + 1
            return ("arith", s[i + 3:end - 1], quoted)
        if s.startswith("$(", i):
            end = _matching(s, i + 1, "(", ")")
            self.line += s.count("\n", i, end)
            self.i = end + 1
            return ("cmd", s[i + 2:end], quoted)
        if s.startswith("${", i):
            end = _matching(s, i + 1, "{", "}")
            self.i = end + 1
            return ("param", s[i + 2:end], quoted)
        m = _NAME.match(s, i + 1)
        if m:
            self.i = m.end()
            return ("var", m.group(), quoted)
        if i + 1 < len(s) and (s[i + 1].isdigit() or s[i + 1] in "@*#?$!-"):
            self.i = i + 2
            return ("var", s[i + 1], quoted)
        self.i = i + 1
        return ("lit", "$", quoted)

    def _heredoc_op(self) -> None:
        s = self.s
        self.i += 2
        strip = s.startswith("-", self.i)
        if strip:
            self.i += 1
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        m = re.match(r"""(['"]?)([^\s'";&|<>()]+)\1""", s[self.i:])
        delim = m.group(2) if m else ""
        quoted = bool(m and m.group(1))         # <<'EOF': the body is literal; <<EOF: it is expanded
        self.i += m.end() if m else 0
        self.toks.append(_Tok("heredoc", self.line, text=delim, raw="'" if quoted else ""))
        self.pending.append((delim, strip, len(self.toks) - 1))

    def _heredocs(self) -> None:
        """Read the bodies of the here-documents opened on the line just ended."""
        s = self.s
        for delim, strip, index in self.pending:
            body: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                row = s[self.i:end]
                self.i = end + 1
                self.line += 1
                if (row.lstrip("\t") if strip else row).rstrip("\r") == delim:
                    break
                body.append(row)
            tok = self.toks[index]
            self.toks[index] = _Tok("heredoc", tok.line, text="\n".join(body) + "\n", raw=tok.raw)
        self.pending = []


def _matching(s: str, i: int, open_: str, close: str) -> int:
    """Index of the `close` that ends the group opened at s[i] (quotes skipped); len(s) when unclosed."""
    depth = 0
    quote = None
    j = i
    while j < len(s):
        c = s[j]
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                j += 1
        elif c in "'\"":
            quote = c
        elif c == "\\":
            j += 1
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return len(s)


# ---------------------------------------------------------------- expansion

@record
class _Val:
    text: str
    unknown: str | None = None
    # A value with known and unknown parts (`A="--nproc_per_node $(nvidia-smi …) --nnodes 1"`): the
    # (text, why unknown) pieces, so that splitting it unquoted still gives its known words.
    pieces: tuple[tuple[str, str | None], ...] = ()


def _split_fields(segments: list[tuple[str, str | None, bool]]) -> list[_Val]:
    """Fields from (text, why unknown, split on blanks) segments: a segment that splits breaks the word at its
    blanks, one that does not joins the field it touches."""
    fields: list[_Val] = []
    cur: list[str] | None = None
    why_cur: str | None = None

    def close() -> None:
        nonlocal cur, why_cur
        if cur is not None:
            fields.append(_Val("".join(cur), why_cur))
        cur, why_cur = None, None

    for text, why, split in segments:
        if not split:
            cur = (cur or []) + [text]
            why_cur = why_cur or why
            continue
        pieces = text.split()
        if not pieces:
            if text and cur is not None:
                close()
            continue
        if text[0].isspace():
            close()
        cur = (cur or []) + [pieces[0]]
        for piece in pieces[1:]:
            close()
            cur = [piece]
        if text[-1].isspace():
            close()
    close()
    return fields


class _Expander:
    def __init__(self, variables: dict[str, _Val], script_path: str) -> None:
        self.vars = variables
        self.script = script_path
        self.arrays: dict[str, tuple[_Val, ...]] = {}

    def fields(self, parts: tuple, raw: str) -> list[_Val]:
        """The fields a word expands to (unquoted expansions split on blanks). A field with an unknown
        part is unknown, shown as written; the known words of a partly unknown unquoted expansion
        (a variable holding launcher options, one of them computed at run time) stay known."""
        segments = self._segments(parts)
        unknown = next((why for _, why, _ in segments if why), None)
        if unknown and not any(why is None and split for _, why, split in segments):
            return [_Val(raw, unknown)]
        return _split_fields(segments)

    def _segments(self, parts: tuple) -> list[tuple[str, str | None, bool]]:
        """(text, why unknown, split on blanks) segments of a word, in order."""
        segments: list[tuple[str, str | None, bool]] = []
        for kind, payload, quoted in parts:
            every = self._array_fields(kind, payload)
            if every is not None:
                # "${NAME[@]}": one field per element, quoted or not
                for element in every:
                    segments.append((element.text if not element.unknown else (element.text or element.unknown),
                                     element.unknown, False))
                    segments.append((" ", None, True))
                continue
            val = self.part(kind, payload)
            splits = kind != "lit" and not quoted
            if val.pieces and splits:
                segments.extend((t, why, why is None) for t, why in val.pieces)
            elif val.unknown:
                segments.append((val.text or val.unknown, val.unknown, False))
            else:
                segments.append((val.text, None, splits))
        return segments

    def _array_fields(self, kind: str, payload: Any) -> tuple[_Val, ...] | None:
        if kind != "param":
            return None
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]", str(payload))
        return self.arrays.get(m.group(1)) if m else None

    def text(self, parts: tuple, raw: str) -> _Val:
        """A word expanded without splitting (an assignment's value)."""
        texts: list[str] = []
        pieces: list[tuple[str, str | None]] = []
        unknown = None
        for kind, payload, _quoted in parts:
            every = self._array_fields(kind, payload)
            # "${NAME[@]}" where no word splitting follows (an assignment's value): the elements joined by spaces
            # (bash(1), Arrays: "${name[@]}" expands each element to a separate word; joined, one word)
            val = self.part(kind, payload) if every is None else _joined(every)
            if val.pieces:
                pieces.extend(val.pieces)
            else:
                pieces.append((val.text or val.unknown or "", val.unknown) if val.unknown else (val.text, None))
            unknown = unknown or val.unknown
            texts.append(val.text)
        if unknown:
            return _Val(raw, unknown, tuple(pieces) if len(raw) <= _MAX_EXPANSION else ())
        value = "".join(texts)
        return _Val(value[:_MAX_EXPANSION])

    def part(self, kind: str, payload: Any) -> _Val:
        if kind == "lit":
            return _Val(payload)
        if kind == "var":
            return self.var(payload)
        if kind == "param":
            return self.param(payload)
        if kind == "arith":
            return self.arith(payload)
        if kind == "placeholder":
            return _Val("", payload)                # a value the reader of the docs was to write in
        return self.command(payload)

    def command(self, text: str) -> _Val:
        """`$(expr 32 / $N)` is arithmetic and is done; any other command substitution stays unknown."""
        words = text.split()
        if len(words) >= 4 and words[0] == "expr":
            got = self.arith(" ".join(w.replace("\\*", "*") for w in words[1:]))
            if not got.unknown:
                return got
        if words and words[0] in ("basename", "dirname") and 2 <= len(words) <= 3:
            part = self._path_part(words)
            if part is not None:
                return part
        return _Val("", f"$({text.strip()[:60]})")

    def _path_part(self, words: list[str]) -> _Val | None:
        """`$(basename "$HF_MODEL_ID")`, `$(dirname "$0")`: POSIX basename(1) / dirname(1) of a known path, which
        only cut the string (trailing slashes dropped; basename's optional SUFFIX removed when it is not the whole
        name; dirname "." for a name with no slash)."""
        args = [self.text(_word_parts(w), w) for w in words[1:]]
        if any(a.unknown for a in args) or (words[0] == "dirname" and len(args) != 1):
            return None
        path = args[0].text.rstrip("/") or ("/" if args[0].text.startswith("/") else "")
        if words[0] == "basename":
            name = path.rsplit("/", 1)[-1] if path != "/" else "/"
            if len(args) == 2 and args[1].text and name != args[1].text and name.endswith(args[1].text):
                name = name[: -len(args[1].text)]
            return _Val(name)
        if "/" not in path:
            return _Val(".")
        head = path.rsplit("/", 1)[0].rstrip("/")
        return _Val(head or "/")

    def var(self, name: str) -> _Val:
        if name == "0":
            return _Val(self.script)
        got = self.vars.get(name)
        if got is not None:
            return got
        if name.isdigit() or name in "@*#":
            return _Val("", f"${name}")
        return _Val("", f"${name}")

    def param(self, body: str) -> _Val:
        m = re.match(r"(#?)([A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!])(.*)$", body, re.S)
        if not m:
            return _Val("", "${" + body + "}")
        length, name, rest = m.groups()
        cur = self.vars.get(name)
        if length:
            if cur is None or cur.unknown:
                return _Val("", "${" + body + "}")
            return _Val(str(len(cur.text)))
        if not rest:
            return self.var(name)
        op = re.match(r"(:-|-|:=|=|:\+|\+|:\?|\?)", rest)
        if not op:
            return _Val("", "${" + body + "}")       # substrings, pattern removal: not followed
        word = _word_parts(rest[op.end():])
        unset = cur is None
        empty = cur is None or (not cur.unknown and cur.text == "")
        test = empty if op.group().startswith(":") else unset
        o = op.group().lstrip(":")
        if o in ("-", "="):
            if test:
                value = self.text(word, rest[op.end():])
                if o == "=":
                    self.vars[name] = value
                return value
            return cur if cur is not None else _Val("")      # not test: set (and, with ":", not empty)
        if o == "+":
            return _Val("") if test else self.text(word, rest[op.end():])
        return cur if cur is not None and not test else _Val("", "${" + body + "}")

    def arith(self, expr: str) -> _Val:
        def sub(m: re.Match) -> str:
            name = m.group(1) or m.group(2)
            val = self.vars.get(name)
            if val is None or val.unknown or not re.fullmatch(r"\s*-?\d+\s*", val.text):
                raise ValueError(name)
            return val.text.strip()
        try:
            text = re.sub(r"\$\{?([A-Za-z_]\w*)\}?|\b([A-Za-z_]\w*)\b", sub, expr)
            return _Val(str(_calc(text)))
        except (ValueError, ZeroDivisionError, IndexError):
            return _Val("", f"$(({expr.strip()}))")


def _word_parts(text: str) -> tuple:
    """The parts of a word inside `${X:-word}` (its quotes and expansions)."""
    lexer = _Lexer(text)
    lexer._word()
    return lexer.toks[0].parts if lexer.toks else ()


def _calc(text: str) -> int:
    """Integer + - * / % with parentheses (shell arithmetic on known numbers); ValueError otherwise."""
    tokens = re.findall(r"\d+|[-+*/%()]", text)
    if "".join(tokens) != re.sub(r"\s+", "", text):
        raise ValueError(text)
    pos = 0

    def expr() -> int:
        nonlocal pos
        value = term()
        while pos < len(tokens) and tokens[pos] in "+-":
            op = tokens[pos]
            pos += 1
            value = value + term() if op == "+" else value - term()
        return value

    def term() -> int:
        nonlocal pos
        value = unary()
        while pos < len(tokens) and tokens[pos] in "*/%":
            op = tokens[pos]
            pos += 1
            rhs = unary()
            value = value * rhs if op == "*" else (int(value / rhs) if op == "/" else value % rhs)
            if abs(value) > 1 << 62:
                raise ValueError(text)
        return value

    def unary() -> int:
        nonlocal pos
        if tokens[pos] == "-":
            pos += 1
            return -unary()
        if tokens[pos] == "+":
            pos += 1
            return unary()
        if tokens[pos] == "(":
            pos += 1
            value = expr()
            if tokens[pos] != ")":
                raise ValueError(text)
            pos += 1
            return value
        value = int(tokens[pos])
        pos += 1
        return value

    result = expr()
    if pos != len(tokens):
        raise ValueError(text)
    return result


# ---------------------------------------------------------------- statements

def read_script(text: str, path: str, outer: Mapping[str, Word] | None = None) -> Script:
    """The commands a script runs, in order, with their words expanded as far as can be known; `outer`: the
    variables of the shell that hands this text over (a `bash -c "…"` string it expanded)."""
    # A script saved with Windows line endings (CRLF): bash would take each `\r` for part of the line's last word
    # (and `\` + `\r` for no continuation); the file was evidently meant line by line, as Python and YAML read it.
    text = text.replace("\r\n", "\n")
    variables: dict[str, _Val] = {k: _Val(w.text, w.unknown) for k, w in (outer or {}).items()}
    variables.update(_sbatch_env(text))
    exported: set[str] = set(variables)
    ex = _Expander(variables, path)
    commands: list[Command] = []
    heredocs: dict[str, str] = {}
    loops: list[tuple[str, int, int]] = []
    _run(text, ex, variables, exported, commands, heredocs, loops, 0)
    env_end = {k: Word(v.text, 0, v.unknown) for k, v in variables.items()}
    partial = {k: "".join(text for text, _ in v.pieces) for k, v in variables.items() if v.unknown and v.pieces}
    return Script(path, tuple(commands), env_end, heredocs, tuple(loops), partial)


# sbatch(1): `#SBATCH` lines before the first command are its options; -N/--nodes=<n> is the job's node count, which
# the job's environment holds as SLURM_JOB_NUM_NODES and SLURM_NNODES; -n/--ntasks and --ntasks-per-node are held as
# SLURM_NTASKS and SLURM_NTASKS_PER_NODE (sbatch(1), OUTPUT ENVIRONMENT VARIABLES), which srun takes as its own -n
# and --ntasks-per-node (srun(1), INPUT ENVIRONMENT VARIABLES).
_SBATCH_NODES = re.compile(r"^#SBATCH[ \t]+(?:-N[ \t]*|--nodes[= \t]+)(\d+)\b", re.M)
_SBATCH_TASKS = re.compile(r"^#SBATCH[ \t]+(?:-n[ \t]*|--ntasks[= \t]+)(\d+)\b", re.M)
_SBATCH_TASKS_PER_NODE = re.compile(r"^#SBATCH[ \t]+--ntasks-per-node[= \t]+(\d+)\b", re.M)


def _sbatch_env(text: str) -> dict[str, _Val]:
    out: dict[str, _Val] = {}
    m = _SBATCH_NODES.search(text)
    if m is not None:
        out.update({name: _Val(m.group(1)) for name in ("SLURM_NNODES", "SLURM_JOB_NUM_NODES")})
    m = _SBATCH_TASKS.search(text)
    if m is not None:
        out["SLURM_NTASKS"] = _Val(m.group(1))
    m = _SBATCH_TASKS_PER_NODE.search(text)
    if m is not None:
        out["SLURM_NTASKS_PER_NODE"] = _Val(m.group(1))
    return out


def _sourced(ex: _Expander, word: _Tok) -> str | None:
    """The text of the file `source FILE` / `. FILE` names, found beside the script (where such scripts are run
    from: OpenRLHF's train_*_slurm.sh `source ./${training_script}`); None when it is not there or not known."""
    import os

    from oomdoctor.bounded import read_utf8
    from oomdoctor.errors import InputError

    name = ex.text(word.parts, word.raw)
    if name.unknown or not name.text:
        return None
    target = os.path.join(os.path.dirname(os.path.abspath(ex.script)), name.text)
    try:                                # bounded like every input: size, FIFOs, devices and folders refused or capped
        return read_utf8(target, _MAX_EXPANSION * 16)
    except InputError:
        return None


def _run(text: str, ex: _Expander, variables: dict[str, _Val], exported: set[str], commands: list[Command] | None,
         heredocs: dict[str, str], loops: list[tuple[str, int, int]], depth: int) -> None:
    """Read one script's statements into the shared state; `commands` None: a sourced file, whose variables
    (assignments, `read` here-documents, arrays) the script goes on with, its commands not the script's own."""
    toks = _Lexer(text).run()
    i = 0
    n = len(toks)
    skip = 0            # inside `case … esac` or a function body: runs only on some arguments, or when called
    branches: list[list[Any]] = []     # open `if`s: [this branch runs: True/False/None unknown, a branch was taken]
    while i < n:
        words, redirs, bodies, i = _simple_command(toks, i, ex)
        if not words:
            continue
        head = _plain(words[0])
        if not skip and head in ("if", "elif", "else", "fi"):
            words = _branch(head, words, ex, branches)
            if not words:
                continue
            head = _plain(words[0])
        if any(b[0] is False for b in branches):
            continue            # a branch a test the script can evaluate says it does not take
        if not skip and len(words) == 1 and _ARRAY.fullmatch(words[0].raw) and i - 1 < n and \
                toks[i - 1].kind == "op" and toks[i - 1].text == "(":
            i = _array(words[0], toks, i, ex, variables)
            continue
        if head == "case" or _is_function(words):
            skip += 1
            continue
        if skip:
            if head in ("esac", "}") or (len(words) == 1 and words[0].raw in ("esac", "}")):
                skip -= 1
            elif any(_plain(w) in ("case",) for w in words):
                skip += 1
            continue
        if head == "read" and bodies:
            _read_heredoc(words, bodies[0], variables)
            continue
        if head in ("source", ".") and len(words) > 1:
            # bash(1) `source FILE`: FILE's commands run in this shell, so the variables it sets stay set
            sourced = _sourced(ex, words[1]) if depth < 4 else None
            if sourced is not None:
                _run(sourced, ex, variables, exported, None, heredocs, loops, depth + 1)
            continue
        _written_heredocs(bodies, redirs, ex, heredocs)
        if bodies and depth < 4 and _runs_stdin(words, redirs):
            # `sbatch <<EOF … EOF`, `bash <<EOF`: the here-document is the script the command runs (sbatch(1): with
            # no script file it reads the batch script from standard input; bash(1): with no file and no -c it
            # reads commands from it), so its commands are this script's, at the lines they are written on
            _run("\n" * words[0].line + bodies[0], ex, variables, exported, commands, heredocs, loops, depth + 1)
            continue
        _statement(words, ex, variables, exported, commands if commands is not None else [], loops)


_STDIN_RUNNERS = ("sbatch", "bash", "sh", "zsh", "dash")


def _runs_stdin(words: list[_Tok], redirs: list[tuple[str, _Tok | None]]) -> bool:
    """The command runs the script it reads from standard input: `sbatch` or a shell given options only (no file,
    no -c string), its standard input not redirected from a file."""
    if os.path.basename(_plain(words[0])) not in _STDIN_RUNNERS or any(op == "<" for op, _ in redirs):
        return False
    return all(_plain(w).startswith("-") and _plain(w) != "-c" for w in words[1:])


def _branch(head: str, words: list[_Tok], ex: _Expander, branches: list[list[Any]]) -> list[_Tok]:
    """Follow `if TEST; then … elif TEST; then … else … fi` where TEST is a `[ … ]` / `[[ … ]]` / `test` comparison of
    values the script knows (bash(1) CONDITIONAL EXPRESSIONS: `=`/`==`/`!=`, `-z`, `-n`): the branch it takes runs,
    the others do not. A test on a value only the run knows leaves every branch running, as before. Returns the
    words of the statement that follows the keyword (`else FOO=1`), or none."""
    condition = words[1:] if len(words) > 1 and _plain(words[1]) not in ("[", "[[", "test") else []
    if head == "if":
        taken = _test(words[1:], ex)
        branches.append([taken, bool(taken)])
        return condition            # a command as the condition (`if torchrun …; then`) still runs
    if not branches:
        return words[1:] if head in ("else", "fi") else []
    state = branches[-1]
    if head == "elif":
        taken = None if state[0] is None and not state[1] else (False if state[1] else _test(words[1:], ex))
        state[0] = taken
        state[1] = state[1] or bool(taken)
        return condition
    if head == "else":
        state[0] = None if state[0] is None and not state[1] else not state[1]
        state[1] = True
        return words[1:]
    branches.pop()
    return words[1:]


def _test(words: list[_Tok], ex: _Expander) -> bool | None:
    """The value of a test whose operands the script knows, else None."""
    raw = [_plain(w) for w in words]
    while raw and raw[-1] in ("then", ";"):
        raw, words = raw[:-1], words[:-1]
    if raw and raw[0] in ("[", "[[", "test"):
        closer = {"[": "]", "[[": "]]"}.get(raw[0])
        body = words[1:-1] if closer and raw[-1] == closer else words[1:] if raw[0] == "test" else None
    else:
        body = None
    if body is None:
        return None
    vals = [ex.text(w.parts, w.raw) for w in body]
    if any(v.unknown for v in vals):
        return None
    texts = [v.text for v in vals]
    if len(texts) == 3 and texts[1] in ("=", "==", "!="):
        return (texts[0] == texts[2]) == (texts[1] != "!=")
    if len(texts) == 2 and texts[0] in ("-z", "-n"):
        return (texts[1] == "") == (texts[0] == "-z")
    return None


def _simple_command(toks: list[_Tok], i: int, ex: _Expander
                    ) -> tuple[list[_Tok], list[tuple[str, _Tok | None]], list[str], int]:
    """One simple command from toks[i]: (its words, its redirections, its here-document bodies, the index
    after the operator or newline that ends it)."""
    n = len(toks)
    words: list[_Tok] = []
    redirs: list[tuple[str, _Tok | None]] = []
    bodies: list[str] = []
    while i < n and toks[i].kind not in ("op", "nl"):
        t = toks[i]
        if t.kind == "redir":
            target = toks[i + 1] if i + 1 < n and toks[i + 1].kind == "word" else None
            redirs.append((t.text, target))
            i += 2 if target is not None else 1
            continue
        if t.kind == "heredoc":
            bodies.append(t.text if t.raw else _expand_body(t.text, ex))
        else:
            words.append(t)
        i += 1
    return words, redirs, bodies, i + 1


def _written_heredocs(bodies: list[str], redirs: list[tuple[str, _Tok | None]], ex: _Expander,
                      heredocs: dict[str, str]) -> None:
    """`cat > x.yaml <<EOF … EOF`: the file a here-document is written to, by its name. A name with a part only
    the run knows (`cat > "$DS_CONFIG_JSON" <<EOF`, DS_CONFIG_JSON="${SCRIPT_DIR}/x_${MODE}.json" with MODE=$1) is
    kept under the text the same expansion gives in a command's words, so the flag that names the file by the same
    variables (`--deepspeed_config=$DS_CONFIG_JSON`) finds what the script wrote there: bash expands both alike
    (bash(1) EXPANSION; a double-quoted word is one field, its content expanded)."""
    for body in bodies:
        for op, target in redirs:
            if ">" in op and target is not None:
                name = ex.text(target.parts, target.raw)
                if not name.unknown:
                    heredocs[name.text] = body
                    continue
                raw = target.raw[1:-1] if len(target.raw) > 1 and target.raw[0] == target.raw[-1] == '"' else \
                    target.raw
                fields = ex.fields(_word_parts(raw), raw) if raw else []
                if len(fields) == 1 and fields[0].text:
                    heredocs[fields[0].text] = body


def _joined(elements: tuple[_Val, ...]) -> _Val:
    """An array's elements as one value, separated by spaces; partly unknown when one of them is."""
    pieces = tuple(p for k, e in enumerate(elements)
                   for p in (((" ", None),) if k else ()) + (e.pieces or ((e.text, e.unknown),)))
    unknown = next((e.unknown for e in elements if e.unknown), None)
    text = " ".join(e.text for e in elements)
    return _Val(text, unknown, pieces if unknown else ())


_ARRAY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_READ_OPTS_WITH_VALUE = frozenset({"-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"})


def _array(word: _Tok, toks: list[_Tok], i: int, ex: _Expander, variables: dict[str, _Val]) -> int:
    """`NAME=( a b "c d" )` over one or many lines (bash arrays): the elements, each expanded, kept as
    the array's fields; `"${NAME[@]}"` gives them back one word each. Returns the index after `)`."""
    name = word.raw.rstrip("+=")
    elements: list[_Val] = []
    n = len(toks)
    while i < n and not (toks[i].kind == "op" and toks[i].text == ")"):
        t = toks[i]
        if t.kind == "word":
            elements.extend(ex.fields(t.parts, t.raw))
        i += 1
    old = ex.arrays.get(name, ()) if word.raw.endswith("+=") else ()
    ex.arrays[name] = tuple(old) + tuple(elements)
    variables[name] = elements[0] if elements else _Val("")       # $NAME is the first element
    return i + 1


def _read_heredoc(words: list[_Tok], body: str, variables: dict[str, _Val]) -> None:
    """`read [-r] [-d ''] NAME <<EOF … EOF`: NAME holds the here-document (OpenRLHF's example scripts build
    their training command so, then run `deepspeed --module $NAME`). In an unquoted here-document a
    backslash-newline joins lines (bash(1), Here Documents); without `-d` read stops at the first line."""
    names: list[str] = []
    delim = "\n"
    k = 1
    while k < len(words):
        raw = words[k].raw
        if raw in _READ_OPTS_WITH_VALUE:
            if raw == "-d" and k + 1 < len(words):
                delim = _plain(words[k + 1]).strip("'\"") or "\0"
            k += 2
            continue
        if raw.startswith("-"):
            k += 1
            continue
        names.append(raw)
        k += 1
    if not names or not _NAME.fullmatch(names[0]):
        return
    text = body.replace("\\\n", "")
    if delim == "\n":
        text = text.split("\n", 1)[0]
    variables[names[0]] = _Val(text.strip()[:_MAX_EXPANSION])


def _statement(words: list[_Tok], ex: _Expander, variables: dict[str, _Val], exported: set[str],
               commands: list[Command], loops: list[tuple[str, int, int]]) -> None:
    # Keywords that open or close compound commands: what follows them is the command.
    while words and _plain(words[0]) in _KEYWORDS and _plain(words[0]) != "in":
        if _plain(words[0]) == "for":
            _for_loop(words, ex, variables, loops)
            return
        words = words[1:]
    if not words:
        return
    first = _plain(words[0])
    if first in ("export", "declare", "typeset", "local", "readonly"):
        _declare(first, words, ex, variables, exported)
        return
    if first in ("unset",):
        for w in words[1:]:
            variables.pop(w.raw, None)
        return
    prefix: dict[str, _Val] = {}
    k = 0
    while k < len(words):
        m = _ASSIGN.match(words[k].raw)
        if not m:
            break
        prefix[m.group(1)] = _assigned(words[k], m, ex, variables)
        k += 1
    if k == len(words):
        variables.update(prefix)        # plain assignments: shell variables from here on
        return
    expanded = [Word(f.text, w.line, f.unknown) for w in words[k:] for f in ex.fields(w.parts, w.raw)]
    env = {name: Word(variables[name].text, 0, variables[name].unknown) for name in exported if name in variables}
    env.update({name: Word(v.text, words[0].line, v.unknown) for name, v in prefix.items()})
    if expanded:
        commands.append(Command(tuple(expanded), env, words[0].line))


def _declare(first: str, words: list[_Tok], ex: _Expander, variables: dict[str, _Val], exported: set[str]) -> None:
    """`export|declare|typeset|local|readonly NAME[=value] …`: the assignments, and the names exported."""
    for w in words[1:]:
        if w.raw.startswith("-"):
            continue
        m = _ASSIGN.match(w.raw)
        if m:
            variables[m.group(1)] = _assigned(w, m, ex, variables)
            if first in ("export", "declare", "typeset"):
                exported.add(m.group(1))
        elif _NAME.fullmatch(w.raw):
            exported.add(w.raw)


def _assigned(w: _Tok, m: re.Match, ex: _Expander, variables: dict[str, _Val]) -> _Val:
    """The value of `NAME=value` (or `NAME+=value`): the word's parts after the `=`."""
    cut = len(m.group(0))
    parts = _word_parts(w.raw[cut:]) if w.raw[cut:] else ()
    value = ex.text(parts, w.raw[cut:]) if parts else _Val("")
    if m.group(2) == "+=" and m.group(1) in variables:
        old = variables[m.group(1)]
        if old.unknown or value.unknown:
            return _Val(old.text + value.text, old.unknown or value.unknown)
        return _Val((old.text + value.text)[:_MAX_EXPANSION])
    return value


def _for_loop(words: list[_Tok], ex: _Expander, variables: dict[str, _Val],
              loops: list[tuple[str, int, int]]) -> None:
    """`for X in a b c`: the loop body is read once, with X the first value."""
    if len(words) < 2:
        return
    name = words[1].raw
    values: list[_Val] = []
    if len(words) > 2 and _plain(words[2]) == "in":
        for w in words[3:]:
            values.extend(ex.fields(w.parts, w.raw))
    if values:
        variables[name] = values[0]
        if len(values) > 1:
            loops.append((name, len(values), words[0].line))
    else:
        variables[name] = _Val("", f"${name}")


_BODY_EXPANSION = re.compile(r"\$\(\((.*?)\)\)|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _expand_body(text: str, ex: _Expander) -> str:
    """An unquoted here-document's text with its expansions done; an unknown one is left as written."""
    def sub(m: re.Match) -> str:
        if m.group(1) is not None:
            val = ex.arith(m.group(1))
        elif m.group(2) is not None:
            val = ex.param(m.group(2))
        else:
            val = ex.var(m.group(3))
        return m.group(0) if val.unknown else val.text
    return _BODY_EXPANSION.sub(sub, text)


def _is_function(words: list[_Tok]) -> bool:
    """`name() {`, `function name {`, `function name() {` open a body that runs only when called."""
    raws = [w.raw for w in words]
    if raws and raws[0] == "function":
        return True
    return len(raws) >= 2 and raws[-1] == "{" and raws[-2].endswith("()") or \
        (len(raws) == 1 and raws[0].endswith("()"))


def _plain(tok: _Tok) -> str:
    return tok.raw if all(kind == "lit" for kind, _, _ in tok.parts) else ""


# ---------------------------------------------------------------- Windows shells, read in bash's grammar

_PS_ENV = re.compile(r"^(\s*)\$env:([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$", re.IGNORECASE)
_CMD_SET = re.compile(r"^(\s*)set\s+\"?([A-Za-z_][A-Za-z0-9_]*)=([^\"]*)\"?\s*$", re.IGNORECASE)
_CMD_VAR = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)%")


def windows_dialect(path: str, text: str) -> str | None:
    """"powershell" or "cmd" when the script is written for a Windows shell (by its name, else by line ends
    that continue the way only that shell does), None otherwise."""
    low = path.lower()
    if low.endswith(".ps1"):
        return "powershell"
    if low.endswith((".bat", ".cmd")):
        return "cmd"
    # Two lines or more that continue the way only that shell does (bash's backticks come in pairs on a line).
    ends = [line.rstrip() for line in text.split("\n") if line.strip()]
    if sum(e.endswith(" `") for e in ends) >= 2:
        return "powershell"
    if sum(e.endswith(" ^") for e in ends) >= 2:
        return "cmd"
    return None


def from_windows(text: str, dialect: str) -> str:
    """The script rewritten in bash's grammar, line for line (every line keeps its number).

    PowerShell (about_Parsing, about_Special_Characters): the backtick is the escape character, so a backtick that
    ends a line continues it and one before a character takes that character literally; a backslash is an ordinary
    character (`H:\\models`); `$env:NAME = "v"` sets an environment variable. cmd.exe: `^` is the escape character,
    a `^` that ends a line continues it; `set NAME=v` sets a variable and `%NAME%` expands it."""
    out = []
    for line in text.split("\n"):
        body = line.rstrip()
        cont = body.endswith("`" if dialect == "powershell" else "^")
        if cont:
            body = body[:-1].rstrip()
        if dialect == "powershell":
            m = _PS_ENV.match(body)
            if m:
                body = f"{m.group(1)}export {m.group(2)}={m.group(3).strip()}"
            else:
                body = re.sub(r"`(.)", r"\1", body.replace("\\", "\\\\"))
        else:
            m = _CMD_SET.match(body)
            if m:
                value = m.group(3)
                body = f"{m.group(1)}{m.group(2)}=" + (f"'{value}'" if "'" not in value else value)
            else:
                body = _CMD_VAR.sub(r"${\1}", re.sub(r"\^(.)", r"\1", body.replace("\\", "\\\\")))
        out.append(body + (" \\" if cont else ""))
    return "\n".join(out)
