"""Training configs of every supported framework, normalised into one TrainingSetup with provenance.

Public API: classify, load_config, edits_for, key_for, setup_from_log, combine, with_log_world_size.
Frameworks live in one registry (configs/registry.py), one module each, each owning the key table it
reads and patches with: LLaMA-Factory, HF TrainingArguments / TRL, Firefly-style argument files, axolotl,
torchtune recipes, accelerate (FSDP / DeepSpeed plugin) configs and bare DeepSpeed JSONs. Shell scripts
are read by configs/shell.py and their training command by configs/entrypoints.py.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from oomdoctor.errors import InputError
from oomdoctor.facts import Change, CrashReport, KeyEdit, Msg, Source, TrainingSetup, msg
from oomdoctor.lazyre import lazy_re

__all__ = ["classify", "classify_bytes", "load_config", "edits_for", "key_for", "setup_from_log", "combine", "with_log_world_size",
           "detect_framework"]

_CONFIG_EXT = (".yaml", ".yml", ".json")
_LOG_EXT = (".log", ".txt", ".out", ".err", ".jsonl", ".gz")
_SCRIPT_EXT = (".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".ps1", ".bat", ".cmd")
_PYTHON_EXT = (".py",)          # xtuner / mmengine configs and training scripts: named, and refused
_HEAD_BYTES = 64 * 1024
_LOG_MARKERS = (b"Traceback (most recent call last)", b"out of memory", b"OutOfMemoryError", b"CUDA error")


def _head(path: str) -> bytes:
    """The first _HEAD_BYTES of the file as stored ("" when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""


def is_script(path: str, text: str) -> bool:
    low = path.lower()
    return low.endswith(_SCRIPT_EXT) or (text.startswith("#!") and not low.endswith(_CONFIG_EXT))


def classify(path: str) -> str:
    """"config" for a training config (a mapping a framework of the registry claims, or a shell script
    that runs a training command), else "log". Reads at most the first 64 KiB."""
    return _by_name(path) or classify_bytes(path, _head(path))


def _by_name(path: str) -> str | None:
    low = path.lower()
    if path == "-" or low.endswith(_LOG_EXT):
        return "log"
    if low.endswith(_PYTHON_EXT):
        return "config"
    return None


def classify_bytes(path: str, head: bytes) -> str:
    """classify() of an input whose first bytes are already read (a stream, which can be read only once):
    `head` is its first 64 KiB as stored, `path` the name it was given (its extension counts)."""
    from oomdoctor.textcodec import decode

    by_name = _by_name(path)
    if by_name is not None:
        return by_name
    head = decode(head[:_HEAD_BYTES])       # UTF-16/32 transcoded to UTF-8 (textcodec)
    if b"\0" in head[:8192]:
        return "log"
    from oomdoctor.configs._doc import unwrap_markdown

    text = head.decode("utf-8", "replace")
    if unwrap_markdown(text)[1] and _classify_text(path, text, head) == "log":
        return _classify_text(path, unwrap_markdown(text)[0], head)      # a config pasted with its Markdown
    return _classify_text(path, text, head)


def _classify_text(path: str, text: str, head: bytes) -> str:
    from oomdoctor.configs import registry
    from oomdoctor.configs._doc import parse_text

    low = path.lower()
    if is_script(path, text):
        if low.endswith(_SCRIPT_EXT):
            return "config"     # a .sh that trains nothing (inference, merging) is refused by name, not read as a log
        from oomdoctor.configs.entrypoints import find_training
        from oomdoctor.configs.shell import read_script

        return "config" if find_training(read_script(text, path)) is not None else "log"
    truncated = len(head) >= _HEAD_BYTES
    if _torchtitan(path, text) is not None:
        return "config"         # named and refused by load_config, not read as a crash log
    if low.endswith(_CONFIG_EXT):
        if truncated:
            return "log" if any(m in head for m in _LOG_MARKERS) else "config"
        try:
            parse_text(text, path)
        except InputError:
            # A broken YAML is still a config the user meant: load_config reports the line.
            return "log" if any(m in head for m in _LOG_MARKERS) else "config"
        return "config"
    if truncated or any(m in head for m in _LOG_MARKERS):
        return "log"
    try:
        doc = parse_text(text, path)
    except InputError:
        return "config" if _unlabel(path, text) is not None or _runs_training(path, text) or _held_command(text) \
            else "log"
    name, _ = registry.detect(doc.data)
    return "config" if name is not None or _unlabel(path, text) is not None or _runs_training(path, text) else "log"


def _unlabel(path: str, text: str) -> Any:
    from oomdoctor.configs import registry
    from oomdoctor.configs._doc import unlabel

    return unlabel(path, text, lambda data: registry.detect(data)[0] is not None)


def _syntax(err: InputError) -> bool:
    return str(getattr(err.message, "code", "")).endswith(("yaml_syntax", "json_syntax"))


def _held_command(text: str) -> bool:
    """A text with no crash in it whose launch command is Python data a log printed (a launcher's argv list, a failed
    Hydra job's overrides): the run's configuration, as _load_text reads it."""
    from oomdoctor.configs.pyscript import command_in_strings, hydra_overrides

    return command_in_strings(text) is not None or hydra_overrides(text) is not None


def _runs_training(path: str, text: str) -> bool:
    """A text that is no config but a launch command and nothing else (a Markdown note's code block): every line
    that holds anything is the training command's own, a comment or a variable it sets. A log that shows the
    command it ran has that command's output around it, and stays a log."""
    from oomdoctor.configs.entrypoints import _find_invocation

    try:
        _, inv, rejoined, _, _ = _find_invocation(path, text)
    except InputError:
        return False
    words = [*inv.command.words, *inv.command.env.values()]
    spans = [w.line for w in words if w.line]
    if not spans:
        return False
    first, last = min(min(spans), inv.command.line or min(spans)), max(spans)
    body = rejoined[0] if rejoined is not None else text
    for i, line in enumerate(body.split("\n"), 1):
        bare = line.strip()
        if bare and not first <= i <= last and not bare.startswith("#") and \
                not _ASSIGNMENT.match(bare):
            return False
    return True


_ASSIGNMENT = lazy_re(r"^(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=")


def detect_framework(data: dict) -> str:
    """The registry name of the framework a parsed mapping belongs to; "llamafactory_v1" or "unknown"."""
    from oomdoctor.configs import registry

    if registry.is_llamafactory_v1(data):
        return "llamafactory_v1"
    name, _ = registry.detect(data)
    return name or "unknown"


def load_config(path: str, *, framework_version: str | None = None,
                log_versions: Mapping[str, str] | None = None, model: str | None = None,
                data: bytes | None = None) -> TrainingSetup:
    """Read one training config into a TrainingSetup; every field's origin is in `setup.sources`, the
    framework and the release assumed (and why) in `framework_reason` and `version_reason`.

    `log_versions` are the package versions a crash log's banner printed; `--framework-version` wins
    over them, and both over what the file implies. The file is parsed once per run. `model` (the user's
    --model) stands in for a model reference only the running script would know. `data` is the config's
    bytes when they were read already (a stream, which can be read only once)."""
    from oomdoctor.configs._doc import mend_characters, read_text, unwrap_encoded

    raw = read_text(path, data)
    # The characters a page or an app changed on the way into a paste, then the file as a page's HTML or a JSON
    # string: read as typed, each mend said in a note (a paste: shown, not patched).
    encoded = unwrap_encoded(raw)
    raw, mended = mend_characters(encoded[0] if encoded is not None else raw)
    mended = ((encoded[1],) if encoded is not None else ()) + mended
    setup = _load_unwrapped(path, raw, framework_version=framework_version, log_versions=log_versions, model=model)
    if not mended:
        return setup
    notes = tuple(msg("config.paste_chars", where=path, what=msg(f"config.paste_char.{kind}")) for kind in mended)
    return replace(setup, warnings=(*setup.warnings, *notes),
                   extras={**setup.extras, "markdown_paste": setup.extras.get("markdown_paste") or "characters"})


def _load_unwrapped(path: str, raw: str, *, framework_version: str | None, log_versions: Mapping[str, str] | None,
                    model: str | None) -> TrainingSetup:
    from oomdoctor.configs._doc import unwrap_code_span, unwrap_diff, unwrap_markdown, unwrap_prose_command

    text, wrapped = unwrap_markdown(raw)
    if wrapped and not is_script(path, raw):
        # A YAML/JSON file as written first: a fence inside a block scalar (a prompt) is not a paste; nor is one
        # inside a Python string (a module docstring's usage block), which a pasted fence would not parse as.
        # (No line of a shell script is a bare fence, and a `>` opening every line would redirect each.)
        try:
            return _load_text(path, raw, framework_version=framework_version, log_versions=log_versions, model=model)
        except InputError as err:
            first = err
        # Quoted with a fence inside: the quote's whole content first (a quoted program whose docstring holds a
        # fence), its first fenced block only if that fails.
        tries = [(unwrap_markdown(raw, fence=False)[0], "quote")] if wrapped == "quote+fence" else []
        tries.append((text, wrapped))
        # a ```diff block of a review thread: what the file becomes, as for a diff pasted bare
        tries += [(in_diff, f"{wrapped}, diff") for in_diff in (unwrap_diff(text),) if in_diff is not None]
        # a command quoted inside a line of prose (`> my settings: torchrun --nproc_per_node 1 …`)
        tries += [(said, f"{wrapped}, prose") for said in (unwrap_prose_command(text),) if said is not None]
        failed: InputError | None = None
        for i, (inner, how) in enumerate(tries):
            try:
                setup = _load_text(path, inner, framework_version=framework_version, log_versions=log_versions,
                                   model=model)
                wrapped = how
                break
            except InputError as err:
                if i == len(tries) - 1:
                    # The file as written is no config; what the paste holds says why it is refused (a key its
                    # framework requires), unless that is no config either.
                    failed = first if _syntax(err) else err
        if failed is not None:
            setup = _from_later_blocks(path, raw, failed, framework_version=framework_version,
                                       log_versions=log_versions, model=model)
    elif not wrapped and is_script(path, raw):
        try:
            setup = _load_text(path, text, framework_version=framework_version, log_versions=log_versions,
                               model=model)
        except InputError as err:
            first = err
            spanned = unwrap_code_span(raw)
            if spanned is None:
                raise
            try:
                setup = _load_text(path, spanned, framework_version=framework_version, log_versions=log_versions,
                                   model=model)
            except InputError:
                raise first from None
            wrapped = "code span"
    else:
        text, wrapped = _unflattened(text, wrapped)
        try:
            setup = _load_text(path, text, framework_version=framework_version, log_versions=log_versions,
                               model=model)
        except InputError as err:
            # A diff pasted from a review thread: what the file becomes, its added and context lines; else a config
            # pasted inside an inline code span (a single backtick before its first line).
            for new_side, how in _bare_fallback(text, err):
                try:
                    setup = _load_text(path, new_side, framework_version=framework_version,
                                       log_versions=log_versions, model=model)
                    break
                except InputError:
                    continue
            else:
                raise err from None
            wrapped = f"{wrapped}, {how}" if wrapped else how
    if wrapped:
        # Read from the code block it was pasted in; a patch would have to edit the Markdown around it.
        warnings = (*setup.warnings, msg("config.markdown_read", where=path, how=wrapped))
        setup = replace(setup, extras={**setup.extras, "markdown_paste": wrapped}, warnings=warnings)
    return setup


def _unflattened(text: str, wrapped: str | None) -> tuple[str, str | None]:
    """A bare paste whose command a page flattened onto one line: its `\\ --flag` breaks read as the newlines they
    were (_doc.unwrap_flattened_command); the text as it is otherwise."""
    from oomdoctor.configs._doc import unwrap_flattened_command

    flat = None if wrapped else unwrap_flattened_command(text)
    return (flat, "flattened command") if flat is not None else (text, wrapped)


def _from_later_blocks(path: str, raw: str, failed: InputError, *, framework_version: str | None,
                       log_versions: Mapping[str, str] | None, model: str | None) -> TrainingSetup:
    """A note of several fenced blocks (a thread's reply: a snippet, then the command): each later block in turn,
    each alone (every line kept where the file has it), when the first is no config and runs no training; the
    first's refusal stands when none reads."""
    from oomdoctor.configs._doc import unwrap_markdown

    for k in range(1, 16):
        later, how = unwrap_markdown(raw, block=k)
        if how is None:
            break
        try:
            return _load_text(path, later, framework_version=framework_version, log_versions=log_versions, model=model)
        except InputError:
            continue
    raise failed from None


def _bare_fallback(text: str, err: InputError) -> list[tuple[str, str]]:
    """What a bare paste that is no config as written may hold, in the order tried: a diff's new side, a config in
    an inline code span, a config with prose after it, commands in inline spans within prose, a command written
    in a line of prose, a YAML block with prose around it, Python code after prose (cut where it stops parsing);
    (the text, how it was found) each."""
    from oomdoctor.configs import _doc

    found = ((_doc.unwrap_diff(text), "diff"), (_doc.unwrap_code_span(text), "code span"),
             (_before_prose(text, err), "trailing prose"), (_doc.unwrap_inline_spans(text), "code span"),
             (_doc.unwrap_prose_command(text), "prose"), (_doc.unwrap_prose_yaml(text), "prose"),
             (_doc.unwrap_prose_python(text), "prose"))
    return [(inner, how) for inner, how in found if inner is not None]


def _before_prose(text: str, err: InputError) -> str | None:
    """A config pasted bare with a paragraph of prose after it (an issue form's `### Reproduction` YAML, then
    `### Expected behavior` and a sentence): the YAML parser stops in the prose, so the text up to the blank
    line before the paragraph it stopped in is the config. None when the error is no syntax error or no blank
    line comes before it."""
    if not _syntax(err) or not err.line:
        return None
    lines = text.split("\n")
    blank = max((i for i in range(min(err.line - 1, len(lines))) if not lines[i].strip()), default=0)
    if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines[:blank]):
        return None
    return "\n".join(lines[:blank])


