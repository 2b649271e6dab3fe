"""The patch's ways out of the app: export the diff (`e`), write patched copies (`w`), apply in place (`a`,
after a yes in ConfirmApply, each file kept as .orig; the bundled demo is applied to a copy).

`Deliver` holds these flows and the one state they own (whether the patch was applied); what they read of
the app (its choices, its selection, whether it is still estimating) comes through the `Host` protocol, so
the app and the guide screen deliver through the same code.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from oomdoctor.errors import InputError
from oomdoctor.facts import KeyEdit
from oomdoctor.tui.dialogs import ConfirmApply, PathDialog
from oomdoctor.words import say

if TYPE_CHECKING:
    from oomdoctor.pipeline import Options, Selection


class Host(Protocol):
    """What the deliver flows read of the app: its language, its choices and the selection they planned."""

    lang: str

    @property
    def opts(self) -> Options: ...

    @property
    def selection(self) -> Selection | None: ...

    @property
    def estimating(self) -> bool: ...

    @property
    def notify(self) -> Callable[..., Any]: ...

    @property
    def push_screen(self) -> Callable[..., Any]: ...


class Deliver:
    """Export, write copies, apply: each asks its question in a dialog, then writes and says what it did."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.applied = False        # a second `a` would apply the same edits twice

    def say(self, key: str, **values: Any) -> str:
        return say(f"app.{key}", self.host.lang, **values)

    def patch_or_say(self) -> str | None:
        """The selection's patch, or None after saying why there is none to deliver (yet)."""
        host = self.host
        if host.estimating:
            host.notify(self.say("still_estimating"))
            return None
        if host.selection is None or not host.selection.patch:
            host.notify(self.say("nothing_to_write"), severity="warning")
            return None
        return host.selection.patch

    def export(self) -> None:
        patch = self.patch_or_say()
        if patch is None:
            return

        def done(path: str | None) -> None:
            if path:
                export_diff(path, patch, self.host.opts.files, self.host.notify, self.host.lang)

        self.host.push_screen(PathDialog(self.say("export_title"), "plan.diff", self.say("export_hint"),
                                         lang=self.host.lang), done)

    def write_copies(self) -> None:
        if self.patch_or_say() is None:
            return

        def done(folder: str | None) -> None:
            if not folder:
                return
            from oomdoctor.patch import build_patch, write_copies

            selection = self.host.selection
            assert selection is not None
            try:
                patchset = build_patch(selection.edits, cwd=self.host.opts.cwd)
                written = write_copies(patchset, str(output_path(folder)), inputs=self.host.opts.files)
            except (OSError, ValueError, InputError) as err:
                self.host.notify(self.say("cannot_copy", error=error_text(err, self.host.lang)), severity="error")
                return
            self.host.notify(self.say("wrote_copies", n=len(written), folder=folder))

        self.host.push_screen(PathDialog(self.say("copies_title"), "oomdoctor-patched/", self.say("copies_hint"),
                                         lang=self.host.lang), done)

    def apply(self) -> None:
        patch = self.patch_or_say()
        if patch is None:
            return
        if self.applied:
            self.host.notify(self.say("already_applied"), severity="warning")
            return
        selection = self.host.selection
        assert selection is not None
        files = sorted({rel(e.file, self.host.opts.cwd) for e in selection.edits})
        self.apply_edits(selection.edits, patch, files)

    def apply_edits(self, edits: Sequence[KeyEdit], patch: str, files: Sequence[str]) -> None:
        """Ask, then apply `edits` in place (a copy for the bundled demo), keeping each file as .orig."""
        def done(yes: bool | None) -> None:
            if not yes:
                self.host.notify(self.say("nothing_changed"))
                return
            from oomdoctor.patch import apply_in_place

            try:
                patchset, copy = self.writable_patchset(edits)
                changed = apply_in_place(patchset)
            except (OSError, ValueError, InputError) as err:
                self.host.notify(self.say("cannot_apply", error=error_text(err, self.host.lang)), severity="error")
                return
            self.applied = True
            if copy is not None:
                self.host.notify(self.say("demo_copy", folder=copy))
            self.host.notify(self.say("updated", files=", ".join(str(c) for c in changed)))

        self.host.push_screen(ConfirmApply(patch, files, lang=self.host.lang), done)

    def writable_patchset(self, edits: Sequence[KeyEdit]) -> tuple[Any, str | None]:
        """The patch to apply, and the folder of the demo's copy when the edits were of the bundled demo
        (the installed demo is never written: a copy in ./oomdoctor-demo/ is)."""
        from oomdoctor import demo
        from oomdoctor.patch import build_patch

        if not demo.is_installed_demo(edits):
            return build_patch(edits, cwd=self.host.opts.cwd), None
        folder = demo.copy_demo(os.getcwd())
        return build_patch(demo.relocate(edits, folder), cwd=str(folder)), str(folder)


def export_diff(path: str, patch: str, inputs: Sequence[str], notify: Callable[..., Any], lang: str) -> bool:
    """Write the plan's diff where a path typed in the app or the guide points, atomically and never over an
    input (the same writer as --export), and say so or say why not; whether it was written."""
    from oomdoctor.patch import write_diff

    try:
        write_diff(str(output_path(path)), patch, inputs=inputs)
    except InputError as err:
        notify(err.render(lang), severity="error")
        return False
    notify(say("app.wrote_diff", lang, path=path))
    return True


def output_path(path: str) -> Path:
    """Where a path typed in the app points: `~` expanded, relative to where oomdoctor was started."""
    # Relative to where oomdoctor was started: the demo's diff names its files from the package's demo
    # folder (opts.cwd), but nothing is ever written there.
    p = Path(os.path.expanduser(path))
    return p if p.is_absolute() else Path(os.getcwd()) / p


def error_text(err: BaseException, lang: str) -> str:
    """An exception in one line: an InputError in the user's language, anything else as Python says it."""
    return err.render(lang) if isinstance(err, InputError) else str(err)


def rel(path: str, cwd: str | None) -> str:
    try:
        return os.path.relpath(path, cwd or os.getcwd()) if os.path.isabs(path) else path
    except ValueError:
        return path
