"""The guided walkthrough of one OOM for someone meeting it for the first time, in English or Chinese.

    questions(report, lang) -> list[Question]          what only the user can answer
    default_answers(report, options=None) -> Answers
    options_with_answers(session, answers, base=None) -> (Options, Report)   the answers as --gpus/--accept/--skip
    plan_with_answers(session, answers, base=None) -> Report
    pages(report, answers, lang, rules=None, options=None) -> list[Page]
    render_plain(report, answers, lang, width=78, rules=None, options=None) -> str

No rich and no textual: the app's guide screen (tui/walkthrough.py) only arranges these pages.
"""
from __future__ import annotations

from oomdoctor.guide.answers import (
    SKIP_REASONS,
    Answers,
    Question,
    default_answers,
    is_answer_skip,
    options_with_answers,
    plan_with_answers,
    questions,
    reproduce_flags,
    step_seconds,
)
from oomdoctor.guide.pages import Bar, Page, pages
from oomdoctor.guide.plain import bar_cells, render_plain, text_bar

__all__ = ["SKIP_REASONS", "Answers", "Bar", "Page", "Question", "bar_cells", "default_answers", "is_answer_skip",
           "options_with_answers", "pages", "plan_with_answers", "questions", "render_plain", "reproduce_flags",
           "step_seconds", "text_bar"]
