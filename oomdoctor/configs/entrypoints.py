"""From a shell script to a TrainingSetup: find the training command, its launcher's GPU count, and read
its flags through the table of its entry point (configs/entries.py) — or, for a script oomdoctor does not
know, through TrainingArguments names and the common conventions only, where a value of the wrong kind
is a note and never an error.

Launchers: `torchrun`/`python -m torch.distributed.run|launch` (--nproc_per_node × --nnodes),
`deepspeed` (--num_gpus × --num_nodes, --include host:ids, else CUDA_VISIBLE_DEVICES), `accelerate launch`
(--num_processes, its --config_file, --gpu_ids), `llamafactory-cli` and `swift` (NPROC_PER_NODE × NNODES,
else CUDA_VISIBLE_DEVICES), `tune run` (--nproc_per_node), `python script.py` (one process).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from oomdoctor.configs._doc import Doc, overlay
from oomdoctor.configs.entries import ENTRIES, GENERIC
from oomdoctor.configs.shell import Command, Script, Word, read_script
from oomdoctor.configs.trainer_args import CONVENTIONS, MODEL_FLAGS, NAMES, Entry
from oomdoctor.errors import InputError
from oomdoctor.facts import Msg, Source, TrainingSetup, msg
from oomdoctor.records import record

_PYTHON = ("python", "python3", "python2", "pypy3")
_WRAPPERS = ("nohup", "exec", "time", "stdbuf", "nice", "ionice", "command", "builtin", "xargs")
# `uv run` options that take a value (uv's CLI reference, `uv run`)
_UV_VALUED = frozenset({"--with", "--with-requirements", "--with-editable", "--python", "-p", "--project", "--directory",
                        "--extra", "--group", "--env-file", "--package", "--index", "--index-url", "--only-group"})
# Launcher options that take no value (everything else written `--opt value` takes the next word).
_BOOL_OPTS = frozenset({"--standalone", "--no_python", "--no-python", "--run_path", "--run-path", "--multi_gpu",
                        "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--quiet", "-q", "--debug", "--cpu",
                        "--tpu", "--no_local_rank", "--force_multi", "--bind_cores_to_rank", "--same_network",
                        "--module", "--fp16", "--bf16", "--no-lora", "-u", "-B", "-O", "-OO", "-s", "-S", "-E",
                        "--enable_each_rank_log", "--elastic_training", "--autotuning", "--no_ssh_check"})
_TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")


@record
class Launch:
    """What the launcher says about the run's processes."""

    name: str                                   # torchrun | deepspeed | accelerate | python | llamafactory-cli | ...
    n_gpus: int | None = None
    source: Word | None = None                  # the word that said it
    key: str | None = None                      # the flag (or variable) that said it
    note: Msg | None = None                     # why the count is not known, when it is not
    accelerate_config: Word | None = None


@record
class Invocation:
    """The training command of a script: which entry point runs, with which words."""

    command: Command
    entry: Entry
    target: Word | None                         # the script or module the launcher runs
    args: tuple[Word, ...]                      # the entry point's own words
    launch: Launch


# ---------------------------------------------------------------- finding the training command

def find_training(script: Script) -> Invocation | None:
    """The command that trains: a known entry point first, else the launched script with the most
    TrainingArguments flags. None when the script runs no training command."""
    best: tuple[int, int, Invocation] | None = None
    for order, cmd in enumerate(_with_shell_strings(script)):
        inv = _invocation(cmd)
        if inv is None:
            continue
        flags = {w.text[2:].split("=")[0] for w in inv.args if w.text.startswith("--")}
        score = len(flags & NAMES) + len(flags & set(CONVENTIONS)) + len(flags & set(MODEL_FLAGS))
        if inv.entry is not GENERIC:
            score += 100
        elif score == 0 or not (flags & (NAMES | set(MODEL_FLAGS))):
            continue        # a helper (`python merge.py`, `python -c …`): not a training command
        if best is None or score > best[0]:
            best = (score, -order, inv)
    return best[2] if best else None


_SHELLS = ("bash", "sh", "zsh", "dash")


def _with_shell_strings(script: Script) -> list[Command]:
    """The script's commands, a `bash -c STRING` (run by srun, docker, ssh …) replaced by the commands of its
    string (bash(1): -c reads commands from the string), each at the script's line of its own words and with
    the environment the outer command had."""
    out: list[Command] = []
    for cmd in script.commands:
        words = list(cmd.words)
        if words and words[0].text == "eval":
            evaluated = _evaluated(script, cmd, words[1:])
            if evaluated is not None:
                out.extend(evaluated)
                continue
        at = next((c for c in (_dash_c(words, i) for i, w in enumerate(words[:-1])
                               if os.path.basename(w.text) in _SHELLS) if c is not None), None)
        inner = words[at + 1] if at is not None and at + 1 < len(words) else None
        body: str | None = inner.text if inner is not None and inner.known else None
        outer: Mapping[str, Word] | None = None
        if inner is not None and not inner.known and len(inner.text) > 1 and inner.text[0] == inner.text[-1] == '"':
            # a double-quoted string with a part only the run knows (`--node_rank $SLURM_PROCID`): the outer shell
            # expands it as it hands it over, so its text is read with the script's variables, the unknown part
            # staying unknown where it stands
            body, outer = inner.text[1:-1], script.variables
            ref = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", body)
            if ref and ref.group(1) in script.partial:
                # `bash -c "$CMD"` where CMD="…" holds a part only the run knows: the string is CMD's text as the
                # outer shell expands it, read the same way (its other parts known, its commands bash -c's own)
                body = script.partial[ref.group(1)]
        if inner is None or body is None:
            out.append(cmd)
            continue
        shift = inner.line - 1
        # `srun [options] bash -c "…"`: srun runs the shell once a task, so the string's command runs under that
        # srun (srun(1)); its words stay in front of the command they launch
        shell = next(i for i, w in enumerate(words) if os.path.basename(w.text) in _SHELLS)
        lead = tuple(words[:shell]) if words and os.path.basename(words[0].text) == "srun" else ()
        for sub in read_script(body, script.path, outer).commands:
            out.append(replace(sub, line=sub.line + shift, env={**cmd.env, **sub.env},
                               words=lead + tuple(replace(w, line=w.line + shift) for w in sub.words)))
    return out


def _evaluated(script: Script, cmd: Command, args: list[Word]) -> list[Command] | None:
    """`eval ARG …` (bash(1) SHELL BUILTIN COMMANDS: the arguments are joined with spaces and the result is read and
    run as a command, in this shell): `CMD="deepspeed … train.py --x 1"; eval $CMD`. Arguments all known: their
    text read as a script; with a part only the run knows, the words as the outer shell split them (the same
    command when they hold no quotes or operators for the second reading to act on)."""
    if args and args[0].text == "--":
        args = args[1:]
    if not args:
        return None
    if all(w.known for w in args):
        body = " ".join(w.text for w in args)
        return [replace(sub, line=cmd.line, env={**cmd.env, **sub.env},
                        words=tuple(replace(w, line=cmd.line) for w in sub.words))
                for sub in read_script(body, script.path, script.variables).commands]
    if any(w.known and any(c in w.text for c in "'\"|;&<>") for w in args):
        return None
    return [replace(cmd, words=tuple(args))]


def _dash_c(words: Sequence[Word], shell: int) -> int | None:
    """The index of the `-c` a shell at `shell` is given after its other options (bash(1): `bash [options] -c
    string`; `-o NAME` takes a word), or None."""
    i = shell + 1
    while i < len(words) and words[i].text[:1] in ("-", "+"):
        if words[i].text == "-c":
            return i
        i += 2 if words[i].text in ("-o", "+o", "-O", "+O") else 1
    return None


def _invocation(cmd: Command) -> Invocation | None:
    env = dict(cmd.env)
    words = _unwrap_launchers(list(cmd.words), env)
    if words and not words[0].known and _named_program(words[0].text):
        # `"${conda_env}/bin/python3"`, `$VENV/bin/torchrun`: only the folder is the run's; bash runs the program
        # its last path component names, which is written out (the word's literal tail).
        words = [replace(words[0], text=_named_program(words[0].text) or "", unknown=None)] + words[1:]
    if not words or not words[0].known:
        return None
    if len(words[0].text) > 1 and words[0].text.startswith("!"):
        # A notebook cell pasted as a script: IPython runs `!cmd` in a shell (IPython docs, "System shell access").
        words = [replace(words[0], text=words[0].text[1:])] + words[1:]
    head = os.path.basename(words[0].text)
    rest = words[1:]
    if head.endswith(".py") and head != ".py":
        # A Python script run as the command itself (`swift/cli/sft.py --model …`): bash executes it through its
        # `#!` line (execve(2)), one process, as `python script.py` would.
        return _target(cmd, words, _python(words[0], env))
    launched = _launched(cmd, head, words[0], rest, env)
    if launched is not None:
        return launched
    for entry in ENTRIES:
        for words_ in entry.commands:
            if head == words_[0] and len(rest) >= len(words_) - 1 and \
                    all(rest[i].text == w for i, w in enumerate(words_[1:])):
                args = tuple(rest[len(words_) - 1:])
                return Invocation(cmd, entry, words[0], *_cli_launch(entry, words[0], args, env))
    if head == "tune":
        # torchtune before `tune run` (0.0.x, its `tune` script): `tune [torchrun options] <recipe> --config <c>
        # [--override k=v …]`, the recipe the first word that is no option and no subcommand of today's CLI.
        _, after = _split_options(list(rest))
        if after and after[0].known and after[0].text not in _TUNE_SUBCOMMANDS and \
                (after[0].text.endswith(".py") or "finetune" in after[0].text):
            entry = next(e for e in ENTRIES if e.name == "torchtune")
            args = tuple(w for w in rest if w.text != "--override")
            return Invocation(cmd, entry, words[0], *_cli_launch(entry, words[0], args, env))
    return None