def _load_text(path: str, text: str, *, framework_version: str | None, log_versions: Mapping[str, str] | None,
               model: str | None) -> TrainingSetup:
    from oomdoctor.configs import registry
    from oomdoctor.configs._doc import parse_file

    if path.lower().endswith(_PYTHON_EXT):
        return _read_python_file(path, text, framework_version=framework_version, log_versions=log_versions,
                                 model=model)
    if is_script(path, text):
        from oomdoctor.configs.entrypoints import read_script_setup

        return read_script_setup(path, text, framework_version=framework_version, log_versions=log_versions,
                                 model=model)
    if not text.strip():
        raise InputError(msg("config.empty"), path)
    try:
        doc = parse_file(path, text)
        name, reason = (None, None) if registry.is_llamafactory_v1(doc.data) else registry.detect(doc.data)
        if name in (None, "hf") and _swift_args(doc.data):
            return _read_swift_args(doc, framework_version=framework_version, log_versions=log_versions)
        if name is None and not registry.is_llamafactory_v1(doc.data):
            raise registry.unknown_config(path)
    except InputError:
        labelled = _unlabel(path, text)
        if labelled is not None:
            name, reason = registry.detect(labelled.data)
            return registry.read_doc(labelled, name or "", reason, framework_version=framework_version,
                                     log_versions=log_versions)
        # A launch command pasted in a file named as neither a config nor a script (a Markdown note, a .txt):
        # the shell's grammar when the text is no config and holds a training command.
        if path.lower().endswith(_CONFIG_EXT):
            raise
        from oomdoctor.configs.entrypoints import read_script_setup

        try:
            return read_script_setup(path, text, framework_version=framework_version, log_versions=log_versions,
                                     model=model)
        except InputError:
            pass
        printed = _printed_forms(path, text, framework_version=framework_version, log_versions=log_versions,
                                 model=model)
        if printed is not None:
            return printed
        raise
    if registry.is_llamafactory_v1(doc.data):
        from oomdoctor.configs.llamafactory_v1 import read as read_v1

        return read_v1(doc, framework_version=framework_version, log_versions=log_versions)
    if name is None:
        raise registry.unknown_config(path)
    return registry.read_doc(doc, name, reason, framework_version=framework_version, log_versions=log_versions)


