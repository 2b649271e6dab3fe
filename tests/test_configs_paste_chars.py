"""What a paste does to a config's text on its way into an issue thread, applied to corpus files: the same facts
come out. (The 2026-12q round: docs/configs.md, sixteenth round.) A sample of the corpus, not all of it, to stay
cheap: every 20th file that is not itself a paste."""
from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import write_exact

from oomdoctor.configs import load_config
from oomdoctor.configs.entrypoints import strip_prompts
from oomdoctor.errors import InputError

CORPUS = Path(__file__).parent / "data" / "real-configs"


def _crlf(text: str, path: str) -> str:
    return text.replace("\n", "\r\n")


def _nbsp_indent(text: str, path: str) -> str:
    return re.sub(r"(?m)^( +)", lambda m: "\u00a0" * len(m.group(1)), text)


def _nbsp_between(text: str, path: str) -> str:
    return re.sub(r"(?<=\S) (?=\S)", "\u00a0", text, count=3)


def _smart_quotes(text: str, path: str) -> str:
    return re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", text)


def _wide_colons(text: str, path: str) -> str:
    return re.sub(r"(?m)^(\s*[A-Za-z_][\w.]*):(?=\s)", "\\1\uff1a", text, count=2)


def _zero_width(text: str, path: str) -> str:
    return re.sub(r"(?m)^(\s*)(\S)", "\\1\u200b\\2", text, count=2)


def _html_entities(text: str, path: str) -> str:
    return html.escape(text)


def _json_string(text: str, path: str) -> str:
    return json.dumps(text)


def _json_comments(text: str, path: str) -> str:
    """Comments in a DeepSpeed-style JSON (hjson's `//` and `#`: deepspeed/runtime/config.py loads with hjson)."""
    if not path.endswith(".json"):
        return text
    text = re.sub(r'(?m)^(\s*"[^"\n]+":[^\n]*?,)$', r"\1  // mine", text, count=2)
    return re.sub(r'(?m)^(\s*)("[^"\n]+":)', r"\1# set below\n\1\2", text, count=1)


def _python_quotes(text: str, path: str) -> str:
    """A JSON config printed as a Python dict: its strings in single quotes."""
    return text.replace('"', "'") if path.endswith(".json") else text


def _prompts(text: str, path: str) -> str:
    """A terminal transcript: the prompt before the first line typed (not a comment, not blank), and bash's `> `
    (PS2) before each line that continues it."""
    if not path.endswith(".sh"):
        return text
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.strip().startswith("#")), None)
    if first is not None:
        lines[first] = "(venv) user@host:~/work$ " + lines[first]
        i = first
        while lines[i].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            lines[i] = "> " + lines[i]
    return "\n".join(lines)


ARTEFACTS = [_crlf, _nbsp_indent, _nbsp_between, _smart_quotes, _wide_colons, _zero_width, _html_entities, _json_string,
             _json_comments, _python_quotes, _prompts]


@pytest.fixture(scope="module")
def sample():
    import test_real_configs as corpus

    chosen = [e for e in corpus.MANIFEST if not e.get("expect_refused") and not e.get("with")][::20]
    return [(e, corpus._read(e)) for e in chosen if not corpus._read(e).extras.get("markdown_paste")]


@pytest.mark.parametrize("artefact", ARTEFACTS, ids=lambda f: f.__name__.strip("_"))
def test_a_corpus_config_changed_as_a_paste_changes_it_gives_the_same_facts(tmp_path, sample, artefact):
    copy = tmp_path / "real-configs"
    shutil.copytree(CORPUS, copy)
    assert len(sample) >= 25 and sum(e["file"].endswith(".json") for e, _ in sample) >= 2
    wrong = []
    for entry, plain in sample:
        target = copy / entry["file"]
        original = target.read_text(encoding="utf-8")
        changed = artefact(original, entry["file"])
        write_exact(target, changed)
        try:
            flags = entry.get("flags") or {}
            s = load_config(str(target), framework_version=flags.get("version"), model=flags.get("model"))
            diff = [f for f in entry["facts"] if f != "version" and getattr(s, f) != getattr(plain, f)]
            if diff:
                wrong.append((entry["file"], diff))
        except InputError as err:
            wrong.append((entry["file"], str(err)))
        finally:
            write_exact(target, original)
    assert not wrong, wrong


def _write(tmp_path: Path, name: str, text: str) -> str:
    return str(write_exact(tmp_path / name, text))


def test_a_mended_paste_says_what_it_mended_and_is_not_patched(tmp_path):
    path = _write(tmp_path, "c.yaml", "model_name_or_path\uff1a Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\n"
                                      "cutoff_len:\u00a01024\nper_device_train_batch_size: 2\nbf16: \u201ctrue\u201d\n")
    s = load_config(path)
    assert (s.model, s.seq_len, s.micro_batch) == ("Qwen/Qwen2.5-7B", 1024, 2)
    kinds = {w.values["what"].code for w in s.warnings if w.code == "config.paste_chars"}
    assert kinds == {"config.paste_char.nbsp", "config.paste_char.quotes", "config.paste_char.colon"}
    assert s.extras["markdown_paste"] == "characters"