_PROGRAM_TAIL = re.compile(r"/([A-Za-z0-9_.+-]+)[\"']?$")


def _named_program(text: str) -> str | None:
    """The program a word whose folder is a variable names (`"${env}/bin/python3"` -> python3): its last path
    component when that is written out and is a launcher or an interpreter oomdoctor knows."""
    m = _PROGRAM_TAIL.search(text)
    if m is None or "$" in m.group(1):
        return None
    name = m.group(1)
    return name if name.startswith(_PYTHON) or name in ("torchrun", "deepspeed", "accelerate") else None


# torchtune's CLI subcommands (torchtune/_cli/tune.py): a `tune <word>` that is none of them is the old recipe form.
_TUNE_SUBCOMMANDS = frozenset({"run", "download", "ls", "cp", "validate", "cat"})


def _unwrap_launchers(words: list[Word], env: dict[str, Word]) -> list[Word]:
    """The words after wrappers and `env VAR=x` (whose variables join `env`) before the real command."""
    while words:
        head = os.path.basename(words[0].text)
        if head in _WRAPPERS:
            words = words[1:]
            while words and words[0].text.startswith("-"):
                words = words[1:]
        elif head == "uv" and len(words) > 1 and words[1].text == "run":
            # `uv run [OPTIONS] COMMAND`: uv runs the command in the project's environment (uv docs, `uv run`)
            words = words[2:]
            while words and words[0].text.startswith("-"):
                words = words[2:] if words[0].text in _UV_VALUED and "=" not in words[0].text else words[1:]
        elif head == "env":
            words = words[1:]
            while words and ("=" in words[0].text and not words[0].text.startswith("-")):
                name, _, value = words[0].text.partition("=")
                env[name] = Word(value, words[0].line, words[0].unknown)
                words = words[1:]
        elif head == "srun":
            tasks = _srun_tasks(words[1:], env)
            if tasks is not None:
                env["SLURM_STEP_NUM_TASKS"] = tasks
            words = _skip_options(words[1:])
        elif head in ("mpirun", "sudo"):
            words = _skip_options(words[1:])
        elif head == "ray" and [w.text for w in words[1:3]] == ["job", "submit"] and \
                any(w.text == "--" for w in words):
            # `ray job submit [options] -- <entrypoint>` runs the entrypoint on the cluster (Ray Jobs CLI).
            words = words[next(i for i, w in enumerate(words) if w.text == "--") + 1:]
        else:
            break
    return words


def _launched(cmd: Command, head: str, first: Word, rest: list[Word], env: dict[str, Word]) -> Invocation | None:
    """A script or module run by torchrun, deepspeed, accelerate launch or python."""
    if head in ("torchrun",) or (head.startswith(_PYTHON) and _module_of(rest) in _TORCHRUN_MODULES):
        if head != "torchrun":
            rest = rest[(_module_index(rest) or 0) + 2:]      # `-m torch.distributed.run`: found above
        opts, rest = _split_options(rest)
        return _target(cmd, rest, _torchrun(opts, env))
    if head == "deepspeed":
        opts, rest = _split_options(rest)
        launch = _deepspeed(opts, env)
        if any(o.text == "--module" for o in opts):
            return _module_target(cmd, rest, launch)
        return _target(cmd, rest, launch)
    if head == "accelerate" and rest and rest[0].text == "launch":
        opts, rest = _split_options(rest[1:])
        return _target(cmd, rest, _accelerate(opts, env))
    if head.startswith(_PYTHON):
        opts, rest = _split_options(rest, python=True)
        mod = next((i for i, o in enumerate(opts) if o.text == "-m"), None)
        launch = _python(first, env)
        if mod is not None and mod + 1 < len(opts):
            return _module_target(cmd, [opts[mod + 1]] + rest, launch)
        if rest and os.path.basename(rest[0].text) == "gaudi_spawn.py":
            return _gaudi_spawn(cmd, rest[1:])
        return _target(cmd, rest, launch)
    return None


# optimum-habana's launcher (huggingface/optimum-habana examples/gaudi_spawn.py:42-74 at 1d8504c6c): its options, then
# the training script and that script's arguments (argparse REMAINDER); it starts --world_size processes (default 1).
_GAUDI_SPAWN_VALUED = ("--world_size", "--hostfile", "--master_port", "--main_process_ip")


def _gaudi_spawn(cmd: Command, words: list[Word]) -> Invocation | None:
    i = 0
    while i < len(words) and words[i].text.startswith("--"):
        i += 2 if words[i].text in _GAUDI_SPAWN_VALUED else 1
    size = _opt(words[:i], "--world_size")
    n = _int_word(size) if size is not None else 1
    launch = Launch("gaudi_spawn.py", n, size, "--world_size" if size is not None else None,
                    note=None if n is not None or size is None else
                    msg("config.script.gpus_unknown", word=size.text, why=size.unknown or size.text))
    return _target(cmd, words[i:], launch)


def _srun_tasks(opts: Sequence[Word], env: Mapping[str, Word]) -> Word | None:
    """How many tasks `srun` starts (srun(1)): its -n/--ntasks, else --ntasks-per-node times -N/--nodes, each
    taken from the job's SLURM_NTASKS / SLURM_NTASKS_PER_NODE / SLURM_NNODES where srun is not given it. None when
    nothing says (srun then starts one task per node)."""
    opts = _split_options(opts)[0]
    given = _opt(opts, "-n", "--ntasks") or env.get("SLURM_NTASKS")
    if _int_word(given) is not None:
        return given
    per_node = _int_word(_opt(opts, "--ntasks-per-node") or env.get("SLURM_NTASKS_PER_NODE"))
    if per_node is None:
        return None
    nodes = _int_word(_opt(opts, "-N", "--nodes") or env.get("SLURM_NNODES")) or 1
    return Word(str(per_node * nodes), (_opt(opts, "--ntasks-per-node") or Word("", 0)).line)


def _python(head: Word, env: Mapping[str, Word]) -> Launch:
    """One process. The HF Trainer in one process spreads a batch over every visible GPU
    (DataParallel: each holds the whole model), so several visible GPUs count. Under `srun`, one process a task:
    srun starts the command once for each of its tasks (srun(1); Megatron's and Megatron-Bridge's scripts take
    their rank and world size from SLURM_PROCID / SLURM_NTASKS)."""
    tasks = _env_int(env, "SLURM_STEP_NUM_TASKS")
    if tasks is not None and tasks[0] > 1:
        return Launch("srun", tasks[0], tasks[1], "srun --ntasks")
    visible = _visible(env)
    if visible is not None and visible[0] > 1:
        return Launch("python", visible[0], visible[1], "CUDA_VISIBLE_DEVICES",
                      note=msg("config.script.data_parallel", n=visible[0]))
    return Launch("python", 1, head, "python")


def _cli_launch(entry: Entry, head: Word, args: tuple[Word, ...], env: Mapping[str, Word]
                ) -> tuple[tuple[Word, ...], Launch]:
    if entry.reader == "litgpt":
        # Lightning launches its own processes (--devices × --num_nodes): the CLI is one command either way.
        return args, Launch(head.text, None, head, head.text)
    if entry.name == "torchtune":
        opts, rest = _split_options(list(args))
        launch = _torchrun(opts, env, default=1)
        return tuple(rest[1:]), replace(launch, name="tune run")
    n = _env_int(env, "NPROC_PER_NODE")
    if n is not None:
        nodes = (_env_int(env, "NNODES") or (1, None))[0]
        return args, Launch(head.text, n[0] * nodes, n[1], "NPROC_PER_NODE")
    for name in ("NPROC_PER_NODE", "NNODES"):
        w = env.get(name)
        if w is not None:
            # set to what only the run knows ($NPROC): torchrun is still used, with a count the script does not
            # name (ms-swift swift/cli/main.py use_torchrun: either variable set at all means torchrun)
            return args, Launch(head.text, None, w, name,
                                note=msg("config.script.gpus_unknown", word=w.text, why=w.unknown or w.text))
    if entry.name == "swift":
        # neither set: ms-swift runs one python process (swift/cli/main.py use_torchrun, cli_main)
        return args, Launch(head.text, 1, head, head.text)
    visible = _visible(env)
    if visible is not None:
        return args, Launch(head.text, visible[0], visible[1], "CUDA_VISIBLE_DEVICES")
    return args, Launch(head.text, None, head, note=msg("config.script.gpus_all", launcher=head.text))


