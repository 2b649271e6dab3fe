"""The readers the seventh first-sight audit (2026-12g) asked for, each by its framework's own rule: a Python
script whose docstring shows its launch in a Markdown fence, its argparse defaults and `**kwargs` dicts; torchtune's
async GRPO recipe with its trainer under `training:`; axolotl's `unfrozen_parameters` matched as axolotl matches it."""
from __future__ import annotations

from pathlib import Path

import pytest

from oomdoctor.configs import edits_for, load_config
from oomdoctor.facts import Change


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


SCRIPT = '''"""GRPO on a toy task.

Usage:

```sh
accelerate launch --num_processes 2 train.py --model-name Qwen/Qwen3-1.7B
```
"""
import argparse

from trl import GRPOConfig, GRPOTrainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-name", default="Qwen/Qwen3-4B")
    parser.add_argument("-b", "--per-device-train-batch-size", type=int, default=4)
    parser.add_argument("--accum", dest="gradient_accumulation_steps", type=int, default=3)
    args = parser.parse_args()
    kwargs = dict(per_device_train_batch_size=args.per_device_train_batch_size,
                  gradient_accumulation_steps=args.gradient_accumulation_steps, bf16=True)
    trainer = GRPOTrainer(model=args.model_name, args=GRPOConfig(output_dir="out", **kwargs))
    trainer.train()
'''


def test_a_fence_in_a_python_docstring_is_part_of_the_program_not_a_paste(tmp_path):
    s = load_config(_write(tmp_path, "train.py", SCRIPT))
    assert (s.framework, s.stage) == ("trl", "sft")
    assert not s.extras.get("markdown_paste")


def test_argparse_defaults_and_a_kwargs_dict_give_the_scripts_values(tmp_path):
    s = load_config(_write(tmp_path, "train.py", SCRIPT))
    assert (s.model, s.micro_batch, s.grad_accum, s.precision) == ("Qwen/Qwen3-4B", 4, 3, "bf16")
    assert s.sources["model"].default.code == "config.default.argparse"
    assert dict(s.sources["model"].default.args)["flag"] == "--model-name"
    assert dict(s.sources["grad_accum"].default.args)["flag"] == "--accum"


def test_an_argparse_flag_declared_twice_with_different_defaults_is_not_guessed(tmp_path):
    text = SCRIPT.replace('parser.add_argument("--model-name", default="Qwen/Qwen3-4B")',
                          'parser.add_argument("--model-name", default="Qwen/Qwen3-4B")\n'
                          '    other = argparse.ArgumentParser()\n'
                          '    other.add_argument("--model-name", default="gpt2")')
    s = load_config(_write(tmp_path, "train.py", text), model="org/given")
    assert s.model == "org/given"


def test_a_python_script_pasted_in_a_fence_is_still_read_from_the_fence(tmp_path):
    body = "from trl import SFTConfig, SFTTrainer\nargs = SFTConfig(per_device_train_batch_size=2)\n" \
           "SFTTrainer(model='Qwen/Qwen2.5-0.5B', args=args).train()\n"
    s = load_config(_write(tmp_path, "paste.py", "my script:\n```python\n" + body + "```\n"))
    assert (s.model, s.micro_batch) == ("Qwen/Qwen2.5-0.5B", 2)
    assert s.extras.get("markdown_paste")


ASYNC_GRPO = """# tune download Qwen/Qwen2.5-3B
base_model_path: /tmp/Qwen2.5-3B
model:
  _component_: torchtune.models.qwen2_5.qwen2_5_3b
tokenizer:
  _component_: torchtune.models.qwen2_5.qwen2_5_tokenizer
  path: ${base_model_path}/vocab.json
  max_seq_len: 1024
orchestration:
  num_inference_workers: 4
  num_training_workers: 2
training:
  checkpointer:
    _component_: torchtune.training.FullModelHFCheckpointer
    checkpoint_dir: ${base_model_path}
  batch_size: 16
  enable_activation_checkpointing: True
  optimizer:
    _component_: torch.optim.AdamW
    fused: True
"""


def test_torchtune_async_grpo_reads_its_trainer_from_the_training_section(tmp_path):
    s = load_config(_write(tmp_path, "g.yaml", ASYNC_GRPO))
    assert (s.framework, s.model, s.method, s.seq_len) == ("torchtune", "Qwen/Qwen2.5-3B", "full", 1024)
    assert (s.micro_batch, s.grad_accum, s.grad_ckpt, s.optimizer) == (16, 1, True, "adamw_torch_fused")
    assert (s.precision, s.n_gpus, s.fsdp) == ("bf16", 2, "full_shard")
    assert s.sources["micro_batch"].key == "training.batch_size"


def test_torchtune_async_grpo_is_patched_inside_the_training_section(tmp_path):
    s = load_config(_write(tmp_path, "g.yaml", ASYNC_GRPO))
    edits = {".".join(e.key_path): e.value for e in edits_for(s, [Change("micro_batch", 16, 8),
                                                                  Change("grad_accum", 1, 2)])}
    assert edits == {"training.batch_size": 8, "training.gradient_accumulation_steps": 2}


def test_a_torchtune_file_without_batch_size_anywhere_is_still_refused(tmp_path):
    from oomdoctor.errors import InputError

    with pytest.raises(InputError):
        load_config(_write(tmp_path, "g.yaml", ASYNC_GRPO.replace("  batch_size: 16\n", "")))


AXOLOTL = "base_model: mistralai/Mistral-7B-v0.1\nsequence_len: 2048\nmicro_batch_size: 1\nunfrozen_parameters:\n{}"


@pytest.mark.parametrize("patterns, method, layers", [
    (["model.language_model.*", "lm_head", "embed_tokens"], "full", None),      # every decoder layer trains
    (["^model.layers.*"], "full", None),
    (["model.layers.2[0-9]+"], "freeze", 10),           # layers 20-29 (re.match from the name's start)
    (["model.layers.[0-3].self_attn", "model.layers.[0-3].mlp"], "freeze", 4),
    (["model.layers.[0-3].self_attn"], "freeze", None),  # attention alone is not a layer's bulk: default kept
    (["^model.embed_tokens.weight$[:32000]"], "freeze", None),
])
def test_axolotl_unfrozen_parameters_count_the_layers_they_unfreeze(tmp_path, patterns, method, layers):
    listed = "".join(f"  - '{p}'\n" for p in patterns)
    s = load_config(_write(tmp_path, "a.yml", AXOLOTL.format(listed)))
    assert s.method == method
    if layers is not None:
        assert (s.freeze_trainable_layers, s.sources["freeze_trainable_layers"].key) == (layers, "unfrozen_parameters")
    elif method == "freeze":
        assert "freeze_trainable_layers" not in s.sources or not s.sources["freeze_trainable_layers"].file
