"""JSON splicing for DeepSpeed configs: positions from our scanner, the file's indentation and order kept."""
from __future__ import annotations

import json

import pytest

from oomdoctor.errors import InputError
from oomdoctor.patch.json_edit import scan, set_json_key

DS = """{
  "train_micro_batch_size_per_gpu": "auto",
  "bf16": {"enabled": "auto"},
  "zero_optimization": {
    "stage": 2,
    "reduce_bucket_size": 5e8,
    "offload_optimizer": null
  }
}
"""


def _set(text: str, *keys: str, value, after_key=None) -> str:
    return set_json_key(text, keys, value, after_key=after_key, path="ds.json")


def test_scanner_spans_cover_exactly_each_value():
    root = scan(DS)
    zero = root.find("zero_optimization")[2]
    stage = zero.find("stage")[2]
    assert DS[stage.start:stage.end] == "2"
    assert DS[zero.start:zero.end].startswith("{") and DS[zero.start:zero.end].endswith("}")
    assert root.python() == json.loads(DS)


def test_replacing_a_value_touches_only_its_characters():
    out = _set(DS, "zero_optimization", "stage", value=3)
    assert out == DS.replace('"stage": 2', '"stage": 3')
    out = _set(DS, "train_micro_batch_size_per_gpu", value=1)
    assert out == DS.replace('"train_micro_batch_size_per_gpu": "auto"', '"train_micro_batch_size_per_gpu": 1')


def test_deepspeed_exponent_notation_is_kept():
    out = _set(DS, "zero_optimization", "reduce_bucket_size", value=2e8)
    assert '"reduce_bucket_size": 2e8,' in out
    assert json.loads(out)["zero_optimization"]["reduce_bucket_size"] == 2e8


def test_absent_key_uses_the_objects_indentation_and_goes_after_the_related_key():
    out = _set(DS, "zero_optimization", "overlap_comm", value=True, after_key="stage")
    assert '    "stage": 2,\n    "overlap_comm": true,\n    "reduce_bucket_size"' in out
    assert list(json.loads(out)["zero_optimization"]) == ["stage", "overlap_comm", "reduce_bucket_size",
                                                          "offload_optimizer"]


def test_absent_key_at_the_end_of_an_object_moves_no_other_line():
    out = _set(DS, "gradient_checkpointing", value=True)
    assert out == DS.replace('  }\n}\n', '  },\n  "gradient_checkpointing": true\n}\n')


def test_an_inline_object_stays_inline():
    out = _set(DS, "bf16", "immediate", value=False)
    assert '"bf16": {"enabled": "auto", "immediate": false},' in out


def test_nested_absent_parents_are_created_multi_line():
    text = '{\n    "a": 1\n}\n'
    out = _set(text, "zero_optimization", "offload_param", "device", value="cpu")
    assert out == ('{\n    "a": 1,\n    "zero_optimization": {\n        "offload_param": {\n'
                   '            "device": "cpu"\n        }\n    }\n}\n')


def test_a_null_parent_becomes_an_object():
    out = _set(DS, "zero_optimization", "offload_optimizer", "device", value="cpu")
    assert json.loads(out)["zero_optimization"]["offload_optimizer"] == {"device": "cpu"}
    assert '    "offload_optimizer": {\n      "device": "cpu"\n    }\n  }' in out


def test_an_empty_object_gains_its_first_key():
    assert _set("{}\n", "a", value=1) == '{\n  "a": 1\n}\n'
    assert _set('{"x": {}}', "x", "a", value=1) == '{"x": {"a": 1}}'
    assert _set('{\n  "x": {}\n}', "x", "a", value=1) == '{\n  "x": {\n    "a": 1\n  }\n}'


def test_tabs_are_kept_as_the_indent():
    text = '{\n\t"a": {\n\t\t"b": 1\n\t}\n}'
    out = _set(text, "a", "c", value=2)
    assert out == '{\n\t"a": {\n\t\t"b": 1,\n\t\t"c": 2\n\t}\n}'


def test_crlf_json_stays_crlf():
    text = DS.replace("\n", "\r\n")
    out = _set(text, "zero_optimization", "sub_group_size", value=1)
    assert out.count("\n") == out.count("\r\n")


def test_same_value_is_no_change():
    assert _set(DS, "zero_optimization", "stage", value=2) == DS
    assert _set(DS, "zero_optimization", "reduce_bucket_size", value=500000000) == DS


def test_invalid_json_reports_the_line():
    with pytest.raises(InputError) as err:
        _set('{\n  "a": 1,\n  "b": tru\n}\n', "a", value=2)
    assert str(err.value).startswith("ds.json:3: JSON syntax error")


def test_trailing_comma_is_invalid_json():
    with pytest.raises(InputError):
        scan('{"a": 1,}', "ds.json")


def test_setting_below_a_scalar_is_refused():
    with pytest.raises(InputError) as err:
        _set(DS, "train_micro_batch_size_per_gpu", "x", value=1)
    assert "is not an object" in str(err.value)
