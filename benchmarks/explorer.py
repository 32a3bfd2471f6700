"""Benchmark: the SessionExplorer live in JupyterLab 4 + headless Chromium, click or key to updated DOM.

Usage:
    python benchmarks/explorer.py [--corpus DIR | --sessions 10000 --size-mb 1300 | --smoke] [--trials 20]

Without ``--corpus`` a corpus is generated under the temp folder with ``benchmarks/corpus.py``
(10,000 sessions by default; reused while the parameters are the same) and read once here into
Parquet, which the notebook's kernel reads. ``--smoke`` does the same on 40 sessions with 2
trials, in well under a minute, and exits 0 with a "skipped:" line when Chromium or JupyterLab is
missing.

The page is driven the way ``tests/browser/test_jupyterlab_widgets.py`` drives it (a loopback
``jupyter lab``, Chromium over the DevTools protocol, every other host unresolvable). Every figure
is measured inside the page with ``performance.now()``:

* display: run the cell ``SessionExplorer(sessions, turns)`` to the first frame in which the
  explorer is mounted whole (list, gauge, chart, turns, preview); the first run is "cold" (a
  fresh kernel), the others warm;
* pick: a ``change`` on the session list (as a click) to the last DOM change of the detail pane
  (gauge, chart, turns, preview), once it shows the picked session and has been quiet 400 ms;
* filter: the project dropdown, alternately one project and "(all)", to the last change of the
  session list, once it starts with the expected session;
* search: typing a needle into the search box, one key every 60 ms, from the first key to the
  last change of the session list (it settles on the expected first session);
* the longest main-thread task (``PerformanceObserver`` "longtask") during each kind of step.

It prints median and p90 of each, and the longest task. The figures are only comparable on one
machine; run it twice on a shared one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from corpus import cached
from measure import as_installed

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUIET_MS = 400
KEY_INTERVAL_MS = 60

# The notebook panel in the main area, its code cells, and the explorer's parts in the display cell.
PANEL = '[...window.jupyterapp.shell.widgets("main")].find((w) => w.sessionContext && w.content && w.content.widgets)'
HELPERS = """(() => {
  if (window.__ccb) return true;
  const panel = () => __PANEL__;
  const cells = () => panel().content.widgets.filter((c) => c.model.type === "code");
  const id8 = (text) => { const m = /\\b([0-9a-f]{8})\\b/.exec(text || ""); return m ? m[1] : null; };
  const longtasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) longtasks.push([e.startTime, e.duration]); })
    .observe({type: "longtask", buffered: true});
  const ex = (i) => {
    const node = cells()[i].node;
    const hbox = node.querySelector(".jp-OutputArea .widget-hbox");
    if (!hbox) return null;
    const selects = hbox.querySelectorAll(".widget-select select");
    return {
      node, hbox, list: selects[0], turns: selects[1],
      detail: hbox.children[1],
      project: hbox.querySelector(".widget-dropdown select"),
      search: hbox.querySelector(".cc-search input") || hbox.querySelector(".widget-text input"),
      gauge: hbox.querySelector(".cc-gauge"),
      chart: hbox.querySelector("svg"),
      preview: [...hbox.querySelectorAll(".widget-html pre")].pop(),
    };
  };
  const longest = (t0) => Math.max(0, ...longtasks.filter(([s, d]) => s + d >= t0).map(([s, d]) => d));
  // Run act(); resolve when done() holds and `target` has been quiet for `quiet` ms (or, with
  // first=true, at the first frame where done() holds). ms: to the last change of target.
  const measure = (target, act, done, {quiet = __QUIET__, first = false, timeout = 30000} = {}) => new Promise((resolve) => {
    const t0 = performance.now();
    let last = null;
    const obs = new MutationObserver(() => { last = performance.now(); });
    const root = target();
    if (root) obs.observe(root, {subtree: true, childList: true, characterData: true, attributes: true});
    act();
    const tick = () => {
      const now = performance.now();
      let ok = false;
      try { ok = done(); } catch (e) { ok = false; }
      if (ok && first) { obs.disconnect(); resolve({ms: now - t0, longest: longest(t0)}); return; }
      if (ok && last !== null && now - last >= quiet) { obs.disconnect(); resolve({ms: last - t0, longest: longest(t0)}); return; }
      if (now - t0 > timeout) { obs.disconnect(); resolve({ms: null, longest: longest(t0), timeout: true}); return; }
      if (first) requestAnimationFrame(tick); else setTimeout(tick, 15);
    };
    tick();
  });
  const runCell = (i) => {
    const p = panel();
    p.content.activeCellIndex = p.content.widgets.indexOf(cells()[i]);
    return window.jupyterapp.commands.execute("notebook:run-cell");
  };
  const mounted = (i, stale) => {
    const e = ex(i);
    return !!(e && e.hbox !== stale && e.list && e.list.options.length && e.gauge && e.chart && e.turns && e.preview
      && e.preview.innerText.trim());
  };
  window.__ccb = {
    cells, ex, id8, measure, longtasks,
    count: (i) => cells()[i].model.executionCount,
    errors: () => [...panel().node.querySelectorAll("[data-mime-type='application/vnd.jupyter.stderr']")].map((e) => e.innerText),
    run: (i) => { runCell(i); return true; },
    display: (i) => {
      const before = ex(i);
      const stale = before ? before.hbox : null;
      return measure(() => cells()[i].node, () => runCell(i), () => mounted(i, stale), {first: true, timeout: 120000});
    },
    pick: (i, index) => {
      const e = ex(i);
      const want = id8(e.list.options[index].textContent);
      const turnsBefore = e.turns.options.length ? e.turns.options[0].textContent + e.turns.options.length : "";
      return measure(() => e.detail, () => {
        e.list.selectedIndex = index;
        e.list.dispatchEvent(new Event("change", {bubbles: true}));
      }, () => { const n = ex(i); return n.gauge.innerText.includes(want) && n.chart && n.chart.textContent.includes(want); })
        .then((r) => Object.assign(r, {want}));
    },
    filter: (i, value, top) => {
      const e = ex(i);
      return measure(() => e.list.parentElement.parentElement, () => {
        e.project.value = value;
        e.project.dispatchEvent(new Event("change", {bubbles: true}));
      }, () => id8(ex(i).list.options[0].textContent) === top);
    },
    type: (i, text, top, interval) => {
      const e = ex(i);
      return measure(() => e.list.parentElement.parentElement, () => {
        let k = 0;
        const key = () => {
          e.search.value = text.slice(0, ++k);
          e.search.dispatchEvent(new Event("input", {bubbles: true}));
          if (k < text.length) setTimeout(key, interval);
        };
        key();
      }, () => e.search.value === text && id8(ex(i).list.options[0].textContent) === top);
    },
  };
  return true;
})()""".replace("__PANEL__", PANEL).replace("__QUIET__", str(QUIET_MS))


def code_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def write_notebook(path: Path, sessions: Path, turns: Path) -> None:
    cells = [
        code_cell(
            "import polars as pl\n"
            "from cc_analytics.views import SessionExplorer\n"
            f"sessions = pl.read_parquet({str(sessions)!r})\n"
            f"turns = pl.read_parquet({str(turns)!r})\n"
            "print(sessions.height, 'sessions', turns.height, 'turns')"
        ),
        code_cell("SessionExplorer(sessions, turns)"),
    ]
    notebook = {
        "cells": [{"id": f"cell-{i}", **c} for i, c in enumerate(cells)],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")


def frames(corpus: Path, out: Path) -> tuple[Path, Path]:
    """Sessions and turns of the corpus as Parquet (read once; reused beside the corpus)."""
    from cc_analytics.report import load

    sessions, turns = out / "explorer-sessions.parquet", out / "explorer-turns.parquet"
    stamp = corpus / "corpus.json"
    if not (sessions.exists() and turns.exists() and sessions.stat().st_mtime >= stamp.stat().st_mtime):
        data = load([corpus / "projects"])
        data.sessions.write_parquet(sessions)
        data.turns.write_parquet(turns)
    return sessions, turns


def plan(sessions_path: Path, trials: int) -> dict[str, Any]:
    """Which sessions to pick, which project to filter on and what to type, with the expected first rows."""
    import polars as pl

    from cc_analytics.frames import schema as S
    from cc_analytics.views.widgets import filter_sessions

    sessions = pl.read_parquet(sessions_path)
    everything = filter_sessions(sessions)
    top = everything[S.SESSION_ID][0][:8]
    projects = (
        everything.group_by(S.PROJECT, maintain_order=True)
        .agg(pl.col(S.SESSION_ID).first().alias("top"), pl.len().alias("n"))
        .filter((pl.col("top").str.slice(0, 8) != top) & (pl.col("n") > 1))
        .sort("n", descending=True)
    )
    project, project_top = projects.row(0)[:2]
    name = project.rstrip("/").rsplit("/", 1)[-1]
    needle = next(
        name[:k]
        for k in range(min(4, len(name)), len(name) + 1)
        if filter_sessions(sessions, search=name[:k])[S.SESSION_ID][0][:8] != top
    )
    return {
        "sessions": sessions.height,
        "top": top,
        "project": project,
        "project_top": project_top[:8],
        "needle": needle,
        "needle_top": filter_sessions(sessions, search=needle)[S.SESSION_ID][0][:8],
        "picks": [1 + i % max(min(everything.height - 1, 20), 1) for i in range(trials)],
    }


def summary(name: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    times = sorted(r["ms"] for r in results if r.get("ms") is not None)
    failed = sum(1 for r in results if r.get("ms") is None)
    longest = max((r["longest"] for r in results), default=0.0)
    if not times:
        return {"name": name, "n": 0, "failed": failed, "longest_task_ms": longest}
    p90 = times[min(len(times) - 1, max(0, round(0.9 * len(times)) - 1))]
    return {
        "name": name,
        "n": len(times),
        "failed": failed,
        "median_ms": statistics.median(times),
        "p90_ms": p90,
        "max_ms": times[-1],
        "longest_task_ms": longest,
    }


def run(corpus: Path, store: Path, work: Path, trials: int) -> dict[str, Any]:
    from tests.browser.jupyter_driver import Chromium, JupyterLab, wait_for

    sessions, turns = frames(corpus, store)
    steps = plan(sessions, trials)
    as_installed(os.environ)  # the kernel starts as it would with the package installed
    root, home = work / "root", work / "home"
    root.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    write_notebook(root / "explorer.ipynb", sessions, turns)
    lab, browser = JupyterLab(root, home), Chromium(work / "profile")
    try:
        lab.start()
        browser.start()
        browser.navigate(lab.url("lab/tree/explorer.ipynb"))
        kernel = f"(() => {{ const p = {PANEL}; const k = p && p.sessionContext.session && p.sessionContext.session.kernel; return k ? k.status : 'none'; }})()"
        wait_for(lambda: browser.evaluate(kernel) == "idle", timeout=120, interval=0.5, what="an idle kernel")
        browser.evaluate(HELPERS)
        browser.evaluate("__ccb.run(0)")
        wait_for(lambda: browser.evaluate("__ccb.count(0)"), timeout=300, interval=0.5, what="the frames to load")
        wait_for(lambda: browser.evaluate(kernel) == "idle", timeout=60, interval=0.2, what="an idle kernel")
        out: dict[str, list[dict[str, Any]]] = {
            "display (cold)": [],
            "display": [],
            "pick": [],
            "filter": [],
            "search": [],
        }

        def step(name: str, expression: str, timeout: float = 150) -> None:
            result = browser.evaluate(expression, timeout=timeout)
            out[name].append(result)
            if result.get("ms") is None:
                raise SystemExit(
                    f"{name}: the page did not reach the expected state ({result}); errors: "
                    f"{browser.evaluate('__ccb.errors()')}"
                )
            wait_for(lambda: browser.evaluate(kernel) == "idle", timeout=60, interval=0.05, what="an idle kernel")

        step("display (cold)", "__ccb.display(1)")
        for _ in range(trials):
            step("display", "__ccb.display(1)")
        for index in steps["picks"]:
            step("pick", f"__ccb.pick(1, {index})")
        for k in range(trials):
            value, top = (steps["project"], steps["project_top"]) if k % 2 == 0 else ("(all)", steps["top"])
            step("filter", f"__ccb.filter(1, {json.dumps(value)}, {json.dumps(top)})")
        if trials % 2:
            step("filter", f"__ccb.filter(1, '(all)', {json.dumps(steps['top'])})")
            out["filter"].pop()  # back to every session: not a measurement
        for _ in range(trials):
            step(
                "search",
                f"__ccb.type(1, {json.dumps(steps['needle'])}, {json.dumps(steps['needle_top'])}, {KEY_INTERVAL_MS})",
            )
            step("search", f"__ccb.type(1, '', {json.dumps(steps['top'])}, {KEY_INTERVAL_MS})")
            out["search"].pop()  # clearing the box is not a measurement
        errors = browser.evaluate("__ccb.errors()")
    finally:
        browser.stop()
        lab.stop()
    return {"plan": steps, "errors": errors, "results": [summary(k, v) for k, v in out.items()]}


def _task(ms: float) -> str:
    """Chromium reports tasks of 50 ms and more as long tasks; none means every task was shorter."""
    return f"{ms:.0f}ms" if ms else "<50ms"


def print_report(report: dict[str, Any], trials: int) -> None:
    steps = report["plan"]
    print(
        f"SessionExplorer in JupyterLab + Chromium: {steps['sessions']:,} sessions, {trials} trials each "
        f"(filter: {steps['project']!r} / all; search: {steps['needle']!r}, a key every {KEY_INTERVAL_MS} ms)"
    )
    print(f"{'measure':<16}{'median':>10}{'p90':>10}{'max':>10}{'longest task':>15}")
    for r in report["results"]:
        if not r["n"]:
            print(f"{r['name']:<16}{'failed':>10}")
            continue
        print(
            f"{r['name']:<16}{r['median_ms']:>8.0f}ms{r['p90_ms']:>8.0f}ms{r['max_ms']:>8.0f}ms{_task(r['longest_task_ms']):>15}"
        )
    print(f"longest main-thread task overall: {_task(max(r['longest_task_ms'] for r in report['results']))}")
    if report["errors"]:
        print("errors shown in the notebook:", *report["errors"], sep="\n  ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, help="a corpus written by benchmarks/corpus.py")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--size-mb", type=float, default=1300)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="40 sessions, 2 trials; skips without Chromium")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)

    from tests.browser.jupyter_driver import CHROMIUM, have_jupyterlab

    missing = have_jupyterlab() or (
        None
        if Path(CHROMIUM).exists()
        else "chromium is not installed (apt-get install -y chromium); explorer not measured"
    )
    if missing:
        print(f"skipped: {missing}")
        return 0
    if args.smoke:
        args.sessions, args.size_mb, args.trials = 40, 2, 2
    corpus = args.corpus
    if corpus is None:
        corpus = Path(tempfile.gettempdir()) / f"cc-explorer-bench-{args.sessions}x{args.size_mb:g}mb"
        cached(corpus, size_mb=args.size_mb, sessions=args.sessions, seed=11, jobs=min(os.cpu_count() or 1, 4))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cc-explorer-bench-") as tmp:
        work = Path(tmp)
        report = run(corpus, corpus if args.corpus is None else work, work, args.trials)
    print_report(report, args.trials)
    if args.json:
        print(json.dumps(report))
    print(f"({time.monotonic() - started:.0f} s)")
    failed = [r["name"] for r in report["results"] if r["failed"] or not r["n"]]
    return 1 if failed or report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
