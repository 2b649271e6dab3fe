"""--export, --write and --apply from the command line: one transaction over every file they write.

Order: build the patch; check every output path against every input and against the others, and every
file --apply would replace (read-only, hard-linked, foreign-owned, changed since read); ask for the
yes; then write the diff, the copies and the edits together (patch/txn.py): all of them or none.
Messages go to stderr in the user's language; only `--export -` writes to stdout (the diff).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import InputError
from ..facts import Report, msg
from ..shellsafe import command, quote
from .apply import apply_writes, check_outputs, copy_writes, diff_write
from .build import PatchSet, build_patch
from .shell import shell_snippet
from .txn import check_all, locked, write_all


def input_paths(report: Report, opts: Any) -> list[str]:
    """Every file this run read (or may read): no output may land on one of them."""
    paths: list[str] = [p for p in opts.files if p != "-"]
    setup = report.setup
    if setup is not None:
        paths += [p for p in (setup.config_file, setup.deepspeed_file) if p]
        paths += [s.file for s in setup.sources.values() if s.file]
    if report.crash is not None and getattr(report.crash, "file", None):
        paths.append(report.crash.file)
    if getattr(opts, "prices", None):
        paths.append(opts.prices)
    for where in getattr(opts, "rules_dirs", ()):
        if os.path.isdir(where):
            paths += [os.path.join(where, n) for n in sorted(os.listdir(where)) if n.endswith((".yaml", ".yml"))]
        else:
            paths.append(where)
    return paths


def _say(code: str, lang: str, **values: Any) -> str:
    from ..words import say

    return say(msg(code, **values), lang)


def _tell(code: str, lang: str, **values: Any) -> None:
    """One line on stderr, `oomdoctor: ...` in the user's language."""
    from ..words import say

    print(say("cli.error", lang, message=_say(code, lang, **values)), file=sys.stderr)


def _apply_hint(path: str, base: str, cwd: str) -> str:
    """The command that applies the exported diff: from the folder its names are relative to."""
    if os.path.abspath(base) == os.path.abspath(cwd):
        return command("git", "apply", path)
    return f"cd {quote(base)} && {command('git', 'apply', os.path.abspath(path))}"


def _writable(report: Report, patch: PatchSet, lang: str) -> PatchSet:
    """The patch --apply writes: on the bundled demo, to a copy of it in ./oomdoctor-demo/, never to the
    installed package (oomdoctor/demo.py)."""
    from .. import demo

    if not demo.is_installed_demo(report.edits):
        return patch
    folder = demo.copy_demo(os.getcwd())
    from ..words import say

    print(say("cli.demo_copy", lang, folder=str(folder)), file=sys.stderr)
    return build_patch(demo.relocate(report.edits, folder), cwd=str(folder))


def deliver(report: Report, opts: Any, *, export: str | None, write: str | None, apply: bool, yes: bool,
            lang: str = "en", inputs: Iterable[str] | None = None) -> None:
    from ..words import show

    snippet = shell_snippet(report.env, [show(note, lang) for note in report.notes], lang)
    if not report.edits and not snippet:
        _tell("write.nothing_to_export", lang)
        return
    cwd = opts.cwd or os.getcwd()
    to_file = export if export and export != "-" else None
    prefer = os.path.dirname(os.path.abspath(to_file)) if to_file else None
    patch = build_patch(report.edits, cwd=cwd, prefer=prefer)
    known = list(inputs) if inputs is not None else input_paths(report, opts)
    known += [fp.abs_path or fp.path for fp in patch.files]

    outputs, writes = [], []
    if to_file:
        outputs.append((to_file, msg("write.role_export")))
        writes.append(diff_write(to_file, patch.diff))
    if write:
        copies = copy_writes(patch, write)
        outputs += [(w.path, msg("write.role_copy", source=fp.path)) for w, fp in zip(copies, patch.files)]
        writes += copies
    check_outputs(outputs, known)
    edits, applied = [], patch
    already = False
    if apply and patch.diff:
        applied = _writable(report, patch, lang)
    every = apply_writes(applied, skip_applied=False) if apply and patch.diff else []
    with locked(every):                       # from the checks to the last rename: one run at a time
        if every:
            # under the lock: a file another run is between its renames of is locked, not "already applied"
            edits = apply_writes(applied)
            already = not edits
        check_all(writes + edits)             # every refusal before the question and before any write

        if edits and not yes and not sys.stdin.isatty():
            raise InputError(msg("write.needs_yes"))    # before anything is shown: one line, nothing written
        if export == "-":
            sys.stdout.write(patch.diff)
        if edits and not yes:
            sys.stderr.write(applied.diff)
            answer = input(_say("write.ask", lang)).strip().lower()
            if answer not in ("y", "yes", "是"):
                _tell("write.nothing_changed", lang)
                edits = []
        outcomes = write_all(writes + edits)

    _tell_outcomes(patch, outcomes[len(writes):], lang, to_file=to_file, snippet=snippet, write=write,
                   already=already)


def _tell_outcomes(patch: PatchSet, outcomes: Sequence[Any], lang: str, *, to_file: str | None, snippet: str,
                   write: str | None, already: bool) -> None:
    """What was written, where, and how to apply it: one line each, on stderr."""
    if to_file:
        hint = _apply_hint(to_file, patch.cwd, os.getcwd())      # run in the user's shell, from here
        _tell("write.wrote_diff", lang, path=to_file, command=hint)
    if snippet:
        print(snippet, file=sys.stderr, end="" if snippet.endswith("\n") else "\n")
    if write:
        n = len(patch.files)
        _tell("write.wrote_copies", lang, n=n, folder=write)
    if already:
        _tell("write.already_applied", lang)
    for outcome in outcomes:
        if outcome.created:
            _tell("write.updated_created", lang, path=outcome.path)
        else:
            from .apply import backup_of

            _tell("write.updated", lang, path=outcome.path, backup=outcome.backup or backup_of(outcome.path))
