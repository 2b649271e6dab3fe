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


# ---------------------------------------------------------------- the plain report without rich

import io  # noqa: E402

import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from oomdoctor.views import plaintext  # noqa: E402
from oomdoctor.views.plain import render  # noqa: E402

DATA = "tests/data"
REPORT_INPUTS = [
    ("oomdoctor/data/demo/train.log", "oomdoctor/data/demo/train.yaml"),
    (f"{DATA}/advise/lora_a100_40g.log", f"{DATA}/advise/lora_a100_40g.yaml"),
    (f"{DATA}/advise/fa2_t4.yaml", "--gpu", "T4"),
    (f"{DATA}/configs/hf_args.json", "--gpu", "16GiB"),
    (f"{DATA}/configs/train_hf.sh", "--gpu", "24GiB"),
    (f"{DATA}/configs/trl_sft.yaml", "--gpu", "80GiB"),
    (f"{DATA}/configs/axolotl_qlora.yml", "--gpu", "8GiB"),
    (f"{DATA}/logs/f12_deepspeed_sigkill.log",),
    (f"{DATA}/logs/p01_interleaved_ranks.log", f"{DATA}/advise/lora_a100_40g.yaml"),
    (f"{DATA}/logs/f01_five_other_processes.log", f"{DATA}/configs/trl_sft.yaml"),
    (f"{DATA}/logs/e_no_oom.log",),
]


def _report(args: tuple[str, ...]):
    from oomdoctor.pipeline import Options, build_report

    files = tuple(a for a in args if a.startswith(("tests/", "oomdoctor/")))
    gpu = args[args.index("--gpu") + 1] if "--gpu" in args else None
    return build_report(Options(files=files, gpu=gpu, cwd="."))


def _rich_text(report, width: int, show_patch: bool = True) -> str:
    from rich.console import Console

    out = io.StringIO()
    render(report, Console(file=out, width=width, highlight=False, force_terminal=False, color_system=None),
           show_patch=show_patch)
    return out.getvalue()


def _plain_text(report, width: int, show_patch: bool = True) -> str | None:
    console = plaintext.PlainConsole(width)
    try:
        render(report, console, show_patch=show_patch)
    except plaintext.NeedsRich:
        return None
    return console.text()


@pytest.mark.parametrize("args", REPORT_INPUTS, ids=lambda a: a[0].rsplit("/", 1)[-1])
def test_plain_console_writes_what_rich_writes_to_a_pipe(args):
    report = _report(args)
    taken = 0
    for width in (100, 132, 80, 60, 44):
        for show_patch in (True, False):
            plain = _plain_text(report, width, show_patch)
            if plain is not None:
                taken += 1
                assert plain == _rich_text(report, width, show_patch), (width, show_patch)
    if args[0].endswith(("demo/train.log", "f12_deepspeed_sigkill.log")):
        assert taken >= 2      # these reports fit 100 columns: the fast path must take them


def test_a_table_wider_than_the_console_is_left_to_rich():
    table = plaintext.PlainTable(title="t", title_justify="left", box=None, pad_edge=False)
    table.add_column("a")
    table.add_row("x" * 120)
    with pytest.raises(plaintext.NeedsRich):
        table.lines(100)


@pytest.mark.parametrize("text", ["[red]user text[/]", "a :smile: b", "wide 中文", "tab\there", "bell\x07"])
def test_markup_emoji_wide_and_control_characters_are_left_to_rich(text):
    console = plaintext.PlainConsole(100)
    with pytest.raises(plaintext.NeedsRich):
        console.print(text)


def test_the_one_cell_characters_are_one_cell_for_rich():
    from rich.cells import cell_len

    assert {ch: cell_len(ch) for ch in plaintext.ONE_CELL} == {ch: 1 for ch in plaintext.ONE_CELL}


_CHARS = st.sampled_from(list("ab cd  ef—·█→x\n") + ["word", "longerword", "  "])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_CHARS, max_size=40), width=st.integers(1, 30),
       justify=st.sampled_from(["default", "left", "right"]))
def test_wrap_matches_rich_text_wrap(parts, width, justify):
    from rich.console import Console
    from rich.text import Text

    text = "".join(parts)
    rich_lines = [line.plain for line in Text(text).wrap(Console(width=200), width, justify=justify,
                                                          overflow="fold")]
    assert plaintext.wrap(text, width, justify) == rich_lines