_TRAINING_CALL = lazy_re(r"\b(?:get_peft_model|from_pretrained|TrainingArguments|SFTConfig|DPOConfig|GRPOConfig|"
                         r"LoraConfig|SFTTrainer|Trainer)\s*\(")


def _is_python(text: str) -> bool:
    import ast

    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


_TITAN_TOML = re.compile(r"^\[(?:job|training|parallelism|activation_checkpoint|model|checkpoint)\]\s*$", re.M)
_TITAN_IMPORT = lazy_re(r"^\s*(?:from|import)\s+torchtitan\b", re.M)


def _torchtitan(path: str, text: str) -> str | None:
    """"TOML" or "Python" when the text is a torchtitan job config or config registry, else None."""
    if len(_TITAN_TOML.findall(text)) >= 2 and re.search(r"^\s*(?:local_batch_size|seq_len)\s*=", text, re.M):
        return "TOML"
    if path.lower().endswith(_PYTHON_EXT) and _TITAN_IMPORT.search(text):
        return "Python"
    return None


def _read_python_file(path: str, text: str, *, framework_version: str | None,
                      log_versions: Mapping[str, str] | None, model: str | None) -> TrainingSetup:
    """A .py file: an xtuner config (a torchtitan one named), else a training script's calls (configs/pyscript.py)."""
    from oomdoctor.configs.pyscript import read_python

    own = _own_python_or_toml(path, text, framework_version=framework_version, log_versions=log_versions)
    if own is not None:
        return own
    return read_python(path, text, framework_version=framework_version, log_versions=log_versions, model=model)


