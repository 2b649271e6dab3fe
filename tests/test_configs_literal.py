"""The one reader of Python literals the config readers share (oomdoctor/configs/_literal.py): each construct it
accepts, each option a reader adds, and what it refuses."""
from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oomdoctor.configs._literal import ARITHMETIC, REFUSED, literal


def _node(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize("text, value", [
    ("2048", 2048), ("'q_proj'", "q_proj"), ("None", None), ("True", True), ("1e-05", 1e-05),
    ("-1", -1), ("+0.5", 0.5),
    ("[1, 'a']", [1, "a"]), ("(1, 2)", [1, 2]), ("{1}", [1]), ("set()", []),
    ("{'lr': 1e-05, 'ds': {'stage': 2}}", {"lr": 1e-05, "ds": {"stage": 2}}),
])
def test_constants_signs_containers_and_dicts_read_as_their_values(text, value):
    assert literal(_node(text)) == value


def test_with_tuples_kept_it_reads_as_ast_literal_eval_does():
    for text in ("(1, 2)", "{'a', 'b'}", "set()", "{(1, 2): [3]}", "-2.5"):
        got = literal(_node(text), tuples=True)
        assert got == ast.literal_eval(text) and type(got) is type(ast.literal_eval(text))


@pytest.mark.parametrize("text", ["lora_rank", "torch.bfloat16", "get_rank()", "2 * 8", "{**base}", "{[1]: 2}",
                                  "{1, [2]}", "not True", "x if y else z"])
def test_without_options_a_name_an_attribute_a_call_arithmetic_or_a_bad_key_is_refused(text):
    assert literal(_node(text), tuples=True) is REFUSED


def test_a_refused_part_refuses_the_whole_unless_the_read_is_lenient():
    node = _node("{'a': 1, 'b': rank, 'c': [1, rank]}")
    assert literal(node) is REFUSED
    assert literal(node, lenient=True) == {"a": 1, "b": None, "c": [1, None]}
    assert literal(_node("{**base, 'a': 1}"), lenient=True) is REFUSED      # a key it cannot read, either way


def test_names_attributes_and_calls_read_as_the_caller_says():
    consts = {"lora_rank": 16}
    dotted = literal(_node("torch.bfloat16"), attribute=lambda n, part: f"{part(n.value)}.{n.attr}",
                     names=lambda name: consts.get(name, name))
    assert dotted == "torch.bfloat16"
    assert literal(_node("[lora_rank]"), names=lambda name: consts.get(name, REFUSED)) == [16]
    fields = literal(_node("Args(lr=1e-05, rank=lora_rank)"), names=consts.get,
                     call=lambda n, part: {k.arg: part(k.value) for k in n.keywords})
    assert fields == {"lr": 1e-05, "rank": 16}


def test_arithmetic_takes_only_the_operators_given_and_only_numbers():
    names = {"r": 16, "flag": True, "name": "x"}.get
    assert literal(_node("r * 2"), names=names, operators=(ast.Mult,)) == 32
    assert literal(_node("r + 2"), names=names, operators=(ast.Mult,)) is REFUSED
    assert literal(_node("r // 4 - 1"), names=names, operators=ARITHMETIC) == 3
    assert literal(_node("flag * 2"), names=names, operators=ARITHMETIC) is REFUSED       # a bool is no number
    assert literal(_node("name * 2"), names=names, operators=ARITHMETIC) is REFUSED
    assert literal(_node("r / 0"), names=names, operators=ARITHMETIC) is REFUSED
    assert literal(_node("r * 2"), names=names, operators=(ast.Mult,), lenient=True) == 32
    assert literal(_node("name * 2"), names=names, operators=(ast.Mult,), lenient=True) is None


def test_a_shallow_read_resolves_names_only_in_the_value_itself_not_inside_containers():
    consts = {"r": 16}.get
    assert literal(_node("r"), names=consts, deep=False) == 16
    assert literal(_node("[r, 1]"), names=consts, deep=False) is REFUSED
    assert literal(_node("{'dtype': torch.bfloat16}"), attribute=lambda n, part: n.attr, deep=False) is REFUSED
    assert literal(_node("{'dtype': torch.bfloat16}"), attribute=lambda n, part: n.attr) == {"dtype": "bfloat16"}


def test_dict_displays_can_be_left_out():
    assert literal(_node("{'a': 1}"), dicts=False) is REFUSED
    assert literal(_node("[{'a': 1}]"), dicts=False, lenient=True) == [None]


def test_nesting_too_deep_for_the_stack_is_refused_not_raised():
    node = ast.List(elts=[], ctx=ast.Load())
    for _ in range(100_000):
        node = ast.List(elts=[node], ctx=ast.Load())
    assert literal(node) is REFUSED


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20))
def test_any_json_like_value_reads_back_from_its_repr(value):
    assert literal(_node(repr(value))) == value
