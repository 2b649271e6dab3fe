"""Loading rule files: strict validation with file:line, and custom directories that reorder and add rungs."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from oomdoctor.errors import InputError
from oomdoctor.planner import load_rules

DATA = Path(__file__).parent / "data" / "rules"

GOOD_RULE = """\
schema_version: 1
rules:
  - id: X001
    slug: my-rule
    title: {en: Mine, zh: 我的}
    why: {en: Because., zh: 因为。}
    category: activations
    costs:
      - kind: none
        text: {en: Nothing., zh: 无。}
    applicability: safe
    when: {fact: setup.micro_batch, op: gt, value: 1}
    actions:
      - set: {field: micro_batch, value: 1}
"""


def _write(tmp_path: Path, text: str, name: str = "custom.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _broken(good: str, old: str, new: str) -> str:
    assert old in good
    return good.replace(old, new)


BROKEN = [
    ("unknown rule key", _broken(GOOD_RULE, "    category:", "    severity: high\n    category:"), 7, "unknown key 'severity'"),
    ("unknown fact", _broken(GOOD_RULE, "setup.micro_batch", "setup.microbatch"), 12, "unknown fact 'setup.microbatch'"),
    ("unknown operator", _broken(GOOD_RULE, "op: gt", "op: greater"), 12, "unknown operator 'greater'"),
    ("unknown action", _broken(GOOD_RULE, "- set: {field", "- run: {field"), 14, "unknown action 'run'"),
    ("bad value type", _broken(GOOD_RULE, "value: 1}\n    actions", "value: many}\n    actions"), 12, "must be a number"),
    ("unknown setup field", _broken(GOOD_RULE, "field: micro_batch", "field: batch"), 14, "unknown setup field 'batch'"),
    ("value outside the field's choices", _broken(GOOD_RULE, "{field: micro_batch, value: 1}",
                                                  "{field: method, value: lorra}"), 14, "must be one of"),
    ("bad category", _broken(GOOD_RULE, "category: activations", "category: speed"), 7, "category must be one of"),
    ("missing required key", _broken(GOOD_RULE, "    applicability: safe\n", ""), 3, "needs 'applicability'"),
    ("lt on a string fact", _broken(GOOD_RULE, "{fact: setup.micro_batch, op: gt, value: 1}",
                                    "{fact: setup.method, op: lt, value: 1}"), 12, "needs a numeric fact"),
    ("note with an unknown placeholder", _broken(GOOD_RULE, "      - set: {field: micro_batch, value: 1}",
                                                 "      - note: {en: 'run ${__import__}'}"), 14, "unknown fact"),
    ("newer schema", _broken(GOOD_RULE, "schema_version: 1", "schema_version: 2"), 1, "schema_version 2"),
    ("yaml syntax error", _broken(GOOD_RULE, "    slug: my-rule", "    slug: [my-rule"), 5, "YAML syntax error"),
    ("duplicate key", _broken(GOOD_RULE, "    slug: my-rule", "    slug: my-rule\n    slug: again"), 5, "duplicate key"),
    ("exists with a value", _broken(GOOD_RULE, "op: gt, value: 1", "op: exists, value: 1"), 12, "takes no value"),
]


@pytest.mark.parametrize("text,line,fragment", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_a_broken_rule_file_names_file_and_line(tmp_path, text, line, fragment):
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_rules([str(tmp_path)])
    assert str(err.value).startswith(f"{path}:{line}: "), str(err.value)
    assert fragment in str(err.value)


def test_the_good_rule_loads_and_is_appended_to_the_ladder(tmp_path):
    _write(tmp_path, GOOD_RULE)
    book = load_rules([str(tmp_path)])
    assert book.rules[-1].id == "X001"
    assert len(book) == len(load_rules()) + 1


def test_an_empty_rule_file_is_an_error_with_its_path(tmp_path):
    path = _write(tmp_path, "")
    with pytest.raises(InputError) as err:
        load_rules([str(tmp_path)])
    assert str(err.value).startswith(str(path))


def test_a_missing_rules_directory_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_rules([str(tmp_path / "nope")])


def test_custom_file_reorders_adds_and_disables_rungs():
    book = load_rules([str(DATA / "custom")])
    ids = list(book.ids)
    assert ids[0] == "OOM007"                                  # moved to the front with order: 5
    assert ids.index("MY001") == ids.index("OOM003") - 1       # added with before: cut-cutoff-len
    assert "OOM019" not in ids                                 # enabled: false
    assert ids.index("MY002") == ids.index("OOM010") + 1       # added with after: OOM010
    default = load_rules()
    assert [i for i in ids if i.startswith("OOM")] == [
        i for i in ["OOM007", *[j for j in default.ids if j != "OOM007"]] if i != "OOM019"]


def test_a_rule_with_the_same_id_replaces_the_default_and_keeps_its_place(tmp_path):
    _write(tmp_path, GOOD_RULE.replace("X001", "OOM003").replace("my-rule", "cut-cutoff-len"))
    book = load_rules([str(tmp_path)])
    assert book.get("OOM003").title.en == "Mine"
    assert book.ids.index("OOM003") == load_rules().ids.index("OOM003")


def test_moving_an_unknown_rule_is_an_error(tmp_path):
    path = _write(tmp_path, "rules:\n  - id: NOPE9\n    order: 3\n")
    with pytest.raises(InputError) as err:
        load_rules([str(tmp_path)])
    assert str(err.value).startswith(f"{path}:2: no rule NOPE9")


def test_before_an_unknown_rule_is_an_error(tmp_path):
    path = _write(tmp_path, GOOD_RULE.replace("    title:", "    before: nothing-here\n    title:"))
    with pytest.raises(InputError) as err:
        load_rules([str(tmp_path)])
    assert str(err.value).startswith(f"{path}:3: ") and "nothing-here" in str(err.value)


def test_two_files_in_one_directory_load_in_name_order(tmp_path):
    _write(tmp_path, GOOD_RULE, "a.yaml")
    _write(tmp_path, "rules:\n  - id: X001\n    order: 1\n", "b.yaml")
    assert load_rules([str(tmp_path)]).ids[0] == "X001"


def test_default_book_is_loaded_once_and_shared():
    assert load_rules() is load_rules()


def test_the_broken_fixture_points_at_the_typo_line():
    path = DATA / "broken" / "bad-fact.yaml"
    with pytest.raises(InputError) as err:
        load_rules([str(path)])
    assert str(err.value) == f"{path}:16: unknown fact 'setup.sequence_length'"