def _target(cmd: Command, rest: Sequence[Word], launch: Launch) -> Invocation | None:
    if not rest:
        return None
    target = rest[0]
    if target.text == "-m" and len(rest) > 1:
        return _module_target(cmd, list(rest[1:]), launch)
    args = tuple(rest[1:])
    # flag names as flags_doc keys them: argparse takes `--micro-batch-size` for micro_batch_size
    flags = {w.text[2:].split("=")[0].replace("-", "_") for w in args if w.text.startswith("--")}
    path = target.text.replace("\\", "/")
    configs = [w for w in _positional(args) if w.text.lower().endswith((".yaml", ".yml", ".json"))]
    for entry in ENTRIES:
        if any(_script_matches(path, s) for s in entry.scripts):
            # A common name (train.py) is this entry's only with its flags, or the config file it takes.
            needs = {n.replace("-", "_") for n in entry.needs_flags}
            if needs and not flags & needs and not (entry.config_positional and configs):
                continue
            return Invocation(cmd, entry, target, args, launch)
    return Invocation(cmd, _by_overrides(args), target, args, launch)


def _script_matches(path: str, pattern: str) -> bool:
    """`path` is the entry's script: the same path or its end; `dir/*.py` is any Python file in that folder,
    `dir/**/*.py` any below it."""
    if pattern.endswith("/**/*.py"):
        folder = "/" + os.path.dirname(path) + "/"
        return path.endswith(".py") and ("/" + pattern[:-8] + "/") in folder
    if pattern.endswith("/*.py"):
        folder = os.path.dirname(path)
        return path.endswith(".py") and (folder == pattern[:-5] or folder.endswith("/" + pattern[:-5]))
    return path == pattern or path.endswith("/" + pattern)


def _positional(args: Sequence[Word]) -> list[Word]:
    """Words that are neither flags nor a flag's value."""
    out = []
    after_flag = False
    for w in args:
        if w.text.startswith("-"):
            after_flag = "=" not in w.text
            continue
        if not after_flag:
            out.append(w)
        after_flag = False
    return out


def _module_target(cmd: Command, rest: Sequence[Word], launch: Launch) -> Invocation | None:
    if not rest:
        return None
    module = rest[0].text
    args = tuple(rest[1:])
    for entry in ENTRIES:
        if any(module == m or module.startswith(m + ".") for m in entry.modules):
            if entry.commands and args and args[0].text == entry.commands[0][-1]:
                args = args[1:]       # `python -m llamafactory.cli train x.yaml`
            return Invocation(cmd, entry, rest[0], args, launch)
    return Invocation(cmd, _by_overrides(args), rest[0], args, launch)


# Megatron-Core's own argument names in the dashed spelling its parser declares (megatron/training/arguments.py
# _add_training_args / _add_distributed_args at d98e8a64: `--micro-batch-size`, `--tensor-model-parallel-size`, ...).
# Trainers built on Megatron-LM (LLaVA-OneVision's AIAK train.py, Pai-Megatron-Patch) parse their command line with
# that parser, extended through initialize_megatron(extra_args_provider=...), so two of these mean its arguments.
_MEGATRON_CORE_DASHED = ("--micro-batch-size", "--global-batch-size", "--tensor-model-parallel-size",
                         "--pipeline-model-parallel-size", "--seq-length", "--use-distributed-optimizer",
                         "--recompute-granularity", "--expert-model-parallel-size", "--context-parallel-size")


def _by_overrides(args: Sequence[Word]) -> Entry:
    """A main of no known name whose `key=value` words set verl's config groups (a recipe's main_dapo.py, a fork's
    copy of main_ppo.py: Hydra over verl's config) is verl's; one given Megatron-Core's dashed arguments parses them
    with Megatron-LM's parser; any other is a script oomdoctor does not know."""
    if any(w.text.lstrip("+").startswith(_VERL_GROUPS) and "=" in w.text for w in args):
        return next(e for e in ENTRIES if e.name == "verl_ppo")
    if len({w.text.split("=")[0] for w in args} & set(_MEGATRON_CORE_DASHED)) >= 2:
        return next(e for e in ENTRIES if e.name == "megatron_lm")
    return GENERIC


def _module_of(words: Sequence[Word]) -> str | None:
    i = _module_index(words)
    return words[i + 1].text if i is not None and i + 1 < len(words) else None


def _module_index(words: Sequence[Word]) -> int | None:
    for i, w in enumerate(words):
        if w.text == "-m":
            return i
        if not w.text.startswith("-"):
            return None
    return None


def _split_options(words: Sequence[Word], python: bool = False) -> tuple[list[Word], list[Word]]:
    """(launcher options with their values, the rest from the script on)."""
    opts: list[Word] = []
    i = 0
    while i < len(words):
        w = words[i]
        if not python and _options_variable(words, i):
            # `torchrun $DISTRIBUTED_ARGS train.py`: an unquoted variable the script never sets, before the
            # script, splits into the launcher's own options (torchrun, deepspeed and accelerate take the first
            # word that is no option as the program: torch/distributed/run.py get_args_parser
            # training_script); their values stay unknown.
            opts.append(w)
            i += 1
            continue
        if not w.text.startswith("-") or w.text == "-":
            break
        opts.append(w)
        if python:
            if w.text == "-m":
                opts.append(words[i + 1]) if i + 1 < len(words) else None
                return opts, list(words[i + 2:])
            if w.text in ("-W", "-X", "-c"):
                if i + 1 < len(words):
                    opts.append(words[i + 1])
                i += 2
                continue
            i += 1
            continue
        if w.text == "-m":
            return opts[:-1], list(words[i:])
        if "=" not in w.text and w.text not in _BOOL_OPTS and i + 1 < len(words) and \
                not words[i + 1].text.startswith("-"):
            opts.append(words[i + 1])
            i += 2
            continue
        i += 1
    return opts, list(words[i:])


def _options_variable(words: Sequence[Word], i: int) -> bool:
    """words[i] is an expansion only the run knows (`$ARGS`) and a program follows it (a `.py` path, `-m`)."""
    w = words[i]
    if w.known or not w.text.startswith("$") or i + 1 >= len(words):
        return False
    after = words[i + 1]
    return after.known and (after.text == "-m" or after.text.endswith(".py"))


def _skip_options(words: Sequence[Word]) -> list[Word]:
    opts, rest = _split_options(words)
    return rest


def _opt(opts: Sequence[Word], *names: str) -> Word | None:
    """The value word of a launcher option written `--name value` or `--name=value`."""
    for i, w in enumerate(opts):
        for name in names:
            if w.text == name and i + 1 < len(opts):
                return opts[i + 1]
            if w.text.startswith(name + "="):
                return Word(w.text.split("=", 1)[1], w.line, w.unknown)
    return None


def _int_word(w: Word | None) -> int | None:
    if w is None or not w.known:
        return None
    text = w.text.strip()
    return int(text) if text.isdigit() and 0 < int(text) < 1 << 20 else None


def _env_int(env: Mapping[str, Word], name: str) -> tuple[int, Word] | None:
    w = env.get(name)
    n = _int_word(w)
    return (n, w) if n is not None and w is not None else None


