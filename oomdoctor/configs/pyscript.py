"""A Python training script read without running it: the literal keyword arguments of the calls that
configure an HF Trainer / TRL run, found with `ast` (nothing is imported or executed).

What is read, by callee (the last name of the call, so `trl.SFTConfig(...)` and `SFTConfig(...)` alike):
- TrainingArguments / Seq2SeqTrainingArguments (transformers) and TRL's <Trainer>Config dataclasses
  (SFTConfig, DPOConfig, ...: trl/trainer/*_config.py): their keywords are the same keys a YAML or the
  command line would give, read by the HF / TRL reader with its defaults;
- peft's LoraConfig(r, lora_alpha, target_modules, use_dora): LoRA (TRL's ModelConfig names: use_peft, lora_r, ...);
  its other adapter configs (IA3Config, VeraConfig, PromptTuningConfig, PrefixTuningConfig, PromptEncoderConfig,
  AdaLoraConfig, LoHaConfig, LoKrConfig): the same keys, and the type with num_virtual_tokens / feedforward_modules;
- BitsAndBytesConfig(load_in_4bit / load_in_8bit): a quantised base under the adapter;
- AutoModelFor*.from_pretrained(<id>, dtype / torch_dtype, attn_implementation) and a trainer's `model="<id>"`;
- TRL's trainers (SFTTrainer, DPOTrainer, ...): TRL's defaults, and the stage the trainer trains;
- unsloth's FastLanguageModel / FastModel .from_pretrained(model_name, max_seq_length, load_in_4bit) and
  .get_peft_model(r, lora_alpha, target_modules, use_gradient_checkpointing, max_seq_length);
- an Accelerate training loop of its own: Accelerator(gradient_accumulation_steps, mixed_precision),
  FullyShardedDataParallelPlugin(sharding_strategy, cpu_offload), the DataLoader's batch_size (each process's
  batch: accelerate data_loader.py prepare_data_loader, split_batches False) and a model built from
  AutoConfig.from_pretrained(<id>).
A value is a literal, a name assigned a literal once in the file, a dtype attribute (`torch.bfloat16`), or
`args.<dest>` where the file's argparse declares `add_argument("--<flag>", default=<literal>)` (the value the run
gets when the flag is not given); `**name` spreads a dict the file builds once (`dict(k=v)` or `{"k": v}`).
Anything else (a value computed at run time) is left out with a note. A script that makes none of these
calls (an mmengine/xtuner config, a helper) is refused as before. No patch is written into a script.
"""
from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import replace
from typing import Any

from oomdoctor.configs._doc import Doc
from oomdoctor.configs._literal import ARITHMETIC, REFUSED, Walk, literal
from oomdoctor.configs.trainer_args import CONVENTIONS
from oomdoctor.errors import InputError
from oomdoctor.facts import Msg, Source, TrainingSetup, msg

_TRAINER_ARGS = ("TrainingArguments", "Seq2SeqTrainingArguments")
# peft's adapter config classes (peft/tuners/*/config.py) and the peft_type each sets
_PEFT_CONFIGS = {"LoraConfig": "", "IA3Config": "IA3", "VeraConfig": "VERA", "PromptTuningConfig": "PROMPT_TUNING",
                 "PrefixTuningConfig": "PREFIX_TUNING", "PromptEncoderConfig": "P_TUNING", "AdaLoraConfig": "ADALORA",
                 "LoHaConfig": "LOHA", "LoKrConfig": "LOKR"}
# TRL's config dataclasses and trainers, with the stage they train (trl/trainer/*_config.py, *_trainer.py).
_TRL_STAGES = {"SFT": "sft", "DPO": "dpo", "KTO": "kto", "ORPO": "orpo", "CPO": "orpo", "Reward": "rm",
               "GRPO": "sft", "RLOO": "sft", "PPO": "ppo", "BCO": "kto", "OnlineDPO": "sft", "GKD": "sft"}
_TRL_CONFIGS = {f"{k}Config": v for k, v in _TRL_STAGES.items()}
_TRL_TRAINERS = {f"{k}Trainer": v for k, v in _TRL_STAGES.items()}
_UNSLOTH = ("FastLanguageModel", "FastModel", "FastVisionModel")
# An Accelerate loop's own calls (accelerate/accelerator.py Accelerator, utils/dataclasses.py
# FullyShardedDataParallelPlugin at 16cb6eb8); the FSDP plugin's sharding_strategy defaults to FULL_SHARD.
_ACCELERATE = ("Accelerator", "FullyShardedDataParallelPlugin")
_DTYPE_ATTRS = {"bfloat16": "bfloat16", "float16": "float16", "half": "float16", "float32": "float32",
                "float": "float32"}
_MISSING = object()


