"""SessionExplorer's sturdiness and economy: what one pick, filter or keystroke costs, and what it keeps.

The timings themselves are measured in JupyterLab by ``benchmarks/explorer.py``; these tests
hold the behaviour that makes them: the list is bounded, a filter keeps the pick, a transcript
is parsed once, the mimebundle renders nothing JupyterLab does not show, the search box is
debounced in the browser, and an unreadable transcript costs only its preview.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path

import polars as pl
import pytest

from cc_analytics.format import usd
from cc_analytics.frames.claude import schema as S
from cc_analytics.views import widgets
from cc_analytics.views.widgets import SessionExplorer

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "data-samples"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def data():
    from cc_analytics.report import load

    return load(samples=True)


def claude_sessions_with_turns(explorer: SessionExplorer) -> list[str]:
    main = explorer.turns.filter(~pl.col(S.IS_SUBAGENT_FILE).fill_null(False) & (pl.col(S.FORMAT) == S.CLAUDE))
    ranked = explorer.filtered()[S.SESSION_ID].to_list()
    have = set(main[S.SESSION_ID].to_list())
    return [sid for sid in ranked if sid in have]


# ------------------------------------------------------------------ a large transcript's preview


def test_a_large_transcript_is_previewed_in_the_background(data, monkeypatch) -> None:
    monkeypatch.setattr(widgets, "BACKGROUND_PREVIEW_BYTES", 1)  # every sample counts as large
    explorer = SessionExplorer(data.sessions, data.turns)
    explorer.transcripts = widgets.Transcripts()  # nothing parsed yet
    gate = threading.Event()
    parse = explorer.transcripts._session
    monkeypatch.setattr(explorer.transcripts, "_session", lambda path: gate.wait(10) and parse(path))
    explorer.widget  # noqa: B018
    # Everything but the preview is there at once; the pane says what it is reading.
    assert "cc-gauge" in explorer._gauge.value and "<svg" in explorer._chart.value
    assert len(explorer._turns.options) == explorer.turn_rows().height > 0
    assert "MB of transcript for turn" in explorer._preview.value
    gate.set()
    assert explorer.preview_thread is not None
    explorer.preview_thread.join(10)
    assert explorer._preview.value == widgets._pre(explorer.preview()) and "(reading" not in explorer._preview.value
    assert explorer.transcripts.reads == 1  # the thread's parse is the one kept: preview() found it


def test_a_pick_made_during_a_background_preview_is_the_one_shown(data, monkeypatch) -> None:
    monkeypatch.setattr(widgets, "BACKGROUND_PREVIEW_BYTES", 1)
    explorer = SessionExplorer(data.sessions, data.turns)
    explorer.transcripts = widgets.Transcripts()
    gate = threading.Event()
    parse = explorer.transcripts._session
    monkeypatch.setattr(explorer.transcripts, "_session", lambda path: gate.wait(10) and parse(path))
    explorer.widget  # noqa: B018
    first = explorer.preview_thread
    other = claude_sessions_with_turns(explorer)[1]
    explorer._list.value = other  # picked while the first session's transcript is still being parsed
    second = explorer.preview_thread
    assert first is not None and second is not None and second is not first
    assert first.is_alive()  # the pick did not wait for the parse
    assert "cc-gauge" in explorer._gauge.value and other[:8] in explorer._gauge.value
    gate.set()
    first.join(10)
    second.join(10)
    assert explorer.session_id == other
    assert explorer._preview.value == widgets._pre(explorer.preview())
    assert "(reading" not in explorer._preview.value


# ------------------------------------------------------------------ an unreadable transcript


def test_an_unreadable_transcript_costs_only_its_preview(monkeypatch, tmp_path: Path) -> None:
    from cc_analytics.report import load

    monkeypatch.chdir(SAMPLES)
    data = load([Path("claude") / "projects"])  # relative source paths, as a notebook beside the data has
    assert not Path(data.turns[S.SOURCE_FILE][0]).is_absolute()
    monkeypatch.chdir(tmp_path)  # the kernel now runs elsewhere: no transcript can be read
    explorer = SessionExplorer(data.sessions, data.turns)
    widget = explorer.widget
    assert widget is not None and WIDGET_VIEW in explorer._repr_mimebundle_()
    assert explorer._preview.value.startswith("<pre") and "(cannot read claude/projects/" in explorer._preview.value
    assert "No such file or directory" in explorer._preview.value
    # Everything else is there: the gauge, the chart, the turns, the list; and picking still works.
    assert "cc-gauge" in explorer._gauge.value and "<svg" in explorer._chart.value
    assert len(explorer._turns.options) == explorer.turn_rows().height > 0
    other = claude_sessions_with_turns(explorer)[1]
    explorer._list.value = other
    assert explorer.session_id == other and "(cannot read " in explorer._preview.value
    assert "(cannot read " in explorer.to_html() and "cc-gauge" in explorer.to_html()


def test_a_transcript_changed_since_loading_gives_a_message(tmp_path: Path) -> None:
    from cc_analytics.report import load

    source = next((SAMPLES / "claude" / "projects").glob("*/24422850-*.jsonl"))
    copy = tmp_path / "projects" / source.parent.name / source.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(source, copy)
    data = load([tmp_path / "projects"])
    copy.write_text('{"type":"summary","summary":"rewritten"}\n', encoding="utf-8")
    explorer = SessionExplorer(data.sessions, data.turns).select("24422850")
    assert explorer.preview().startswith(f"(no window around turn {explorer.turn_index} in {copy}")


# ------------------------------------------------------------------ a transcript is parsed once


def test_a_pick_reads_its_transcript_once_and_turns_reuse_it(data, monkeypatch) -> None:
    reads: list[str] = []
    read_bytes = Path.read_bytes

    def counting(self: Path) -> bytes:
        reads.append(str(self))
        return read_bytes(self)

    widgets.TRANSCRIPTS.clear()  # shared by every explorer: parsed by none before this one
    explorer = SessionExplorer(data.sessions, data.turns)
    explorer.widget  # noqa: B018 - builds the live widget
    monkeypatch.setattr(Path, "read_bytes", counting)
    target = "24422850"
    explorer._list.value = next(sid for _, sid in explorer._list.options if sid.startswith(target))
    assert len(reads) == 1 and Path(reads[0]).name.startswith(target)
    previews = set()
    for turn_index in [t for _, t in explorer._turns.options]:
        explorer._turns.value = turn_index
        previews.add(explorer._preview.value)
    assert len(reads) == 1, "another turn of the same session read its transcript again"
    assert len(previews) == len(explorer._turns.options) > 2
    assert explorer.transcripts.reads >= 1


def test_a_second_explorer_reuses_the_parsed_transcripts(data) -> None:
    # Running the explorer's cell again parses nothing again (a 17 MB transcript takes 0.2-0.3 s).
    widgets.TRANSCRIPTS.clear()
    before = widgets.TRANSCRIPTS.reads
    first = SessionExplorer(data.sessions, data.turns)
    assert first.preview() and widgets.TRANSCRIPTS.reads == before + 1
    again = SessionExplorer(data.sessions, data.turns)
    assert again.preview() == first.preview() and widgets.TRANSCRIPTS.reads == before + 1


def test_parsed_transcripts_are_kept_within_a_byte_budget(tmp_path: Path) -> None:
    paths = []
    for index in range(3):
        path = tmp_path / f"s{index}.jsonl"
        path.write_bytes(b'{"type":"summary","summary":"%d"}\n' % index * 50)
        paths.append(str(path))
    size = Path(paths[0]).stat().st_size
    cache = widgets.Transcripts(size=8, max_bytes=2 * size)
    kept = [cache.session(path) for path in paths]
    assert cache.session(paths[2]) is kept[2] and cache.session(paths[1]) is kept[1] and cache.reads == 3
    assert cache.session(paths[0]) is not kept[0] and cache.reads == 4  # the oldest went over the budget
    alone = widgets.Transcripts(size=8, max_bytes=1)
    assert alone.session(paths[0]) is alone.session(paths[0]) and alone.reads == 1  # the last one stays


def test_a_changed_transcript_is_read_again(tmp_path: Path) -> None:
    cache = widgets.Transcripts(size=2)
    path = tmp_path / "t.jsonl"
    line = (
        '{"type":"user","uuid":"u%d","sessionId":"S","timestamp":"2026-03-01T10:00:00Z","message":{"content":"hi"}}\n'
    )
    path.write_text(line % 1, encoding="utf-8")
    first = cache.session(str(path))
    assert cache.session(str(path)) is first and cache.reads == 1
    path.write_text(line % 1 + line % 2, encoding="utf-8")
    assert cache.session(str(path)) is not first and cache.reads == 2


# ------------------------------------------------------------------ the mimebundle


def test_the_mimebundle_renders_no_static_copy_beside_the_widget(data, monkeypatch) -> None:
    explorer = SessionExplorer(data.sessions, data.turns)
    calls: list[str] = []
    for name in ("to_html", "to_text", "chart", "chart_svg", "preview"):
        method = getattr(explorer, name)
        monkeypatch.setattr(explorer, name, lambda *a, _n=name, _m=method, **k: calls.append(_n) or _m(*a, **k))
    bundle = explorer._repr_mimebundle_()
    assert set(bundle) == {"text/plain", WIDGET_VIEW}
    assert bundle["text/plain"] == f"SessionExplorer — {data.sessions.height} of {data.sessions.height} sessions"
    # Building the widget drew the chart and the preview once each, and nothing else was rendered.
    assert sorted(calls) == ["chart_svg", "preview"]
    calls.clear()
    explorer._repr_mimebundle_()
    assert calls == []


def test_without_ipywidgets_the_mimebundle_is_the_static_page(data, monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_widgets(name, *args, **kwargs):
        if name == "ipywidgets":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_widgets)
    bundle = SessionExplorer(data.sessions, data.turns)._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"} and "cc-gauge" in bundle["text/html"]


# ------------------------------------------------------------------ filters keep the pick


def test_a_filter_change_keeps_the_picked_session(data) -> None:
    explorer = SessionExplorer(data.sessions, data.turns)
    explorer.widget  # noqa: B018
    top = explorer.session_id
    second = claude_sessions_with_turns(explorer)[1]
    explorer._list.value = second
    explorer._turns.value = explorer._turns.options[0][1]
    turn = explorer.turn_index
    project = explorer.sessions.filter(pl.col(S.SESSION_ID) == second)[S.PROJECT][0]
    explorer._project.value = project
    assert explorer.session_id == second and explorer._list.value == second
    assert explorer.turn_index == turn, "the pick was redrawn at its peak turn"
    explorer._min_peak.value = 5
    assert explorer.session_id == second
    # Filtered out: the top matching session is picked instead.
    explorer._search.value = top
    explorer._project.value = widgets.ALL
    assert explorer.session_id == top and explorer._list.value == top and "cc-gauge" in explorer._gauge.value
    explorer._search.value = "no such session"
    assert explorer.session_id is None and explorer._list.options == ()
    assert "no session matches" in explorer._gauge.value and explorer._turns.options == ()
    assert explorer._more.value.count("0 of 38 sessions match") == 1


def test_the_list_is_bounded_and_keeps_the_pick_beyond_it(data, monkeypatch) -> None:
    monkeypatch.setattr(widgets, "LIST_LIMIT", 5)
    explorer = SessionExplorer(data.sessions, data.turns)
    explorer.widget  # noqa: B018
    ranked = explorer.filtered()[S.SESSION_ID].to_list()
    assert [sid for _, sid in explorer._list.options] == ranked[:5]
    assert "38 of 38 sessions match; the first 5 are listed" in explorer._more.value
    explorer.select(ranked[9])
    assert [sid for _, sid in explorer._list.options] == [*ranked[:5], ranked[9]]
    assert explorer._list.value == ranked[9] and "and the picked one" in explorer._more.value


# ------------------------------------------------------------------ nothing cut off


def test_list_entries_and_the_date_range_are_whole(data) -> None:
    explorer = SessionExplorer(data.sessions, data.turns)
    explorer.widget  # noqa: B018
    labels = dict((sid, label) for label, sid in explorer._list.options)
    for row in explorer.sessions.iter_rows(named=True):
        label = labels[row[S.SESSION_ID]]
        project = (row[S.PROJECT] or "").rstrip("/").rsplit("/", 1)[-1]
        model = (row[S.LAST_MODEL] or "").removeprefix("claude-")
        whole = " · ".join(
            part
            for part in (
                project,
                row[S.SESSION_ID][:8],
                model,
                usd(row[S.COST_USD], partial=bool(row[S.UNPRICED_REQUESTS])),
            )
            if part
        )
        assert label.endswith(f"%  {whole}"), label
        assert not row[S.WINDOW] or label.lstrip().startswith(
            f"{round(100 * row[S.PEAK_OCCUPANCY] / row[S.WINDOW], 1)}%"
        )
    days = explorer.sessions.select(pl.coalesce(S.FIRST_TIME, S.LAST_TIME).dt.date()).to_series().drop_nulls()
    assert explorer._days.readout is False
    assert f">{days.min()} → {days.max()}<" in explorer._days_label.value
    explorer._days.index = (1, 2)
    assert f">{explorer._days.options[1]} → {explorer._days.options[2]}<" in explorer._days_label.value


# ------------------------------------------------------------------ the search box


def test_the_search_box_is_debounced_in_the_browser(data) -> None:
    from cc_analytics.views.searchbox import SearchBox

    explorer = SessionExplorer(data.sessions, data.turns)
    explorer.widget  # noqa: B018
    assert isinstance(explorer._search, SearchBox) and explorer._search.debounce_ms > 0
    explorer._search.value = "webshop"  # what the browser sends once typing pauses
    assert len(explorer._list.options) == 4


NODE_RUN = """
import render from "./searchbox.mjs";
const timers = new Map(); let now = 0; let nextId = 1;
globalThis.setTimeout = (fn, ms) => { const id = nextId++; timers.set(id, [now + ms, fn]); return id; };
globalThis.clearTimeout = (id) => timers.delete(id);
const advance = (ms) => {
  const end = now + ms;
  for (;;) {
    const due = [...timers.entries()].filter(([, [t]]) => t <= end).sort((a, b) => a[1][0] - b[1][0])[0];
    if (!due) break;
    timers.delete(due[0]); now = due[1][0]; due[1][1]();
  }
  now = end;
};
const element = () => {
  const listeners = {};
  return {style: {}, children: [], value: "", append(...c) { this.children.push(...c); }, appendChild(c) { this.children.push(c); },
    addEventListener(type, fn) { (listeners[type] ||= []).push(fn); },
    fire(type, extra = {}) { for (const fn of listeners[type] || []) fn({type, ...extra}); }};
};
globalThis.document = {createElement: element};
const state = {value: "", description: "search", placeholder: "", debounce_ms: 200};
const sent = [];
const model = {get: (k) => state[k], set: (k, v) => { state[k] = v; }, save_changes: () => sent.push(state.value),
  on() {}, off() {}};
