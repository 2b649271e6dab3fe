"""The app after `oomdoctor run --tui`: a fifth tab with one sparkline per GPU the watcher sampled."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("textual")

from textual.widgets import Sparkline, TabbedContent  # noqa: E402

from oomdoctor.pipeline import Options  # noqa: E402
from oomdoctor.session import open_session  # noqa: E402
from oomdoctor.tui.timeline import WatchApp  # noqa: E402

# Pilot runs of the app (seconds each): the slow tier, run by the full CI session, not per CPython.
pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"
WATCH = {"samples": 6, "interval_s": 0.5, "first_near_limit": None, "gpus": [
    {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "total_gib": 80.0, "peak_gib": 21.5, "peak_at_s": 2.5,
     "peak_used_gib": 23.0, "other_gib": 1.46, "near_limit_at_s": None, "growth_mib_per_min": None,
     "series_gib": [1.0, 5.0, 9.0, 14.0, 18.0, 21.5]},
    {"index": 1, "name": "NVIDIA A100-SXM4-80GB", "total_gib": 80.0, "peak_gib": 20.0, "peak_at_s": 2.5,
     "peak_used_gib": 20.3, "other_gib": 0.0, "near_limit_at_s": None, "growth_mib_per_min": None,
     "series_gib": [1.0, 4.0, 8.0, 12.0, 16.0, 20.0]}]}


@pytest.mark.parametrize("lang,label", [("en", "5 Timeline"), ("zh", "5 时间线")])
async def test_timeline_tab_shows_a_sparkline_per_gpu(lang, label):
    opts = Options(files=(str(DATA / "logs" / "f01_torch25_backward.log"),))
    app = WatchApp(open_session(opts, lang), watch=WATCH)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "timeline"
        lines = app.query(Sparkline)
        assert [s.id for s in lines] == ["timeline-gpu-0", "timeline-gpu-1"]
        assert list(lines.first().data) == WATCH["gpus"][0]["series_gib"]
        assert str(app.query_one(TabbedContent).get_tab("timeline").label) == label
        await pilot.press("1")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "diagnosis"