def _visible(env: Mapping[str, Word]) -> tuple[int, Word] | None:
    """GPUs CUDA_VISIBLE_DEVICES (or ASCEND_RT_VISIBLE_DEVICES) leaves visible."""
    for name in ("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        w = env.get(name)
        if w is not None and w.known:
            ids = [x for x in w.text.split(",") if x.strip()]
            if ids:
                return len(ids), w
    return None


def _torchrun(opts: Sequence[Word], env: Mapping[str, Word], default: int = 1) -> Launch:
    per = _opt(opts, "--nproc_per_node", "--nproc-per-node")
    nodes_w = _opt(opts, "--nnodes")
    nodes = 1
    if nodes_w is not None and nodes_w.known:
        text = nodes_w.text.split(":")[-1]          # elastic "1:2": the most nodes it may run on
        nodes = int(text) if text.isdigit() and int(text) > 0 else 1
    elif nodes_w is not None:
        return Launch("torchrun", None, nodes_w, "--nnodes",
                      note=msg("config.script.gpus_unknown", word=nodes_w.text, why=nodes_w.unknown))
    hidden = next((o for o in opts if not o.known and o.text.startswith("$")), None)
    if per is None and hidden is not None:
        # the process count may be among the options only the run knows
        return Launch("torchrun", None, hidden, "--nproc_per_node",
                      note=msg("config.script.gpus_unknown", word=hidden.text, why=hidden.unknown))
    if per is None:
        return Launch("torchrun", default * nodes, None, None)
    if not per.known:
        visible = _visible(env)
        if visible is not None:
            # A count computed at run time from the GPU list the script exports: that list's length.
            return Launch("torchrun", visible[0] * nodes, visible[1], "CUDA_VISIBLE_DEVICES")
        return Launch("torchrun", None, per, "--nproc_per_node",
                      note=msg("config.script.gpus_unknown", word=per.text, why=per.unknown))
    n = _int_word(per)
    if n is None and per.text in ("gpu", "auto"):
        visible = _visible(env)
        if visible is not None:
            return Launch("torchrun", visible[0] * nodes, visible[1], "CUDA_VISIBLE_DEVICES")
        return Launch("torchrun", None, per, "--nproc_per_node", note=msg("config.script.gpus_all", launcher="torchrun"))
    if n is None:
        return Launch("torchrun", None, per, "--nproc_per_node",
                      note=msg("config.script.gpus_unknown", word=per.text, why=per.text))
    return Launch("torchrun", n * nodes, per, "--nproc_per_node")


# DeepSpeed's runner parses with argparse, which takes a unique prefix of a long option (allow_abbrev, on by
# default: deepspeed/launcher/runner.py parse_args): `--num_node 3` is --num_nodes.
_DS_NODES = ("--num_nodes", "--num_node", "--num_nod", "--num_no", "--num_n")


def _deepspeed(opts: Sequence[Word], env: Mapping[str, Word]) -> Launch:
    nodes = _int_word(_opt(opts, *_DS_NODES)) or 1
    include = _opt(opts, "--include", "-i")
    if include is not None:
        if not include.known:
            return Launch("deepspeed", None, include, "--include",
                          note=msg("config.script.gpus_unknown", word=include.text, why=include.unknown))
        # "localhost:1,0" or "worker-0:0,1@worker-1:0,1": GPUs per host listed after the colon.
        count = 0
        for host in include.text.split("@"):
            _, _, ids = host.partition(":")
            count += len([x for x in ids.split(",") if x.strip()]) if ids else 0
        if count:
            return Launch("deepspeed", count, include, "--include")
    num = _opt(opts, "--num_gpus", "--num-gpus")
    if num is not None:
        n = _int_word(num)
        if n is None:
            return Launch("deepspeed", None, num, "--num_gpus",
                          note=msg("config.script.gpus_unknown", word=num.text, why=num.unknown or num.text))
        return Launch("deepspeed", n * nodes, num, "--num_gpus")
    visible = _visible(env)
    if visible is not None:
        # DeepSpeed's runner turns CUDA_VISIBLE_DEVICES into --include localhost:ids when no flag says otherwise.
        return Launch("deepspeed", visible[0] * nodes, visible[1], "CUDA_VISIBLE_DEVICES")
    return Launch("deepspeed", None, None, note=msg("config.script.gpus_all", launcher="deepspeed"))


def _accelerate(opts: Sequence[Word], env: Mapping[str, Word]) -> Launch:
    config = _opt(opts, "--config_file", "--config-file")
    num = _opt(opts, "--num_processes", "--num-processes")
    if num is not None:
        n = _int_word(num)
        if n is not None:
            return Launch("accelerate", n, num, "--num_processes", accelerate_config=config)
        visible = _visible(env)
        if visible is not None:
            # `--num_processes $(… | wc -w)` counting CUDA_VISIBLE_DEVICES: the visible GPUs are the answer.
            return Launch("accelerate", visible[0], visible[1], "CUDA_VISIBLE_DEVICES", accelerate_config=config)
        return Launch("accelerate", None, num, "--num_processes", accelerate_config=config,
                      note=msg("config.script.gpus_unknown", word=num.text, why=num.unknown or num.text))
    ids = _opt(opts, "--gpu_ids", "--gpu-ids")
    if ids is not None and ids.known and ids.text != "all":
        return Launch("accelerate", len([x for x in ids.text.split(",") if x.strip()]), ids, "--gpu_ids",
                      accelerate_config=config)
    if config is not None:
        return Launch("accelerate", None, None, None, accelerate_config=config)
    visible = _visible(env)
    if visible is not None:
        return Launch("accelerate", visible[0], visible[1], "CUDA_VISIBLE_DEVICES")
    return Launch("accelerate", None, None, note=msg("config.script.gpus_all", launcher="accelerate launch"))


# ---------------------------------------------------------------- reading the entry point's flags

def flags_doc(path: str, args: Sequence[Word], tolerant: bool, entry_flags: Mapping[str, str] | None = None,
              written: Mapping[str, str] | None = None) -> tuple[Doc, list[Word], dict[str, tuple[Word, Word]]]:
    """The `--key value` flags as a Doc (unknown values left out, each a note), the positional words,
    and `key=value` words (overrides) by key. `written`: the files the script writes itself by the text of their
    names (`Script.heredocs`); a value only the run knows that names one of them is that file."""
    data: dict[str, Any] = {}
    lines: dict[str, int] = {}
    positional: list[Word] = []
    overrides: dict[str, tuple[Word, Word]] = {}
    notes: list[Msg] = []
    i = 0
    while i < len(args):
        w = args[i]
        text = w.text
        if text.startswith("--") and len(text) > 2 and (w.known or _flag_with_unknown_value(text)):
            key, eq, value = text[2:].partition("=")
            key = key.replace("-", "_") if "_" in key or "-" in key else key
            values: list[Word] = []
            if eq:
                values = [Word(value, w.line, None if w.known or value in (written or {}) else w.unknown)]
            else:
                j = i + 1
                while j < len(args) and not args[j].text.startswith("--"):
                    if "=" in args[j].text and not args[j].text.startswith(("-", "/", ".")) and \
                            args[j].text.split("=")[0].replace(".", "").replace("_", "").isalnum() and values:
                        break
                    values.append(args[j])
                    j += 1
                i = j - 1
            lines[key] = w.line
            values = [Word(v.text, v.line) if not v.known and v.text in (written or {}) else v for v in values]
            unknown = next((v for v in values if not v.known), None)
            if unknown is not None:
                notes.append(msg("config.script.unresolved", where=f"{path}:{unknown.line}", flag=key,
                                 word=unknown.text, why=unknown.unknown))
                if key in MODEL_FLAGS or (entry_flags or {}).get(key) == "model":
                    data.setdefault("__unknown_model__", key)
                    data.setdefault("__unknown_model_word__", unknown.text)
            elif not values:
                data[key] = "true"
            elif len(values) == 1:
                data[key] = values[0].text
            else:
                data[key] = [v.text for v in values]
        elif "=" in text and not text.startswith("-") and w.known:
            key, _, value = text.partition("=")
            overrides[key] = (w, Word(value, w.line))
        else:
            positional.append(w)
        i += 1
    doc = Doc(path, data, lines, "cli", tolerant=tolerant, notes=notes)
    return doc, positional, overrides


def _flag_with_unknown_value(text: str) -> bool:
    """`--key=VALUE` whose key is written out and only its value is the run's (`--deepspeed_config=$CFG`): a flag,
    its value unknown, not a positional word."""
    key, eq, _ = text[2:].partition("=")
    return bool(eq) and bool(key) and "$" not in key and "`" not in key


def read_script_setup(path: str, text: str, *, framework_version: str | None = None,
                      log_versions: Mapping[str, str] | None = None, model: str | None = None) -> TrainingSetup:
    """A shell script's training run as a TrainingSetup (its flags, or the config file it trains with); a terminal
    paste (its prompts blanked, or its flags without their command) is shown, not patched."""
    setup, mend = _read_script_setup(path, text, framework_version=framework_version, log_versions=log_versions,
                                     model=model)
    if mend is not None:
        how = "terminal" if mend.code == "config.script.prompt" else "flags"
        setup = replace(setup, extras={**setup.extras, "markdown_paste": how})
    elif any(getattr(w, "code", "") == "config.ds_pasted" for w in setup.warnings):
        setup = replace(setup, extras={**setup.extras, "markdown_paste": "pasted json"})    # a thread's paste
    return setup


def _read_script_setup(path: str, text: str, *, framework_version: str | None = None,
                       log_versions: Mapping[str, str] | None = None, model: str | None = None
                       ) -> tuple[TrainingSetup, Msg | None]:
    """A shell script's training run as a TrainingSetup (its flags, or the config file it trains with).

    A model flag whose value is only known when the script runs (`--model_name_or_path $MODEL`, MODEL unset)
    takes `model` (the user's --model) when given, else stays as written: the report then says what the
    estimate needs instead of stopping."""
    script, inv, rejoined, dialect, mend = _find_invocation(path, text)
    entry = inv.entry
    doc, positional, overrides = flags_doc(path, inv.args, tolerant=True, entry_flags=entry.flags,
                                           written=script.heredocs)
    doc.inline.update(script.heredocs)
    if entry.prints_hparams:
        _printed_over(path, text, inv, entry, doc)
    _pasted_deepspeed(path, text, inv, doc)
    for name, count, line in script.loops:
        doc.notes.append(msg("config.script.loop", where=f"{path}:{line}", name=name, count=count))
    if rejoined is not None and rejoined[1]:
        doc.notes.append(msg("config.script.rejoined", where=f"{path}:{rejoined[1]}"))
    if mend is not None:
        doc.notes.append(mend)
    if dialect is not None:
        doc.notes.append(msg("config.script.windows", where=path, shell=dialect))
    if entry.reader == "verl":
        setup = _read_verl(path, inv, doc, positional, overrides, model, versions={
            "framework_version": framework_version, "log_versions": log_versions})
        return _with_launch(setup, inv, path), mend
    pasted: Doc | None = None
    try:
        config = _config_file(path, entry, doc, positional)
    except InputError:
        pasted = _pasted_config(path, text, inv, entry, doc, positional)
        if pasted is None and (entry.reader != "torchtune" or not overrides):
            raise
        if pasted is None:
            setup = _read_overrides_alone(path, inv, doc, overrides, versions={
                "framework_version": framework_version, "log_versions": log_versions})
            return _with_launch(setup, inv, path), mend
        config = path
    hint = (entry.version_hint[0], msg("config.version.entry", version=entry.version_hint[0],
                                       entry=entry.version_hint[1])) if entry.version_hint else None
    versions = {"framework_version": framework_version, "log_versions": log_versions}
    if config is not None:
        setup = _read_with_config(path, config, script, inv, doc, positional, overrides, hint, versions, pasted)
    else:
        model_key = _positional_model_key(entry)
        if model_key and model_key not in doc.data and entry.model_positional is not None and \
                len(positional) > entry.model_positional and positional[entry.model_positional].known:
            # The model as the command's positional word (`litgpt finetune_lora microsoft/phi-2`).
            word = positional[entry.model_positional]
            doc.data[model_key], doc.lines[model_key] = word.text, word.line
        if entry.overrides and entry.flags:
            # `section.key=value` overrides its own flag table names (Megatron-Bridge's ConfigContainer fields):
            # read as its flags, a trailing override over the convenience flag for the same field
            for key, (word, value) in overrides.items():
                if key in entry.flags:
                    doc.data[key], doc.lines[key] = value.text, word.line
        setup = _read_from_flags(path, inv, doc, model, hint, versions)
    return _with_swift_env(_with_launch(setup, inv, path), inv, path), mend


def _printed_over(path: str, text: str, inv: Invocation, entry: Entry, doc: Doc) -> None:
    """The hyperparameters the script printed below its command in the paste, laid over its flags: the values the
    run had (its own constants, edited or not), each at the line it was printed on."""
    from oomdoctor.configs.printed import printed_mapping

    last = max((w.line for w in inv.command.words if w.line), default=0)
    printed = printed_mapping(text, last + 1)
    table = entry.flags or {}
    if printed is None or not any(k in table for k in printed[0]):
        return
    rows = text.split("\n")
    for key, value in printed[0].items():
        if key in table and isinstance(value, (int, float, str)) and not isinstance(value, bool):
            doc.data[key] = str(value)
            doc.lines[key] = next((n + 1 for n in range(printed[1] - 1, len(rows)) if f"'{key}'" in rows[n]),
                                  printed[1])
    doc.notes.append(msg("config.printed", where=f"{path}:{printed[1]}"))


def _pasted_config(path: str, text: str, inv: Invocation, entry: Entry, doc: Doc,
                   positional: Sequence[Word]) -> Doc | None:
    """A paste that shows, below the command, the YAML config the command names (not here), after a line that
    names it (`llama3_lora_sft.yaml:`) or right below: that text is the file, cut or not, read where the paste has
    it (the lines above blanked). None when the paste holds no mapping there."""
    from oomdoctor.configs._doc import parse_text

    ref = str(doc.data.get(entry.config_flag or "", "")) if entry.config_flag else \
        next((w.text for w in positional if w.text.lower().endswith((".yaml", ".yml"))), "")
    if not ref.lower().endswith((".yaml", ".yml")):
        return None
    rows = text.split("\n")
    last = max((w.line for w in inv.command.words if w.line), default=0)
    title = re.compile(r"^[\s>*`#]*" + re.escape(os.path.basename(ref)) + r"[`*]*\s*:?[`*]*\s*$")
    start = next((n + 1 for n in range(last, len(rows)) if title.match(rows[n])), last)
    body = "\n" * start + "\n".join(rows[start:])
    try:
        cdoc = parse_text(body, path)
    except InputError:
        return None
    if not isinstance(cdoc.data, dict) or len(cdoc.data) < 3:
        return None
    cdoc.notes.append(msg("config.config_pasted", where=f"{path}:{start + 1}", ref=ref))
    return cdoc


def _pasted_deepspeed(path: str, text: str, inv: Invocation, doc: Doc) -> None:
    """A paste that shows, below the command, the DeepSpeed JSON the command names (not here): that JSON is the
    file, cut or not, as a script's own here-document would be."""
    import json

    from oomdoctor.configs.deepspeed import detect as deepspeed_json
    from oomdoctor.configs.printed import printed_mapping

    refs = [v for v in doc.data.values() if isinstance(v, str) and v.lower().endswith(".json") and v not in doc.inline
            and not os.path.isfile(v)]
    if not refs:
        return
    last = max((w.line for w in inv.command.words if w.line), default=0)
    printed = printed_mapping(text, last + 1)
    if printed is None or deepspeed_json(printed[0]) is None:
        return
    for ref in refs:
        doc.inline[ref] = json.dumps(printed[0])
        doc.notes.append(msg("config.ds_pasted", where=f"{path}:{printed[1]}", ref=ref))


def _read_overrides_alone(path: str, inv: Invocation, doc: Doc, overrides: dict[str, tuple[Word, Word]],
                          versions: dict[str, Any]) -> TrainingSetup:
    """A `tune run` whose config is not here (a name of torchtune's own configs, a copy left behind): the
    command's `key=value` overrides (OmegaConf dotted keys) read as the recipe file they override, torchtune's
    defaults for the rest, said in a note."""
    from oomdoctor.configs import registry

    data: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key, (word, value) in overrides.items():
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value.text
        lines[key] = word.line
    ref = doc.data.get(inv.entry.config_flag or "", "")
    cdoc = Doc(path, data, lines, "cli", tolerant=True,
               notes=[*doc.notes, msg("config.script.config_overrides_only", where=f"{path}:{inv.command.line}",
                                      config=str(ref))])
    name, why = registry.detect(data)
    if name != "torchtune":
        raise InputError(msg("config.script.config_missing", config=str(ref), entry=inv.entry.label), path,
                         inv.command.line)
    reason = msg("config.why.script", entry=inv.entry.label, line=inv.command.line)
    return registry.read_doc(cdoc, name, reason, **versions)


# verl's config groups: a recipe's own main (recipe/dapo/main_dapo.py, ...) over verl's PPO config is verl's run.
_VERL_GROUPS = ("actor_rollout_ref.",)
_VERL_MODEL_KEYS = ("actor_rollout_ref.model.path", "model.partial_pretrain", "model.path")
# The configs verl ships (verl/trainer/config/): a --config-name of one of them, not here, is verl's own defaults.
_VERL_OWN_CONFIGS = ("ppo_trainer", "ppo_megatron_trainer", "sft_trainer", "sft_trainer_engine", "_generated_ppo_trainer",
                     "_generated_ppo_megatron_trainer")


def _read_verl(path: str, inv: Invocation, doc: Doc, positional: list[Word], overrides: dict[str, tuple[Word, Word]],
               model: str | None, versions: dict[str, Any]) -> TrainingSetup:
    """A verl main: the Hydra config it names (`--config-path D --config-name N`, Hydra's own flags) when here,
    else verl's shipped config, with the command's `key=value` overrides laid over it (Hydra's `+key` appends a
    key, `++key` forces it: both set it)."""
    from oomdoctor.configs import registry
    from oomdoctor.configs._doc import parse_file

    if inv.entry.name == "easyr1":
        return _read_easyr1(path, inv, doc, overrides, model, versions)
    name = str(doc.data.get("config_name") or doc.data.get("cn") or "")
    folder = str(doc.data.get("config_path") or doc.data.get("cp") or "")
    base: Doc | None = None
    stem = name[:-5] if name.endswith(".yaml") else name[:-4] if name.endswith(".yml") else name
    if name and stem not in _VERL_OWN_CONFIGS:
        ref = os.path.join(folder, name if name.endswith((".yaml", ".yml")) else name + ".yaml")
        found = _near(path, ref) or _near(path, os.path.basename(ref))
        if found is not None:
            base = parse_file(found)
        else:
            doc.notes.append(msg("config.verl_overrides_only", where=f"{path}:{inv.command.line}", config=ref))
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key, (word, value) in overrides.items():
        if key.startswith("~"):
            continue
        values[key.lstrip("+")] = value.text
        lines[key.lstrip("+")] = word.line
    unresolved = None
    for w in positional:
        name, eq, said = w.text.partition("=")
        if eq and not w.known and name.lstrip("+") in _VERL_MODEL_KEYS:
            doc.notes.append(msg("config.script.model_unknown", where=f"{path}:{w.line}", flag=name.lstrip("+")))
            if model:
                values[name.lstrip("+")] = model
            else:
                unresolved = said
    if base is not None:
        cdoc = overlay(base, values, lines, path)
        cdoc.notes.extend(doc.notes)
    else:
        cdoc = Doc(path, values, lines, "cli", tolerant=True, notes=list(doc.notes))
        if stem in _VERL_OWN_CONFIGS:
            cdoc.data["__verl_config__"] = stem     # verl's own config: its defaults (the Megatron one's strategy)
    reason = msg("config.why.script", entry=inv.target.text if inv.target is not None else inv.entry.label,
                 line=inv.command.line)
    setup = registry.read_doc(cdoc, "verl", reason, **versions, entry=inv.entry)
    setup = replace(setup, config_file=path, extras={**setup.extras, "entry": inv.entry.name, "hydra_overrides": True})
    if unresolved is not None and not setup.model:
        setup = replace(setup, model_unresolved=unresolved)
    return setup


def _read_easyr1(path: str, inv: Invocation, doc: Doc, overrides: dict[str, tuple[Word, Word]], model: str | None,
                 versions: dict[str, Any]) -> TrainingSetup:
    """EasyR1's `verl.trainer.main config=FILE key=value …`: the YAML `config=` names (found beside the script or
    above it), the overrides laid over it, both under verl's names (configs/easyr1.py), read by the verl reader."""
    from oomdoctor.configs import easyr1, registry
    from oomdoctor.configs._doc import overlay, parse_file

    cdoc = Doc(path, {}, {}, "cli", tolerant=True, notes=list(doc.notes))
    ref = overrides.get("config")
    found = _near(path, ref[1].text) if ref is not None else None
    if found is not None:
        base = parse_file(found)
        flat = easyr1.flatten(base.data)
        values = easyr1.translated(flat)
        lines = {easyr1.KEYS[k]: base.lines[k] for k in flat if k in easyr1.KEYS and k in base.lines}
        cdoc = overlay(cdoc, values, lines, found)
    elif ref is not None:
        cdoc.notes.append(msg("config.verl_overrides_only", where=f"{path}:{inv.command.line}", config=ref[1].text))
    given = {k: v.text for k, (_, v) in overrides.items()}
    if model and easyr1.MODEL_KEY not in given:
        given[easyr1.MODEL_KEY] = model
    values = easyr1.translated(given)
    lines = {easyr1.KEYS[k]: w.line for k, (w, _) in overrides.items() if k in easyr1.KEYS}
    cdoc = overlay(cdoc, values, lines, path)
    reason = msg("config.why.script", entry=inv.target.text if inv.target is not None else inv.entry.label,
                 line=inv.command.line)
    setup = registry.read_doc(cdoc, "verl", reason, **versions, entry=inv.entry)
    return replace(setup, config_file=path, extras={**setup.extras, "entry": inv.entry.name, "hydra_overrides": True})


def _positional_model_key(entry: Entry) -> str | None:
    from oomdoctor.configs import registry

    if entry.reader not in registry.FRAMEWORKS:
        return None
    return getattr(registry.module(entry.reader), "MODEL_KEY", None)


def _find_invocation(path: str, text: str
                     ) -> tuple[Script, Invocation, tuple[str, int] | None, str | None, Msg | None]:
    """(the script, its training command, the rejoined text and its first line when the paste lost its line
    continuations (line 0: its prompts were blanked), the Windows shell it was read as, the note that says how a
    paste was mended: its prompts blanked, its command supplied); an InputError naming what was found instead
    when there is no training command."""
    from oomdoctor.configs.shell import from_windows, windows_dialect

    script = read_script(text, path)
    inv = find_training(script)
    rejoined = None
    mend = None
    dialect = windows_dialect(path, text)
    if dialect is not None:
        # A Windows shell's script (by its name, or by two lines or more that continue as only that shell does):
        # its own continuation and escape characters, read in bash's grammar.
        text = from_windows(text, dialect)
        script = read_script(text, path)
        inv = find_training(script)
    else:
        dialect = None
    if inv is None or (not inv.args and _flag_lines_after(text, inv)):
        # No training command, or one with no flag of its own whose flags the paste put on the lines below it with
        # no continuation (`megatron sft` alone, then `--model …`, which bash would run as a command): read as
        # continued. A command that has its flags keeps them: a stray flag line below it is not joined to it.
        rejoined = _rejoin_flag_lines(text)
        if rejoined is not None:
            joined = find_training(read_script(rejoined[0], path))
            if joined is not None and (inv is None or len(joined.args) > len(inv.args)):
                inv, script = joined, read_script(rejoined[0], path)
            elif inv is not None:
                rejoined = None
    if inv is None:
        unprompted = strip_prompts(rejoined[0] if rejoined is not None else text)
        if unprompted is not None:
            again = read_script(unprompted, path)
            inv = find_training(again)
            if inv is not None:
                line = next(i for i, (a, b) in enumerate(zip(unprompted.split("\n"), text.split("\n")), 1) if a != b)
                mend = msg("config.script.prompt", where=f"{path}:{line}")
                script, rejoined = again, (unprompted, rejoined[1] if rejoined is not None else 0)
    if inv is None:
        # flags alone, one a line with their continuations lost too: the rejoined text is the one to head
        headed = _headless(rejoined[0] if rejoined is not None else text)
        if headed is not None:
            again = read_script(headed[0], path)
            inv = find_training(again)
            if inv is not None:
                script = again
                mend = msg("config.script.headless", where=path, command=headed[1])
    if inv is None:
        megatron = _megatron_command(script)
        if megatron is not None:
            raise InputError(msg("config.script.swift_megatron", command=megatron[0]), path, megatron[1])
        raise InputError(msg("config.script.no_command"), path)
    return script, inv, rejoined, dialect, mend


def _read_with_config(path: str, config: str, script: Script, inv: Invocation, doc: Doc, positional: list[Word],
                      overrides: dict[str, tuple[Word, Word]], hint: tuple[str, Msg] | None,
                      versions: dict[str, Any], pasted: Doc | None = None) -> TrainingSetup:
    """The config file the command trains with (or the paste's copy of it), its flags laid over it."""
    from oomdoctor.configs import registry
    from oomdoctor.configs._doc import parse_file

    entry = inv.entry
    cdoc = pasted if pasted is not None else parse_file(config)
    if registry.is_llamafactory_v1(cdoc.data):
        from oomdoctor.configs.llamafactory_v1 import read as read_v1

        return _stage_of_command(read_v1(cdoc, **versions), inv, path)
    name, why = registry.detect(cdoc.data)
    if name is None:
        raise registry.unknown_config(config)
    extra = {k: v for k, v in doc.data.items() if not k.startswith("__") and k != entry.config_flag}
    values = dict(extra)
    lines = {k: doc.lines[k] for k in extra if k in doc.lines}
    for key, (word, value) in overrides.items():
        if entry.overrides:
            values[key] = value.text
            lines[key] = word.line
    model_word = positional[entry.model_positional] if entry.model_positional is not None and \
        len(positional) > entry.model_positional else None
    model_key = getattr(registry.module(name), "MODEL_KEY", None)
    if model_word is not None and model_word.known and model_key:
        # The model is the script's argument (ChatGLM3 finetune_hf.py DATA MODEL CONFIG), not the YAML's.
        values[model_key] = model_word.text
        lines[model_key] = model_word.line
    if values:
        cdoc = overlay(cdoc, values, lines, path)
    cdoc.notes.extend(doc.notes)
    cdoc.inline.update(script.heredocs)
    reason = msg("config.why.script_config", entry=entry.label, line=inv.command.line, config=config, why=why)
    setup = registry.read_doc(cdoc, name, reason, **versions, entry=entry if name in ("hf", "firefly", "litgpt") else None,
                              hint=hint)
    return _stage_of_command(_stage_of_script(setup, inv, path), inv, path)


def _read_from_flags(path: str, inv: Invocation, doc: Doc, model: str | None, hint: tuple[str, Msg] | None,
                     versions: dict[str, Any]) -> TrainingSetup:
    """The command's own flags, read by its entry point's reader."""
    from oomdoctor.configs import registry

    entry = inv.entry
    label = entry.label if entry is not GENERIC or inv.target is None else inv.target.text
    reason = msg("config.why.script", entry=label, line=inv.command.line)
    unresolved = None
    if "__unknown_model__" in doc.data:
        key = doc.data.pop("__unknown_model__")
        word = doc.data.pop("__unknown_model_word__", "")
        doc.notes.append(msg("config.script.model_unknown", where=f"{path}:{doc.lines.get(key, inv.command.line)}",
                             flag=key))
        doc.data[key] = model or word       # read on; a word only the running script knows is blanked below
        unresolved = None if model else word
    name = entry.reader
    if entry is GENERIC:
        name, _ = _generic_reader(doc)
        doc.tolerant = True
    if name not in registry.FRAMEWORKS:
        raise InputError(msg("config.script.no_command"), path)
    setup = registry.read_doc(doc, name, reason, **versions, entry=entry if name in ("hf", "firefly", "litgpt") else None,
                              hint=hint)
    setup = replace(setup, config_file=path, extras={**setup.extras, "entry": entry.name})
    if unresolved is not None:
        setup = replace(setup, model="", model_unresolved=unresolved)
    if entry is GENERIC:
        setup = _method_of_script_name(setup, inv, path)
    return _stage_of_command(_stage_of_script(setup, inv, path), inv, path)


def _method_of_script_name(setup: TrainingSetup, inv: Invocation, path: str) -> TrainingSetup:
    """A script oomdoctor does not know whose own name says it trains LoRA adapters (FastChat's train_lora.py and
    the scripts copied from it: train_long_seq_lora.py), and whose flags name no method: LoRA, said in a note."""
    src = setup.sources.get("method")
    if inv.target is None or not inv.target.known or (src is not None and src.file) or setup.method != "full":
        return setup
    words = re.split(r"[_.-]", os.path.basename(inv.target.text.replace("\\", "/")).lower().removesuffix(".py"))
    if "lora" not in words:
        return setup
    where = Source(file=path, key=inv.target.text, line=inv.command.line)
    note = msg("config.script.lora_by_name", where=f"{path}:{inv.command.line}", script=inv.target.text)
    return replace(setup, method="lora", sources={**setup.sources, "method": where},
                   warnings=(*setup.warnings, note))


# The prompt a terminal prints before what was typed, pasted with the command: a bare `$ `, `% `, `❯ `, `➜ ` (sh, zsh,
# starship, oh-my-zsh), bash's `user@host:~/dir$ ` (PS1 `\u@\h:\w\$`), zsh's `user@host dir % ` (PROMPT `%n@%m %1~ %#`),
# either after conda's or a virtualenv's `(env) `, or PowerShell's `PS C:\dir> `. No command starts with such words.
_SHELL_PROMPT = re.compile(r"(?:\([^()\s]+\)\s+)?(?:[\w.-]+@[\w.-]+(?::[^\s$%#>]*)?(?:\s+[\w~./-]+)?\s*[$%#>]"
                           r"|[$%\u276f\u279c]|PS [^>\n]*>)[ \t]+(?=\S)")


def strip_prompts(text: str) -> str | None:
    """The text with the shell prompt before each typed command blanked (its columns kept), or None when no line
    opens with one. Tried only when no training command is found as written."""
    lines = text.split("\n")
    found = typing = False
    for i, line in enumerate(lines):
        m = _SHELL_PROMPT.match(line.lstrip())
        if m is not None:
            indent = len(line) - len(line.lstrip())
            lines[i] = " " * (indent + m.end()) + line.lstrip()[m.end():]
            found = typing = True
        elif typing and line.startswith("> "):
            # bash's secondary prompt (PS2, `> ` by default) before each line of a command typed over several
            lines[i] = "  " + line[2:]
        typing = typing and lines[i].rstrip().endswith("\\")
    return "\n".join(lines) if found else None


_FLAG_NAME = re.compile(r"(?:^|\s)--([A-Za-z][\w.-]*)")


def _headless(text: str) -> tuple[str, str] | None:
    """A paste that starts at the flags, the command that took them left out (`  --pretrain … \\` and on): the
    command of the one entry point some of these flags belong to alone (its `needs_flags`, the flags a common
    script name is known by), the one whose own flag table knows the most of them, written before the first
    flag (its line kept). (the text, the command), or None when the text opens with no flag or the flags do not
    single out one entry point."""
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), None)
    if first is None or not lines[first].lstrip().startswith("--"):
        return None
    names = set(_FLAG_NAME.findall(text))
    scored = []
    for entry in ENTRIES:
        own = set(entry.needs_flags) | set(entry.own_flags)
        if not own or not names & own or not (entry.modules or entry.scripts):
            continue
        scored.append((len(names & set(entry.flags or {})), entry))
    scored.sort(key=lambda se: -se[0])
    if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
        return None
    entry = scored[0][1]
    head = f"python -m {entry.modules[0]}" if entry.modules else f"python {entry.scripts[0]}"
    lines[first] = f"{head} {lines[first].lstrip()}"
    return "\n".join(lines), head


