"""The terminal app. The only package that imports Textual; the CLI imports it only when it starts the app."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oomdoctor.session import Session


def run(session: Session, *, walkthrough: bool = False) -> int:
    """Show the app until the user quits; return the same exit code as the plain path."""
    from oomdoctor.errors import exit_code
    from oomdoctor.tui.app import OomDoctorApp

    OomDoctorApp(session, walkthrough=walkthrough).run()
    return int(exit_code(session.report))
