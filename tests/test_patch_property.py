"""Property: any scalar spliced into a YAML (or JSON) file re-parses to exactly that value; nothing else moves."""
from __future__ import annotations

import json
import math

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from oomdoctor.patch.json_edit import set_json_key
from oomdoctor.patch.yaml_edit import set_yaml_key, set_yaml_keys

TEMPLATE = """# header comment
name: 'quoted'   # keep me
plain: value
dq: "double"
empty:
nested:
  inner: 1  # inner comment
  deeper:
    leaf: true
flow: {a: 1, b: two}
seq:
  - x
"""
BASE = yaml.safe_load(TEMPLATE)
PATHS = [("name",), ("plain",), ("dq",), ("empty",), ("nested", "inner"), ("nested", "deeper", "leaf"),
         ("flow", "a"), ("flow", "b"), ("absent",), ("nested", "absent"), ("new", "branch", "leaf"),
         ("flow", "absent")]

text_values = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
    st.floats(allow_nan=False),
    text_values,
    st.sampled_from(["yes", "no", "on", "off", "1e-4", "0o17", "2024-01-01", "null", "~", "=", "<<", "a: b",
                     "- x", "#c", "x #c", "'", '"', "@x", "%x", "1:30", ".5", "0x1F", "True"]),
)


def _set(data: dict, path: tuple[str, ...], value) -> None:
    for key in path[:-1]:
        data = data.setdefault(key, {})
    data[path[-1]] = value


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), scalars), min_size=1, max_size=4))
def test_spliced_yaml_values_reparse_exactly(assignments):
    text = TEMPLATE
    expected = yaml.safe_load(TEMPLATE)
    for path, value in assignments:
        text = set_yaml_key(text, path, value, path="t.yaml")
        _set(expected, path, value)
    loaded = yaml.safe_load(text)
    assert loaded == expected
    for path, value in dict(assignments).items():
        got = loaded
        for key in path:
            got = got[key]
        final = [v for p, v in assignments if p == path][-1]
        assert _same(got, final), (path, got, final)
    assert text.startswith("# header comment\n")
    assert "# inner comment" in text and "seq:\n  - x\n" in text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([("a",), ("o", "x"), ("o", "n", "m"), ("z",), ("o", "y")]),
                          st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
                                    allow_infinity=False), text_values)), min_size=1, max_size=4))
def test_spliced_json_values_reparse_exactly(assignments):
    text = '{\n  "a": 1,\n  "o": {\n    "x": "auto"\n  }\n}\n'
    expected = json.loads(text)
    for path, value in assignments:
        text = set_json_key(text, path, value, path="t.json")
        _set(expected, path, value)
    assert json.loads(text) == expected
    assert text.startswith('{\n  "a": ') and text.endswith("\n}\n")


def test_setting_a_float_where_the_file_holds_the_equal_int_writes_the_float():
    # A hypothesis draw found it: [(p, 1), (p, 1.0)] kept `1`, which reads back as an int.
    text = set_yaml_key(set_yaml_key(TEMPLATE, ("nested", "inner"), 1, path="t.yaml"),
                        ("nested", "inner"), 1.0, path="t.yaml")
    assert _same(yaml.safe_load(text)["nested"]["inner"], 1.0)


def test_two_large_integers_one_apart_are_two_values():
    # Found on Python 3.9 by the property above: both round to the same float.
    text = set_yaml_key(TEMPLATE, ("name",), -(2 ** 70), path="t.yaml")
    text = set_yaml_key(text, ("name",), -(2 ** 70) - 1, path="t.yaml")
    assert yaml.safe_load(text)["name"] == -(2 ** 70) - 1


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(PATHS), scalars, min_size=1, max_size=6))
def test_setting_keys_together_gives_the_text_of_setting_them_one_by_one(assignments):
    # one compose for the values the file holds, one by one for the rest: the same bytes either way
    one_by_one = TEMPLATE
    for path, value in assignments.items():
        one_by_one = set_yaml_key(one_by_one, path, value, path="t.yaml")
    together = set_yaml_keys(TEMPLATE, [(path, value, None) for path, value in assignments.items()], path="t.yaml")
    assert together == one_by_one


INSERT_PATHS = PATHS + [("absent2",), ("nested", "deeper", "absent"), ("nested", "absent2"), ("new", "other"),
                        ("empty", "child"), ("seq", "x"), ("flow", "absent2"), ("plain", "x")]
AFTER_KEYS = [None, None, "plain", "nested.inner", "name", "absent", "flow.a", "seq", "nested.deeper"]


def _outcome(fn):
    try:
        return fn()
    except Exception as err:                    # the same refusal, with the same words, either way
        return (type(err).__name__, str(err))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(INSERT_PATHS), scalars, st.sampled_from(AFTER_KEYS)), min_size=1, max_size=6))
def test_keys_inserted_together_land_where_one_by_one_puts_them(assignments):
    # Absent keys are placed from one compose too: the bytes must be those of setting them one at a time,
    # whatever the order, the after_key, a shared new parent, a null parent or a repeated key.
    def one_by_one():
        text = TEMPLATE
        for path, value, after in assignments:
            text = set_yaml_key(text, path, value, after_key=after, path="t.yaml")
        return text

    together = _outcome(lambda: set_yaml_keys(TEMPLATE, assignments, path="t.yaml"))
    assert together == _outcome(one_by_one)


def test_a_plan_that_adds_several_keys_composes_the_file_once(monkeypatch):
    # One compose of a 100k-key config costs seconds: three new keys must not cost three more.
    from oomdoctor import bounded

    calls = []
    real = bounded._compose_checked
    monkeypatch.setattr(bounded, "_compose_checked", lambda *a: calls.append(1) or real(*a))
    text = TEMPLATE + "".join(f"k{i}: {i}\n" for i in range(50))
    out = set_yaml_keys(text, [(("quantization_bit",), 4, None), (("lora_rank",), 8, None),
                               (("lora_target",), "all", "lora_rank"), (("plain",), "changed", None)], path="t.yaml")
    assert len(calls) == 1
    data = yaml.safe_load(out)
    assert (data["quantization_bit"], data["lora_rank"], data["lora_target"], data["plain"]) == (4, 8, "all", "changed")
