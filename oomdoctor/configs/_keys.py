"""Key tables: which key of a framework's file holds which setup field. One table per framework drives
both reading (the key's name, its older names, its range) and patching (the name to write, the key to
insert it after). Versions: key names and defaults that changed between releases, and how a file's own
keys imply the release it was written for.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Callable

from oomdoctor.facts import Msg, msg
from oomdoctor.lazyre import lazy_re
from oomdoctor.records import record

# Where a key lives: the training config itself, the DeepSpeed JSON it names, or a launcher config.
CONFIG, DEEPSPEED, LAUNCHER = "config", "deepspeed", "launcher"


@record
class Key:
    """One setup field in one framework's files."""

    field: str                          # TrainingSetup field
    name: str                           # dotted key path as the framework spells it today
    file: str = CONFIG
    after: str | None = None            # an absent key is inserted next to this one
    minimum: int | None = None          # integer fields: the smallest value the framework accepts
    maximum: int | None = None
    aliases: tuple[str, ...] = ()       # other names read for the same field (deprecated spellings)
    until: tuple[tuple[str, str], ...] = ()   # (last release, name then): names older releases used

    def name_for(self, version: str | None) -> str:
        """The name this key has in `version` (today's name when the version is unknown)."""
        if version:
            vt = version_tuple(version)
            for last, name in self.until:
                if vt <= version_tuple(last):
                    return name
        return self.name

    def names(self, version: str | None = None) -> tuple[str, ...]:
        first = self.name_for(version)
        rest = (self.name,) + tuple(n for _, n in self.until) + self.aliases
        return (first,) + tuple(dict.fromkeys(n for n in rest if n != first))


Table = Mapping[str, Key]


def table(*keys: Key) -> dict[str, Key]:
    return {k.field: k for k in keys}


def version_tuple(version: str) -> tuple[int, ...]:
    """"0.9.4" -> (0, 9, 4); "v0.6.3.post1" -> (0, 6, 3); "main" -> () (newer than any)."""
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def at_most(version: str, last: str) -> bool:
    vt = version_tuple(version)
    return bool(vt) and vt <= version_tuple(last)


def at_least(version: str, first: str) -> bool:
    vt = version_tuple(version)
    return not vt or vt >= version_tuple(first)


# ---------------------------------------------------------------- reading through a table

def found(doc: Any, key: Key, version: str | None = None) -> str | None:
    """The name under which `doc` holds `key` (today's, an older one, or an alias), or None."""
    for name in key.names(version):
        if doc.get(name) is not None:
            return name
    return None


def read_int(b: Any, doc: Any, key: Key, version: str | None = None) -> bool:
    """Set `key.field` from the doc when present (checked against the key's range); True when set."""
    name = found(doc, key, version)
    if name is None:
        return False
    return b.from_doc(key.field, doc, name, doc.int_(name, minimum=key.minimum, maximum=key.maximum))


def read_bool(b: Any, doc: Any, key: Key, version: str | None = None, invert: bool = False) -> bool:
    name = found(doc, key, version)
    if name is None:
        return False
    value = doc.bool_(name)
    return b.from_doc(key.field, doc, name, None if value is None else (not value if invert else value))


def read_peft_targets(b: Any, doc: Any, name: str) -> bool:
    """Set lora_targets from a PEFT `target_modules` list (or one name) at `name`; "all-linear" is "all"."""
    targets = doc.get(name)
    if not targets:
        return False
    names = (targets,) if isinstance(targets, str) else tuple(str(t) for t in targets)
    b.set("lora_targets", ("all",) if names in (("all-linear",), ("all",)) else names, doc.src(name))
    return True


# ---------------------------------------------------------------- versions

@record
class Marker:
    """A key (or a value of one) that only some releases of a framework know."""

    test: Callable[[Any], str | None]   # doc -> the evidence it found ("num_layer_trainable"), or None
    op: str                             # "<=" (the file is at most this release) or ">="
    version: str