_CELL = st.text(alphabet=st.sampled_from(list("ab —·1.5%\n")), max_size=14)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(_CELL, _CELL, _CELL), min_size=0, max_size=5),
       justify=st.tuples(*[st.sampled_from(["left", "right"])] * 3),
       title=st.sampled_from(["", "Memory", "A title longer than some tables are"]),
       width=st.integers(10, 60))
def test_plain_table_matches_rich_table_or_defers_to_it(rows, justify, title, width):
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    def build(kit_table, kit_text):
        t = kit_table(title=title or None, title_justify="left", box=None, pad_edge=False)
        for name, j in zip(("#", "step", "GiB"), justify):
            t.add_column(name, justify=j)
        for a, b, c in rows:
            t.add_row(a, kit_text(b), c)
        return t

    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False, color_system=None).print(build(Table, Text))
    console = plaintext.PlainConsole(width)
    try:
        console.print(build(plaintext.PlainTable, plaintext.PlainText))
    except plaintext.NeedsRich:
        return
    assert console.text() == out.getvalue()


# ---------------------------------------------------------------- needs= guards, proved from the parsed pattern

from itertools import product  # noqa: E402

from oomdoctor.lazyre import LazyPattern  # noqa: E402


def _literal_choices(items) -> set[str] | None:
    """The strings a parsed (sub)pattern can match when it is literal only (small alternations and
    one-character classes allowed), else None."""
    from re import _constants as C

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
    from re import _constants as C

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
    from oomdoctor.crashlog import context, formats, phase

    found = []
    for mod in (formats, context, phase):
        for name, value in vars(mod).items():
            values = tuple(value.values()) if isinstance(value, dict) else value if isinstance(value, tuple) else (value,)
            for i, v in enumerate(values):
                for p in (v if isinstance(v, tuple) else (v,)):     # (pattern, key) and (phase, pattern) pairs
                    if isinstance(p, LazyPattern) and p.needs:
                        found.append((f"{mod.__name__}.{name}[{i}]", p))
    return found


def test_every_needs_literal_is_in_every_match_of_its_pattern():
    from re import _parser

    guarded = _guarded_patterns()
    assert len(guarded) > 40
    for name, pat in guarded:
        assert isinstance(pat.needs, tuple), name
        parsed = _parser.parse(pat.pattern, pat._flags)
        assert not parsed.state.flags & re.IGNORECASE, name
        assert _proves(parsed, pat.needs), \
            f"{name}: a match need not contain any of {pat.needs}"


def test_needs_must_be_a_tuple_of_literals():
    for bad in ("abc", ("",), (1,)):
        with pytest.raises(TypeError):
            lazy_re("abc", needs=bad)


def test_the_needs_proof_rejects_a_literal_a_match_may_lack():
    from re import _parser

    for pattern, needs in [(r"a\s+b", ("a b",)), (r"(?:x|y)z", ("xz",)), (r"q(?:abc)?r", ("abc",)),
                           (r"abc|d", ("abc",)), (r"[Aa]b", ("Ab",)), (r"x*yz", ("xyz",))]:
        assert not _proves(_parser.parse(pattern), needs), pattern
    assert not _proves(_parser.parse(r"(?i:abc)"), ("abc",))
    assert _proves(_parser.parse(r"(?:GPU|NPU) \d+|(?:S|s)tep"), ("GPU ", "NPU ", "tep"))


def test_a_guarded_pattern_answers_like_the_regex_on_every_test_log_line():
    import glob

    lines = [line for path in sorted(glob.glob("tests/data/logs/*.log")) + ["oomdoctor/data/demo/train.log"]
             for line in open(path, encoding="utf-8", errors="replace").read().splitlines()]
    for name, pat in _guarded_patterns():
        real = re.compile(pat.pattern, pat._flags)
        for line in lines:
            assert (pat.search(line) is None) == (real.search(line) is None), (name, line)
            assert pat.findall(line) == real.findall(line), (name, line)


# ---------------------------------------------------------------- @record behaves as @dataclass

import dataclasses  # noqa: E402
import math  # noqa: E402

from oomdoctor.records import record  # noqa: E402