def command_in_strings(text: str) -> str | None:
    """A launch command a Python file holds as data: string literals written next to each other (one string,
    Python reference §2.4.2 "String literal concatenation": `("torchrun " "--nproc_per_node 8 ")`) or a list of
    strings (an argv for subprocess: `["accelerate", "launch", "train.py", "--bf16"]`), as shell text with every
    piece on the line it has in the file (continued with a backslash), or None when no such run of strings
    reads as a command. Read with `tokenize`, so a file cut before its closing bracket still gives its strings."""
    import io
    import re
    import shlex
    import tokenize

    if re.search(r"(?m)^[ \t]{0,3}(```|~~~)", text):
        return None                                     # a Markdown fence: not Python as written, read unwrapped
    runs: list[list[tuple[int, str, bool]]] = []      # (line, text, starts a new argv word)
    run: list[tuple[int, str, bool]] = []
    after_comma = False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.ERRORTOKEN and tok.string.strip():
                return None                             # not Python (a Markdown fence around it): read unwrapped
            if tok.type == tokenize.STRING:
                try:
                    value = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    value = None
                if not isinstance(value, str):
                    run, after_comma = _close_run(runs, run), False
                    continue
                run.append((tok.start[0], value, after_comma))
                after_comma = False
            elif tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                continue
            elif tok.type == tokenize.OP and tok.string == "," and run:
                after_comma = True
            else:
                run, after_comma = _close_run(runs, run), False
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass                                            # a cut file: the strings read so far
    _close_run(runs, run)
    for pieces in runs:
        argv = any(new for _, _, new in pieces)
        lines: dict[int, list[str]] = {}
        for line, value, _new in pieces:
            lines.setdefault(line, []).append(shlex.quote(value) if argv else value)
        if not argv and not any(v.strip() for _, v, _ in pieces):
            continue
        first, last = min(lines), max(lines)
        out = [""] * (first - 1) + ["\\"] * (last - first + 1)    # a line between pieces (a comment) continues too
        for line, parts in lines.items():
            out[line - 1] = " ".join(parts) + ("" if line == last else " \\")
        body = "\n".join(out) + "\n"
        if _holds_launch(body):
            return body
    return None


# Hydra's line for a job that failed (`Error executing job with overrides: ['k=v', …]`): the app's command-line
# overrides, as the Python list it printed.
_HYDRA_FAILED = re.compile(r"Error executing job with overrides:\s*(?=\[)")


def hydra_overrides(text: str) -> str | None:
    """The command line a failed Hydra job ran with, from the overrides list Hydra printed for it, as a command of an
    app whose name the line does not give (`python3 hydra_app.py k=v …`; entrypoints reads a verl main from its
    overrides); None without that line. A terminal wrapped the one printed line where it was too long, so line
    breaks inside it are no part of it; a list cut off ends at its last whole item."""
    import io
    import shlex
    import tokenize

    found = _HYDRA_FAILED.search(text)
    if found is None:
        return None
    line = text.count("\n", 0, found.start()) + 1
    rest = text[found.end():].replace("\r", "").replace("\n", "")
    items: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(rest).readline):
            if tok.type == tokenize.STRING:
                value = ast.literal_eval(tok.string)
                if isinstance(value, str) and "=" in value:
                    items.append(value)
            elif not (tok.type == tokenize.OP and tok.string in "[,") and tok.type != tokenize.NL:
                break
    except (tokenize.TokenError, SyntaxError, ValueError, MemoryError, RecursionError):
        pass                                            # cut inside an item: the items before it
    if not items:
        return None
    return "\n" * (line - 1) + "python3 hydra_app.py " + " ".join(shlex.quote(i) for i in items) + "\n"


def _close_run(runs: list[list[tuple[int, str, bool]]], run: list[tuple[int, str, bool]]) -> list[tuple[int, str, bool]]:
    if len(run) > 1:
        runs.append(run)
    return []


def _holds_launch(body: str) -> bool:
    from oomdoctor.configs.entrypoints import find_training
    from oomdoctor.configs.shell import read_script

    try:
        return find_training(read_script(body, "<python strings>")) is not None
    except InputError:
        return False


def _read_string_command(path: str, command: str, **versions: Any) -> TrainingSetup:
    from oomdoctor.configs.entrypoints import read_script_setup

    setup = read_script_setup(path, command, **versions)
    return replace(setup, warnings=(*setup.warnings, msg("config.python_command", where=path)))


def is_training_script(text: str) -> bool:
    """The file makes one of the calls this reader takes (a cheap test before parsing)."""
    names = _TRAINER_ARGS + tuple(_TRL_CONFIGS) + tuple(_TRL_TRAINERS) + _UNSLOTH + _ACCELERATE
    return any(f"{n}(" in text or f"{n}." in text for n in names)