# A pre-quantised checkpoint (GPTQ, AWQ, AQLM, bnb 4-bit) carries its quantization_config in its config.json, so
# transformers' from_pretrained loads it quantised whatever framework calls it (quantizers/auto.py): LoRA on it
# trains adapters over a quantised base. The name is what a config shows of it.
_PREQUANT = re.compile(r"(gptq|awq|aqlm|bnb-4bit|4bit|int4)", re.I)
# The bits per weight a quantised checkpoint's name states (`…-AQLM-2Bit-1x16`, `…-GPTQ-Int8`, `…-3bit`); 4 otherwise.
_NAME_BITS = lazy_re(r"(?:(?<![0-9a-z])([2348])[-_ ]?bits?(?![a-z])|(?<![a-z])int([2348])(?![0-9]))", re.I)


def prequantized(model: str) -> tuple[int, str] | None:
    """(bits per weight, quantisation method word) of a checkpoint whose name says it is quantised, else None."""
    found_ = _PREQUANT.search(model)
    if found_ is None:
        return None
    said = _NAME_BITS.search(model.rsplit("/", 1)[-1])
    return (int(said.group(1) or said.group(2)) if said else 4), found_.group(1).lower()


def has_key(*names: str) -> Callable[[Any], str | None]:
    def test(doc: Any) -> str | None:
        return next((n for n in names if doc.has(n)), None)
    return test


def value_is(name: str, pattern: str) -> Callable[[Any], str | None]:
    rx = re.compile(pattern, re.I)

    def test(doc: Any) -> str | None:
        value = doc.get(name)
        if value is None or isinstance(value, (dict, list)):
            return None
        return f"{name}: {value}" if rx.search(str(value)) else None
    return test


def choose_version(framework: str, default: str, markers: Sequence[Marker], doc: Any, *,
                   flag: str | None = None, log: str | None = None, log_name: str | None = None,
                   hint: tuple[str, Msg] | None = None) -> tuple[str, Msg]:
    """The release whose defaults apply, and why: --framework-version, then the log's banner, then
    what the file implies (its newest consistent release), then the default (the newest one known).

    `hint` is an implied version found outside the doc (a script's entry point) with its reason."""
    if flag:
        return flag.lstrip("v"), msg("config.version.flag", version=flag.lstrip("v"))
    if log:
        return log.lstrip("v"), msg("config.version.log", version=log.lstrip("v"), package=log_name or framework)
    upper: tuple[str, str] | None = None
    lower: tuple[str, str] | None = None
    for m in markers:
        evidence = m.test(doc)
        if evidence is None:
            continue
        if m.op == "<=" and (upper is None or version_tuple(m.version) < version_tuple(upper[0])):
            upper = (m.version, evidence)
        elif m.op == ">=" and (lower is None or version_tuple(m.version) > version_tuple(lower[0])):
            lower = (m.version, evidence)
    if hint is not None and upper is None:
        return hint
    if upper is not None:
        return upper[0], msg("config.version.implied_old", version=upper[0], evidence=upper[1])
    if lower is not None and version_tuple(lower[0]) > version_tuple(default):
        return lower[0], msg("config.version.implied_new", version=lower[0], evidence=lower[1])
    return default, msg("config.version.default", version=default)


VersionOf = Callable[..., "tuple[str, Msg]"]


def version_chooser(framework: str, default: str, package: str, markers: Sequence[Marker] = ()) -> VersionOf:
    """A reader module's `version(doc, flag, log, hint=None)`, which the registry calls with the flag and the version
    the log's banner gave for `package`: choose_version over the module's markers."""
    def version(doc: Any, flag: str | None, log: str | None, hint: tuple[str, Msg] | None = None) -> tuple[str, Msg]:
        return choose_version(framework, default, markers, doc, flag=flag, log=log, log_name=package, hint=hint)
    return version
