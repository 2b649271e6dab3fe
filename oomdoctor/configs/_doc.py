"""Reading config files with the line of every value, and typed access that fails as `file:line: message`."""
from __future__ import annotations

import json
import re
from dataclasses import field
from typing import Any, Iterable

from oomdoctor.errors import InputError
from oomdoctor.facts import Source, TrainingSetup
from oomdoctor.records import record

MISSING = object()


def _yaml():
    import yaml

    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@record(frozen=False)
class Doc:
    """One parsed mapping file: values, and the 1-based line of each dotted key path."""

    path: str
    data: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    kind: str = "yaml"          # yaml | json | cli

    def has(self, key: str) -> bool:
        return self.get(key, MISSING) is not MISSING

    def get(self, key: str, default: Any = None) -> Any:
        node: Any = self.data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def src(self, key: str) -> Source:
        return Source(file=self.path, key=key, line=self.lines.get(key))

    def fail(self, key: str, message: str) -> InputError:
        return InputError(message, self.path, self.lines.get(key))

    # ---- typed getters: None when absent or null; InputError with file:line when the type is wrong

    def int_(self, key: str) -> int | None:
        v = self.get(key)
        if v is None or v == "":
            return None
        if isinstance(v, bool):
            raise self.fail(key, f"{key} must be an integer, got {v!r}")
        if isinstance(v, int):
            return v
        try:
            f = float(str(v).strip())
        except ValueError:
            raise self.fail(key, f"{key} must be an integer, got {v!r}") from None
        if f != int(f):
            raise self.fail(key, f"{key} must be an integer, got {v!r}")
        return int(f)

    def float_(self, key: str) -> float | None:
        v = self.get(key)
        if v is None or v == "":
            return None
        if isinstance(v, bool):
            raise self.fail(key, f"{key} must be a number, got {v!r}")
        try:
            return float(str(v).strip()) if not isinstance(v, (int, float)) else float(v)
        except ValueError:
            raise self.fail(key, f"{key} must be a number, got {v!r}") from None

    def bool_(self, key: str) -> bool | None:
        v = self.get(key)
        if v is None or v == "":
            return None
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in ("true", "yes", "1", "on"):
            return True
        if s in ("false", "no", "0", "off", "none"):
            return False
        raise self.fail(key, f"{key} must be true or false, got {v!r}")

    def str_(self, key: str) -> str | None:
        v = self.get(key)
        if v is None:
            return None
        if isinstance(v, (dict, list)):
            raise self.fail(key, f"{key} must be a single value, got a {type(v).__name__}")
        return str(v).strip()


def _walk_lines(node: Any, prefix: str, out: dict[str, int]) -> None:
    yaml, _ = _yaml()
    if not isinstance(node, yaml.MappingNode):
        return
    for knode, vnode in node.value:
        if not isinstance(knode, yaml.ScalarNode):
            continue
        key = f"{prefix}{knode.value}"
        scalar = isinstance(vnode, yaml.ScalarNode)
        out.setdefault(key, (vnode if scalar else knode).start_mark.line + 1)
        _walk_lines(vnode, key + ".", out)


def parse_text(text: str, path: str) -> Doc:
    """Parse YAML or JSON text into a Doc; syntax errors become InputError with the line."""
    yaml, loader = _yaml()
    is_json = path.lower().endswith(".json") or text.lstrip().startswith("{")
    try:
        node = yaml.compose(text, Loader=loader)
        data = loader(text).construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as err:
        if is_json:
            return _parse_json(text, path)
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "syntax error"
        raise InputError(f"YAML syntax error: {problem}", path, mark.line + 1 if mark else None) from None
    except yaml.YAMLError as err:
        raise InputError(f"cannot parse: {err}", path) from None
    if is_json:
        # JSON numbers such as 1e9 are floats to JSON but strings to YAML 1.1: take values from json.
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(f"JSON syntax error: {err.msg}", path, err.lineno) from None
    lines: dict[str, int] = {}
    if node is not None:
        _walk_lines(node, "", lines)
    if data is None:
        raise InputError("the file is empty", path)
    if not isinstance(data, dict):
        raise InputError(f"expected a mapping of training keys, found a {type(data).__name__}", path)
    return Doc(path, data, lines, "json" if is_json else "yaml")


def _parse_json(text: str, path: str) -> Doc:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"JSON syntax error: {err.msg}", path, err.lineno) from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, found a {type(data).__name__}", path)
    lines: dict[str, int] = {}
    for m in re.finditer(r'"([^"\\]+)"\s*:', text):
        lines.setdefault(m.group(1), text.count("\n", 0, m.start()) + 1)
    return Doc(path, data, lines, "json")


