"""Regexes compiled on first use, so that importing a module of many patterns costs nothing.

The crash-log readers hold ~160 patterns and one log needs a third of them; compiling them all at
import took ~50 ms of a run that must finish in well under half a second. A pattern may also name
the literal strings one of which every match contains (`needs`): a text holding none of them is
answered without compiling or running the regex (tests/test_startup.py proves each `needs` from the
parsed pattern).
"""
from __future__ import annotations

import re

# What a caller may ask of a pattern; each is copied from the compiled pattern on first use.
_DELEGATED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split",
              "groupindex", "groups", "flags", "scanner")
# Calls that `needs` answers alone when no literal is in the text, with what they return then.
_GUARDED = {"search": lambda: None, "match": lambda: None, "fullmatch": lambda: None,
            "finditer": lambda: iter(()), "findall": list}


class LazyPattern:
    """Stands in for `re.compile(pattern, flags)` and compiles on the first method call.

    After that the compiled pattern's bound methods sit in the instance dict, so a call costs what a
    call on a compiled pattern costs. `.pattern` is there from the start, for building bigger patterns.
    """

    def __init__(self, pattern: str, flags: int = 0, needs: tuple[str, ...] = ()) -> None:
        self.pattern = pattern
        self._flags = flags
        self.needs = needs
        if needs:
            if isinstance(needs, str) or not all(isinstance(n, str) and n for n in needs):
                raise TypeError("needs= is a tuple of non-empty literal strings")
            if flags & re.IGNORECASE:
                raise ValueError("needs= is a case-sensitive test; it cannot guard an IGNORECASE pattern")
            for name, empty in _GUARDED.items():
                setattr(self, name, self._guard(name, empty))

    def _guard(self, name: str, empty):
        needs = self.needs

        def call(string: str, *args, **kwargs):
            for literal in needs:
                if literal in string:
                    return getattr(self.compiled(), name)(string, *args, **kwargs)
            return empty()

        call.__name__ = name
        return call

    def compiled(self) -> re.Pattern[str]:
        pat = self.__dict__.get("_compiled")
        if pat is None:
            pat = self._compiled = re.compile(self.pattern, self._flags)
            for name in _DELEGATED:
                if not (self.needs and name in _GUARDED):
                    setattr(self, name, getattr(pat, name))
        return pat

    def __getattr__(self, name: str):
        # Only reached for names not yet in the instance dict: the first call of any delegated method.
        if name not in _DELEGATED:
            raise AttributeError(name)
        self.compiled()
        return self.__dict__[name]

    def __repr__(self) -> str:
        return f"lazy_re({self.pattern!r})"


_META = frozenset(".^$*+?{}[]|()\\")


def class_end(pattern: str, i: int) -> int:
    """The index of the `]` that closes the character class opening at `pattern[i]` (or len(pattern)): a `]`
    first, after an optional `^`, is one of the class's members (re's syntax)."""
    n = len(pattern)
    i += 1 + pattern.startswith("^", i + 1)
    i += pattern.startswith("]", i)
    while i < n and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i


def _counted_repeat(pattern: str, i: int) -> bool:
    """Whether the `{` at `pattern[i]` opens a counted repeat (`{m}`, `{m,}`, `{,n}`, `{m,n}`); re reads any other
    `{` as a literal character."""
    close = pattern.find("}", i)
    body = pattern[i + 1:close] if close > i else ""
    return body not in ("", ",") and body.count(",") <= 1 and all(ch.isdigit() or ch == "," for ch in body)


def top_level_split(pattern: str) -> list[str]:
    """The alternatives of `pattern`: its text cut at each `|` outside every group and character class (an escaped
    `\\|` is a literal bar), one part for a pattern without one."""
    parts: list[str] = []
    start, depth, i, n = 0, 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = class_end(pattern, i)
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def required_literals(pattern: str) -> tuple[str, ...]:
    """Literals one of which every match of `pattern` contains, read off its text without parsing it (a parse
    costs half a compile), or () when unsure: for each alternative outside any group, its longest run of plain
    or backslash-escaped punctuation characters outside groups and classes, less a character a quantifier
    follows. A pattern with inline flags gets () (re's syntax: docs.python.org/3/library/re.html)."""
    if "(?" in pattern and any(f"(?{f}" in pattern for f in "aiLmsux"):
        return ()
    found: list[str] = []
    for alternative in top_level_split(pattern):
        best = _longest_literal(alternative)
        if not best:
            return ()                   # an alternative with no literal of its own, or one not read here
        found.append(best)
    return tuple(dict.fromkeys(found))


def _longest_literal(alternative: str) -> str | None:
    """The longest run of plain or escaped punctuation characters outside groups and classes of one alternative, less
    a character a quantifier follows; None where a `{` is re's literal character (`{|}`, `{x}`), whose extent is
    not read here."""
    best, run = "", ""
    i, n, depth = 0, len(alternative), 0
    while i <= n:
        c = alternative[i] if i < n else ""
        if depth == 0 and c == "\\" and i + 1 < n and not alternative[i + 1].isalnum():
            run += alternative[i + 1]
            i += 2
            continue
        if depth == 0 and c and c not in _META:
            run += c
            i += 1
            continue
        if c == "{" and not _counted_repeat(alternative, i):
            return None
        if c and c in "?*+{" and depth == 0:
            run = run[:-1]
        best = max(best, run, key=len)
        run = ""
        if c == "\\":
            i += 2
            continue
        if c == "{":                    # a counted repeat: what is inside the braces is no text to match
            i = alternative.find("}", i)
        elif c == "[":
            i = class_end(alternative, i)
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return best


def lazy_re(pattern: str, flags: int = 0, *, needs: tuple[str, ...] = ()) -> LazyPattern:
    return LazyPattern(pattern, flags, needs)
