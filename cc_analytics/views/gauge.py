"""One session's context gauge: ``ContextGauge``, its figures and its HTML and text renderings.

Imports: polars, ``format``, ``frames.metrics``, ``frames.schema``, ``views.common`` (the
colours); ipywidgets only when ``ContextGauge.widget()`` is asked for. Renders a static
HTML/text repr wherever no widget front end runs (plain IPython, nbval, HTML export).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from cc_analytics.errors import SessionNotFoundError
from cc_analytics.format import bar, group_thousands, usd
from cc_analytics.frames import metrics
from cc_analytics.frames import schema as S
from cc_analytics.views.common import BUCKET_COLOURS, BUCKET_LABELS, ZONE_COLOURS, Frame, collect

WARNING_SIGN = "\u26a0"
TEXT_BAR = 30


@dataclass(frozen=True, slots=True)
class GaugeFigures:
    """The numbers a gauge shows, derived once from a session row."""

    session_id: str
    label: str
    model: str
    used: int
    window: int
    effective_window: int | None
    threshold: int | None
    peak: int | None
    recorded: int | None
    estimated: int | None
    buckets: tuple[tuple[str, int], ...]
    compactions: int | None
    cost_usd: float | None = None
    unpriced_requests: int = 0

    @property
    def fraction(self) -> float:
        return metrics.used_fraction_of(self.used, self.window)

    @property
    def zone(self) -> str:
        return metrics.zone_of(self.fraction)

    @property
    def headroom(self) -> int:
        return metrics.headroom_of(self.used, self.window)

    @property
    def overflows(self) -> bool:
        return metrics.overflows_of(self.used, self.window)

    @property
    def past_threshold(self) -> bool:
        return self.threshold is not None and self.used >= self.threshold


def gauge_figures(row: Mapping[str, Any]) -> GaugeFigures:
    """Figures of one session row (Claude Code sessions frame, or the report's unified one).

    The gauge shows the recorded last occupancy when there is one, else the estimate.
    """
    recorded = row.get(S.LAST_OCCUPANCY) if row.get("occupancy_source", "recorded") == "recorded" else None
    estimated = row.get(S.CONTEXT_ESTIMATE) if row.get(S.CONTEXT_ESTIMATE) is not None else row.get(S.ESTIMATED_TOKENS)
    used = recorded if recorded is not None else (estimated or 0)
    models = row.get(S.MODELS) or []
    project = str(row.get(S.PROJECT) or "").rstrip("/").rsplit("/", 1)[-1]
    return GaugeFigures(
        session_id=str(row[S.SESSION_ID]),
        label=f"{project} · {str(row[S.SESSION_ID])[:8]}" if project else str(row[S.SESSION_ID]),
        model=row.get(S.LAST_MODEL) or (models[-1] if models else "unknown"),
        used=int(used),
        window=int(row.get(S.WINDOW) or 0),
        effective_window=row.get(S.EFFECTIVE_WINDOW),
        threshold=row.get(S.AUTOCOMPACT_THRESHOLD),
        peak=row.get(S.PEAK_OCCUPANCY),
        recorded=recorded,
        estimated=estimated,
        buckets=tuple((label, int(row.get(column) or 0)) for column, label in BUCKET_LABELS.items()),
        compactions=row.get(S.COMPACTIONS),
        cost_usd=row.get(S.COST_USD),
        unpriced_requests=int(row.get(S.UNPRICED_REQUESTS) or 0),
    )


def _pct(value: int, window: int) -> float:
    return 100.0 * min(value / window, 1.0) if window else 0.0


def _marker(value: int | None, window: int, colour: str, title: str) -> str:
    if value is None or not window:
        return ""
    return (
        f"<div title='{html.escape(title)}' style='position:absolute;top:-3px;bottom:-3px;"
        f"left:{_pct(value, window):.2f}%;border-left:2px dashed {colour}'></div>"
    )


def gauge_html(g: GaugeFigures) -> str:
    """The gauge as one self-contained HTML fragment (inline styles only)."""
    colour = ZONE_COLOURS[g.zone]
    used_pct = _pct(g.used, g.window)
    markers = _marker(g.threshold, g.window, "#d1343a", f"auto-compact at {group_thousands(g.threshold or 0)}")
    markers += _marker(
        g.effective_window,
        g.window,
        "#e3a500",
        f"effective window {group_thousands(g.effective_window or 0)}",
    )
    if g.peak is not None and g.peak != g.used:
        markers += _marker(g.peak, g.window, "#555", f"peak {group_thousands(g.peak)}")
    notes = []
    if g.overflows:
        notes.append(f"<div style='color:#d1343a;font-weight:600'>{WARNING_SIGN} {html.escape(overflow_note(g))}</div>")
    elif g.past_threshold:
        notes.append(
            f"<div style='color:#d1343a'>{WARNING_SIGN} past the auto-compact threshold ({group_thousands(g.threshold or 0)})</div>"
        )
    total = sum(tokens for _, tokens in g.buckets) or 1
    segments = "".join(
        f"<div title='{html.escape(label)}: {group_thousands(tokens)}' style='width:{100 * tokens / total:.2f}%;background:{BUCKET_COLOURS[i]}'></div>"
        for i, (label, tokens) in enumerate(g.buckets)
        if tokens
    )
    legend = " ".join(
        f"<span style='white-space:nowrap'><span style='display:inline-block;width:9px;height:9px;background:{BUCKET_COLOURS[i]}'></span> {html.escape(label)} {group_thousands(tokens)}</span>"
        for i, (label, tokens) in enumerate(g.buckets)
    )
    side = ""
    if g.recorded is not None and g.estimated is not None:
        rows = (("recorded", g.recorded, "#4a6fa5"), ("estimated", g.estimated, "#9aa5b1"))
        side = "".join(
            f"<div style='display:flex;align-items:center;gap:6px;margin-top:3px'><span style='width:68px;color:#666'>{name}</span>"
            f"<div style='flex:1;background:#eee;height:8px;border-radius:4px'><div style='width:{_pct(value, g.window):.2f}%;height:8px;border-radius:4px;background:{c}'></div></div>"
            f"<span style='width:90px;text-align:right'>{group_thousands(value)}</span></div>"
            for name, value, c in rows
        )
    compactions = "" if g.compactions is None else f" · {g.compactions} compaction(s)"
    cost = f" · cost {_cost(g)}" if g.cost_usd is not None or g.unpriced_requests else ""
    return f"""<div class='cc-gauge' style='font:13px/1.4 system-ui,sans-serif;max-width:640px;border:1px solid #ddd;border-radius:8px;padding:10px 12px'>
<div style='font-weight:600'>Context — {html.escape(g.label)}</div>
<div style='color:#666'>{html.escape(g.model)} · window {group_thousands(g.window)} tokens{compactions}{html.escape(cost)}</div>
<div style='position:relative;margin:10px 0 4px;background:#eee;height:18px;border-radius:4px'>
<div style='width:{used_pct:.2f}%;height:18px;border-radius:4px;background:{colour}'></div>{markers}</div>
<div><b>{group_thousands(g.used)}</b> / {group_thousands(g.window)} tokens (<b style='color:{colour}'>{g.fraction * 100:.1f}%</b>) · headroom {group_thousands(g.headroom)}</div>
{"".join(notes)}{side}
<div style='margin-top:8px;color:#666'>what the session's turns held (estimated, all turns)</div>
<div style='display:flex;height:10px;border-radius:3px;overflow:hidden;background:#eee'>{segments}</div>
<div style='font-size:12px;color:#444;margin-top:3px'>{legend}</div>
</div>"""


def gauge_text(g: GaugeFigures) -> str:
    """The gauge as plain text (for terminals and text-only front ends)."""
    lines = [
        f"Context — {g.label}",
        f"  {g.model} · window {group_thousands(g.window)} tokens",
        f"  {bar(g.fraction, TEXT_BAR)} {g.fraction * 100:.1f}% ({g.zone})  "
        f"{group_thousands(g.used)} used, headroom {group_thousands(g.headroom)}",
    ]
    if g.threshold is not None:
        lines.append(f"  auto-compact at {group_thousands(g.threshold)}")
    if g.cost_usd is not None or g.unpriced_requests:
        lines.append(f"  cost {_cost(g)}")
    if g.recorded is not None and g.estimated is not None:
        lines.append(f"  recorded {group_thousands(g.recorded)} · estimated {group_thousands(g.estimated)}")
    if g.overflows:
        lines.append(f"  {WARNING_SIGN} {overflow_note(g)}")
    lines += [f"  {label:<15}{tokens:>9,}" for label, tokens in g.buckets]
    return "\n".join(lines)


def overflow_note(g: GaugeFigures) -> str:
    """Why the gauge is above 100 %: a recorded request above the window means the session's
    window was larger than inferred; an estimate above it, that the estimate overshoots."""
    if g.recorded is not None:
        return (
            f"the last request held {group_thousands(g.recorded)} tokens, above the {group_thousands(g.window)} "
            "window inferred for the session: its window was larger"
        )
    return "the estimate exceeds the context window — compaction required"


def _cost(g: GaugeFigures) -> str:
    """The session's cost, saying how many requests it leaves out for want of a price."""
    text = usd(g.cost_usd)
    if g.unpriced_requests:
        text += f" ({g.unpriced_requests} request(s) without a price left out)"
    return text


def find_session(sessions: Frame, session_id: str) -> dict[str, Any]:
    """The row of ``session_id`` (a unique prefix will do) in a sessions frame."""
    df = collect(sessions)
    rows = df.filter(pl.col(S.SESSION_ID) == session_id)
    if rows.is_empty():
        rows = df.filter(pl.col(S.SESSION_ID).str.starts_with(session_id))
    if rows.height != 1:
        msg = f"session {session_id!r} matches {rows.height} sessions"
        raise SessionNotFoundError(msg)
    return rows.row(0, named=True)


class ContextGauge:
    """How full one session's context window is: a coloured bar, headroom and what fills it.

    Green up to 70% of the window, yellow above, red above 90%; dashed marks for the
    auto-compact threshold, the effective window and the peak; recorded and estimated
    occupancy side by side; the five heuristic buckets as a stacked bar.

    Examples:
        >>> row = {"session_id": "abc", "window": 200_000, "last_occupancy": 150_000,
        ...        "autocompact_threshold": 167_000, "context_estimate": 40_000}
        >>> g = ContextGauge(row)
        >>> g.figures.zone, g.figures.headroom
        ('yellow', 50000)
        >>> "75.0%" in g._repr_html_()
        True
    """

    def __init__(self, session: Mapping[str, Any]) -> None:
        self.figures = gauge_figures(session)

    @classmethod
    def from_frame(cls, sessions: Frame, session_id: str) -> ContextGauge:
        """The gauge of ``session_id`` in a sessions frame (``frames.read_sessions`` or the report's)."""
        return cls(find_session(sessions, session_id))

    def to_html(self) -> str:
        return gauge_html(self.figures)

    def widget(self) -> Any:
        """An ``ipywidgets.HTML`` showing the gauge (to place inside other widgets)."""
        import ipywidgets

        return ipywidgets.HTML(value=self.to_html())

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": gauge_text(self.figures), "text/html": self.to_html()}

    def __repr__(self) -> str:
        return gauge_text(self.figures)


__all__ = ["ContextGauge", "GaugeFigures", "find_session", "gauge_figures", "gauge_html", "gauge_text"]
