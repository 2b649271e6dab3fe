"""Readings the 2026-12w draw (docs/configs.md, twenty-second round) needed, one test per class, each with its limit."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import load_config
from oomdoctor.errors import InputError


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ---- a tutorial page's YAML between paragraphs of prose, its fence lost (the fence's language left as a word)

_PAGE_YAML = """配置文件详解：下面是训练所需的核心参数。

yaml
### model
model_name_or_path: org/m
trust_remote_code: true

### method
stage: sft
finetuning_type: lora
lora_rank: 16

### train
per_device_train_batch_size: 2
gradient_accumulation_steps: 4
cutoff_len: 1024
bf16: true

随后通过命令行启动训练。
"""


def test_a_yaml_block_between_paragraphs_of_prose_is_read(tmp_path):
    s = load_config(_write(tmp_path, "page.md", _PAGE_YAML))
    assert (s.framework, s.model, s.method, s.lora_rank, s.micro_batch, s.grad_accum, s.seq_len) == (
        "llamafactory", "org/m", "lora", 16, 2, 4, 1024)


def test_a_yaml_block_after_one_line_of_prose_is_read(tmp_path):
    s = load_config(_write(tmp_path, "page.md", "只需要几个关键字段的组合：\n\nmodel_name_or_path: org/m\n"
                                                "finetuning_type: lora\nquantization_bit: 4\n"
                                                "per_device_train_batch_size: 4\n\n短短几行就完成了。\n"))
    assert (s.model, s.method, s.quant_bits, s.micro_batch) == ("org/m", "qlora", 4, 4)


def test_prose_with_fewer_than_three_keys_is_still_refused(tmp_path):
    with pytest.raises(InputError):
        load_config(_write(tmp_path, "page.md", "We trained it like this.\n\nmodel: org/m\nlr: 1e-4\n\nThen it ran.\n"))


# ---- a command a page flattened onto one line: `\ --flag` breaks, then prose glued to its last word

def test_a_flattened_command_is_read_flag_by_flag(tmp_path):
    s = load_config(_write(tmp_path, "page.md", "推荐优先使用LoRA。\nswift sft \\ --model org/m \\ --train_type lora "
                                                "\\ --lora_rank 16 \\ --max_length 4096如果你希望进一步压缩资源消耗。\n"))
    assert (s.framework, s.model, s.method, s.lora_rank, s.seq_len) == ("ms-swift", "org/m", "lora", 16, 4096)


def test_one_escaped_space_is_no_flattened_command(tmp_path):
    # a single `\ ` is left to the shell's own grammar: only two or more breaks before flags mark a flattened line
    from oomdoctor.configs._doc import unwrap_flattened_command

    assert unwrap_flattened_command("swift sft --model org/m \\ --lora_rank 16\n") is None
    assert unwrap_flattened_command("swift sft \\ --model org/m \\ --lora_rank 16\n") is not None


# ---- a script's own bool `--lora` (Tevatron's ModelArguments)

def test_a_bare_lora_flag_trains_lora(tmp_path):
    s = load_config(_write(tmp_path, "train.sh", "deepspeed --include localhost:0,1 train.py --deepspeed ds.json --lora "
                                                 "--model_name_or_path org/m --per_device_train_batch_size 1 --bf16\n"))
    assert (s.method, s.n_gpus, s.micro_batch) == ("lora", 2, 1)


def test_without_the_lora_flag_the_script_trains_full(tmp_path):
    s = load_config(_write(tmp_path, "train.sh", "deepspeed --include localhost:0,1 train.py --deepspeed ds.json "
                                                 "--model_name_or_path org/m --per_device_train_batch_size 1 --bf16\n"))
    assert s.method == "full"


# ---- Python a page shows after prose, cut inside its last call

_PAGE_PY = """创建基础模型训练脚本：

from trl import SFTTrainer, SFTConfig
from transformers import AutoModelForCausalLM

sft_config = SFTConfig(
    output_dir="./out",
    max_seq_length=512,
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
)
model = AutoModelForCausalLM.from_pretrained("org/m")
trainer = SFTTrainer(
    model=model,
    args=sft_config,
    train_data
"""


def test_python_after_prose_cut_inside_a_call_is_read_up_to_the_cut(tmp_path):
    s = load_config(_write(tmp_path, "page.md", _PAGE_PY))
    assert (s.model, s.seq_len, s.micro_batch, s.grad_accum) == ("org/m", 512, 4, 2)


def test_prose_without_an_import_line_holds_no_python(tmp_path):
    from oomdoctor.configs._doc import unwrap_prose_python

    assert unwrap_prose_python("Some prose.\nmodel = load('org/m')\n") is None
    assert unwrap_prose_python("import torch\nx = 1\n") is None          # no prose before it: not this paste form