def read_python(path: str, text: str, *, framework_version: str | None = None,
                log_versions: Any = None, model: str | None = None) -> TrainingSetup:
    from oomdoctor.configs import registry
    from oomdoctor.configs.entries import GENERIC, by_name

    if not is_training_script(text):
        held = config_literal(path, text)
        if held is not None:
            return _read_literal(path, *held, framework_version=framework_version, log_versions=log_versions)
        command = command_in_strings(text)
        if command is not None:
            return _read_string_command(path, command, framework_version=framework_version,
                                        log_versions=log_versions, model=model)
        raise InputError(msg("config.python"), path)
    notes_before: list[Msg] = []
    try:
        tree = ast.parse(_without_ipython(text), filename=path)
    except IndentationError as err:
        # A snippet pasted with every line indented alike (under a list item, a quote) is the same program with
        # its common indentation removed: Python reads indentation relative to the first statement's column 0
        # (reference §2.1.8), and dedenting keeps every line where it was.
        try:
            tree = ast.parse(_without_ipython(textwrap.dedent(text)), filename=path)
        except SyntaxError:
            raise InputError(msg("config.python"), path, err.lineno) from None
        except (ValueError, RecursionError, MemoryError):
            raise InputError(msg("config.python"), path) from None
    except SyntaxError as err:
        tree, mends = _parse_mended(path, _without_ipython(text), err)
        notes_before.extend(mends)
    except (ValueError, RecursionError, MemoryError):      # a NUL byte, nesting deeper than the parser goes
        raise InputError(msg("config.python"), path) from None
    reader = _Reader(path, tree)
    reader.notes[:0] = notes_before
    reader.walk()
    if not reader.found:
        raise InputError(msg("config.python"), path)
    if model and "model_name_or_path" not in reader.data:
        reader.data["model_name_or_path"] = model       # --model stands in for a model only the run knows
    doc = Doc(path, reader.data, reader.lines, "cli", tolerant=True, notes=reader.notes)
    entry = (by_name("trl") if reader.trl else None) or GENERIC
    line = min(reader.lines.values()) if reader.lines else 1
    reason = msg("config.why.python", calls=tuple(reader.found[:3]), line=line)
    setup = registry.read_doc(doc, "hf", reason, framework_version=framework_version, log_versions=log_versions,
                              entry=entry)
    # Provenance in the script's own words: `LoraConfig(r=)` at its line, not the TRL key it was read as.
    sources = {f: (replace(src, key=reader.spelled[src.key], default=reader.defaulted.get(src.key, src.default))
                   if src.file == path and src.key in reader.spelled else src) for f, src in setup.sources.items()}
    fields: dict[str, Any] = {}
    if reader.stage is not None and not (sources.get("stage") and sources["stage"].file):
        fields["stage"] = reader.stage[0]
        sources["stage"] = Source(file=path, key=reader.stage[1], line=reader.stage[2])
    if reader.unsloth is not None:
        fields["use_unsloth"] = True
        sources["use_unsloth"] = Source(file=path, key=reader.unsloth[0], line=reader.unsloth[1])
    warnings = (*setup.warnings, msg("config.python_read", where=path))
    # peft's other adapter config classes: the type and its own keys go to the estimate, or it says it takes
    # them as plain LoRA
    peft: dict[str, Any] = {k: reader.data[k] for k in ("peft_type", "num_virtual_tokens", "feedforward_modules")
                            if k in reader.data}
    kind = str(peft.get("peft_type") or "")
    if kind in ("ADALORA", "LOHA", "LOKR"):
        warnings += (msg("config.peft_as_lora", where=f"{path}:{reader.lines['peft_type']}", kind=kind),)
    elif kind in ("PROMPT_TUNING", "PREFIX_TUNING", "P_TUNING"):
        warnings += (msg("config.ptuning_yaml", where=f"{path}:{reader.lines['peft_type']}", kind=kind),)
    extras = {**setup.extras, **peft, "python_script": True, "entry": entry.name,
              **_unsloth_extras(reader, log_versions)}
    return _usage_launched(replace(setup, config_file=path, sources=sources, extras=extras, warnings=warnings,
                                   **fields), path, tree)


def _usage_launched(setup: TrainingSetup, path: str, tree: ast.Module) -> TrainingSetup:
    """The setup with the launcher the module docstring's usage line runs the file under (entrypoints)."""
    usage = ast.get_docstring(tree)
    if not usage:
        return setup
    from oomdoctor.configs.entrypoints import with_usage_launch

    return with_usage_launch(setup, path, usage)


def _unsloth_extras(reader: Any, log_versions: Any) -> dict[str, Any]:
    """unsloth's offloaded checkpointing, when the script asks for it (or takes get_peft_model's default), and its
    release where the crash log's banner printed it ("Unsloth 2024.8: Fast Llama patching"), under the keys
    Mechanisms.unsloth_offload and unsloth_version read (memory/loss.py unsloth_loss: the loss differs by release)."""
    if reader.unsloth is None:
        return {}
    out: dict[str, Any] = {"use_gradient_checkpointing": "unsloth"} if reader.unsloth_offload else {}
    logged = (log_versions or {}).get("unsloth")
    if logged:
        out["unsloth_version"] = str(logged)
    return out