def _own_python_or_toml(path: str, text: str, *, framework_version: str | None,
                        log_versions: Mapping[str, str] | None) -> TrainingSetup | None:
    """An xtuner config (read), or a torchtitan one (named in one line: its job TOML, torchtitan/config/job_config.py
    sections, or its Python config registry, rather than read as a YAML that fails or a script it is not)."""
    titan = _torchtitan(path, text)
    if titan is not None:
        raise InputError(msg("config.torchtitan", form=titan), path)
    return _xtuner(path, text, framework_version=framework_version, log_versions=log_versions)


def _xtuner(path: str, text: str, *, framework_version: str | None, log_versions: Mapping[str, str] | None
            ) -> TrainingSetup | None:
    """An xtuner (mmengine) Python config, a file or the part of a paste from its first assignment on, with the
    paste's `xtuner train` line laid over it; None when the text holds none."""
    if not path.lower().endswith(_PYTHON_EXT) and "xtuner" not in text and "accumulative_counts" not in text:
        return None
    from oomdoctor.configs import registry
    from oomdoctor.configs.xtuner import detect, launch_over, python_doc

    doc = python_doc(path, text)
    if doc is None:
        return None
    setup = registry.read_doc(doc, "xtuner", detect(doc.data), framework_version=framework_version,
                              log_versions=log_versions)
    setup = launch_over(setup, path, text)
    if path.lower().endswith(_PYTHON_EXT) and _is_python(text):
        return setup            # the file itself; anything else is a paste of it
    return _as_printed(setup)