def _flag_lines_after(text: str, inv: Invocation) -> bool:
    """The line right after the training command's last word opens with a flag."""
    last = max((w.line for w in inv.command.words if w.line), default=0)
    lines = text.split("\n")
    nxt = lines[last].lstrip() if 0 < last < len(lines) else ""
    return nxt.startswith("--")


def _rejoin_flag_lines(text: str) -> tuple[str, int] | None:
    """A paste that lost its line continuations (`torchrun` on one line, each `--flag value` on its own):
    bash would run every line as a command of its own, so no training command is found. Read instead as if
    each line that opens with a flag continued the line above (a ` \\` added there, so every line keeps its
    number). A backslash with blanks after it ends its line for bash (`\\ ` quotes the blank), so there the
    blanks are dropped and the backslash continues the line, as the paste meant. (the text, the first line
    continued), or None when no line opens with a flag after a command."""
    lines = text.split("\n")
    first = None
    for i in range(1, len(lines)):
        here, above = lines[i].lstrip(), lines[i - 1].rstrip()
        if not (here.startswith("--") or (here.startswith("-") and here[1:2].isalpha())):
            continue
        if not above or above.lstrip().startswith("#") or lines[i - 1].endswith("\\"):
            continue
        lines[i - 1] = above if above.endswith("\\") else above + " \\"
        first = first or i
        if not above.lstrip().startswith("-"):
            _rejoin_env_lines(lines, i - 1, text)
    return ("\n".join(lines), first) if first else None


