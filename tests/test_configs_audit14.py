"""The readings the fourteenth first-sight audit (2026-12o) asked for: a reply quoting a config in a fenced block
with its own words after the quote; a YAML pasted inside a Python triple-quoted string; an argparse script's own
`--batch_size` (and `--micro_batch_size` beside it); a Markdown paste refused for what it holds, not for its
Markdown."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


_AXOLOTL = "base_model: Qwen/Qwen2.5-7B\nadapter: lora\nlora_r: 16\nsequence_len: 2048\nmicro_batch_size: 2\n"


def test_a_reply_quoting_a_fenced_config_reads_the_quoted_block(tmp_path):
    quoted = "".join(f"> {ln}\n" for ln in ["As you wrote:", "", "```yaml", *_AXOLOTL.splitlines(), "```"])
    s = load_config(_write(tmp_path, "reply.md", quoted + "\nthat still runs out of memory\n"))
    assert (s.framework, s.lora_rank, s.seq_len, s.micro_batch) == ("axolotl", 16, 2048, 2)


@pytest.mark.parametrize("opening, closing", [("'''", "'''"), ('cfg = yaml.safe_load("""', '""")'), ('"""', None)])
def test_a_yaml_inside_a_python_triple_quoted_string_is_the_file(tmp_path, opening, closing):
    text = f"{opening}\n{_AXOLOTL}" + (f"{closing}\n" if closing else "")
    s = load_config(_write(tmp_path, "c.yaml", text))
    assert (s.framework, s.micro_batch) == ("axolotl", 2)
    assert "config.yaml_python_string" in [w.code for w in s.warnings]


def test_an_argparse_scripts_batch_size_is_the_per_device_batch(tmp_path):
    s = load_config(_write(tmp_path, "r.sh", "python finetune_te.py --base_model m/x --batch_size 4 --max_length 256\n"))
    assert s.micro_batch == 4


def test_batch_size_beside_micro_batch_size_is_the_total(tmp_path):
    s = load_config(_write(tmp_path, "r.sh", "python my_finetune.py --base_model m/x --batch_size 128 "
                                             "--micro_batch_size 4 --cutoff_len 512\n"))
    assert (s.micro_batch, s.grad_accum) == (4, 32)


def test_a_trainingarguments_batch_flag_wins_over_a_bare_batch_size(tmp_path):
    s = load_config(_write(tmp_path, "r.sh", "python t.py --model_name_or_path m/x --per_device_train_batch_size 2 "
                                             "--batch_size 64\n"))
    assert s.micro_batch == 2


def test_a_markdown_paste_is_refused_for_what_it_holds(tmp_path):
    text = "```yaml\nmodel:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n  lora_rank: 8\n" \
           "tokenizer:\n  max_seq_len: 4096\n```\n"
    with pytest.raises(InputError, match="batch_size"):
        load_config(_write(tmp_path, "frag.md", "here is mine:\n" + text))