def test_an_apostrophe_is_not_a_quote(tmp_path):
    # A lone ’ (don’t) has no opening ‘ before it: it stays, and the comment around it does not change what is read.
    path = _write(tmp_path, "c.yaml", "# don\u2019t change this\nmodel_name_or_path: m\nstage: sft\nfinetuning_type: lora\n"
                                      "cutoff_len: 512\n")
    s = load_config(path)
    assert s.seq_len == 512 and not [w for w in s.warnings if w.code == "config.paste_chars"]


def test_a_dash_autocorrected_from_two_hyphens_is_a_flag(tmp_path):
    path = _write(tmp_path, "run.sh", "llamafactory-cli train \\\n  \u2014model_name_or_path m \\\n  --stage sft "
                                      "--finetuning_type lora \\\n  \u2014cutoff_len 768\n")
    s = load_config(path)
    assert (s.model, s.seq_len) == ("m", 768)


@pytest.mark.parametrize("prompt", ["$ ", "% ", "\u276f ", "(venv) me@box:~/repo$ ", "(mlx) me@box lora % ",
                                    "root@c0ffee:/workspace# ", "PS C:\\work> "])
def test_a_terminal_prompt_before_a_command_is_not_part_of_it(prompt):
    text = f"{prompt}llamafactory-cli train x.yaml\n"
    assert strip_prompts(text) == " " * len(prompt) + "llamafactory-cli train x.yaml\n"


def test_bash_secondary_prompts_before_continued_lines_are_not_redirections(tmp_path):
    # Typed at a terminal, a command over several lines shows PS2 (`> `) before each continued line; in a script
    # `> --flag` would redirect to a file named --flag and lose the flag.
    path = _write(tmp_path, "t.sh", "$ torchrun --nproc_per_node 2 train.py \\\n> --model_name_or_path org/m \\\n"
                                    "> --per_device_train_batch_size 2 \\\n> --gradient_accumulation_steps 4\n")
    s = load_config(path)
    assert (s.model, s.micro_batch, s.grad_accum, s.n_gpus) == ("org/m", 2, 4, 2)


def test_a_comment_or_a_variable_is_no_prompt():
    assert strip_prompts("# $ not a prompt\nX=$HOME\necho $ 1\n") is None


def test_a_launchers_unknown_options_variable_leaves_the_program_after_it(tmp_path):
    # torchrun's first word that is no option is the program (torch/distributed/run.py get_args_parser); an unset
    # $ARGS before it expands to options only the run knows, so the GPU count is unknown, not 1 by default.
    path = _write(tmp_path, "run.sh", "torchrun $DISTRIBUTED_ARGS swift/cli/rlhf.py --rlhf_type dpo "
                                      "--model_id_or_path m --sft_type full --batch_size 1 --max_length 1024\n")
    s = load_config(path)
    assert (s.framework, s.stage, s.method, s.seq_len) == ("ms-swift", "dpo", "full", 1024)
    assert any(w.code == "config.script.gpus_note" for w in s.warnings)


def test_flags_pasted_without_their_command_are_read_as_the_one_entry_point_they_belong_to(tmp_path):
    path = _write(tmp_path, "flags.sh", "   --actor_num_gpus_per_node 4 \\\n   --pretrain org/m \\\n"
                                        "   --micro_train_batch_size 2 \\\n   --zero_stage 2 \\\n   --bf16\n")
    s = load_config(path)
    assert (s.framework, s.stage, s.model, s.micro_batch, s.zero_stage, s.n_gpus) == ("openrlhf", "ppo", "org/m", 2, 2, 4)
    assert any(w.code == "config.script.headless" for w in s.warnings) and s.extras["markdown_paste"] == "flags"


def test_flags_no_entry_point_owns_are_still_refused(tmp_path):
    path = _write(tmp_path, "flags.sh", "  --learning_rate 1e-5 \\\n  --per_device_train_batch_size 2\n")
    with pytest.raises(InputError):
        load_config(path)


def test_mlx_examples_lora_py_is_mlx_lm_with_its_flag(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python lora.py --train --model m --batch-size 2 --lora-layers 4\n"))
    assert (s.framework, s.micro_batch, s.method) == ("mlx-lm", 2, "lora")
    other = load_config(_write(tmp_path, "run2.sh", "python lora.py --model_name_or_path m "
                                                   "--per_device_train_batch_size 2\n"))
    assert other.framework == "hf"          # a lora.py of its own: not mlx's without --lora-layers


def test_lit_gpt_checkpoint_dir_names_the_hub_model(tmp_path):
    s = load_config(_write(tmp_path, "run.sh", "python finetune/lora.py --checkpoint_dir checkpoints/org/model-7b\n"))
    assert (s.framework, s.model) == ("litgpt", "org/model-7b")