_LONE_ASSIGNMENT = re.compile(r"^\s*([A-Za-z_]\w*)=\S*\s*$")


def _rejoin_env_lines(lines: list[str], head: int, text: str) -> None:
    """The `NAME=value` lines right above a command whose continuations the page dropped lost theirs too: with
    them the assignments were the command's environment (bash: assignments before the command name are
    exported to it, "Simple Command Expansion"), as launchers read NPROC_PER_NODE or CUDA_VISIBLE_DEVICES.
    A name the paste expands (`$NAME`) was a shell variable meant for later words and keeps its own line."""
    j = head - 1
    while j >= 0:
        m = _LONE_ASSIGNMENT.match(lines[j])
        if m is None or lines[j].rstrip().endswith("\\"):
            return
        if re.search(r"\$\{?" + m.group(1) + r"\b", text):
            return
        lines[j] = lines[j].rstrip() + " \\"
        j -= 1


def _stage_of_command(setup: TrainingSetup, inv: Invocation, path: str) -> TrainingSetup:
    """The stage a CLI's subcommand names (`swift pt`, `trl dpo`; `python -m torch.distributed.run
    swift/cli/pt.py`), where no flag of the command line said one."""
    from oomdoctor.configs.trainer_args import stage_word

    src = setup.sources.get("stage")
    if src is not None and src.file:
        return setup
    words = [w for w in inv.command.words if w.known]
    word = None
    if inv.target is not None and inv.target.known and inv.target.text.endswith(".py"):
        word = os.path.basename(inv.target.text)[:-3]
    else:
        for i, w in enumerate(words[:-1]):
            if any(w.text == c[0] and len(c) > 1 for c in inv.entry.commands):
                word = words[i + 1].text
                break
    stage = stage_word(word or "")
    if stage is None or stage == setup.stage or word in ("sft",):
        return setup
    return replace(setup, stage=stage, sources={**setup.sources, "stage": Source(file=path, key=word,
                                                                                 line=inv.command.line)})