def _as_printed(setup: TrainingSetup, *notes: Msg) -> TrainingSetup:
    """A setup read from a form a run or a thread printed rather than the file itself (markdown_paste "log"), with
    any notes on how it was read."""
    return replace(setup, warnings=(*setup.warnings, *notes), extras={**setup.extras, "markdown_paste": "log"})


def _printed_forms(path: str, text: str, *, framework_version: str | None,
                   log_versions: Mapping[str, str] | None, model: str | None) -> TrainingSetup | None:
    """A paste of a form no YAML reader takes: an xtuner or torchtitan config; what a run printed of its own
    configuration (torchtune's resolved config, DeepSpeed's printed config, a mapping of settings, Python or JSON),
    each read as the file it stands for; a launch command a log printed as Python data; else Python code a thread
    pasted."""
    from oomdoctor.configs import registry
    from oomdoctor.configs.printed import deepspeed_printed, mapping_doc, printed_mapping
    from oomdoctor.configs.torchtune import resolved_config

    own = _own_python_or_toml(path, text, framework_version=framework_version, log_versions=log_versions)
    if own is not None:
        return own
    resolved = resolved_config(path, text)
    if resolved is not None:
        setup = registry.read_doc(resolved, "torchtune", msg("config.why.torchtune_resolved"),
                                  framework_version=framework_version, log_versions=log_versions)
        return _as_printed(setup)
    ds_print = deepspeed_printed(text)
    if ds_print is not None:
        ds, world, first, cut = ds_print
        ddoc = mapping_doc(path, text, ds, first, cut)
        setup = registry.read_doc(ddoc, "deepspeed", msg("config.why.deepspeed_printed"),
                                  framework_version=framework_version, log_versions=log_versions)
        if world is not None:
            setup = replace(setup, n_gpus=world, sources={**setup.sources, "n_gpus": Source(
                file=path, key="world_size", line=next((n for n, row in enumerate(text.split("\n"), 1)
                                                        if "world_size" in row), first))})
        return _as_printed(setup)
    # a mapping of settings (litgpt's pprint of setup()'s arguments, a script's JSON dump under a title), cut or not
    printed = printed_mapping(text)
    if printed is not None:
        name, reason = (None, None) if registry.is_llamafactory_v1(printed[0]) else registry.detect(printed[0])
        if name is not None or registry.is_llamafactory_v1(printed[0]):
            pdoc = mapping_doc(path, text, *printed)
            if name is None:
                from oomdoctor.configs.llamafactory_v1 import read as read_v1

                setup = read_v1(pdoc, framework_version=framework_version, log_versions=log_versions)
            else:
                setup = registry.read_doc(pdoc, name, reason, framework_version=framework_version,
                                          log_versions=log_versions)
            return _as_printed(setup)
    # A command a log printed as Python data: the argv list of DeepSpeed's launcher (launcher/launch.py
    # sigkill_handler logs `{cmd} exits with return code`), or the overrides of a failed Hydra job.
    from oomdoctor.configs.entrypoints import read_script_setup
    from oomdoctor.configs.pyscript import command_in_strings, hydra_overrides

    command = command_in_strings(text)
    hydra = None if command is not None else hydra_overrides(text)
    if command is not None or hydra is not None:
        try:
            setup = read_script_setup(path, command or hydra or "", framework_version=framework_version,
                                      log_versions=log_versions, model=model)
        except InputError:
            pass
        else:
            note = msg("config.python_command", where=path) if command is not None else \
                msg("config.hydra_overrides", where=path)
            return _as_printed(setup, note)
    return _python_paste(path, text, framework_version=framework_version, log_versions=log_versions, model=model)