def config_literal(path: str, text: str) -> tuple[str, dict[str, Any], dict[str, int], str] | None:
    """(the variable, the mapping, its keys' lines, the reader that claims it) of a config a Python file holds as a
    literal: `ds_config = {…}` (DeepSpeed takes its config as a dict: deepspeed.initialize(config=…)), or
    `args = dict(stage="sft", …)` (LLaMA-Factory's run_exp(args) reads a dict of its arguments: tuner.py). The first
    top-level assignment of a dict display or a `dict(…)` call whose keys a reader claims; a value that is a name
    only the running code knows is left out. None when there is no such literal."""
    from oomdoctor.configs import registry

    try:
        tree = ast.parse(_without_ipython(text), filename=path)
    except SyntaxError as err:
        try:
            tree = _parse_mended(path, _without_ipython(text), err)[0]      # a paste cut inside the literal
        except InputError:
            return None
    except (ValueError, RecursionError, MemoryError):
        return None
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        lines: dict[str, int] = {}
        data = _mapping(stmt.value, "", lines)
        if not data:
            continue
        name, _ = registry.detect(data)
        if name is not None and name != "hf":
            return stmt.targets[0].id, data, lines, name
    return None


def _mapping(node: ast.expr, prefix: str, lines: dict[str, int]) -> dict[str, Any] | None:
    """A dict display or `dict(k=v)` call as a mapping of literals (nested ones too), each key's line in `lines`."""
    pairs: list[tuple[str, ast.expr]] = []
    if isinstance(node, ast.Dict):
        pairs = [(k.value, v) for k, v in zip(node.keys, node.values)
                 if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
        pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
    else:
        return None
    out: dict[str, Any] = {}
    for key, value in pairs:
        inner = _mapping(value, f"{prefix}{key}.", lines)
        if inner is not None:
            out[key] = inner
        else:
            leaf = literal(value, tuples=True)
            if leaf is REFUSED:
                continue                                # a name or a call only the running code knows
            out[key] = leaf
        lines[f"{prefix}{key}"] = value.lineno
    return out


def _read_literal(path: str, variable: str, data: dict[str, Any], lines: dict[str, int], name: str,
                  **versions: Any) -> TrainingSetup:
    from oomdoctor.configs import registry

    line = min(lines.values()) if lines else 1
    doc = Doc(path, data, lines, "yaml", tolerant=True,
              notes=[msg("config.python_literal", where=f"{path}:{line}", variable=variable)])
    _, why = registry.detect(data)
    setup = registry.read_doc(doc, name, why, **versions)
    return replace(setup, config_file=path, extras={**setup.extras, "python_script": True})


# A comment in another language's syntax (`// …`, C, JavaScript) typed after an argument in a pasted snippet: where it
# makes the line no Python, it is read as the comment it was meant to be.
_SLASH_COMMENT = re.compile(r"(?:(?<=[,(\[{=:])|^)\s*//\s.*$")


def _parse_mended(path: str, text: str, err: SyntaxError) -> tuple[ast.Module, list[Msg]]:
    """A pasted snippet read as the program it shows, when it is no Python as pasted: a `// comment` dropped from the
    line the parser stopped at, and a paste cut before its closing brackets closed after its last whole line
    (tokenize gives the brackets still open). Each mend is said in a note; the refusal stands when none makes the
    text parse. Lines keep their numbers."""
    notes: list[Msg] = []
    original = text.split("\n")
    for _ in range(4):
        lines = text.split("\n")
        line = err.lineno or 0
        last = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1) + 1
        mended = None
        if 0 < line <= len(lines) and _SLASH_COMMENT.search(lines[line - 1]):
            lines[line - 1] = _SLASH_COMMENT.sub("", lines[line - 1])
            mended = "\n".join(lines)
            notes.append(msg("config.python_comment", where=f"{path}:{line}"))
        elif line >= last or any(w in str(err.msg) for w in ("never closed", "EOF")):    # a bracket open at the end
            cut = max((i for i, ln in enumerate(original) if ln.strip()), default=-1) + 1
            # the paste's own lines closed after its last line, else after the line before it (the last one cut
            # inside a word: `lr_sched` where `lr_scheduler_type=…` was)
            mended = next((c for c in (_closed(original[:cut]), _closed(original[:cut - 1]))
                           if c is not None and c != text), None)
            if mended is not None:
                notes = [n for n in notes if n.code != "config.python_cut"]
                notes.append(msg("config.python_cut", where=f"{path}:{cut}"))
        if mended is None or mended == text:
            break
        text = mended
        try:
            return ast.parse(text, filename=path), notes
        except SyntaxError as again:
            err = again
        except (ValueError, RecursionError, MemoryError):
            break
    raise InputError(msg("config.python"), path, err.lineno) from None