# TRL recipe scripts whose trainer the config file does not name (alignment-handbook scripts/run_orpo.py,
# open-r1 grpo.py): the stage the script trains, over a guess from the config's keys.
_SCRIPT_STAGES = (("orpo", "orpo"), ("simpo", "simpo"), ("cpo", "orpo"), ("kto", "kto"), ("dpo", "dpo"), ("reward", "rm"),
                  ("grpo", "sft"), ("sft", "sft"))


def _stage_of_script(setup: TrainingSetup, inv: Invocation, path: str) -> TrainingSetup:
    if not inv.entry.trl or inv.target is None or not inv.target.known:
        return setup
    src = setup.sources.get("stage")
    if src is not None and src.file and src.key == "stage":
        return setup
    name = os.path.basename(inv.target.text.replace("\\", "/")).lower()
    words = name.removesuffix(".py").split("_")
    stage = next((st for word, st in _SCRIPT_STAGES if word in words), None)
    if stage is None or stage == setup.stage:
        return setup
    return replace(setup, stage=stage, sources={**setup.sources, "stage": Source(file=path, key=inv.target.text,
                                                                                 line=inv.command.line)})


_MEGATRON_TASKS = ("sft", "pt", "rlhf")


def _megatron_command(script: Script) -> tuple[str, int] | None:
    """(the words, the line) of an ms-swift Megatron run (`swift megatron sft`, `megatron sft|pt|rlhf`):
    a training command oomdoctor does not read, said as such rather than as no command at all."""
    for cmd in script.commands:
        words = [w for w in cmd.words if w.known]
        for i, w in enumerate(words[:-1]):
            head, nxt = os.path.basename(w.text), words[i + 1].text
            if (head == "swift" and nxt == "megatron") or (head == "megatron" and nxt in _MEGATRON_TASKS):
                return " ".join(x.text for x in words[i:i + (3 if head == "swift" else 2)]), w.line
    return None


def _generic_reader(doc: Doc) -> tuple[str, Msg | None]:
    """An unknown script whose flags are plainly LLaMA-Factory's or TRL's is read as theirs."""
    from oomdoctor.configs import registry

    lf = ("stage", "finetuning_type", "template", "cutoff_len", "lora_target", "quantization_bit")
    # cutoff_len alone is no hallmark: tloen/alpaca-lora finetune.py and its forks (Alpaca-CoT uniform_finetune.py
    # `--cutoff_len`, default 512) use the same flag, with --lora_r where LLaMA-Factory says --lora_rank.
    hallmarks = [k for k in lf if k in doc.data]
    if hallmarks and hallmarks != ["cutoff_len"] and doc.data.get("model_name_or_path"):
        return "llamafactory", registry.module("llamafactory").detect(doc.data)
    return "hf", None


def _config_file(path: str, entry: Entry, doc: Doc, positional: Sequence[Word]) -> str | None:
    """The config file the entry point trains with, resolved beside the script, the current directory
    or their parents; an error naming the script's line when it is not here."""
    ref: Word | None = None
    if entry.config_flag and entry.config_flag in doc.data:
        ref = Word(str(doc.data[entry.config_flag]), doc.lines.get(entry.config_flag, 0))
    elif entry.config_positional:
        ref = next((w for w in positional if w.text.lower().endswith((".yaml", ".yml", ".json"))), None)
    if ref is None:
        return None
    if not ref.known:
        raise InputError(msg("config.script.config_unknown", word=ref.text, why=ref.unknown), path, ref.line)
    base = os.path.dirname(os.path.abspath(path))
    candidates = [ref.text] if os.path.isabs(ref.text) else \
        [os.path.join(base, ref.text), ref.text] + [os.path.join(p, ref.text) for p in _parents(base)]
    for c in candidates:
        if os.path.isfile(c):
            rel = os.path.relpath(c)
            return rel if not rel.startswith("../../..") else os.path.abspath(c)
    raise InputError(msg("config.script.config_missing", config=ref.text, entry=entry.label), path, ref.line)


