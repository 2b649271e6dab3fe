"""What a plain report leaves alone (benchmarks/startup.py times it): the fit matrix is not imported and the
wide-character patterns are not compiled, and the narrow stand-ins answer exactly as the patterns they replace."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

from hypothesis import given
from hypothesis import strategies as st

from oomdoctor.words import _cells

# Characters below U+2E80 (where the two-cell ranges start), with the Unicode spaces \s also matches.
_NARROW_TEXT = st.text(alphabet=st.characters(max_codepoint=0x2E7F, exclude_categories=("Cs",)), max_size=60)


@given(_NARROW_TEXT)
def test_narrow_tokens_split_a_text_without_wide_characters_as_the_full_pattern(text):
    assert _cells._TOKENS_NARROW.findall(text) == _cells._TOKENS.findall(text)


@given(_NARROW_TEXT.filter(bool))
def test_narrow_tail_finds_the_same_tail_as_the_full_pattern(text):
    full, narrow = _cells._NARROW_TAIL.search(text), _cells._NARROW_TAIL_NARROW.search(text)
    assert (full and full.span()) == (narrow and narrow.span())


def test_wrapping_chinese_still_breaks_between_characters():
    lines = _cells.wrap_cells("显存不足：请把每卡批大小减半并打开梯度检查点。", 12)
    assert len(lines) > 1 and all(_cells.cell_width(line) <= 12 for line in lines)


def test_a_plain_report_imports_no_fit_matrix_and_compiles_no_wide_pattern():
    code = ("import sys, io, contextlib\n"
            "from oomdoctor import cli\n"
            "from oomdoctor.words import _cells\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    code = cli.main(['--demo', '--plain', '--lang', 'en'])\n"
            "assert code == 1 and 'Plan' in out.getvalue(), (code, out.getvalue()[:200])\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('oomdoctor.advise'))\n"
            "assert loaded == ['oomdoctor.advise', 'oomdoctor.advise.cards', 'oomdoctor.advise.timing'], loaded\n"
            "assert '_compiled' not in vars(_cells._TOKENS) and '_compiled' not in vars(_cells._NARROW_TAIL)\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_advise_package_still_answers_every_public_name():
    import oomdoctor.advise as advise

    for name in advise.__all__:
        assert getattr(advise, name) is not None, name
    from oomdoctor.advise.render import render_plain
    assert advise.render_plain is render_plain


# ---------------------------------------------------------------- the frame table's literal prefixes

try:                                    # the regex parser: its public name moved in Python 3.11
    from re import _constants as _C
    from re import _parser as _P
except ImportError:                     # Python 3.9, 3.10
    import sre_constants as _C  # type: ignore[no-redef]
    import sre_parse as _P  # type: ignore[no-redef]


def _parsed_starts_with(pattern, prefix: str) -> bool:
    """Whether the (parsed) pattern begins with one literal item per character of `prefix`, case-sensitive:
    then every `re.match` of it starts with `prefix`."""
    parsed = _P.parse(pattern) if isinstance(pattern, str) else pattern
    if parsed.state.flags & re.IGNORECASE or len(parsed.data) < len(prefix):
        return False
    return all(op is _C.LITERAL and chr(av) == ch for (op, av), ch in zip(parsed.data, prefix))


def test_every_frame_row_starts_with_the_literal_its_prefix_names():
    from oomdoctor.crashlog.taxonomy import MODULES, literal_prefix

    prefixes = [literal_prefix(mod) for mod, _fn, _phase, _src in MODULES]
    assert sum(map(bool, prefixes)) > 0.8 * len(MODULES)         # the guard spares most rows
    for (mod, *_), prefix in zip(MODULES, prefixes):
        assert _parsed_starts_with(mod, prefix), (mod, prefix)


def test_the_literal_prefix_stops_where_a_match_may_differ():
    from oomdoctor.crashlog.taxonomy import literal_prefix

    cases = {r"abc|d": "", r"ab?c": "a", r"a\.b*": "a.", r"x{2}y": "", r"a(b|c)d": "a", r"a[|]b|c": "",
             r"a[]|]b": "a", r"(?:x)y": "", r"\S+\.py": "", r"torch/optim/": "torch/optim/", r"a\d": "a",
             r"ab+": "a", r"(?i)ab": ""}
    for pattern, prefix in cases.items():
        assert literal_prefix(pattern) == prefix, pattern
        assert _parsed_starts_with(pattern, prefix) or not prefix, pattern


@given(st.text(alphabet="ab.|?*+()[]\\{}2", max_size=12))
def test_a_literal_prefix_is_never_missing_from_a_match(pattern):
    from oomdoctor.crashlog.taxonomy import literal_prefix

    try:
        with warnings.catch_warnings():         # "[[" and the like: re's FutureWarning on nested sets
            warnings.simplefilter("ignore", FutureWarning)
            compiled = re.compile(pattern)
            parsed = _P.parse(pattern)
    except (re.error, OverflowError):
        return
    prefix = literal_prefix(pattern)
    assert _parsed_starts_with(parsed, prefix) or not prefix, (pattern, prefix)
    for text in ("", "a", "ab", "a.b", "ab.ab", "aab", "b", "|", "ab|", "a2"):
        m = compiled.match(text)
        assert m is None or text.startswith(prefix), (pattern, prefix, text)


def test_a_plain_report_of_the_demo_compiles_few_patterns_and_imports_no_rich():
    # every regex the run compiles, the standard library's and yaml's included, counted at re's compiler; stdout
    # a pipe, as in `oomdoctor --demo --plain | less`, where the plain path writes without rich
    code = ("import sys\n"
            "try:\n"
            "    from re import _compiler as comp\n"
            "except ImportError:\n"
            "    import sre_compile as comp\n"
            "compile, n = comp.compile, [0]\n"
            "def counting(*args):\n"
            "    n[0] += 1\n"
            "    return compile(*args)\n"
            "comp.compile = counting\n"
            "from oomdoctor import cli\n"
            "code = cli.main(['--demo', '--plain', '--lang', 'en'])\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'textual', 'torch', 'transformers'})\n"
            "print(int(code), n[0], heavy, file=sys.stderr)\n")     # an IntEnum prints its name before 3.11
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Plan" in done.stdout
    exit_code, compiled, heavy = done.stderr.split(maxsplit=2)
    assert exit_code == "1" and heavy.strip() == "[]", done.stderr
    # 163 when written (324 before the frame table's rows, the call-site lines and the paste reader's patterns
    # compiled only on a literal they need): a new eager pattern table shows here. 185 of 185 on CPython 3.13 at
    # fc699a1, 162 once the 23 module-level patterns the demo never calls compiled on first use (the test below
    # names any such pattern by its file and line)
    assert int(compiled) <= 175, done.stderr


def test_every_pattern_a_module_compiles_at_import_on_the_plain_path_is_one_the_demo_uses():
    # each module-level re.compile of oomdoctor's is made a LazyPattern (oomdoctor/lazyre.py) for this run: one the
    # plain demo never calls is startup cost for nothing, and is named here, file and line, to be made lazy too
    code = ("import json, os, re, sys\n"
            "import oomdoctor\n"
            "from oomdoctor.lazyre import LazyPattern\n"
            "package = os.path.dirname(oomdoctor.__file__) + os.sep\n"
            "compile, made = re.compile, []\n"
            "def lazily(pattern, flags=0):\n"
            "    caller = sys._getframe(1)\n"
            "    where = caller.f_code.co_filename\n"
            "    if caller.f_code.co_name != '<module>' or not where.startswith(package) or not isinstance(pattern, str):\n"
            "        return compile(pattern, flags)\n"
            "    made.append((os.path.relpath(where, package) + ':' + str(caller.f_lineno), LazyPattern(pattern, flags)))\n"
            "    return made[-1][1]\n"
            "re.compile = lazily\n"
            "from oomdoctor import cli\n"
            "code = cli.main(['--demo', '--plain', '--lang', 'en'])\n"
            "unused = [where for where, lazy in made if '_compiled' not in vars(lazy)]\n"
            "print(json.dumps([int(code), len(made), unused]), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    exit_code, made, unused = json.loads(done.stderr.strip().splitlines()[-1])
    assert exit_code == 1 and "Plan" in done.stdout, done.stderr          # the demo's report, lazy patterns or not
    assert made > 10                                                      # the stand-in saw the modules' patterns
    assert unused == [], f"compiled at import but unused by `--demo --plain` (use oomdoctor.lazyre.lazy_re): {unused}"
