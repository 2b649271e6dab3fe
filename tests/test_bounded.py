"""Small input files cannot hang or exhaust the machine: bounded aliases, depth, size, pipes."""
from __future__ import annotations

import os
import threading

import pytest

from oomdoctor import bounded
from oomdoctor.bounded import MAX_NODES, load_json, load_yaml, read_bytes
from oomdoctor.errors import InputError

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def _code(err: pytest.ExceptionInfo) -> str:
    return err.value.message.code


def test_an_alias_bomb_is_refused_with_its_line_not_expanded() -> None:
    with pytest.raises(InputError) as err:
        load_yaml(BOMB, "bomb.yaml")
    assert _code(err) == "input.too_many_aliases" and err.value.path == "bomb.yaml" and err.value.line
    assert str(MAX_NODES) in str(err.value)


def test_a_self_referencing_alias_is_an_input_error() -> None:
    with pytest.raises(InputError) as err:
        load_yaml("a: &a [1, *a]\n", "self.yaml")
    assert _code(err) == "input.alias_cycle"


def test_shared_aliases_within_budget_load_normally() -> None:
    data = load_yaml("base: &b {lr: 1e-4, bs: 2}\nrun1: *b\nrun2: *b\n", "ok.yaml")
    assert data["run1"] == data["run2"] == {"lr": "1e-4", "bs": 2}


@pytest.mark.parametrize("text", ["[" * 3000 + "]" * 3000, '{"a":' * 3000 + "1" + "}" * 3000])
def test_deep_nesting_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError):
        load_yaml(text, "deep.yaml")
    with pytest.raises(InputError):
        load_json(text, "deep.json")


@pytest.mark.parametrize("text", ['{"stage": NaN}', '{"lr": Infinity}', '{"x": -Infinity}'])
def test_json_constants_that_are_not_numbers_are_refused(text: str) -> None:
    with pytest.raises(InputError) as err:
        load_json(text, "ds.json")
    assert _code(err) == "input.json_constant"


def test_a_bad_tag_value_is_an_input_error_with_its_line() -> None:
    with pytest.raises(InputError) as err:
        load_yaml("model: x\nstage: !!int sft\n", "t.yaml")
    assert err.value.line == 2


def test_a_file_over_the_cap_is_refused_and_dev_zero_is_refused_as_a_device(tmp_path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 300_000)
    with pytest.raises(InputError) as err:
        read_bytes(str(big), limit=1 << 20)
    assert _code(err) == "input.too_big"
    with pytest.raises(InputError) as err:
        read_bytes("/dev/zero", limit=1 << 20)
    assert _code(err) == "input.device"


def test_a_fifo_without_a_writer_reads_as_empty_instead_of_hanging(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bounded, "FIFO_WAIT_S", 0.2)
    fifo = tmp_path / "cfg.yaml"
    os.mkfifo(fifo)
    assert read_bytes(str(fifo)) == b""


def test_a_fifo_with_a_writer_is_read_whole(tmp_path) -> None:
    fifo = tmp_path / "cfg.yaml"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as fh:
            fh.write(b"model_name_or_path: x\n" * 1000)

    writer = threading.Thread(target=write, daemon=True)    # a stuck writer must not hold pytest at exit
    writer.start()
    data = read_bytes(str(fifo))          # waits up to FIFO_WAIT_S for the writer's open()
    writer.join(5)
    assert data == b"model_name_or_path: x\n" * 1000


def test_a_directory_is_refused_before_it_is_opened(tmp_path) -> None:
    with pytest.raises(InputError) as err:
        read_bytes(str(tmp_path))
    assert _code(err) == "input.is_directory"