const el = element();
render.render({model, el});
const input = el.children[0].children[1];
const type = (text, gap) => { for (const ch of text) { input.value += ch; input.fire("input"); advance(gap); } };
type("opus", 60);            // four keys 60 ms apart: nothing sent yet
const early = sent.length;
advance(200);                // the pause: one message, the whole word
type("-4", 60);
input.fire("keydown", {key: "Enter"});  // Enter sends at once
advance(1000);
console.log(JSON.stringify({early, sent}));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed; the search box's script not run")
def test_the_search_script_sends_one_value_per_pause(tmp_path: Path) -> None:
    from cc_analytics.views.searchbox import ESM

    (tmp_path / "searchbox.mjs").write_text(ESM, encoding="utf-8")
    (tmp_path / "run.mjs").write_text(NODE_RUN, encoding="utf-8")
    out = subprocess.run(["node", "run.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == {"early": 0, "sent": ["opus", "opus-4"]}


# ------------------------------------------------------------------ the chart


def test_the_chart_is_drawn_without_vega(data, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "vl_convert", None)  # no conversion: an import would fail
    explorer = SessionExplorer(data.sessions, data.turns).select("24422850")
    svg = explorer.chart_svg()
    recorded = explorer.turn_rows().filter(pl.col(S.OCCUPANCY).is_not_null())
    assert svg.startswith("<svg") and "session 24422850" in svg
    assert svg.count("<circle") == recorded.height
    assert svg.count("<path") == recorded.filter(pl.col(S.COMPACTED)).height > 0  # a triangle per compaction
    assert ">auto-compact<" in svg and ">window<" in svg and "<polyline" in svg
    assert "<svg" in explorer.to_html()


def test_a_picks_turns_are_its_main_transcript_turns_in_order(data) -> None:
    # The explorer gathers a pick's rows by their row numbers (no sorted copy of every turn).
    explorer = SessionExplorer(data.sessions, data.turns)
    checked = 0
    for session_id in data.sessions[S.SESSION_ID].to_list():
        explorer.select(session_id)
        assert explorer.turn_rows().equals(widgets.session_turns(data.turns, session_id)), session_id
        checked += explorer.turn_rows().height > 0
    assert checked >= 10


def test_the_explorer_shows_what_was_in_the_window_at_the_picked_turn(tmp_path: Path) -> None:
    # The session of tests/fixtures/findings_transcript.py: its fullest turn is turn 3 (12,712
    # recorded: the baseline 10,000 and the rest doubled), where the explorer opens.
    from cc_analytics.frames.api import read_composition
    from cc_analytics.report import load
    from tests.fixtures.findings_transcript import SESSION, write_session

    folder = write_session(tmp_path)
    data = load([folder], cache=False, findings=False)
    composition = read_composition(folder)
    explorer = SessionExplorer(data.sessions, data.turns, composition=composition)
    assert (explorer.session_id, explorer.turn_index) == (SESSION, 3)
    parts = {(row["category"], row["item"]): row["tokens"] for row in explorer.window_parts()}
    assert parts[("baseline", None)] == 10_000 and parts[("tool_result", "Read")] == 2_000
    assert sum(parts.values()) == 12_712
    text = explorer.to_text()
    assert "what filled the window at turn 3 (estimated parts scaled \u00d72.00 to the recorded 12712" in text
    assert "in the window at turn 3" in explorer.to_html()
    # Picking another turn shows its window: turn 4 follows the compaction (the summary, 100).
    explorer._build_widget()
    explorer._turns.value = 4
    assert "at turn 4" in explorer._window.value and "compaction summary" in explorer._window.value
    # Without a composition frame nothing is added.
    plain = SessionExplorer(data.sessions, data.turns)
    assert plain.window_parts() == [] and "in the window at turn" not in plain.to_html()
