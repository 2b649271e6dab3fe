"""The terminal app. The only package that imports Textual; the CLI imports it only when it starts the app."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oomdoctor.facts import Report
    from oomdoctor.pipeline import Options


def run(report: "Report", opts: "Options", *, lang: str = "en", walkthrough: bool = False) -> int:
    """Show the app until the user quits; return the same exit code as the plain path."""
    from oomdoctor.cli import exit_code
    from oomdoctor.tui.app import OomDoctorApp

    OomDoctorApp(report, opts, lang=lang, walkthrough=walkthrough).run()
    return int(exit_code(report))
