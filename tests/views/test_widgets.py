"""ContextGauge and SessionExplorer: the static reprs, the filters, the live widget's wiring."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from cc_analytics.frames.claude import schema as S
from cc_analytics.views.widgets import ContextGauge, SessionExplorer, filter_sessions, turn_preview


@pytest.fixture(scope="module")
def data():
    from cc_analytics.report import load

    return load(samples=True)


def row(used: int, **extra) -> dict:
    return {
        S.SESSION_ID: "0123456789abcdef",
        S.PROJECT: "/home/dev/app",
        S.WINDOW: 200_000,
        S.EFFECTIVE_WINDOW: 180_000,
        S.AUTOCOMPACT_THRESHOLD: 167_000,
        S.LAST_OCCUPANCY: used,
        S.PEAK_OCCUPANCY: max(used, 120_000),
        S.CONTEXT_ESTIMATE: 30_000,
        S.TOKENS_USER: 1_000,
        S.TOKENS_TOOL: 20_000,
        S.LAST_MODEL: "claude-opus-4-6",
        **extra,
    }


@pytest.mark.parametrize(
    ("used", "zone", "colour"),
    [(140_000, "green", "#2e9e44"), (140_001, "yellow", "#e3a500"), (180_001, "red", "#d1343a")],
)
def test_gauge_colour_bands(used: int, zone: str, colour: str) -> None:
    gauge = ContextGauge(row(used))
    assert gauge.figures.zone == zone
    assert f"background:{colour}" in gauge._repr_html_()


def test_gauge_marks_threshold_headroom_and_both_occupancies() -> None:
    gauge = ContextGauge(row(170_000))
    page = gauge._repr_html_()
    assert "auto-compact at 167,000" in page and "left:83.50%" in page
    assert "headroom 30,000" in page
    assert ">recorded<" in page and ">estimated<" in page and "30,000" in page
    assert "past the auto-compact threshold" in page
    bundle = gauge._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert "85.0% (yellow)" in bundle["text/plain"]


def test_gauge_and_explorer_show_the_cost(data) -> None:
    session = data.sessions.sort("cost_usd", descending=True, nulls_last=True).row(0, named=True)
    gauge = ContextGauge(session)
    assert "cost $4.49" in gauge._repr_html_() and "cost $4.49" in repr(gauge)
    partial = ContextGauge({**session, "unpriced_requests": 2})
    assert "(2 request(s) without a price left out)" in repr(partial)
    assert "cost" not in repr(ContextGauge(row(1000)))  # a row without cost columns says nothing of cost
    explorer = SessionExplorer(data.sessions, data.turns)
    assert "<th>cost</th>" in explorer.to_html() and "$4.49" in explorer.to_text()


def test_gauge_overflow_warning() -> None:
    gauge = ContextGauge(row(230_000))
    assert gauge.figures.overflows and gauge.figures.headroom == 0
    why = (
        "the last request held 230,000 tokens, above the 200,000 window inferred for the session: its window was larger"
    )
    assert why in gauge._repr_html_()
    assert why in repr(gauge)
    estimated = ContextGauge(row(230_000, occupancy_source="estimated", context_estimate=230_000))
    assert "the estimate exceeds the context window" in repr(estimated)


def test_gauge_of_an_estimate_only_session(data) -> None:
    chainless = data.sessions.filter(pl.col("format") == "chainlesschain")
    gauge = ContextGauge(chainless.row(0, named=True))
    assert gauge.figures.recorded is None
    assert ">recorded<" not in gauge._repr_html_()


def test_filters(data) -> None:
    sessions = data.sessions
    assert filter_sessions(sessions).height == sessions.height
    webshop = filter_sessions(sessions, project="/home/dev/webshop")
    assert webshop.height == 4
    assert webshop["peak_fraction"].is_sorted(descending=True)
    assert filter_sessions(sessions, min_peak=0.9).height == 2
    assert filter_sessions(sessions, search="翻译").height == 2
    assert filter_sessions(sessions, model="claude-sonnet-4-6", search="PIPELINE").height == 1


def test_explorer_static_repr_and_preview(data) -> None:
    explorer = SessionExplorer(data.sessions, data.turns)
    top = explorer.sessions.filter(pl.col(S.SESSION_ID) == explorer.session_id).row(0, named=True)
    assert top[S.PEAK_OCCUPANCY] / top[S.WINDOW] > 0.9
    page = explorer._repr_html_()
    assert "SessionExplorer" in page and "cc-gauge" in page and "<svg" in page
    assert "window around turn" in page
    text = explorer._repr_mimebundle_()["text/plain"]
    assert text.startswith("SessionExplorer — 38 of 38 sessions")


def test_explorer_preview_is_the_core_render(data) -> None:
    from cc_analytics.core import Budget, EventRef, capture_window

    explorer = SessionExplorer(data.sessions, data.turns).select("24422850")
    turn = explorer.turn_rows().filter(pl.col(S.TURN_INDEX) == explorer.turn_index).row(0, named=True)
    raw = Path(turn[S.SOURCE_FILE]).read_bytes()
    window = capture_window(raw, EventRef(turn[S.SESSION_ID], turn[S.EVENT_UUIDS][0]), before=2, after=1)
    assert explorer.preview() == window.render_preview(budget=Budget()) == turn_preview(turn)
    assert explorer.preview().startswith("user: ")


def test_explorer_widget_wiring(data) -> None:
    explorer = SessionExplorer(data.sessions, data.turns)
    widget = explorer.widget
    assert "application/vnd.jupyter.widget-view+json" in explorer._repr_mimebundle_()
    assert widget.children
    explorer._project.value = "/home/dev/webshop"
    assert len(explorer._list.options) == 4
    long_session = next(sid for _, sid in explorer._list.options if sid.startswith("24422850"))
    explorer._list.value = long_session
    assert explorer.session_id == long_session
    assert "Context — webshop · 24422850" in explorer._gauge.value
    explorer._turns.value = 1
    assert "Add stackable discount codes" in explorer._preview.value
    explorer._search.value = "no such thing"
    assert explorer._list.options == ()
