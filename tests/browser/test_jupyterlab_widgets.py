"""ContextGauge and SessionExplorer as live widgets in a real JupyterLab 4, in headless Chromium.

A local ``jupyter lab`` (loopback port, random token, throw-away root, config and settings
dirs) serves a small notebook that loads ``data-samples/`` and displays a ``ContextGauge``
(its rich HTML repr and its ``ipywidgets.HTML`` widget) and a ``SessionExplorer``. Chromium,
driven over the DevTools protocol with every non-loopback host unresolvable, opens the
notebook, runs all cells and checks that:

* every code cell ran without an error output, and nothing says "Error displaying widget",
  "Failed to load model class", "Error loading script" or similar, and the console logged
  no error and no uncaught exception;
* the gauge's HTML rendered with its coloured bar sized to the session's occupancy, in the
  plain output and inside a mounted ``.widget-html`` view;
* the explorer mounted as a widget (not its static fallback): an HBox with the project and
  model dropdowns, the date range and peak sliders, the search box, the session and turn
  lists, its own gauge, its occupancy chart drawn (SVG marks) and the window preview;
* picking another session in the session list (a DOM ``change``, as a click would) makes
  the kernel update the explorer's gauge and turn list, and picking a turn updates the
  preview — the round trip front end → kernel → front end;
* nothing is cut off: the widest session label fits the list, the date range shows both days;
* typing a word into the search box sends the kernel one value (the word), not one per key,
  and the list follows while the picked session stays.

Screenshots: ``/tmp/jupyterlab-widgets.png`` (after running) and
``/tmp/jupyterlab-widgets-selected.png`` (after the selection). Skipped, with the reason,
when Chromium or JupyterLab (with ipywidgets' lab extension) is not installed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.jupyter_driver import CHROMIUM, Chromium, DriverError, JupyterLab, have_jupyterlab, wait_for

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data-samples"
SCREENSHOT = Path("/tmp/jupyterlab-widgets.png")
SCREENSHOT_SELECTED = Path("/tmp/jupyterlab-widgets-selected.png")
WIDGET_ERRORS = (
    "Error displaying widget",
    "Failed to load model class",
    "Error rendering output",
    "Javascript Error",
    "Could not render content",
    "Loading widget...",
    "Error loading script",
)

missing_lab = have_jupyterlab()
pytestmark = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="chromium is not installed (apt-get install -y chromium); widgets not checked in JupyterLab",
    ),
    pytest.mark.skipif(missing_lab is not None, reason=missing_lab or ""),
    pytest.mark.skipif(not (SAMPLES / "claude" / "projects").is_dir(), reason=f"no samples at {SAMPLES}"),
]


# ------------------------------------------------------------------ the notebook


def code_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def with_ids(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": f"cell-{i}", **cell} for i, cell in enumerate(cells)]


def write_notebook(path: Path, gauge_session: str) -> None:
    cells = [
        code_cell(
            "from pathlib import Path\n"
            "from cc_analytics.report import load\n"
            "from cc_analytics.views import ContextGauge, SessionExplorer\n"
            f"SAMPLES = Path({str(SAMPLES)!r})\n"
            "data = load([SAMPLES / 'claude' / 'projects', SAMPLES / 'chainless'])\n"
            "print(data.sessions.height, 'sessions', data.turns.height, 'turns')"
        ),
        code_cell(f"gauge = ContextGauge.from_frame(data.sessions, {gauge_session!r})\ngauge"),
        code_cell("gauge.widget()"),
        code_cell("explorer = SessionExplorer(data.sessions, data.turns)\nexplorer"),
    ]
    notebook = {
        "cells": with_ids(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    """What the page should show, computed here with the same code the kernel runs."""
    import polars as pl

    from cc_analytics.frames.claude import schema as S
    from cc_analytics.report import load
    from cc_analytics.views.widgets import SessionExplorer, filter_sessions, session_turns

    data = load([SAMPLES / "claude" / "projects", SAMPLES / "chainless"])
    explorer = SessionExplorer(data.sessions, data.turns)
    default = explorer.session_id
    assert default is not None
    with_turns = data.turns.filter(~pl.col(S.IS_SUBAGENT_FILE).fill_null(False))[S.SESSION_ID].unique().to_list()
    others = [s for s in explorer.filtered()[S.SESSION_ID].to_list() if s in with_turns and s != default]
    assert others, "the samples need two sessions with turns"
    target = others[0]
    gauge = explorer.gauge()
    assert gauge is not None
    days = explorer.sessions.select(pl.coalesce(S.FIRST_TIME, S.LAST_TIME).dt.date()).to_series().drop_nulls()
    needle = target[:6]
    return {
        "date_range": f"{days.min()} \u2192 {days.max()}",
        "needle": needle,
        "needle_matches": filter_sessions(data.sessions, search=needle).height,
        "sessions": data.sessions.height,
        "default": default,
        "default_turns": session_turns(data.turns, default).height,
        "target": target,
        "target_turns": session_turns(data.turns, target).height,
        "gauge_pct": round(100 * min(gauge.figures.fraction, 1.0), 2),
        "gauge_label": gauge.figures.label,
        "preview": explorer.preview(),
    }


# ------------------------------------------------------------------ page probes (JavaScript)

# The notebook panel in the main area (shell.currentWidget follows focus, which headless lacks).
PANEL = '[...window.jupyterapp.shell.widgets("main")].find((w) => w.sessionContext && w.content && w.content.widgets)'

KERNEL_STATE = f"""(() => {{
  const app = window.jupyterapp;
  if (!app || !app.shell) return "no-app";
  const panel = {PANEL};
  if (!panel) return "no-notebook";
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!kernel) return "no-kernel";
  return panel.content.widgets.length + ":" + kernel.status;
}})()"""

RUN_ALL = f"""(() => {{
  window.jupyterapp.shell.activateById({PANEL}.id);
  window.__ccRunAll = window.jupyterapp.commands.execute("notebook:run-all-cells")
    .then(() => "ok", (e) => "failed: " + e);
  return true;
}})()"""

# Per code cell: execution count, output text, error outputs, and the widget / gauge anatomy.
CELLS = """(() => {
  const panel = __PANEL__;
  const kernel = panel.sessionContext.session.kernel;
  const bar = (gauge) => {
    const fill = gauge && [...gauge.querySelectorAll("div")].find(
      (d) => d.style.height === "18px" && d.style.width.endsWith("%"));
    return fill ? {width: parseFloat(fill.style.width), colour: fill.style.background || fill.style.backgroundColor} : null;
  };
  // The widest option label against the room the list has for it (the option's own padding aside).
  const fit = (sel) => {
    if (!sel) return null;
    const ctx = document.createElement("canvas").getContext("2d");
    const style = getComputedStyle(sel);
    ctx.font = style.font;
    const room = sel.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 8;
    return {room: room, widest: Math.max(0, ...[...sel.options].map((o) => ctx.measureText(o.textContent).width))};
  };
  const cells = panel.content.widgets.filter((c) => c.model.type === "code").map((cell) => {
    const node = cell.node;
    const q = (s) => node.querySelectorAll(s);
    const gauges = [...q(".cc-gauge")];
    return {
      count: cell.model.executionCount,
      text: (node.querySelector(".jp-OutputArea") || {innerText: ""}).innerText,
      errors: [...q(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")].map((e) => e.innerText),
      widgetViews: q(".jupyter-widgets").length,
      staticExplorer: q(".cc-explorer").length,
      gaugeCount: gauges.length,
      gaugeInWidget: q(".widget-html .cc-gauge").length,
      gaugeText: gauges.map((g) => g.innerText),
      bars: gauges.map(bar),
      hbox: q(".widget-hbox").length,
      dropdowns: q(".widget-dropdown select").length,
      selects: [...q(".widget-select select")].map((s) => ({
        options: s.options.length, selected: s.selectedIndex,
        labels: [...s.options].map((o) => o.textContent)})),
      sliders: q(".widget-slider, .widget-hslider").length,
      textInputs: q(".widget-text input, .cc-search input").length,
      outputWidgets: q(".jupyter-widgets-output-area, .widget-output").length,
      chartMarks: q(".widget-html svg .marks circle, .widget-html svg .marks polyline").length,
      chartSvgs: q(".widget-html svg").length,
      listFit: fit(q(".widget-select select")[0]),
      dateRange: [...q(".widget-html div")].filter((d) => d.textContent.includes("\u2192") && !d.querySelector("div")).map(
        (d) => ({text: d.textContent, fits: d.scrollWidth <= d.clientWidth + 1})),
      previews: [...q(".widget-html pre")].map((p) => p.innerText),
    };
  });
  return {kernel: kernel.status, cells: cells, body: document.body.innerText};
})()""".replace("__PANEL__", PANEL)


def cells_state(page: Chromium) -> dict[str, Any]:
    return page.evaluate(CELLS)


def explorer_select(page: Chromium, select: int, option_contains: str | None = None, index: int | None = None) -> str:
    """Pick an option of the explorer's ``select``-th list as a user would: selectedIndex + change."""
    script = f"""(() => {{
      const cells = {PANEL}.content.widgets.filter((c) => c.model.type === "code");
      const sel = cells[cells.length - 1].node.querySelectorAll(".widget-select select")[{select}];
      const want = {json.dumps(option_contains)};
      const i = want === null ? {json.dumps(index)} : [...sel.options].findIndex((o) => o.textContent.includes(want));
      if (i < 0) return "no option containing " + want;
      sel.selectedIndex = i;
      sel.dispatchEvent(new Event("change", {{bubbles: true}}));
      return sel.options[i].textContent;
    }})()"""
    return page.evaluate(script)


def explorer_type(page: Chromium, text: str, interval_ms: int = 40) -> bool:
    """Type into the explorer's search box a key every ``interval_ms``, counting what the page sends
    the kernel for any widget's ``value`` meanwhile (in ``window.__ccSent``)."""
    script = f"""(() => {{
      const panel = {PANEL};
      if (!window.__ccSent) {{
        window.__ccSent = [];
        panel.sessionContext.session.kernel.anyMessage.connect((_, args) => {{
          const data = args.msg.content && args.msg.content.data;
          if (args.direction === "send" && args.msg.header.msg_type === "comm_msg" && data && data.state
              && "value" in data.state) window.__ccSent.push(data.state.value);
        }});
      }}
      window.__ccSent.length = 0;
      const cells = panel.content.widgets.filter((c) => c.model.type === "code");
      const input = cells[cells.length - 1].node.querySelector(".cc-search input");
      const text = {json.dumps(text)};
      let k = 0;
      const key = () => {{
        input.value = text.slice(0, ++k);
        input.dispatchEvent(new Event("input", {{bubbles: true}}));
        if (k < text.length) setTimeout(key, {interval_ms});
      }};
      key();
      return true;
    }})()"""
    return page.evaluate(script)


def scroll_to_cell(page: Chromium, index: int) -> None:
    page.evaluate(
        f"(() => {{ const c = {PANEL}.content.widgets"
        f".filter((c) => c.model.type === 'code')[{index}]; c.node.scrollIntoView({{block: 'start'}}); return true; }})()"
    )
    time.sleep(0.5)


# ------------------------------------------------------------------ the test


def test_widgets_render_live_in_jupyterlab(tmp_path: Path, expected: dict[str, Any]) -> None:
    started = time.monotonic()
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "widgets.ipynb", expected["default"])
    home = tmp_path / "home"
    home.mkdir()

    lab = JupyterLab(root, home)
    browser = Chromium(tmp_path / "profile")
    try:
        lab.start()
        browser.start()
        browser.navigate(lab.url("lab/tree/widgets.ipynb"))
        wait_for(
            lambda: str(browser.evaluate(KERNEL_STATE)).endswith(":idle"),
            timeout=90,
            interval=0.5,
            what="the notebook to open with an idle kernel",
        )
        assert browser.evaluate(RUN_ALL) is True

        def finished() -> dict[str, Any] | None:
            state = cells_state(browser)
            cells = state["cells"]
            done = state["kernel"] == "idle" and all(c["count"] is not None for c in cells)
            explorer = cells[-1]
            mounted = explorer["hbox"] and explorer["previews"] and explorer["chartSvgs"]
            failed = any(needle in state["body"] for needle in WIDGET_ERRORS) or any(c["errors"] for c in cells)
            return state if done and (mounted or failed) else None

        try:
            state = wait_for(finished, timeout=120, interval=0.5, what="all cells to run and the widgets to mount")
        except DriverError:
            browser.screenshot(SCREENSHOT)
            raise
        time.sleep(0.5)  # let the last outputs settle
        state = cells_state(browser)
        scroll_to_cell(browser, 1)
        browser.screenshot(SCREENSHOT)

        load_cell, gauge_cell, gauge_widget_cell, explorer = state["cells"]
        # No cell failed, no widget failed to load, the console logged no error.
        for cell in state["cells"]:
            assert not cell["errors"], f"a cell wrote to stderr / raised: {cell['errors']}"
        for needle in WIDGET_ERRORS:
            assert needle not in state["body"], f"the page says {needle!r}"
        assert not browser.console_errors(), f"console errors: {browser.console_errors()}"
        assert f"{expected['sessions']} sessions" in load_cell["text"]

        # ContextGauge: the rich HTML repr, with its bar sized to the occupancy.
        assert gauge_cell["gaugeCount"] == 1 and gauge_cell["widgetViews"] == 0
        assert expected["gauge_label"] in gauge_cell["gaugeText"][0]
        assert gauge_cell["bars"][0] is not None, "the gauge's bar element is missing"
        assert gauge_cell["bars"][0]["width"] == pytest.approx(expected["gauge_pct"], abs=0.01)
        # ContextGauge.widget(): a mounted ipywidgets.HTML view holding the same gauge.
        assert gauge_widget_cell["widgetViews"] >= 1 and gauge_widget_cell["gaugeInWidget"] == 1
        assert gauge_widget_cell["bars"][0] == gauge_cell["bars"][0]

        # SessionExplorer: the live widget, not the static fallback.
        assert explorer["staticExplorer"] == 0, "the explorer showed its static HTML, not the widget"
        assert explorer["widgetViews"] >= 10 and explorer["hbox"] >= 1
        assert explorer["dropdowns"] == 2 and explorer["sliders"] >= 2 and explorer["textInputs"] == 1
        sessions_list, turns_list = explorer["selects"]
        assert sessions_list["options"] == expected["sessions"]
        assert expected["default"][:8] in sessions_list["labels"][sessions_list["selected"]]
        assert turns_list["options"] == expected["default_turns"] and turns_list["selected"] >= 0
        assert explorer["gaugeInWidget"] == 1 and expected["gauge_label"] in explorer["gaugeText"][0]
        assert explorer["chartMarks"] >= 1, "the occupancy chart drew no marks"
        assert explorer["previews"] and explorer["previews"][-1].strip()
        # The preview is the window the same code gives here (whitespace as the page lays it out).
        assert " ".join(explorer["previews"][-1].split()) == " ".join(expected["preview"].split())
        # Nothing cut off: the widest session label fits the list, the date range shows both ends.
        assert explorer["listFit"]["widest"] <= explorer["listFit"]["room"], explorer["listFit"]
        assert [d["fits"] for d in explorer["dateRange"]] == [True], explorer["dateRange"]
        assert explorer["dateRange"][0]["text"].strip() == expected["date_range"]

        # Interactivity: pick another session in the list; the kernel redraws gauge and turns.
        before = explorer
        picked = explorer_select(browser, 0, option_contains=expected["target"][:8])
        assert expected["target"][:8] in picked, picked

        def session_changed() -> dict[str, Any] | None:
            now = cells_state(browser)["cells"][-1]
            turns = now["selects"][1]
            ok = (
                now["gaugeText"]
                and expected["target"][:8] in now["gaugeText"][0]
                and turns["options"] == expected["target_turns"]
                and turns["labels"] != before["selects"][1]["labels"]
            )
            return now if ok else None

        after = wait_for(session_changed, timeout=30, what="the explorer to show the picked session")
        assert after["bars"][0] != before["bars"][0] or after["gaugeText"][0] != before["gaugeText"][0]

        # And a turn: the preview follows.
        turn = (after["selects"][1]["selected"] + 1) % after["selects"][1]["options"]
        explorer_select(browser, 1, index=turn)
        wait_for(
            lambda: cells_state(browser)["cells"][-1]["previews"][-1] != after["previews"][-1],
            timeout=30,
            what="the turn preview to change",
        )
        # The search box is debounced: typing a word sends the kernel one value, the whole word.
        explorer_type(browser, expected["needle"])
        wait_for(
            lambda: cells_state(browser)["cells"][-1]["selects"][0]["options"] == expected["needle_matches"],
            timeout=30,
            what="the session list to show the search's matches",
        )
        time.sleep(0.5)
        assert browser.evaluate("window.__ccSent") == [expected["needle"]]
        after_search = cells_state(browser)["cells"][-1]
        assert expected["target"][:8] in after_search["gaugeText"][0], "the search re-picked the session"

        final = cells_state(browser)
        for needle in WIDGET_ERRORS:
            assert needle not in final["body"], f"after interacting, the page says {needle!r}"
        scroll_to_cell(browser, 3)
        browser.screenshot(SCREENSHOT_SELECTED)
    except DriverError as exc:
        raise AssertionError(f"{exc}\n--- jupyter log ---\n{lab.log()[-4000:]}") from exc
    finally:
        browser.stop()
        lab.stop()
    assert time.monotonic() - started < 180