def _closed(lines: list[str]) -> str | None:
    """The lines with the brackets they leave open closed, the last line dropped when it is cut inside a token
    (a string); None when nothing is open."""
    import io
    import tokenize

    for keep in (len(lines), len(lines) - 1):
        body = "\n".join(lines[:keep]).rstrip()
        stack: list[str] = []
        try:
            for tok in tokenize.generate_tokens(io.StringIO(body + "\n").readline):
                if tok.type == tokenize.OP and tok.string in "([{":
                    stack.append({"(": ")", "[": "]", "{": "}"}[tok.string])
                elif tok.type == tokenize.OP and tok.string in ")]}" and stack:
                    stack.pop()
                elif tok.type == tokenize.ERRORTOKEN and tok.string.strip():
                    raise tokenize.TokenError("", tok.start)     # a token cut short, not only brackets left open
        except tokenize.TokenError as cut:
            if "EOF" in str(cut) and "string" not in str(cut):
                pass                                # only brackets left open: closed below
            else:
                continue
        except (IndentationError, SyntaxError):
            continue
        if stack:
            return body + "\n" + "".join(reversed(stack)) + "\n"     # on a line of their own: after any comment
    return None


def _without_ipython(text: str) -> str:
    """A notebook's cells pasted as a script keep IPython's own lines — `!pip install …` (a shell escape),
    `%env`, `%%capture` (magics) — which are not Python: each is emptied, its line kept."""
    import re

    return re.sub(r"(?m)^[ \t]*[!%][^\n]*", "", text)


def _train_line(tree: ast.Module) -> int | None:
    """The line of the first `<trainer>.train(...)`: what the script calls after it (reloading the model to
    merge or test the adapter) is not the training run."""
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "train"]
    return min(lines) if lines else None