def _parents(base: str) -> list[str]:
    out = []
    cur = base
    for _ in range(4):
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        out.append(parent)
        cur = parent
    return out


def with_usage_launch(setup: TrainingSetup, path: str, usage: str) -> TrainingSetup:
    """A Python script's own usage line (its module docstring: TRL's examples/scripts/*.py `accelerate launch
    --config_file … examples/scripts/x.py`): the first command there that runs a `.py` under accelerate launch,
    torchrun or deepspeed is how the file is run, so its launcher's processes and accelerate config are laid over
    what the file's calls said, where the file said no GPU count itself."""
    if setup.sources.get("n_gpus") is not None and setup.sources["n_gpus"].file is not None:
        return setup
    try:
        script = read_script(usage, path)
    except InputError:
        return setup
    for cmd in script.commands:
        env = dict(cmd.env)
        words = _unwrap_launchers(list(cmd.words), env)
        head = os.path.basename(words[0].text) if words else ""
        if head == "accelerate" and len(words) > 1 and words[1].text == "launch":
            opts, rest = _split_options(words[2:])
            launch = _accelerate(opts, env)
        elif head in ("torchrun", "deepspeed"):
            opts, rest = _split_options(words[1:])
            launch = _torchrun(opts, env) if head == "torchrun" else _deepspeed(opts, env)
        else:
            continue
        if rest and rest[0].text.endswith(".py"):
            from oomdoctor.configs.entries import GENERIC

            return _with_launch(setup, Invocation(cmd, GENERIC, rest[0], tuple(rest[1:]), launch), path)
    return setup


def _with_launch(setup: TrainingSetup, inv: Invocation, path: str) -> TrainingSetup:
    """The launcher's GPU count (and an accelerate config it names) laid over what the files said."""
    launch = inv.launch
    notes = list(setup.warnings)
    sources = dict(setup.sources)
    values: dict[str, Any] = {}
    acc_word = launch.accelerate_config
    if acc_word is None and setup.extras.get("accelerate_config"):
        # `accelerate_config: path` in a TRL command or config file (trl/cli/accelerate_config.py)
        acc_word = Word(str(setup.extras["accelerate_config"]), inv.command.line)
    if acc_word is not None and acc_word.known:
        acc = _accelerate_setup(path, acc_word)
        if acc is None and _near(path, acc_word.text) is None:
            acc = _accelerate_guess(setup, path, acc_word)
        if acc is not None:
            from oomdoctor.configs.merge import combine

            setup = combine(setup, acc)
            sources = dict(setup.sources)
            notes = list(setup.warnings)
    own = launch.name == "python" and bool(setup.extras.get("own_workers"))
    if launch.n_gpus is not None and not own:
        # (One python process that places its own GPU workers, Ray's, keeps the count its flags give.)
        values["n_gpus"] = launch.n_gpus
        line = launch.source.line if launch.source is not None else inv.command.line
        sources["n_gpus"] = Source(file=path, key=launch.key or launch.name, line=line)
        if launch.note is not None:
            notes.append(msg("config.script.gpus_said", where=f"{path}:{line}", why=launch.note))
    elif launch.note is not None and sources.get("n_gpus", Source()).file is None:
        notes.append(msg("config.script.gpus_note", where=f"{path}:{inv.command.line}", why=launch.note))
    total = setup.total_batch
    n = values.get("n_gpus", setup.n_gpus)
    if total and n > 1 and setup.micro_batch:
        # A total batch is split over the processes as well (Alpaca-LoRA divides accumulation by the world size);
        # Megatron's global batch over the data-parallel ranks only (megatron/core/num_microbatches_calculator.py:
        # global_batch_size // (micro_batch_size * data_parallel_size) micro-batches a step).
        dp = replace(setup, n_gpus=n).data_parallel
        values["grad_accum"] = max(1, total // setup.micro_batch // dp)
    extras = {**setup.extras, "launcher_cmd": launch.name}
    return replace(setup, sources=sources, extras=extras, warnings=tuple(dict.fromkeys(notes)), **values)


def _with_swift_env(setup: TrainingSetup, inv: Invocation, path: str) -> TrainingSetup:
    """ms-swift's environment switches, and the flags its own trainer reads, that change what a step holds."""
    if inv.entry.name != "swift":
        return setup
    scale = _opt(inv.args, "--loss_scale")
    if scale is not None and scale.known:
        # weighted loss scales make ms-swift compute the loss itself (memory/loss.py swift_own_loss)
        setup = replace(setup, extras={**setup.extras, "loss_scale": scale.text})
    # with sequence parallelism ms-swift takes the labels away from the model whether or not Liger is on
    # (swift/trainers/seq2seq_trainer.py compute_loss), so its own sequence-parallel loss runs
    if setup.seq_parallel <= 1 or setup.loss_kernel not in ("", "liger"):
        return setup
    celoss = _env_int(inv.command.env, "CELOSS_PARALLEL_SIZE")
    if celoss is None:
        return setup
    # Sequence-parallel loss with CELOSS_PARALLEL_SIZE > 0 runs ChunkedCrossEntropyLoss (ms-swift
    # swift/trainers/utils.py per_token_loss_func_sp; swift/sequence_parallel/utils.py:65): the compute-dtype
    # logits are saved once and cross-entropy runs chunk by chunk, with no fp32 copy of the whole logits.
    line = celoss[1].line or inv.command.line
    sources = {**setup.sources, "loss_kernel": Source(file=path, key="CELOSS_PARALLEL_SIZE", line=line)}
    return replace(setup, loss_kernel="chunked", sources=sources)


def _near(path: str, ref: str) -> str | None:
    """The file a script names, looked for beside it, in the working directory and above the script."""
    base = os.path.dirname(os.path.abspath(path))
    for c in (os.path.join(base, ref), ref) + tuple(os.path.join(p, ref) for p in _parents(base)):
        if os.path.isfile(c):
            return c
    return None


def _accelerate_setup(path: str, word: Word) -> TrainingSetup | None:
    from oomdoctor.configs import registry
    from oomdoctor.configs._doc import parse_file

    found = _near(path, word.text)
    if found is None:
        return None
    doc = parse_file(os.path.relpath(found))
    name, why = registry.detect(doc.data)
    return registry.read_doc(doc, name, why) if name == "accelerate" else None


# The accelerate configs TRL ships in examples/accelerate_configs/ (huggingface/trl@f2cd57710): each launches 8
# processes in bf16 (single_gpu.yaml one), with the ZeRO stage or FSDP its name says.
_TRL_SHIPPED_ACCELERATE: dict[str, dict[str, Any]] = {
    "deepspeed_zero1": {"zero_stage": 1}, "deepspeed_zero2": {"zero_stage": 2}, "deepspeed_zero3": {"zero_stage": 3},
    "fsdp1": {"fsdp": "full_shard"}, "fsdp2": {"fsdp": "full_shard"}, "multi_gpu": {}, "single_gpu": {"n_gpus": 1},
}


def _trl_shipped_accelerate(setup: TrainingSetup, path: str, word: Word) -> TrainingSetup | None:
    """`--config_file examples/accelerate_configs/deepspeed_zero3.yaml` run from a TRL checkout, the file not here:
    the config TRL ships under that name, said in a note; None for any other path."""
    from oomdoctor.configs._doc import Builder

    folder, name = os.path.split(word.text.replace("\\", "/"))
    stem = name[:-5] if name.endswith(".yaml") else name
    if not folder.endswith("examples/accelerate_configs") or stem not in _TRL_SHIPPED_ACCELERATE:
        return None
    b = Builder("hf", setup.framework_version, "accelerate")
    src = Source(file=path, key="--config_file", line=word.line)
    for field_name, value in {"n_gpus": 8, "precision": "bf16", **_TRL_SHIPPED_ACCELERATE[stem]}.items():
        b.set(field_name, value, src)
    b.extras["launcher"] = "accelerate"
    b.note(msg("config.trl_accelerate_shipped", where=src.describe(), name=word.text))
    return b.build()


def _accelerate_guess(setup: TrainingSetup, path: str, word: Word) -> TrainingSetup | None:
    """An accelerate config the command names that is not here (recipes/accelerate_configs/zero3.yaml of TRL,
    alignment-handbook, open-r1): one TRL ships by that path, else the ZeRO stage its name says, as a DeepSpeed
    JSON's name is read, said to be a guess; None when the name says no stage."""
    from oomdoctor.configs._doc import Builder
    from oomdoctor.configs.deepspeed import _STAGE_IN_NAME, apply_guess

    shipped = _trl_shipped_accelerate(setup, path, word)
    if shipped is not None:
        return shipped
    if _STAGE_IN_NAME.search(os.path.basename(word.text)) is None:
        return None
    b = Builder("hf", setup.framework_version, "accelerate")
    apply_guess(b, word.text, Source(file=path, key="--config_file", line=word.line))
    b.extras["launcher"] = "accelerate"
    return b.build()