def read_text(path: str, limit: int = 4 << 20) -> str:
    """A config's text; refuses binary files and files too large to be a config."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(limit + 1)
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a config file", path) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", path) from None
    if len(raw) > limit:
        raise InputError("too large to be a training config", path)
    if b"\0" in raw[:8192]:
        raise InputError("binary file, expected a YAML/JSON config", path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text (byte {err.start})", path) from None


# ---------------------------------------------------------------- command lines (shell scripts, logs)

_FLAG_RE = re.compile(r"(?<![\w-])--([A-Za-z_][\w.-]*)")


def parse_command_line(text: str, path: str) -> Doc | None:
    """Flags of the training command in a shell script: `--key value`, `--key=value`, bare `--flag` = true."""
    import shlex

    logical: list[tuple[int, str]] = []      # (first line, joined text) per command
    buf, start = "", 0
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.split(" #")[0] if not line.lstrip().startswith("#") else ""
        if not buf:
            start = no
        if stripped.rstrip().endswith("\\"):
            buf += stripped.rstrip()[:-1] + " "
            continue
        buf += stripped
        if buf.strip():
            logical.append((start, buf))
        buf = ""
    if buf.strip():
        logical.append((start, buf))
    best: tuple[int, dict[str, Any], str] | None = None
    for _line, cmd in logical:
        try:
            tokens = shlex.split(cmd, posix=True)
        except ValueError:
            tokens = cmd.split()
        flags: dict[str, Any] = {}
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok.startswith("--") and len(tok) > 2:
                key, eq, val = tok[2:].partition("=")
                if eq:
                    flags[key] = val
                elif i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                    flags[key] = tokens[i + 1]
                    i += 1
                else:
                    flags[key] = "true"
            i += 1
        score = sum(k in TRAINING_KEYS for k in flags)
        if score and (best is None or score > best[0]):
            best = (score, flags, cmd)
    if best is None:
        return None
    lines = {}
    for m in _FLAG_RE.finditer(text):
        lines.setdefault(m.group(1), text.count("\n", 0, m.start()) + 1)
    flags = best[1]
    # torchrun --nproc_per_node N: the world size of the run.
    return Doc(path, flags, {k: v for k, v in lines.items() if k in flags}, "cli")


# Keys that say "this mapping configures a training run" (any framework).
TRAINING_KEYS = frozenset("""
model_name_or_path base_model per_device_train_batch_size gradient_accumulation_steps learning_rate
finetuning_type cutoff_len stage lora_rank lora_target deepspeed micro_batch_size sequence_len adapter
num_train_epochs output_dir bf16 fp16 optim zero_optimization train_micro_batch_size_per_gpu train_batch_size
distributed_type fsdp_config deepspeed_config max_seq_length max_length dataset_name num_epochs
batch_size enable_activation_checkpointing max_steps_per_epoch gradient_checkpointing
""".split())


@record(frozen=False)
class Builder:
    """Collects canonical fields with their provenance, then builds the TrainingSetup."""

    framework: str
    version: str
    defaults_of: str
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def set(self, name: str, value: Any, source: Source) -> None:
        self.values[name] = value
        self.sources[name] = source

    def default(self, name: str, value: Any, note: str | None = None) -> None:
        """A value the framework fills in; its Source says whose default (and why, when it is derived)."""
        self.values[name] = value
        text = f"default of {self.defaults_of}" + (f" ({note})" if note else "")
        self.sources[name] = Source(default=text)

    def from_doc(self, name: str, doc: Doc, key: str, value: Any) -> bool:
        """Set `name` from `doc[key]` when the value is present (not None); True when it was set."""
        if value is None:
            return False
        self.set(name, value, doc.src(key))
        return True

    def keep(self, doc: Doc, keys: Iterable[str]) -> None:
        for k in keys:
            v = doc.get(k)
            if v is not None:
                self.extras[k] = v

    def build(self, **fixed: Any) -> TrainingSetup:
        values = {**self.values, **fixed}
        extras = dict(self.extras)
        sources = dict(self.sources)
        for name in _CANONICAL:
            if name not in sources and name not in fixed:
                sources[name] = Source(default=f"default of {self.defaults_of}")
        if self.warnings:
            extras["warnings"] = tuple(self.warnings)
        return TrainingSetup(framework=self.framework, framework_version=self.version, extras=extras,
                             sources=sources, defaults_of=self.defaults_of, **values)


_CANONICAL = tuple(n for n in TrainingSetup.__dataclass_fields__
                   if n not in ("framework", "framework_version", "config_file", "deepspeed_file", "extras",
                                "sources", "defaults_of", "model"))