class _Reader:
    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.tree = tree
        self.data: dict[str, Any] = {}
        self.lines: dict[str, int] = {}
        self.notes: list[Any] = []
        self.found: list[str] = []
        self.trl = False
        self.accelerate = False         # an Accelerator (or its FSDP plugin) is made: the DataLoader batch is read
        self.stage: tuple[str, str, int] | None = None
        self.unsloth: tuple[str, int] | None = None
        self.unsloth_offload = False    # use_gradient_checkpointing="unsloth": unsloth's offloaded checkpointing
        self.default_len: tuple[int, int] | None = None
        self.current: tuple[str, ast.Call | None] = ("", None)     # the call being read, for provenance
        self.spelled: dict[str, str] = {}                           # data key -> how the script wrote it
        self.defaulted: dict[str, Msg] = {}                         # data key -> the call's default it took
        # the file's constants and its argparse defaults refer to each other (`default=MODEL_ID`, `seq = args.len`):
        # each read once more with what the other gave
        self.arg_defaults = self._argparse_defaults({})
        self.consts = self._constants()
        self.arg_defaults = self._argparse_defaults(self.consts)
        self.consts = self._constants()
        self.kwdicts = self._kwdicts()

    # ------------------------------------------------------------ values

    def _constants(self) -> dict[str, Any]:
        """Names assigned a literal exactly once in the file (`max_seq_length = 2048`)."""
        seen: dict[str, list[Any]] = {}
        for node in ast.walk(self.tree):
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            for t in targets:
                if isinstance(t, ast.Name) and value is not None:
                    seen.setdefault(t.id, []).append(self._literal(value, {}))
                elif isinstance(t, ast.Tuple) and isinstance(value, ast.Tuple) and len(t.elts) == len(value.elts):
                    # `model_id, output_dir = "org/model", "out"`: each name its own value
                    for name, item in zip(t.elts, value.elts):
                        if isinstance(name, ast.Name):
                            seen.setdefault(name.id, []).append(self._literal(item, {}))
        return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not _MISSING}

    def _argparse_defaults(self, consts: dict[str, Any]) -> dict[str, tuple[str, Any, int]]:
        """dest -> (flag, default) of each `<parser>.add_argument("--flag", ..., default=<literal>)`: argparse names
        the attribute after the first long option, `-` read as `_`, unless `dest=` says (Python docs, argparse
        "dest"). A dest declared twice with different defaults is left out."""
        seen: dict[str, list[tuple[str, Any, int]]] = {}
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument"):
                continue
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            long = next((f for f in flags if f.startswith("--")), None)
            dest = self._literal(kw["dest"], {}) if "dest" in kw else (long[2:].replace("-", "_") if long else None)
            if not isinstance(dest, str) or "default" not in kw:
                continue
            value = self._literal(kw["default"], consts)
            if value is not _MISSING:
                seen.setdefault(dest, []).append((long or dest, value, node.lineno))
        return {k: v[0] for k, v in seen.items() if all(x[1] == v[0][1] for x in v)}

    def _kwdicts(self) -> dict[str, dict[str, ast.expr]]:
        """Names assigned once a dict of string keys (`kw = dict(lr=1e-5)`, `kw = {"lr": 1e-5}`): what `**kw`
        spreads into a call. Later item assignments (often conditional) are not followed."""
        seen: dict[str, list[dict[str, ast.expr] | None]] = {}
        for node in ast.walk(self.tree):
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            if not isinstance(target, ast.Name) or value is None:
                continue
            items: dict[str, ast.expr] | None = None
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
                    and not value.args:
                items = {k.arg: k.value for k in value.keywords if k.arg}
            elif isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                     for k in value.keys):
                items = {str(k.value): v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant)}
            seen.setdefault(target.id, []).append(items)
        return {k: v[0] for k, v in seen.items() if len(v) == 1 and v[0] is not None}

    def _literal(self, node: ast.expr, consts: dict[str, Any]) -> Any:
        """A literal as `ast.literal_eval` reads it, with the file's constants, `args.flag` as the flag's default,
        `torch.bfloat16` as its dtype and arithmetic on numbers; _MISSING when the running code decides it."""
        value = literal(node, names=lambda name: consts.get(name, REFUSED), attribute=self._attribute,
                        operators=ARITHMETIC, deep=False, tuples=True)
        return _MISSING if value is REFUSED else value

    def _attribute(self, node: ast.Attribute, part: Walk) -> Any:
        if isinstance(node.value, ast.Name) and node.attr in getattr(self, "arg_defaults", {}):
            return self.arg_defaults[node.attr][1]          # args.model: the flag's default
        return _DTYPE_ATTRS.get(node.attr, REFUSED)         # torch.bfloat16

    def value(self, node: ast.expr) -> Any:
        return self._literal(node, self.consts)

    def _default_spelling(self, key: str, call: str, arg: str, *, force: bool = False) -> None:
        """A value the call takes by its own default: provenance `call()` at the call, with the default named."""
        if force or key not in self.spelled:
            self.spelled[key] = f"{call}()"
            self.defaulted[key] = msg("config.default.call_arg", arg=arg)

    def put(self, key: str, node: ast.expr, value: Any = _MISSING, *, keep: bool = False) -> None:
        """data[key] from a call's argument; `keep`: a value already read (a config's) is not replaced."""
        if keep and key in self.data:
            return
        label, call = self.current
        arg = next((k.arg for k in call.keywords if k.value is node), None) if call is not None else None
        self.spelled[key] = f"{label}({arg}=)" if arg else f"{label}()"
        if isinstance(node, ast.Attribute) and node.attr in self.arg_defaults:
            self.defaulted[key] = msg("config.default.argparse", flag=self.arg_defaults[node.attr][0])
        elif getattr(self.defaulted.get(key), "code", "") == "config.default.argparse":
            del self.defaulted[key]
        v = self.value(node) if value is _MISSING else value
        if v is _MISSING or v is None:
            if not isinstance(node, ast.Constant):
                self.notes.append(msg("config.python_value", where=f"{self.path}:{node.lineno}", key=key))
            return
        if isinstance(v, (list, tuple)):
            v = [str(x) for x in v]
        elif isinstance(v, bool):
            v = "true" if v else "false"
        self.data[key] = v
        self.lines[key] = node.lineno

    # ------------------------------------------------------------ calls

    def walk(self) -> None:
        end = _train_line(self.tree)
        calls = sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and (end is None or n.lineno <= end)),
                       key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
            owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            for k in call.keywords:         # `**config_kwargs`: the keys of a dict the file built once
                if k.arg is None and isinstance(k.value, ast.Name):
                    kw = {**self.kwdicts.get(k.value.id, {}), **kw}
            self.current = (f"{owner}.{name}" if owner else name, call)
            if name in _TRAINER_ARGS or name in _TRL_CONFIGS:
                self._args(name, call, kw)
            elif name in _TRL_TRAINERS:
                self._trainer(name, call, kw)
            elif name in _PEFT_CONFIGS:
                self._lora(name, kw)
            elif name == "BitsAndBytesConfig":
                self.found.append(name)
                for bits in ("load_in_4bit", "load_in_8bit"):
                    if bits in kw:
                        self.put(bits, kw[bits])
            elif owner in _UNSLOTH and name in ("from_pretrained", "get_peft_model"):
                self._unsloth(owner, name, call, kw)
            elif name == "from_pretrained" and owner.startswith("AutoModelFor"):
                self._model(call, kw)
            elif name in _ACCELERATE or (name == "DataLoader" and self.accelerate) or \
                    (name == "from_pretrained" and owner == "AutoConfig"):
                self._accelerate(name, call, kw)
        if self.default_len is not None and "max_length" not in self.data:
            self.data["max_length"], self.lines["max_length"] = self.default_len
        self._length_option()
        self._adapter_unseen()

    def _length_option(self) -> None:
        """No call the file makes says the length, but its own argparse declares an option named as one (the
        conventions' sequence-length names, `--sequence-length`): its default is the length the run trains at when
        run without it, read as that flag (said in a note, as every convention)."""
        if any(CONVENTIONS.get(k) == "seq" for k in self.data):
            return
        found = next(((dest, d) for dest, d in self.arg_defaults.items()
                      if CONVENTIONS.get(dest) == "seq" and isinstance(d[1], int) and not isinstance(d[1], bool)),
                     None)
        if found is not None:
            dest, (flag, value, line) = found
            self.data[dest], self.lines[dest], self.spelled[dest] = value, line, flag
            self.defaulted[dest] = msg("config.default.argparse", flag=flag)

    def _adapter_unseen(self) -> None:
        """unsloth loaded a 4/8-bit base to train (not `full_finetuning`) and no get_peft_model call is in the file
        (a paste cut short): transformers' Trainer refuses a purely quantised model (trainer_utils.py
        validate_quantization_for_training: "You cannot perform fine-tuning on purely quantized models"), so the
        run has an adapter; get_peft_model's own r 16 / alpha 16 stand in, with a note."""
        if self.unsloth is None or "use_peft" in self.data:
            return
        bits = next((b for b, k in ((4, "load_in_4bit"), (8, "load_in_8bit")) if self.data.get(k) == "true"), None)
        if bits is None:
            return
        owner, line = self.unsloth[0].split(".")[0], self.unsloth[1]
        self.data["use_peft"], self.lines["use_peft"] = "true", line
        self.spelled["use_peft"] = f"{owner}.get_peft_model()"
        for key, default in (("lora_r", 16), ("lora_alpha", 16)):
            self.data[key], self.lines[key] = default, line
            self._default_spelling(key, f"{owner}.get_peft_model", f"{'r' if key == 'lora_r' else key}={default}",
                                   force=True)
        self.notes.append(msg("config.python_adapter_unseen", where=f"{self.path}:{line}", bits=bits))

    def _args(self, name: str, call: ast.Call, kw: dict[str, ast.expr]) -> None:
        self.found.append(name)
        if name in _TRL_CONFIGS:
            self.trl = True
            self.stage = (_TRL_CONFIGS[name], name, call.lineno)
        for key, node in kw.items():
            if key == "max_seq_length":
                key = "max_length"          # TRL's old name (SFTConfig <= 0.19)
            self.put(key, node)

    def _trainer(self, name: str, call: ast.Call, kw: dict[str, ast.expr]) -> None:
        self.found.append(name)
        self.trl = True
        if self.stage is None or self.stage[1] not in _TRL_CONFIGS:
            self.stage = (_TRL_TRAINERS[name], name, call.lineno)
        model = kw.get("model")
        if model is not None and isinstance(self.value(model), str):
            self.put("model_name_or_path", model, keep=True)
        for key in ("max_seq_length", "packing", "dataset_text_field"):
            if key in kw:
                self.put("max_length" if key == "max_seq_length" else key, kw[key], keep=True)

    def _lora(self, name: str, kw: dict[str, ast.expr]) -> None:
        self.found.append(name)
        self.data["use_peft"] = "true"
        self.lines["use_peft"] = next(iter(kw.values())).lineno if kw else 1
        self.spelled["use_peft"] = f"{name}()"
        for src, key in (("r", "lora_r"), ("lora_alpha", "lora_alpha"), ("target_modules", "lora_target_modules"),
                         ("use_dora", "use_dora"), ("num_virtual_tokens", "num_virtual_tokens"),
                         ("feedforward_modules", "feedforward_modules")):
            if src in kw:
                self.put(key, kw[src])
        if name == "LoraConfig":
            # what the call leaves out is peft's own default (huggingface/peft@5d602fdb src/peft/tuners/lora/
            # config.py:613,633: r=8, lora_alpha=8), not TRL's ModelConfig --lora_r 16 / --lora_alpha 32
            for key, arg in (("lora_r", "r"), ("lora_alpha", "lora_alpha")):
                if arg not in kw:
                    self.data[key], self.lines[key] = 8, self.lines["use_peft"]
                    self._default_spelling(key, name, f"{arg}=8", force=True)
        if _PEFT_CONFIGS[name]:
            self.data["peft_type"] = _PEFT_CONFIGS[name]
            self.lines["peft_type"] = self.lines["use_peft"]
            self.spelled["peft_type"] = f"{name}()"

    def _accelerate(self, name: str, call: ast.Call, kw: dict[str, ast.expr]) -> None:
        """An Accelerate loop's setup in TrainingArguments' names: the accumulation and autocast the Accelerator
        is given, FSDP from its plugin (`full_shard`, `offload` with cpu_offload), the per-process batch its
        DataLoader draws, and the model whose config it builds from (`from_config(AutoConfig.from_pretrained(id))`:
        the same architecture, randomly initialised)."""
        if name == "from_pretrained":
            node = call.args[0] if call.args else kw.get("pretrained_model_name_or_path")
            if node is not None and isinstance(self.value(node), str):
                self.put("model_name_or_path", node, keep=True)
            return
        if name == "DataLoader":
            if "batch_size" in kw:
                self.put("per_device_train_batch_size", kw["batch_size"], keep=True)
            return
        self.found.append(name)
        self.accelerate = True
        if name == "Accelerator":
            if "gradient_accumulation_steps" in kw:
                self.put("gradient_accumulation_steps", kw["gradient_accumulation_steps"])
            mixed = self.value(kw["mixed_precision"]) if "mixed_precision" in kw else None
            if mixed in ("bf16", "fp16"):
                self.put(str(mixed), kw["mixed_precision"], True)
            return
        strategy = self.value(kw["sharding_strategy"]) if "sharding_strategy" in kw else "FULL_SHARD"
        words = [str(strategy).lower() if isinstance(strategy, str) else "full_shard"]
        offload = self.value(kw["cpu_offload"]) if "cpu_offload" in kw else False
        if offload is True:
            words.append("offload")
        self.put("fsdp", call, " ".join(words))

    def _model(self, call: ast.Call, kw: dict[str, ast.expr]) -> None:
        node = call.args[0] if call.args else kw.get("pretrained_model_name_or_path")
        if node is not None and isinstance(self.value(node), str):
            self.put("model_name_or_path", node)
        for key in ("dtype", "torch_dtype", "attn_implementation"):
            if key in kw:       # transformers 5 renamed torch_dtype to dtype: the load dtype either way
                self.put("torch_dtype" if key == "dtype" else key, kw[key])

    def _unsloth(self, owner: str, name: str, call: ast.Call, kw: dict[str, ast.expr]) -> None:
        # unslothai/unsloth@015bdef unsloth/models/loader.py:410 FastLanguageModel.from_pretrained(model_name,
        # max_seq_length=2048, dtype=None, load_in_4bit=True, load_in_8bit=False, load_in_16bit=False,
        # full_finetuning=False, ...); llama.py:3061 get_peft_model(model, r=16, ..., lora_alpha=16, ...,
        # use_gradient_checkpointing="unsloth", max_seq_length=2048)
        self.found.append(f"{owner}.{name}")
        self.unsloth = self.unsloth or (f"{owner}.{name}", call.lineno)
        if name == "from_pretrained":
            node = kw.get("model_name") or (call.args[0] if call.args else None)
            if node is not None:
                self.put("model_name_or_path", node)
            full = self.value(kw["full_finetuning"]) is True if "full_finetuning" in kw else False
            other = any(self.value(kw[k]) is True for k in ("load_in_8bit", "load_in_16bit") if k in kw)
            if not full and not other and "load_in_4bit" not in kw:
                self.data.setdefault("load_in_4bit", "true")        # unsloth's default: a 4-bit base
                self.lines.setdefault("load_in_4bit", call.lineno)
                self._default_spelling("load_in_4bit", f"{owner}.{name}", "load_in_4bit=True")
            if "max_seq_length" not in kw:
                self.default_len = (2048, call.lineno)
                self._default_spelling("max_length", f"{owner}.{name}", "max_seq_length=2048")
            for src, key in (("max_seq_length", "max_length"), ("load_in_4bit", "load_in_4bit"),
                             ("load_in_8bit", "load_in_8bit"), ("dtype", "torch_dtype")):
                if src in kw:
                    self.put(key, kw[src], keep=key == "max_length")
            if full:
                self.data["use_peft"] = "false"
            ckpt = kw.get("use_gradient_checkpointing")
            if ckpt is not None:
                # from_pretrained takes it too (loader.py FastModel.from_pretrained use_gradient_checkpointing,
                # "unsloth" by default) and applies it to a full fine-tune
                v = self.value(ckpt)
                self.put("gradient_checkpointing", ckpt, bool(v) if v is not _MISSING else _MISSING)
                self.unsloth_offload = isinstance(v, str) and v.lower() == "unsloth"
            return
        self.data["use_peft"] = "true"
        self.lines["use_peft"] = call.lineno
        self.spelled["use_peft"] = f"{owner}.{name}()"
        for src, key in (("r", "lora_r"), ("lora_alpha", "lora_alpha"), ("target_modules", "lora_target_modules"),
                         ("max_seq_length", "max_length")):
            if src in kw:
                self.put(key, kw[src], keep=key == "max_length")
        for key, default in (("lora_r", 16), ("lora_alpha", 16)):        # get_peft_model's own defaults
            if key not in self.data:
                self.data[key], self.lines[key] = default, call.lineno
                self._default_spelling(key, f"{owner}.{name}", f"{'r' if key == 'lora_r' else key}={default}", force=True)
        ckpt = kw.get("use_gradient_checkpointing")
        if ckpt is not None:
            v = self.value(ckpt)
            self.put("gradient_checkpointing", ckpt, bool(v) if v is not _MISSING else _MISSING)
            self.unsloth_offload = isinstance(v, str) and v.lower() == "unsloth"
        elif "gradient_checkpointing" not in self.data:
            self.unsloth_offload = True
            self.data["gradient_checkpointing"], self.lines["gradient_checkpointing"] = "true", call.lineno
            self._default_spelling("gradient_checkpointing", f"{owner}.{name}", 'use_gradient_checkpointing="unsloth"',
                                  force=True)