def _python_paste(path: str, text: str, *, framework_version: str | None, log_versions: Mapping[str, str] | None,
                  model: str | None) -> TrainingSetup | None:
    """Python code pasted in a note (a fenced block of a thread): the calls a training script makes, read as a
    script file would be (configs/pyscript.py), when the text is Python and calls what such a script calls."""
    if _TRAINING_CALL.search(text) and _is_python(text):
        from oomdoctor.configs.pyscript import read_python

        try:
            setup = read_python(path, text, framework_version=framework_version, log_versions=log_versions,
                                model=model)
        except InputError:
            pass
        else:
            return replace(setup, extras={**setup.extras, "markdown_paste": setup.extras.get("markdown_paste")
                                          or "python"})
    return None


# Argument names only ms-swift's own dataclasses have (swift/arguments: tuner_type, tuner_backend, rlhf_type; 2.x
# swift/llm/utils/argument.py: sft_type, template_type, model_id_or_path).
_SWIFT_ONLY = ("tuner_type", "tuner_backend", "rlhf_type", "sft_type", "template_type")


def _swift_args(data: dict) -> bool:
    return isinstance(data, dict) and any(k in data for k in _SWIFT_ONLY)


def _read_swift_args(doc: Any, *, framework_version: str | None,
                     log_versions: Mapping[str, str] | None) -> TrainingSetup:
    """An ms-swift argument file: the args.json (2.x: sft_args.json) it writes beside a run and reads back with
    --load_args (swift/arguments/base_args/base_args.py save_args / load_args_from_ckpt), or a `swift sft --config`
    YAML: its keys are the command's flags, read as `swift sft` reads them."""
    from oomdoctor.configs import registry
    from oomdoctor.configs.entries import by_name

    entry = by_name("swift")
    reason = msg("config.why.swift_args", keys=tuple(k for k in _SWIFT_ONLY if k in doc.data)[:2])
    doc.tolerant = True
    return registry.read_doc(doc, "hf", reason, framework_version=framework_version, log_versions=log_versions,
                             entry=entry)


