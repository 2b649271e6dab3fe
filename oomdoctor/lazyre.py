"""Regexes compiled on first use, so that importing a module of many patterns costs nothing.

The crash-log readers hold ~160 patterns and one log needs a third of them; compiling them all at
import took ~50 ms of a run that must finish in well under half a second.
"""
from __future__ import annotations

import re

# What a caller may ask of a pattern; each is copied from the compiled pattern on first use.
_DELEGATED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split",
              "groupindex", "groups", "flags", "scanner")


class LazyPattern:
    """Stands in for `re.compile(pattern, flags)` and compiles on the first method call.

    After that the compiled pattern's bound methods sit in the instance dict, so a call costs what a
    call on a compiled pattern costs. `.pattern` is there from the start, for building bigger patterns.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def compiled(self) -> re.Pattern[str]:
        pat = self.__dict__.get("_compiled")
        if pat is None:
            pat = self._compiled = re.compile(self.pattern, self._flags)
            for name in _DELEGATED:
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


def lazy_re(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
