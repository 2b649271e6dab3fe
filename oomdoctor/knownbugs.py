"""Framework releases with a known memory bug: a crash under one of them may not be the config's doing.

Each entry names the package as the log's version banner names it, the releases affected (a half-open range),
the release that behaves again where the thread says so, and the public thread that shows it. What each bug
does is said in words/finding.py ("finding.bug.<id>").
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from oomdoctor.configs._keys import version_tuple
from oomdoctor.facts import msg
from oomdoctor.records import record


@record
class KnownBug:
    id: str
    package: str                        # as crash.versions names it: torch, transformers, deepspeed, peft, ...
    first: str                          # first release affected
    until: str                          # first release not affected (exclusive upper end)
    fixed: str | None                   # the release the thread names as good again
    source: str                         # the public thread

    @property
    def what(self):
        return msg("finding.bug." + self.id)


BUGS = (
    # Llama (SDPA, QLoRA 7B on a 24 GB card) uses markedly more memory with the same code under 4.38 and 4.39
    # than under 4.37.2.
    KnownBug("transformers_llama_438", "transformers", "4.38.0", "4.40.0", None,
             "https://github.com/huggingface/transformers/issues/30010"),
    # Gradient checkpointing under 4.36.0/4.36.1 did not apply to several model types; 4.36.2 restores it
    # (the memory the checkpointing should save is spent).
    KnownBug("transformers_gc_436", "transformers", "4.36.0", "4.36.2", "4.36.2",
             "https://github.com/huggingface/transformers/issues/28023"),
    # ZeRO-3 with gradient checkpointing under DeepSpeed 0.16.4 runs out of memory where 0.16.3 fit: the
    # recomputed forward is not counted in ds_grads_remaining, so gathered parameters are not released (the
    # thread names commit cd20a3b; axolotl pinned DeepSpeed back for it, axolotl-ai-cloud/axolotl#2465). Only the
    # release the thread names: no later release is confirmed good there.
    KnownBug("deepspeed_z3_gc_0164", "deepspeed", "0.16.4", "0.16.5", None,
             "https://github.com/deepspeedai/DeepSpeed/issues/7116"),
)


def matching(versions: Mapping[str, str]) -> Iterable[KnownBug]:
    for bug in BUGS:
        seen = versions.get(bug.package)
        if not seen:
            continue
        v = version_tuple(str(seen))
        if v and version_tuple(bug.first) <= v < version_tuple(bug.until):
            yield bug
