"""Write the README's picture of the app: `python -m oomdoctor.tui.screenshot [OUT.svg] [TAB] [WxH]`.

Runs the app headless on the bundled demo, from the demo's folder so the paths shown are short.
"""
from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parents[1] / "data" / "demo"


async def _shoot(out: Path, tab: str, size: tuple[int, int]) -> None:
    from oomdoctor.pipeline import Options
    from oomdoctor.session import open_session
    from oomdoctor.tui.app import OomDoctorApp

    here = os.getcwd()
    os.chdir(DEMO_DIR)
    try:
        opts = Options(files=("train.yaml", "train.log"), cwd=str(DEMO_DIR))
        app = OomDoctorApp(open_session(opts))
        async with app.run_test(size=size) as pilot:
            await pilot.press({"diagnosis": "1", "memory": "2", "plan": "3", "patch": "4"}[tab])
            await app.workers.wait_for_complete()
            await pilot.pause()
            svg = app.export_screenshot(title="oomdoctor --demo")
    finally:
        os.chdir(here)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(svg, encoding="utf-8")


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/screenshot.svg")
    tab = argv[1] if len(argv) > 1 else "plan"
    width, height = (int(n) for n in (argv[2] if len(argv) > 2 else "100x30").split("x"))
    asyncio.run(_shoot(out.resolve(), tab, (width, height)))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
