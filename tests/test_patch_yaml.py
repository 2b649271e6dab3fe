"""YAML splicing: only the value's bytes change; comments, quotes, CRLF, flow style and layout survive."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from oomdoctor.errors import InputError
from oomdoctor.facts import KeyEdit
from oomdoctor.patch import build_patch
from oomdoctor.patch.scalars import yaml_float, yaml_plain_ok, yaml_scalar
from oomdoctor.patch.yaml_edit import set_yaml_key

DATA = Path(__file__).parent / "data" / "patch"


def _set(text: str, *keys: str, value, after_key=None) -> str:
    return set_yaml_key(text, keys, value, after_key=after_key, path="cfg.yaml")


def test_changing_a_value_keeps_its_trailing_comment():
    text = "lr: 1.0e-4  # tuned by hand\nbatch: 8\n"
    assert _set(text, "batch", value=4) == "lr: 1.0e-4  # tuned by hand\nbatch: 4\n"
    assert _set(text, "lr", value=5e-5) == "lr: 5.0e-5  # tuned by hand\nbatch: 8\n"


def test_single_and_double_quoted_strings_keep_their_quotes():
    text = "a: 'x'\nb: \"y\"\nc: z\n"
    out = _set(_set(_set(text, "a", value="it's"), "b", value="q\"q"), "c", value="w")
    assert out == "a: 'it''s'\nb: \"q\\\"q\"\nc: w\n"
    assert yaml.safe_load(out) == {"a": "it's", "b": 'q"q', "c": "w"}


@pytest.mark.parametrize("word", ["yes", "no", "on", "off", "true", "null", "~", "1e-4", "0x10", "1_000",
                                  "12:30", ":", "a: b", "#x", "- x", "", " pad", "[1]", "{a}", "1.5", ".inf"])
def test_strings_yaml_would_misread_are_quoted(word):
    out = _set("k: old\n", "k", value=word)
    assert out != f"k: {word}\n"
    assert yaml.safe_load(out) == {"k": word}


def test_ordinary_strings_stay_plain():
    assert _set("k: old\n", "k", value="meta-llama/Llama-3-8B") == "k: meta-llama/Llama-3-8B\n"
    assert yaml_plain_ok("adamw_torch_fused") and not yaml_plain_ok("on")


def test_floats_are_written_so_pyyaml_reads_them_as_floats():
    assert yaml_float(1e-5) == "1.0e-5"
    assert yaml_float(2e-4) == "2.0e-4"
    assert yaml_float(0.5) == "0.5"
    assert yaml_float(3e20) == "3.0e+20"
    for value in (1e-5, 2e-4, 0.5, 3e20, 1 / 3, -7.25e-9):
        assert yaml.safe_load(f"x: {yaml_float(value)}")["x"] == value


def test_a_decimal_float_stays_decimal_and_an_exponent_float_stays_exponent():
    assert _set("learning_rate: 0.0002\n", "learning_rate", value=1e-4) == "learning_rate: 0.0001\n"
    assert _set("learning_rate: 2.0e-4\n", "learning_rate", value=1e-4) == "learning_rate: 1.0e-4\n"


def test_bools_none_and_ints():
    text = "a: 1\nb: x\nc: y\n"
    out = _set(_set(_set(text, "a", value=True), "b", value=None), "c", value=12)
    assert out == "a: true\nb: null\nc: 12\n"


def test_capitalised_bools_keep_their_capitalisation():
    assert _set("packed: False  # True is faster\n", "packed", value=True) == "packed: True  # True is faster\n"


def test_a_value_already_set_leaves_the_text_alone():
    text = "learning_rate: 1.0e-4\nbf16: True\nname: 'abc'\nn: 8\n"
    assert _set(text, "learning_rate", value=0.0001) == text     # PyYAML reads 1.0e-4 as a float
    assert _set("lr: 1e-4\n", "lr", value=1e-4) == "lr: 1e-4\n"   # ...and 1e-4 as a string: coerced
    assert _set(text, "bf16", value=True) == text
    assert _set(text, "name", value="abc") == text
    assert _set(text, "n", value=8) == text
    assert _set(text, "n", value=8.0) == text.replace("n: 8\n", "n: 8.0\n")   # YAML's !!float is not !!int
    assert _set(text, "bf16", value=1) != text                    # True is not the number 1


def test_crlf_line_endings_survive_edits_and_insertions():
    text = "# c\r\nmodel:\r\n  r: 8\r\n  alpha: 16\r\nbatch: 2\r\n"
    out = _set(_set(_set(text, "model", "r", value=16), "model", "dropout", value=0.1), "new", "leaf", value=1)
    assert out.count("\n") == out.count("\r\n")
    assert out == "# c\r\nmodel:\r\n  r: 16\r\n  alpha: 16\r\n  dropout: 0.1\r\nbatch: 2\r\nnew:\r\n  leaf: 1\r\n"


def test_flow_mappings_are_edited_in_flow_style():
    text = "lora: {r: 8, alpha: 16}  # small\nx: 1\n"
    assert _set(text, "lora", "r", value=16) == "lora: {r: 16, alpha: 16}  # small\nx: 1\n"
    assert _set(text, "lora", "dropout", value=0.1) == "lora: {r: 8, alpha: 16, dropout: 0.1}  # small\nx: 1\n"
    assert _set("a: {}\n", "a", "b", "c", value=1) == "a: {b: {c: 1}}\n"


def test_absent_key_goes_after_the_related_key_with_the_files_indent():
    text = "train:\n    batch: 8\n    accum: 1\n    lr: 0.1\nother: 1\n"
    out = _set(text, "train", "grad_ckpt", value=True, after_key="accum")
    assert out == "train:\n    batch: 8\n    accum: 1\n    grad_ckpt: true\n    lr: 0.1\nother: 1\n"


def test_absent_key_without_after_key_goes_at_the_end_of_its_mapping():
    text = "train:\n  batch: 8\n  list:\n    - a\n    - b\n  # trailing comment\nother: 1\n"
    out = _set(text, "train", "accum", value=2)
    assert out == "train:\n  batch: 8\n  list:\n    - a\n    - b\n  accum: 2\n  # trailing comment\nother: 1\n"


def test_nested_absent_parents_are_created_with_the_files_indent_step():
    text = "a:\n    b: 1\n"
    out = _set(text, "p", "q", "r", value="v")
    assert out == "a:\n    b: 1\np:\n    q:\n        r: v\n"
    assert yaml.safe_load(out) == {"a": {"b": 1}, "p": {"q": {"r": "v"}}}


def test_keys_yaml_would_misread_are_quoted_too():
    out = _set("a: 1\n", "on", "y", value=1)
    assert out == 'a: 1\n"on":\n  "y": 1\n'
    assert yaml.safe_load(out) == {"a": 1, "on": {"y": 1}}


def test_an_empty_value_gets_a_value_after_its_colon():
    text = "adapter:\nlora_r:  # rank\nnext: 1\n"
    assert _set(text, "lora_r", value=16) == "adapter:\nlora_r: 16  # rank\nnext: 1\n"


def test_a_null_parent_becomes_a_mapping():
    text = "fsdp_config:\nnext: 1\n"
    assert _set(text, "fsdp_config", "offload", value=True) == "fsdp_config:\n  offload: true\nnext: 1\n"
    text = "fsdp_config: null  # none yet\nnext: 1\n"
    assert _set(text, "fsdp_config", "offload", value=True) == "fsdp_config:  # none yet\n  offload: true\nnext: 1\n"


def test_a_scalar_parent_is_refused_with_its_line():
    with pytest.raises(InputError) as err:
        _set("a: 1\nb: 2\n", "b", "c", value=3)
    assert str(err.value).startswith("cfg.yaml:2:")


def test_invalid_yaml_is_an_input_error_with_a_line():
    with pytest.raises(InputError) as err:
        _set("a: 1\nb: [2\nc: 3\n", "a", value=2)
    assert str(err.value).startswith("cfg.yaml:")
    assert "YAML syntax error" in str(err.value)


def test_a_block_scalar_is_replaced_without_eating_the_next_line():
    text = "prompt: |\n  hello\n  world\nnext: 1\n"
    out = _set(text, "prompt", value="short")
    assert out == "prompt: short\nnext: 1\n"


def test_an_alias_is_replaced_and_its_anchor_kept():
    text = "base: &b 8\nother: *b\n"
    assert _set(text, "other", value=4) == "base: &b 8\nother: 4\n"
    assert _set(text, "base", value=2) == "base: &b 2\nother: *b\n"


def test_a_key_in_a_mapping_inside_a_sequence_item():
    text = "datasets:\n  - path: a\n    type: alpaca\n"
    out = _set(text, "datasets", value="x")
    assert out == "datasets: x\n"


def test_an_empty_document_gains_the_key():
    assert _set("# only a comment", "a", "b", value=1) == "# only a comment\na:\n  b: 1\n"
    assert _set("", "a", value=1) == "a: 1\n"


def test_a_file_without_final_newline_keeps_it_that_way():
    out = _set("a: 1\nb: 2", "c", value=3)
    assert out == "a: 1\nb: 2\nc: 3"


def test_a_utf8_bom_and_non_ascii_text_survive(tmp_path: Path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_bytes("\ufeff# réglage\nlr: 0.1  # ½\n".encode("utf-8"))
    patch = build_patch([KeyEdit("cfg.yaml", ("lr",), 0.2)], cwd=str(tmp_path))
    assert patch.files[0].new_text.encode("utf-8") == "\ufeff# réglage\nlr: 0.2  # ½\n".encode("utf-8")


def test_the_messy_fixture_changes_only_the_planned_bytes():
    text = (DATA / "messy.yaml").read_text(encoding="utf-8")
    out = text
    for keys, value in [(("training", "micro_batch"), 2), (("training", "optim"), "adamw_8bit"),
                        (("quoted",), "new value"), (("flow", "r"), 4), (("training", "grad_ckpt"), True)]:
        out = _set(out, *keys, value=value)
    expected = (DATA / "messy.expected.yaml").read_text(encoding="utf-8")
    assert out == expected


def test_lists_are_written_in_flow_style():
    assert yaml_scalar(["q_proj", "v_proj"]) == "[q_proj, v_proj]"
    assert _set("t: all\n", "t", value=["q_proj", "on"]) == 't: [q_proj, "on"]\n'


def test_a_document_with_only_a_start_marker_gains_the_key():
    assert _set("---\n", "a", value=1) == "---\na: 1\n"


def test_a_null_parent_in_a_flow_mapping_becomes_a_flow_mapping():
    assert _set("x: {a: null, b: 1}\n", "x", "a", "c", value=2) == "x: {a: {c: 2}, b: 1}\n"


def test_a_yaml_list_of_documents_or_a_sequence_root_is_refused():
    with pytest.raises(InputError):
        _set("- a\n- b\n", "a", value=1)
    with pytest.raises(InputError):
        _set("a: 1\n---\nb: 2\n", "a", value=2)


def test_the_pure_python_loader_gives_the_same_edits_as_libyaml(monkeypatch):
    text = (DATA / "messy.yaml").read_text(encoding="utf-8")
    edits = [(("training", "lr"), 3e-5), (("flow", "c"), "x y"), (("training", "new"), 1), (("quoted",), "q")]

    def run() -> str:
        out = text
        for keys, value in edits:
            out = _set(out, *keys, value=value)
        return out

    with_libyaml = run()
    monkeypatch.setattr(yaml, "CSafeLoader", None, raising=False)
    assert run() == with_libyaml


def test_a_question_mark_is_quoted_so_a_flow_mapping_still_parses(tmp_path):
    # Found by the property test: PyYAML ends a plain scalar at "?" inside {...}.
    import yaml

    from oomdoctor.facts import KeyEdit
    from oomdoctor.patch import build_patch

    (tmp_path / "c.yaml").write_text("flow: {a: 1}\nb: 2\n")
    patch = build_patch([KeyEdit("c.yaml", ("flow", "absent"), "0?"), KeyEdit("c.yaml", ("b",), "x?y")],
                        cwd=str(tmp_path))
    assert yaml.safe_load(patch.files[0].new_text) == {"flow": {"a": 1, "absent": "0?"}, "b": "x?y"}


def _nested_alias_list(levels: int, width: int = 10) -> str:
    # The shape of a hostile 600-byte config: each level lists the one above `width` times,
    # so expanding every alias visits width**levels nodes.
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\nper_device_train_batch_size: 4\n"


def test_a_nested_alias_bomb_is_refused_with_its_line_not_walked():
    from deadline import within

    text = _nested_alias_list(9)
    assert len(text) < 700
    with within(5), pytest.raises(InputError) as err:
        _set(text, "per_device_train_batch_size", value=2)
    assert str(err.value).startswith("cfg.yaml:") and "alias" in str(err.value)


def test_a_file_with_a_few_shared_aliases_is_still_edited():
    text = _nested_alias_list(3)
    out = _set(text, "per_device_train_batch_size", value=2)
    assert out == text.replace("per_device_train_batch_size: 4", "per_device_train_batch_size: 2")


def test_an_alias_inside_its_own_anchor_is_an_input_error_with_a_line():
    with pytest.raises(InputError) as err:
        _set("a: 1\nloop: &l [1, *l]\n", "a", value=2)
    assert str(err.value).startswith("cfg.yaml:2:")
