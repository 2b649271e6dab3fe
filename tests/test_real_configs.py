"""The real-config corpus (tests/data/real-configs/MANIFEST.yaml): our own reproductions of 70+ configs and
launch scripts studied in public repositories, each with the facts it determines. The table of what came out
right is printed with `pytest -s tests/test_real_configs.py`; at least 95% of the configs must have every
stated fact right, and none may be refused for a value that belongs to a script's own parser."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers import read_yaml

from oomdoctor.configs import combine, load_config
from oomdoctor.errors import InputError

CORPUS = Path(__file__).parent / "data" / "real-configs"
MANIFEST = read_yaml(CORPUS / "MANIFEST.yaml")
FIELDS = {"version": "framework_version"}


def _read(entry: dict):
    flags = entry.get("flags") or {}
    setup = load_config(str(CORPUS / entry["file"]), framework_version=flags.get("version"), model=flags.get("model"))
    if entry.get("with"):
        other = load_config(str(CORPUS / entry["with"]))
        setup = combine(setup, other)
    if flags.get("model"):
        setup = replace(setup, model=flags["model"])      # --model, laid over the config as the pipeline does
    return setup


def _compare(entry: dict) -> tuple[list[str], str | None]:
    """(the stated facts that came out wrong, the error when the file was refused)."""
    try:
        setup = _read(entry)
    except InputError as err:
        return list(entry["facts"]), str(err)
    wrong = []
    for name, expected in entry["facts"].items():
        got = getattr(setup, FIELDS.get(name, name))
        if isinstance(expected, (int, float)) and not isinstance(expected, bool):
            right = got == expected
        elif isinstance(expected, list):                    # a tuple field (lora_targets), in its order
            right = list(got or ()) == expected
        else:
            right = (str(got) if got is not None else None) == (str(expected) if expected is not None else None)
        if not right:
            wrong.append(f"{name}: {got!r} (expected {expected!r})")
    return wrong, None


@pytest.fixture(scope="module")
def results() -> list[tuple[dict, list[str], str | None]]:
    return [(entry, *_compare(entry)) for entry in MANIFEST]


def test_the_corpus_is_at_least_60_configs_each_with_a_source_and_facts():
    assert len(MANIFEST) >= 60
    for entry in MANIFEST:
        assert entry["source"] and entry["kind"] in ("official", "user") and entry["facts"], entry["file"]
        assert (CORPUS / entry["file"]).is_file(), entry["file"]
    kinds = {entry["file"].split("/")[0] for entry in MANIFEST}
    assert kinds >= {"lf", "axolotl", "torchtune", "trl", "hfargs", "scripts", "deepspeed", "accelerate"}
    assert sum(entry["kind"] == "user" for entry in MANIFEST) >= 20


def test_every_stated_fact_is_right_in_at_least_95_percent_of_the_configs(results, capsys):
    rows = []
    for entry, wrong, error in results:
        status = "refused" if error else ("ok" if not wrong else f"{len(wrong)} wrong")
        rows.append(f"{status:10} {len(entry['facts']):2} facts  {entry['file']}" +
                    ("" if not wrong else "\n" + "\n".join(f"{'':14}{w}" for w in wrong)) +
                    ("" if not error else f"\n{'':14}{error}"))
    right = sum(1 for _, wrong, error in results if not wrong and not error)
    facts = sum(len(e["facts"]) for e in MANIFEST)
    facts_right = facts - sum(len(w) for _, w, _ in results)
    with capsys.disabled():
        print("\n" + "\n".join(rows))
        print(f"configs fully right: {right}/{len(results)} ({right / len(results):.0%}); "
              f"facts right: {facts_right}/{facts}")
    assert right / len(results) >= 0.95, "\n".join(r for r in rows if not r.startswith("ok"))


def test_no_config_is_refused(results):
    refused = [(e["file"], err) for e, _, err in results if err and not e.get("expect_refused")]
    assert not refused, refused


def test_a_file_of_a_framework_with_no_reader_is_refused_in_one_line(results):
    # First-sight samples of a tool no reader knows (`expect_refused:` says which): kept in the corpus, since they
    # were drawn, and refused rather than read as something they are not.
    marked = [(e["file"], err) for e, _, err in results if e.get("expect_refused")]
    assert marked and all(err for _, err in marked), marked
