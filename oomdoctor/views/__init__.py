"""Views of a Report: plain text (rich), JSON. The TUI lives in oomdoctor/tui/."""
