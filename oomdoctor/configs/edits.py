"""Canonical changes -> key edits of the user's own files, in each framework's key names.

Each framework's module patches through the same key table it reads with (configs/registry.py); this
module only dispatches and answers which key holds a field.
"""
from __future__ import annotations

from collections.abc import Sequence

from oomdoctor.configs._edit import Out
from oomdoctor.facts import Change, KeyEdit, TrainingSetup


def edits_for(setup: TrainingSetup, changes: Sequence[Change]) -> list[KeyEdit]:
    from oomdoctor.configs import registry

    if _shown_only(setup):
        # v1 keys are not v0's, a script is code, a paste is Markdown, a Hydra `key=value` override is no flag the
        # script edits know how to write: the plan's values are shown, nothing is patched
        return []
    out = Out(setup)
    final = {c.field: c.after for c in changes}
    mod = registry.module(registry.reader_of(setup))
    for c in changes:
        mod.edit(out, c, final)
    return out.finish()


def _shown_only(setup: TrainingSetup) -> bool:
    return any(setup.extras.get(k) for k in ("llamafactory_v1", "python_script", "markdown_paste", "hydra_overrides"))


def key_for(setup: TrainingSetup, field: str) -> tuple[str | None, str | None]:
    """(file, key) that holds setup field `field` for this setup's framework and release: where the
    config already says it, else where a patch would write it. (None, None) when no file of this
    framework can hold it (the field is then advice: a launcher flag, an environment variable)."""
    from oomdoctor.configs import registry
    from oomdoctor.configs._keys import DEEPSPEED, LAUNCHER
    from oomdoctor.configs.entries import by_name

    src = setup.sources.get(field)
    if src is not None and src.file and src.key:
        return src.file, src.key
    if _shown_only(setup):
        return None, None
    reader = registry.reader_of(setup)
    entry = by_name(setup.extras.get("entry"))
    if entry is not None and not entry.trl and setup.extras.get("reader") in ("hf", "firefly"):
        from oomdoctor.configs.trainer_args import KEYS as TRAINER_KEYS

        kind = {"seq_len": "seq", "lora_rank": "rank", "lora_alpha": "alpha"}.get(field)
        flag = entry.flag_for(kind) if kind and entry.flags is not None else None
        if flag:
            return setup.config_file, flag
        if field not in TRAINER_KEYS:
            return None, None       # a flag this script's parser may not take is never written
    key = getattr(registry.module(reader), "KEYS", {}).get(field)
    if key is None:
        return None, None
    if key.file == DEEPSPEED:
        return setup.deepspeed_file, key.name_for(setup.framework_version)
    if key.file == LAUNCHER and reader != "accelerate":
        return None, None
    return setup.config_file, key.name_for(setup.framework_version)
