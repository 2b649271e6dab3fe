"""One YAML loader choice, one node walker and one lined reader serve every input that needs lines."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from oomdoctor import bounded, lined

PACKAGE = Path(bounded.__file__).resolve().parent


def test_exactly_one_function_in_the_package_picks_the_yaml_loader() -> None:
    pickers = []
    for source in sorted(PACKAGE.rglob("*.py")):
        text = source.read_text(encoding="utf-8")
        for m in re.finditer(r"CSafeLoader", text):
            defs = re.findall(r"^\s*def (\w+)", text[:m.start()], re.M)
            pickers.append((source.relative_to(PACKAGE).as_posix(), defs[-1] if defs else "<module>"))
    assert set(pickers) == {("bounded.py", "yaml_loader")}


def test_the_loader_is_libyaml_when_built_and_the_pure_one_after_a_bom() -> None:
    fast = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    assert bounded.yaml_loader() is fast
    assert bounded.yaml_loader("a: 1\n") is fast
    assert bounded.yaml_loader("\ufeffa: 1\n") is yaml.SafeLoader


NESTED = """\
model:
  name: llama
  lora:
    r: 8
    targets:
      - q_proj
      - {name: v_proj, rank: 4}
train:
  steps:
    100
"""


def test_every_nested_key_and_list_item_has_its_line_and_column() -> None:
    read = lined.read_yaml(NESTED, "n.yaml")
    assert read.data["model"]["lora"]["targets"][1] == {"name": "v_proj", "rank": 4}
    assert read.line("model.lora.r") == 4 and read.position("model.lora.r") == (4, 8)
    assert read.line("model.lora.targets.0") == 6 and read.position("model.lora.targets.0") == (6, 9)
    assert read.position("model.lora.targets.1.rank") == (7, 30)
    # a collection is named at its key, a scalar at its value (`steps:` on line 9, `100` on line 10)
    assert read.line("model.lora") == 3 and read.line("train.steps") == 10 and read.key_line("train.steps") == 9
    assert list(read.lines)[:4] == ["model", "model.name", "model.lora", "model.lora.r"]
    assert read.line("model.nope") is None and read.position("model.nope") is None


def test_json_keys_have_their_nested_positions_too() -> None:
    text = '{\n  "text_config": {\n    "hidden_size": 4096,\n    "layers": [1, 2]\n  },\n  "hidden_size": 8\n}\n'
    read = lined.read_json(text, "config.json")
    assert read.data["text_config"]["hidden_size"] == 4096
    assert read.key_line("text_config.hidden_size") == 3 and read.key_line("hidden_size") == 6
    assert read.position("text_config.layers.1") == (4, 19)


def test_a_repeated_key_keeps_its_first_position_and_an_alias_its_first_path() -> None:
    read = lined.read_yaml("a: 1\na: 2\nb: &m {k: 1}\nc: *m\n", "d.yaml")
    assert read.data == {"a": 2, "b": {"k": 1}, "c": {"k": 1}}
    assert read.line("a") == 1 and read.line("b.k") == 3 and read.line("c") == 4 and read.line("c.k") is None


def test_the_walker_goes_in_document_order_without_recursion() -> None:
    depth = 150                                  # within MAX_DEPTH, past what a recursive walk would need to prove
    text = "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "leaf: 1\n"
    root = bounded.compose_yaml(text, "deep.yaml")
    paths = [path for path, *_ in bounded.walk(root)]
    assert paths[0] == "" and paths[-1] == ".".join(f"k{i}" for i in range(depth)) + ".leaf"
    assert [edge[4] for edge in bounded.walk(root)] == list(range(depth + 2))


def test_a_model_config_error_names_the_line_of_the_key_in_its_own_scope() -> None:
    from oomdoctor.archs import Cfg
    from oomdoctor.errors import InputError

    text = '{\n  "hidden_size": 4096,\n  "text_config": {\n    "vocab": 1,\n    "hidden_size": -1\n  }\n}\n'
    top = Cfg(json.loads(text), "config.json", text)
    sub = top.sub("text_config")
    assert sub is not None
    with pytest.raises(InputError) as err:
        sub.need("hidden_size")
    assert err.value.line == 5
    assert sub.fail("vocab", bounded.msg("input.too_deep", depth=1)).line == 4
