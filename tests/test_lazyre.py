"""Regexes compiled on first use (oomdoctor/lazyre.py), and the `needs=` literals that answer without them,
each proved from the parsed pattern. What keeps the crash-log reader's import cheap (benchmarks/startup.py)."""
from __future__ import annotations

import re
import subprocess
import sys
import warnings
from itertools import product
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from oomdoctor.lazyre import LazyPattern, lazy_re, required_literals, top_level_split

try:                                    # the regex parser's modules: public names moved in Python 3.11
    from re import _constants as C
    from re import _parser as P
except ImportError:                     # Python 3.9, 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]


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



# ---------------------------------------------------------------- needs= guards, proved from the parsed pattern

def _literal_choices(items) -> set[str] | None:
    """The strings a parsed (sub)pattern can match when it is literal only (small alternations and
    one-character classes allowed), else None."""
    out = {""}
    for op, av in items:
        if op is C.LITERAL:
            opts = {chr(av)}
        elif op is C.IN and all(o is C.LITERAL for o, _ in av):
            opts = {chr(v) for _, v in av}
        elif op is C.SUBPATTERN and not av[1] & C.SRE_FLAG_IGNORECASE:
            opts = _literal_choices(av[3])
        elif op is C.BRANCH:
            alts = [_literal_choices(alt) for alt in av[1]]
            opts = None if any(a is None for a in alts) else set().union(*alts)
        else:
            return None
        if opts is None or len(out) * len(opts) > 256:
            return None
        out = {a + b for a, b in product(out, opts)}
    return out


def _proves(items, needs: tuple[str, ...], before: frozenset[str] = frozenset({""})) -> bool:
    """True when every match of the parsed sequence contains one of `needs`: some run of literals
    (small alternations expanded) whose every spelling holds one, or a part every match must go
    through (a group, a repeat of at least one, a branch whose every alternative proves it). `before`
    holds the spellings of the literals just before the sequence (the parser factors a common prefix
    out of a branch)."""
    run = set(before)

    def run_proves() -> bool:
        return run != {""} and all(any(n in s for n in needs) for s in run)

    for op, av in items:
        lit = _literal_choices([(op, av)])
        if lit is not None and len(run) * len(lit) <= 256:
            run = {a + b for a, b in product(run, lit)}
            continue
        if run_proves():
            return True
        lead, run = frozenset(run), {""}
        if op is C.SUBPATTERN and not av[1] & C.SRE_FLAG_IGNORECASE and _proves(av[3], needs, lead):
            return True
        if op is C.BRANCH and all(_proves(alt, needs, lead) for alt in av[1]):
            return True
        if op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1 and _proves(av[2], needs):
            return True
    return run_proves()


def _guarded_patterns() -> list[tuple[str, LazyPattern]]:
    from oomdoctor.crashlog import context, formats, paste, phase

    found = []
    for mod in (formats, context, phase, paste):
        for name, value in vars(mod).items():
            values = tuple(value.values()) if isinstance(value, dict) else value if isinstance(value, tuple) else (value,)
            for i, v in enumerate(values):
                for p in (v if isinstance(v, tuple) else (v,)):     # (pattern, key) and (phase, pattern) pairs
                    if isinstance(p, LazyPattern) and p.needs:
                        found.append((f"{mod.__name__}.{name}[{i}]", p))
    return found


def test_every_needs_literal_is_in_every_match_of_its_pattern():
    guarded = _guarded_patterns()
    assert len(guarded) > 40
    for name, pat in guarded:
        assert isinstance(pat.needs, tuple), name
        parsed = P.parse(pat.pattern, pat._flags)
        assert not parsed.state.flags & re.IGNORECASE, name
        assert _proves(parsed, pat.needs), \
            f"{name}: a match need not contain any of {pat.needs}"


def test_needs_must_be_a_tuple_of_literals():
    for bad in ("abc", ("",), (1,)):
        with pytest.raises(TypeError):
            lazy_re("abc", needs=bad)