def combine(main: TrainingSetup, launcher: TrainingSetup) -> TrainingSetup:
    """Overlay what a launcher config (accelerate YAML, DeepSpeed JSON) decides onto the training config."""
    from oomdoctor.configs.merge import combine as _combine

    return _combine(main, launcher)


def with_log_world_size(setup: TrainingSetup, crash: CrashReport | None) -> TrainingSetup:
    from oomdoctor.configs.merge import with_log_world_size as _with

    return _with(setup, crash)


def edits_for(setup: TrainingSetup, changes: Sequence[Change]) -> list[KeyEdit]:
    """The key edits, in the right files, that make `setup`'s config files say `changes`."""
    from oomdoctor.configs.edits import edits_for as _edits

    return _edits(setup, changes)


def key_for(setup: TrainingSetup, field: str) -> tuple[str | None, str | None]:
    """(file, key) of this setup's framework and release that holds setup field `field`: where the
    config says it, else where a patch would write it; (None, None) when no config file can hold it.
    The guide and the patch writer ask this one table."""
    from oomdoctor.configs.edits import key_for as _key_for

    return _key_for(setup, field)


def setup_from_log(crash: CrashReport) -> TrainingSetup | None:
    """A setup from the training arguments / command line a log printed; None without a model name."""
    from oomdoctor.configs import registry
    from oomdoctor.configs._doc import Doc
    from oomdoctor.configs.llamafactory import LF_ONLY_KEYS

    args = {str(k).lstrip("-"): v for k, v in (crash.train_args or {}).items()}
    if not any(args.get(k) for k in ("model_name_or_path", "model", "base_model")):
        return None
    if "model_name_or_path" not in args:
        args["model_name_or_path"] = args.get("model") or args.get("base_model") or ""
    versions = dict(crash.versions or {})

    def load(d: Doc) -> TrainingSetup:
        name = "llamafactory" if any(k in LF_ONLY_KEYS for k in d.data) or versions.get("llamafactory") else "hf"
        return registry.read_doc(d, name, msg("config.why.log", log=crash.file), log_versions=versions)

    try:
        setup = load(Doc(crash.file, dict(args), {}, "cli", tolerant=True))
    except InputError:
        if "deepspeed" not in args:
            return None
        # The DeepSpeed JSON the log names is on another machine: judge without it.
        missing = args.pop("deepspeed")
        try:
            setup = load(Doc(crash.file, args, {}, "cli", tolerant=True))
        except InputError:
            return None
        note = msg("crash.setup.path_missing", path=str(missing), key="--deepspeed")
        setup = replace(setup, warnings=(*setup.warnings, note))
    return replace(with_log_world_size(setup, crash), config_file=None)


