"""Round trip over every reference config: patch, `git apply`, re-parse, and only the planned keys moved."""
from __future__ import annotations

import copy
import difflib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import write_exact

from oomdoctor.facts import KeyEdit
from oomdoctor.patch import build_patch

EXAMPLES = Path(__file__).resolve().parent / "data" / "reference" / "example-configs"
CONFIGS = sorted(p for p in EXAMPLES.glob("*") if p.suffix in (".yaml", ".yml", ".json"))
STR_TAG = "tag:yaml.org,2002:str"


def _bumped(value):
    """A different value of the same kind, so the edit must change the text."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 if value else 0.5
    if value is None:
        return 3
    return str(value) + "_x"


def _yaml_leaves(node, prefix=()):
    """(key path, python value) of scalar leaves reachable through mappings, in document order."""
    for key_node, value_node in node.value:
        if key_node.tag != STR_TAG or not isinstance(key_node, yaml.ScalarNode):
            continue
        path = prefix + (key_node.value,)
        if isinstance(value_node, yaml.ScalarNode) and "\n" not in key_node.value and value_node.style not in ("|", ">"):
            yield path, yaml.SafeLoader("").construct_document(value_node)
        elif isinstance(value_node, yaml.MappingNode):
            yield from _yaml_leaves(value_node, path)


def _json_leaves(data, prefix=()):
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _json_leaves(value, prefix + (key,))
        else:
            yield prefix + (key,), value


def _first_mapping_key(data):
    return next((k for k, v in data.items() if isinstance(v, dict) and v), None)


def _set(data, path, value):
    for key in path[:-1]:
        data = data.setdefault(key, {})
    data[path[-1]] = value


def _plan_for(path: Path, text: str):
    """A few existing keys changed, one absent top-level key (after a named key), one absent nested key."""
    if path.suffix == ".json":
        data = json.loads(text)
        leaves = list(_json_leaves(data))
    else:
        data = yaml.safe_load(text)
        leaves = list(_yaml_leaves(yaml.compose(text)))
    picked = [leaves[i] for i in sorted({0, len(leaves) // 2, len(leaves) - 1})]
    edits = [KeyEdit(path.name, key_path, _bumped(value)) for key_path, value in picked]
    first_key = next(iter(data))
    edits.append(KeyEdit(path.name, ("oomdoctor_probe",), 7, after_key=first_key))
    parent = _first_mapping_key(data)
    if parent is not None:
        edits.append(KeyEdit(path.name, (parent, "oomdoctor_probe_nested"), True))
    edits.append(KeyEdit(path.name, ("oomdoctor_new_parent", "child"), "on"))
    return data, edits


def _load(path: Path):
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


@pytest.mark.parametrize("config", CONFIGS, ids=[p.name for p in CONFIGS])
def test_round_trip_changes_only_the_planned_keys(config: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(config, repo / config.name)
    original_bytes = (repo / config.name).read_bytes()
    text = original_bytes.decode("utf-8")
    data, edits = _plan_for(config, text)

    patch = build_patch(edits, cwd=str(repo))
    assert [f.rel_path for f in patch.files] == [config.name]
    diff = patch.diff
    assert diff.startswith(f"--- a/{config.name}\n+++ b/{config.name}\n")

    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    write_exact(tmp_path / "plan.diff", diff)
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "--dry-run", "-i", str(tmp_path / "plan.diff")], cwd=repo, check=True,
                       capture_output=True)
    subprocess.run(["git", "apply", str(tmp_path / "plan.diff")], cwd=repo, check=True)
    patched_bytes = (repo / config.name).read_bytes()
    assert patched_bytes == patch.files[0].new_text.encode("utf-8")

    # The values: exactly the planned keys differ from the original.
    expected = copy.deepcopy(data)
    for edit in edits:
        _set(expected, edit.key_path, edit.value)
    assert _load(repo / config.name) == expected

    # The bytes: every removed line held an edited key; every added line names an edited key,
    # or is a JSON line that only gained the comma the next inserted entry needs.
    edited_names = {k for e in edits for k in e.key_path}
    old_lines = original_bytes.decode().split("\n")
    new_lines = patched_bytes.decode().split("\n")
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    removed, added = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed.extend(old_lines[i1:i2])
            added.extend(new_lines[j1:j2])
    comma_only = [line for line in removed if line + "," in added]
    for line in removed:
        if line in comma_only:
            continue
        assert any(f"{name}:" in line or f'"{name}"' in line for name in edited_names), line
    for line in added:
        if line.endswith(",") and line[:-1] in comma_only or line.strip() in ("}", "},"):
            continue     # a comma for the next entry, or the closing brace of a new JSON object
        assert any(name in line for name in edited_names), line
    existing_edits = [e for e in edits if not any(k.startswith("oomdoctor_") for k in e.key_path)]
    assert len(removed) - len(comma_only) == len(existing_edits)

    # Idempotent: planning the same edits against the patched file changes nothing.
    again = build_patch(edits, cwd=str(repo))
    assert again.files == () and again.diff == ""


def test_every_framework_of_the_reference_configs_is_round_tripped() -> None:
    prefixes = {p.name.split("_", 1)[0] for p in CONFIGS}
    assert prefixes >= {"llamafactory", "axolotl", "torchtune", "trl"}, "the reference configs went missing"
    assert {p.suffix for p in CONFIGS} == {".yaml", ".yml", ".json"}
