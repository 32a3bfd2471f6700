"""The explorer's occupancy-over-turns chart, drawn as SVG text in Python: no Vega, no conversion.

Imports: polars, ``views.common`` (the colours) and the shared schema. The same picture as
``charts.occupancy_over_turns(turns, session_id=...)`` (occupancy per turn coloured by zone,
the window, effective-window and auto-compact rules, a red triangle where the context was
compacted) in about a millisecond, where building the Altair chart and converting it to SVG
takes tens of milliseconds: the explorer redraws it on every pick.
"""

from __future__ import annotations

import html

import polars as pl

from cc_analytics.frames import metrics
from cc_analytics.frames import schema as S
from cc_analytics.views.common import LIMIT_COLOURS, LIMIT_LABELS, ZONE_COLOURS

WIDTH = 560
HEIGHT = 200
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 64, 130, 24, 30
MAX_POINTS = 400


def _ticks(top: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``top``."""
    if top <= 0:
        return [0.0]
    raw = top / count
    magnitude = 10 ** (len(str(int(raw))) - 1)
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [step * i for i in range(count + 2) if step * (i - 1) < top]


def _short(tokens: float) -> str:
    if not tokens:
        return "0"
    return f"{tokens / 1000:g}k" if tokens < 1_000_000 else f"{tokens / 1_000_000:g}M"


def occupancy_svg(turns: pl.DataFrame, *, title: str) -> str:
    """Recorded occupancy over one session's main-transcript turns (a turns frame slice) as SVG.

    Sessions with more than ``MAX_POINTS`` recorded turns are thinned to that many points for
    the dots; the line keeps every turn.

    Examples:
        >>> import polars as pl
        >>> rows = pl.DataFrame({"turn_index": [0, 1], "occupancy": [20_000, 150_000],
        ...     "window": [200_000] * 2, "effective_window": [180_000] * 2,
        ...     "autocompact_threshold": [167_000] * 2, "compacted": [False, True]})
        >>> svg = occupancy_svg(rows, title="session 0123abcd")
        >>> svg.startswith("<svg") and "session 0123abcd" in svg and svg.count("<circle") == 2
        True
    """
    rows = turns.filter(pl.col(S.OCCUPANCY).is_not_null()).sort(S.TURN_INDEX)
    head = f"<svg xmlns='http://www.w3.org/2000/svg' class='cc-occupancy' width='{WIDTH}' height='{HEIGHT}' font-family='system-ui,sans-serif' font-size='11'>"
    heading = f"<text x='{MARGIN_LEFT}' y='14' font-weight='600' font-size='12'>{html.escape(title)}</text>"
    if rows.is_empty():
        return f"{head}{heading}<text x='{WIDTH // 2}' y='{HEIGHT // 2}' text-anchor='middle' fill='#666'>no recorded usage</text></svg>"
    xs = rows[S.TURN_INDEX].to_list()
    ys = rows[S.OCCUPANCY].to_list()
    limits = [(label, rows[column].max()) for column, label in LIMIT_LABELS.items() if column in rows.columns]
    top = max([*ys, *(v for _, v in limits if v is not None)]) or 1
    y_ticks = _ticks(top)
    y_max = y_ticks[-1] or 1
    x_min, x_max = xs[0], xs[-1] if xs[-1] > xs[0] else xs[0] + 1
    plot_w = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_h = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM

    def px(x: float) -> float:
        return MARGIN_LEFT + (x - x_min) / (x_max - x_min) * plot_w

    def py(y: float) -> float:
        return MARGIN_TOP + plot_h - y / y_max * plot_h

    parts = [head, heading]
    bottom = MARGIN_TOP + plot_h
    for t in y_ticks:
        parts.append(
            f"<line x1='{MARGIN_LEFT}' x2='{MARGIN_LEFT + plot_w}' y1='{py(t):.1f}' y2='{py(t):.1f}' stroke='#eee'/>"
            f"<text x='{MARGIN_LEFT - 6}' y='{py(t) + 4:.1f}' text-anchor='end' fill='#555'>{_short(t)}</text>"
        )
    x_ticks = sorted({round(x_min + (x_max - x_min) * i / 4) for i in range(5)})
    for t in x_ticks:
        parts.append(f"<text x='{px(t):.1f}' y='{bottom + 14}' text-anchor='middle' fill='#555'>{t}</text>")
    parts.append(
        f"<text x='{MARGIN_LEFT + plot_w / 2:.0f}' y='{HEIGHT - 2}' text-anchor='middle' fill='#333'>turn</text>"
    )
    parts.append(
        f"<line x1='{MARGIN_LEFT}' x2='{MARGIN_LEFT}' y1='{MARGIN_TOP}' y2='{bottom}' stroke='#888'/>"
        f"<line x1='{MARGIN_LEFT}' x2='{MARGIN_LEFT + plot_w}' y1='{bottom}' y2='{bottom}' stroke='#888'/>"
    )
    parts.append("<g class='marks'>")
    label_y = float("-inf")
    drawn = sorted(((py(v), i, label, v) for i, (label, v) in enumerate(limits) if v is not None), key=lambda d: d[0])
    for y, i, label, value in drawn:
        label_y = max(y + 4, label_y + 12)  # labels of close limits stack instead of overlapping
        parts.append(
            f"<line x1='{MARGIN_LEFT}' x2='{MARGIN_LEFT + plot_w}' y1='{y:.1f}' y2='{y:.1f}' stroke='{LIMIT_COLOURS[i]}' stroke-dasharray='6 3'>"
            f"<title>{html.escape(label)}: {value:,}</title></line>"
            f"<text x='{MARGIN_LEFT + plot_w + 6}' y='{label_y:.1f}' fill='{LIMIT_COLOURS[i]}'>{html.escape(label)}</text>"
        )
    points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys, strict=True))
    parts.append(f"<polyline points='{points}' fill='none' stroke='#4a6fa5' stroke-width='1.5'/>")
    windows = rows[S.WINDOW].to_list() if S.WINDOW in rows.columns else [None] * len(xs)
    compacted = rows[S.COMPACTED].to_list() if S.COMPACTED in rows.columns else [False] * len(xs)
    step = max(1, len(xs) // MAX_POINTS)
    for i in range(0, len(xs), step):
        x, y, window = xs[i], ys[i], windows[i]
        colour = ZONE_COLOURS[metrics.zone_of(metrics.used_fraction_of(y, window or 0))]
        parts.append(
            f"<circle cx='{px(x):.1f}' cy='{py(y):.1f}' r='3.5' fill='{colour}'><title>turn {x}: {y:,} tokens</title></circle>"
        )
    for x, y, flag in zip(xs, ys, compacted, strict=True):
        if flag:
            cx, cy = px(x), py(y) - 9
            parts.append(
                f"<path d='M{cx - 5:.1f},{cy - 4:.1f}L{cx + 5:.1f},{cy - 4:.1f}L{cx:.1f},{cy + 4:.1f}Z' fill='#d1343a'>"
                f"<title>compacted in turn {x}</title></path>"
            )
    parts.append("</g></svg>")
    return "".join(parts)


__all__ = ["occupancy_svg"]
