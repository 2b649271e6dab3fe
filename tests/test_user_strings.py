"""No sentence shown to users lives outside oomdoctor/words/.

Every string literal of the package (f-strings as a whole; docstrings and assert messages aside) that reads
as prose, three words or more, is a finding, unless it is allowed below:

- ALLOWED: literals that are not words for people (commands, argparse's msgids that words/cli.py
  translates, messages for programmers), per file, each with its reason;
- LOG_WORDS: files whose literals are the words of other programs' logs, which the parser matches;
- PENDING: whole files whose sentences belong to another issue, with the owner. When that work lands,
  delete the file's line here and the test shows what is left to move.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "oomdoctor"

PROSE = re.compile(r"[A-Za-z]{2,}[,;:]?(?: +[A-Za-z][A-Za-z'’-]*[,;:.!?)]?){2,}")

PENDING = {
}

# Files whose prose literals are other programs' words, which the crash-log parser searches for (PyTorch's
# messages, trainers' banners, launcher lines): never shown as oomdoctor's own sentences.
LOG_WORDS = {
    "oomdoctor/crashlog/context.py": "trainers' banners and argument dumps the context reader matches",
    "oomdoctor/crashlog/formats.py": "the frameworks' out-of-memory messages the patterns match",
    "oomdoctor/crashlog/parse.py": "needles for the scan: parts of PyTorch's and launchers' messages",
    "oomdoctor/crashlog/phase.py": "progress lines and frames that mark a phase",
    "oomdoctor/crashlog/callsites.py": "call sites and log lines of other programs, with where they come from",
    "oomdoctor/crashlog/taxonomy.py": "the frameworks' module paths and function names, with the source file of each row",
}

ALLOWED = {
    # argparse's gettext msgids: the keys words/cli.py translates them by
    "oomdoctor/cli.py": {
        "show this help message and exit", "expected one argument", "expected at most one argument",
        "expected at least one argument", "not allowed with argument %s",
        "the following arguments are required: %s", "ignored explicit argument %r",
    },
    # a command the user copies
    "oomdoctor/guide/pages.py": {"git apply plan.diff"},
    # a ValueError for a programmer who asks for no training step; no user input reaches it
    "oomdoctor/simulate/__init__.py": {"steps must be at least 1"},
    # a packaging error in the bundled model catalog; no user input reaches it
    "oomdoctor/models.py": {"catalog entry without {}: {}"},
    # a program's name and the command it is run as
    "oomdoctor/configs/entries.py": {"ms-swift swift sft"},
    # ValueErrors for programmers who pass a bad pattern; never reach a user
    "oomdoctor/lazyre.py": {"needs= is a tuple of non-empty literal strings",
                            "needs= is a case-sensitive test; it cannot guard an IGNORECASE pattern"},
    # why the plain console hands a report to rich; never printed
    "oomdoctor/views/plaintext.py": {"markup or an emoji code", "a header of several lines",
                                     "table wider than the console"},
    # errors for programmers who call the patch and rule APIs wrongly; never shown
    "oomdoctor/patch/__init__.py": {"module {} has no attribute {}"},
    "oomdoctor/patch/build.py": {"KeyEdit(create=True) for {} needs the whole text as a str",
                                 "KeyEdit for {} has an empty key_path"},
    "oomdoctor/patch/json_edit.py": {"empty key path"},
    # io.UnsupportedOperation for GzipFile, which only tries to rewind a stream; never shown
    "oomdoctor/crashlog/source.py": {"a stream is read once"},
    "oomdoctor/patch/yaml_edit.py": {"empty key path"},
    "oomdoctor/patch/scalars.py": {"cannot write a {} as a YAML scalar: {}", "JSON has no {}",
                                   "cannot write a {} as a JSON value: {}"},
    "oomdoctor/planner/rules.py": {"rule {} has no text field {}"},
    # commands the user copies: what a planned setting needs installed
    "oomdoctor/views/describe.py": {"pip install liger-kernel", "pip install bitsandbytes", "pip install deepspeed",
                                    "pip install flash-attn --no-build-isolation"},
}


def _text(node: ast.AST) -> str | None:
    """A literal's text; an f-string's with {} where its values go."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _skipped(tree: ast.AST) -> set[int]:
    """Docstrings, assert messages, the pieces of f-strings (judged whole) and word lists (`"a b c".split()`:
    names, never a sentence)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split" \
                and not node.args and isinstance(node.func.value, ast.Constant):
            out.add(id(node.func.value))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and _text(body[0].value) is not None:
                out.add(id(body[0].value))
        elif isinstance(node, ast.Assert) and node.msg is not None:
            out.update(id(n) for n in ast.walk(node.msg))
        elif isinstance(node, ast.JoinedStr):
            out.update(id(n) for n in ast.walk(node) if n is not node)
    return out


def _css(text: str) -> bool:
    return "{" in text and "}" in text and ";" in text and ":" in text


def prose_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _skipped(tree)
    found = []
    for node in ast.walk(tree):
        text = _text(node)
        if text is None or id(node) in skipped or _css(text) or "\\" in text or "(?" in text:
            continue
        if PROSE.search(text):
            found.append((node.lineno, text))
    return sorted(found)


FILES = sorted(str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if "words" not in p.relative_to(PACKAGE).parts)


@pytest.mark.parametrize("path", [f for f in FILES if f not in PENDING and f not in LOG_WORDS])
def test_no_sentence_for_users_outside_words(path):
    allowed = ALLOWED.get(path, set())
    found = [f"{path}:{line}: {text!r}" for line, text in prose_literals(ROOT / path) if text not in allowed]
    assert not found, "move these into oomdoctor/words/ (or allow them in tests/test_user_strings.py):\n" + \
        "\n".join(found)


def test_every_allowed_literal_and_pending_file_is_still_there():
    for path, literals in ALLOWED.items():
        present = {text for _, text in prose_literals(ROOT / path)}
        assert literals <= present, f"{path}: no longer has {sorted(literals - present)}: drop them from ALLOWED"
    for path in LOG_WORDS:
        assert prose_literals(ROOT / path), f"{path} matches no log words any more: drop it from LOG_WORDS"
    for path in PENDING:
        assert (ROOT / path).is_file(), f"{path} is gone: drop it from PENDING"
        assert prose_literals(ROOT / path), f"{path} has no sentence left to move: drop it from PENDING"


def test_the_scan_finds_plain_and_formatted_sentences(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""A docstring is not shown."""\n'
                      'x = "the run did not fit"\n'
                      'y = f"cannot write {path} to the folder"\n'
                      'z = "bold red"\n'
                      'assert x, "a message for a developer"\n'
                      'names = frozenset("per_device_train_batch_size gradient_accumulation_steps optim seed".split())\n',
                      encoding="utf-8")
    assert prose_literals(sample) == [(2, "the run did not fit"), (3, "cannot write {} to the folder")]