def _twins(frozen: bool):
    """The same class body under @record and under @dataclass, with fields of every kind."""
    def body():
        return {
            "__annotations__": {"a": "int", "b": "float", "c": "str", "d": "tuple", "e": "object"},
            "b": 0.0,
            "c": dataclasses.field(default="x", compare=False),
            "d": dataclasses.field(default=(), repr=False),
            "e": dataclasses.field(default=None, hash=False),
        }
    fast = record(frozen=frozen)(type("Thing", (), body()))
    slow = dataclasses.dataclass(frozen=frozen)(type("Thing", (), body()))
    return fast, slow


def _samples(cls):
    nan = math.nan
    return [cls(1), cls(1, 2.5), cls(1, c="y"), cls(2, d=(1,)), cls(1, e=[1]), cls(1, nan), cls(1, nan, e=nan)]


@pytest.mark.parametrize("frozen", [True, False])
def test_record_compares_hashes_and_shows_like_dataclass(frozen):
    fast, slow = _twins(frozen)
    fs, ss = _samples(fast), _samples(slow)
    assert [repr(x) for x in fs] == [repr(x) for x in ss]
    for (f1, s1) in zip(fs, ss):
        assert (f1 == object()) == (s1 == object())
        assert f1.__eq__(object()) is NotImplemented and s1.__eq__(object()) is NotImplemented
        for (f2, s2) in zip(fs, ss):
            assert (f1 == f2) == (s1 == s2) and (f1 != f2) == (s1 != s2)
    assert fs[5] == fs[5] and ss[5] == ss[5]           # the same NaN object: equal, as tuples compare
    if frozen:
        hashable = [i for i, s in enumerate(ss) if not isinstance(s.e, list)]
        assert [hash(fs[i]) for i in hashable] == [hash(ss[i]) for i in hashable]
        with pytest.raises(dataclasses.FrozenInstanceError):
            fs[0].a = 5
    else:
        assert fast.__hash__ is None and slow.__hash__ is None
    assert [f.name for f in dataclasses.fields(fast)] == [f.name for f in dataclasses.fields(slow)]
    assert dataclasses.replace(fs[0], a=7) == fast(7)


def test_record_shows_a_record_inside_itself_as_dots_like_dataclass():
    fast, slow = _twins(False)
    f, s = fast(1), slow(1)
    f.e, s.e = [f], [s]
    assert repr(f) == repr(s) == "Thing(a=1, b=0.0, c='x', e=[...])"


def test_record_keeps_methods_the_class_defines():
    @record
    class Own:
        a: int

        def __repr__(self) -> str:
            return "own"

        def __hash__(self) -> int:
            return 7

    assert repr(Own(1)) == "own" and hash(Own(1)) == 7 and Own(1) == Own(1)


def test_every_fact_and_stage_record_matches_its_dataclass_twin():
    """Each class built with @record against a @dataclass built from the same fields, on its defaults."""
    import importlib

    mods = ["oomdoctor.facts", "oomdoctor.pipeline", "oomdoctor.planner.rules", "oomdoctor.planner.engine",
            "oomdoctor.planner.registry", "oomdoctor.crashlog.formats", "oomdoctor.crashlog.context",
            "oomdoctor.crashlog.parse", "oomdoctor.crashlog.source", "oomdoctor.patch.build", "oomdoctor.gpus",
            "oomdoctor.calibrate", "oomdoctor.configs._doc"]
    checked = 0
    for name in mods:
        for cls in vars(importlib.import_module(name)).values():
            if not (isinstance(cls, type) and "__record_compare__" in cls.__dict__):
                continue
            frozen = cls.__dataclass_params__.frozen
            twin = dataclasses.make_dataclass(
                cls.__name__, [(f.name, f.type, dataclasses.field(
                    default=f.default, default_factory=f.default_factory, repr=f.repr, hash=f.hash,
                    compare=f.compare)) for f in dataclasses.fields(cls)], frozen=frozen)
            required = [f for f in dataclasses.fields(cls)
                        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
            kw = {f.name: 1 for f in required}
            a, b = cls(**kw), twin(**kw)
            assert repr(a).replace(cls.__qualname__, cls.__name__, 1) == repr(b), cls
            assert (a == cls(**kw)) == (b == twin(**kw)), cls
            if frozen:
                try:
                    expected = hash(b)
                except TypeError:          # a mapping default: unhashable either way
                    with pytest.raises(TypeError):
                        hash(a)
                else:
                    assert hash(a) == expected, cls
            checked += 1
    assert checked >= 30
