"""What a plain report leaves alone (benchmarks/startup.py times it): the fit matrix is not imported and the
wide-character patterns are not compiled, and the narrow stand-ins answer exactly as the patterns they replace."""
from __future__ import annotations

import subprocess
import sys

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