def test_the_needs_proof_rejects_a_literal_a_match_may_lack():
    for pattern, needs in [(r"a\s+b", ("a b",)), (r"(?:x|y)z", ("xz",)), (r"q(?:abc)?r", ("abc",)),
                           (r"abc|d", ("abc",)), (r"[Aa]b", ("Ab",)), (r"x*yz", ("xyz",))]:
        assert not _proves(P.parse(pattern), needs), pattern
    assert not _proves(P.parse(r"(?i:abc)"), ("abc",))
    assert _proves(P.parse(r"(?:GPU|NPU) \d+|(?:S|s)tep"), ("GPU ", "NPU ", "tep"))


def test_a_guarded_pattern_answers_like_the_regex_on_every_test_log_line():
    import glob

    lines = [line for path in sorted(glob.glob("tests/data/logs/*.log")) + ["oomdoctor/data/demo/train.log"]
             for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines()]
    for name, pat in _guarded_patterns():
        real = re.compile(pat.pattern, pat._flags)
        for line in lines:
            assert (pat.search(line) is None) == (real.search(line) is None), (name, line)
            assert pat.findall(line) == real.findall(line), (name, line)


def test_required_literals_read_off_the_text_are_proved_from_the_parse():
    from oomdoctor.crashlog import callsites

    cases = {r"abc|d": ("abc", "d"), r"ab?c": ("a",), r"x{2}y|zz": ("y", "zz"), r"a(b|c)d": ("a",),
             r"a[|]b|c": ("a", "c"), r"(?i)abc": (), r"a{": (), r"\bAborted request(?:\(s\))? \S": ("Aborted request",),
             r"a|\d": ()}
    for pattern, needs in cases.items():
        assert required_literals(pattern) == needs, pattern
    from oomdoctor.crashlog.taxonomy import MODULES

    lines = [pat for _ph, _fw, kind, pat, _src in callsites.CALLSITES if kind == "line"]
    functions = sorted({fn for _mod, fn, _ph, _src in MODULES})     # the frame table's function classes
    for rows in (lines, functions):
        assert sum(bool(required_literals(p)) for p in rows) > 0.8 * len(rows)     # the guard spares most rows
    for pattern in lines + functions:
        needs = required_literals(pattern)
        assert not needs or _proves(P.parse(pattern), needs), pattern


@given(st.text(alphabet="ab.|?*+()[]\\{}2^", max_size=14))
@example("{|}2")                                # a `{` re reads as a literal, before an alternation
def test_required_literals_are_in_every_match(pattern):
    try:
        with warnings.catch_warnings():         # "[[" and the like: re's FutureWarning on nested sets
            warnings.simplefilter("ignore", FutureWarning)
            compiled = re.compile(pattern)
            parsed = P.parse(pattern)
    except (re.error, OverflowError):
        return
    needs = required_literals(pattern)
    assert not needs or _proves(parsed, needs), (pattern, needs)
    for text in ("", "a", "ab", "a.b", "ab.ab", "aab", "b", "|", "ab|", "a2", "{2}", "b2a", "ba", "]", "a]b"):
        assert compiled.search(text) is None or not needs or any(n in text for n in needs), (pattern, needs, text)


@pytest.mark.parametrize("pattern,parts", [
    ("abc", ["abc"]),
    ("ab|cd", ["ab", "cd"]),
    ("a(b|c)d|e", ["a(b|c)d", "e"]),       # a group's alternatives are its own
    ("a[|]b|c", ["a[|]b", "c"]),           # a bar in a character class is a member
    (r"a\|b|c", [r"a\|b", "c"]),           # an escaped bar is a literal
    ("[]|]x|y", ["[]|]x", "y"]),           # a `]` first in a class is a member (re's syntax)
])
def test_top_level_split_cuts_only_at_bars_outside_groups_and_classes(pattern, parts):
    assert top_level_split(pattern) == parts
    assert "|".join(parts) == pattern
