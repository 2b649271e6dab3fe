"""The app after `oomdoctor run --tui`: the usual tabs, and a fifth with the GPU memory the watcher saw.

One Sparkline per GPU (textual's own widget) over the run's memory, with its peak, when it came, other
processes' memory and the growth line, as the plain report's watcher lines say them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Sparkline, Static, TabbedContent, TabPane

from oomdoctor.tui.app import OomDoctorApp
from oomdoctor.words import say

if TYPE_CHECKING:
    from oomdoctor.session import Session


class WatchApp(OomDoctorApp):
    # a words code: the footer shows it in the app's language (dialogs.Localized)
    BINDINGS = [Binding("5", "tab('timeline')", show=False), Binding("t", "tab('timeline')", "watch.key_timeline")]

    def __init__(self, session: Session, *, watch: dict, **kwargs: Any) -> None:
        super().__init__(session, **kwargs)
        self.watched = watch        # (not `watch`: that is Textual's DOMNode.watch)

    # Textual calls each class's Mount handler, this one first, then OomDoctorApp.on_mount (MessagePump's dispatch)
    @on(events.Mount)
    async def _add_timeline(self) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        body: list[Widget] = [Static(say("watch.timeline_heading", self.lang, samples=self.watched["samples"],
                                         interval=self.watched["interval_s"]), id="timeline-heading")]
        for g in self.watched["gpus"]:
            body.append(Static(say("watch.gpu_line", self.lang, index=g["index"], name=g["name"], peak=g["peak_gib"],
                                   at=g["peak_at_s"], total=g["total_gib"]), classes="timeline-gpu"))
            body.append(Sparkline(g["series_gib"] or [0.0], summary_function=max, id=f"timeline-gpu-{g['index']}"))
            if g["other_gib"] >= 0.01:
                body.append(Static(say("watch.other_line", self.lang, gib=g["other_gib"])))
        await tabs.add_pane(TabPane(say("watch.tab_timeline", self.lang), VerticalScroll(*body), id="timeline"))


def run_with_timeline(session: Session, watch: dict) -> int:
    from oomdoctor.errors import exit_code

    WatchApp(session, watch=watch).run()
    return int(exit_code(session.report))
