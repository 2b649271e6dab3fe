"""One YAML loader choice, one node walker and one lined reader serve every input that needs lines."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from oomdoctor import bounded

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
