"""What keeps the plain report fast: patterns compiled on first use, heavy modules imported only when needed.

Timings live in benchmarks/startup.py; these tests pin the behaviour that the timings rest on.
"""
from __future__ import annotations

import re
import subprocess
import sys

from oomdoctor.lazyre import lazy_re


def test_lazy_pattern_answers_like_a_compiled_pattern():
    text = "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
    pattern = r"(?P<backend>CUDA|HIP) out of memory\. Tried to allocate (?P<req>[\d.]+ GiB)"
    lazy, real = lazy_re(pattern, re.I), re.compile(pattern, re.I)
    assert lazy.search(text).groupdict() == real.search(text).groupdict()
    assert lazy.match(text).span() == real.match(text).span()
    assert lazy.fullmatch(text) is None and real.fullmatch(text) is None
    assert [m.span() for m in lazy.finditer(text * 2)] == [m.span() for m in real.finditer(text * 2)]
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub("X", text) == real.sub("X", text)
    assert lazy.split(text) == real.split(text)
    assert lazy.groupindex == real.groupindex and lazy.groups == real.groups and lazy.flags == real.flags
    assert lazy.pattern == pattern


def test_lazy_pattern_compiles_only_when_first_used():
    lazy = lazy_re(r"never(")          # an invalid pattern: compiling it would raise
    assert lazy.pattern == "never("
    try:
        lazy.search("x")
    except re.error:
        pass
    else:
        raise AssertionError("the bad pattern was never compiled")


def test_lazy_pattern_raises_attribute_error_for_unknown_names():
    try:
        lazy_re("a").no_such_method
    except AttributeError:
        pass
    else:
        raise AssertionError("unknown attribute did not raise")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_importing_the_crash_log_reader_compiles_no_pattern():
    code = ("import oomdoctor.crashlog as c\n"
            "from oomdoctor.crashlog import formats, context, phase\n"
            "from oomdoctor.lazyre import LazyPattern\n"
            "mods = (formats, context, phase)\n"
            "pats = [v for m in mods for v in vars(m).values() if isinstance(v, LazyPattern)]\n"
            "pats += [p for m in mods for v in vars(m).values() if isinstance(v, tuple)\n"
            "         for x in v for p in (x if isinstance(x, tuple) else (x,)) if isinstance(p, LazyPattern)]\n"
            "assert len(pats) > 100, len(pats)\n"
            "assert not any('_compiled' in vars(p) for p in pats)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
