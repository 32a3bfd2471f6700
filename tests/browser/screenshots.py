"""The README's screenshots of what fills the window, made offline: ``python -m tests.browser.screenshots``.

Writes ``docs/img/composition.png`` (the composition chart of the samples' longest Claude Code
session, by ``vl_convert``), ``docs/img/explorer-window.png`` (the explorer's static pane of that
session at its fullest turn) and ``docs/img/report-windows.png`` (the report's "What fills the
windows" section of the samples), the last two by headless Chromium (``tests.browser.chromium``)
over the DevTools protocol, clipped to their element. Nothing reaches the network: the pages are
local files and Chromium resolves every host to NOTFOUND.
"""

from __future__ import annotations

import argparse
import base64
import tempfile
import time
from pathlib import Path

import polars as pl

from tests.browser.jupyter_driver import Chromium, wait_for

OUT = Path(__file__).resolve().parents[2] / "docs" / "img"
MAX_BYTES = 200 * 1024
PAGE = "<!doctype html><meta charset=utf-8><body style='margin:16px;background:#fff'><div id=shot style='display:inline-block;max-width:760px'>{}</div>"


def _clip(browser: Chromium, selector: str, path: Path, *, scale: float = 1.0) -> Path:
    """A PNG of the element ``selector`` of the page shown (its whole box, beyond the viewport too)."""
    box = browser.evaluate(
        f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
        " return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; })()"
    )
    clip = {**box, "scale": scale}
    data = browser.send(
        "Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True}, timeout=60
    )["data"]
    path.write_bytes(base64.b64decode(data))
    return path


def _show(browser: Chromium, page: Path, ready: str) -> None:
    browser.navigate(page.as_uri())
    wait_for(lambda: browser.evaluate(ready), timeout=60, what=f"{page.name} drawn")
    time.sleep(0.5)  # the last chart's transition


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    import vl_convert

    from cc_analytics.frames import schema as S
    from cc_analytics.frames.api import read_composition
    from cc_analytics.report import SAMPLES_DIR, load, write_report
    from cc_analytics.views.specs import composition_over_turns
    from cc_analytics.views.widgets import SessionExplorer

    args.out.mkdir(parents=True, exist_ok=True)
    composition = read_composition(SAMPLES_DIR)
    longest = (
        composition.group_by(S.SESSION_ID)
        .agg(pl.col(S.TURN_INDEX).n_unique().alias("turns"))
        .sort("turns", S.SESSION_ID, descending=[True, False])
        .item(0, S.SESSION_ID)
    )
    spec = composition_over_turns(composition, session_id=longest)
    written = [args.out / "composition.png"]
    written[0].write_bytes(vl_convert.vegalite_to_png(spec, scale=1.5))

    data = load(samples=True, cache=False)
    explorer = SessionExplorer(data.sessions, data.turns, composition=composition).select(longest)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pane = folder / "explorer.html"
        pane.write_text(PAGE.format(explorer._window_html()), encoding="utf-8")
        report = write_report(data, folder / "report")["report.html"]
        with Chromium(folder / "profile") as browser:
            _show(browser, pane, "document.readyState === 'complete'")
            written.append(_clip(browser, "#shot", args.out / "explorer-window.png", scale=1.5))
            _show(browser, report, "document.querySelectorAll('canvas, svg').length > 0")
            section = "section#windows"
            written.append(_clip(browser, section, args.out / "report-windows.png"))
    for path in written:
        size = path.stat().st_size
        print(f"{path} {size // 1024} kB")
        if size > MAX_BYTES:
            print(f"  over {MAX_BYTES // 1024} kB: make it smaller before committing it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
