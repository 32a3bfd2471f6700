"""The one chart module: each function takes a sessions, turns or requests frame and returns an Altair chart.

Imports: altair, polars, ``frames.schema`` (column names), ``frames.metrics`` (colour zones) and
``views.common`` (colours and labels).
Every function aggregates with Polars first and hands Altair only the few rows it draws, so
a chart's size does not grow with the corpus (no raw events, no 5,000-row limit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import altair as alt
import polars as pl

from cc_analytics.frames import schema as S
from cc_analytics.frames.metrics import RED_ABOVE, YELLOW_ABOVE, autocompact_threshold_of, zone
from cc_analytics.views.common import (
    BUCKET_COLOURS,
    BUCKET_LABELS,
    LIMIT_COLOURS,
    LIMIT_LABELS,
    TOKEN_KINDS,
    UNATTRIBUTED,
    ZONE_COLOURS,
    Frame,
    collect,
)

WIDTH = 560
OTHER = "other"


def session_label() -> pl.Expr:
    """``project-basename · 1a2b3c4d``: short, unique enough to read on an axis."""
    project = pl.col(S.PROJECT).fill_null("?").str.replace(r".*/", "")
    return pl.concat_str(project, pl.lit(" · "), pl.col(S.SESSION_ID).str.slice(0, 8))


def model_of() -> pl.Expr:
    """The model a session is filed under: its last model, else its first listed one."""
    return pl.coalesce(pl.col(S.LAST_MODEL), pl.col(S.MODELS).list.first()).fill_null("unknown")


def _zone_scale() -> alt.Scale:
    return alt.Scale(domain=list(ZONE_COLOURS), range=list(ZONE_COLOURS.values()))


def bucket_breakdown(
    sessions: Frame, *, top: int = 25, normalize: bool = True, unattributed: bool = False
) -> alt.Chart:
    """Stacked bars of the five heuristic buckets for the ``top`` sessions by peak occupancy.

    ``normalize`` shows each session's shares (tooltips keep the tokens). With
    ``unattributed``, a sixth grey segment shows what the recorded last occupancy holds
    beyond the transcript's text (system prompt, tool schemas, outputs saved to disk).
    """
    df = collect(sessions)
    buckets = list(BUCKET_LABELS)
    frame = (
        df.with_columns(session_label().alias("session"))
        .sort(pl.col(S.PEAK_OCCUPANCY).fill_null(pl.col(S.ESTIMATED_TOKENS)), descending=True)
        .head(top)
        .select("session", *buckets, S.LAST_OCCUPANCY, S.ESTIMATED_TOKENS)
        .with_columns(
            (pl.col(S.LAST_OCCUPANCY) - pl.col(S.ESTIMATED_TOKENS)).clip(lower_bound=0).fill_null(0).alias(UNATTRIBUTED)
        )
        .rename(BUCKET_LABELS)
    )
    names = list(BUCKET_LABELS.values()) + ([UNATTRIBUTED] if unattributed else [])
    long = frame.unpivot(index="session", on=names, variable_name="bucket", value_name="tokens").with_columns(
        pl.col("tokens").fill_null(0),
        pl.col("bucket").replace_strict({n: i for i, n in enumerate(names)}).alias("order"),
    )
    order = frame["session"].to_list()
    return (
        alt.Chart(long, title="What fills the context: buckets per session (estimated, all turns)")
        .mark_bar()
        .encode(
            x=alt.X(
                "tokens:Q",
                stack="normalize" if normalize else "zero",
                title="share of estimated tokens" if normalize else "tokens",
                axis=alt.Axis(format="%" if normalize else ",d"),
            ),
            y=alt.Y("session:N", sort=order, title=None),
            color=alt.Color(
                "bucket:N",
                scale=alt.Scale(domain=names, range=BUCKET_COLOURS[: len(names)]),
                title="bucket",
            ),
            order=alt.Order("order:Q"),
            tooltip=["session:N", "bucket:N", alt.Tooltip("tokens:Q", format=",")],
        )
        .properties(width=WIDTH)
    )


_INDEPENDENT_COLOURS = alt.Resolve(scale=alt.ScaleResolveMap(color="independent"))


def _one_session_turns(
    turns: pl.DataFrame, session_id: str, *, width: int = WIDTH // 2 - 20, height: int = 180
) -> alt.LayerChart:
    rows = (
        turns.filter((pl.col(S.SESSION_ID) == session_id) & ~pl.col(S.IS_SUBAGENT_FILE).fill_null(False))
        .filter(pl.col(S.OCCUPANCY).is_not_null())
        .select(
            S.TURN_INDEX,
            S.OCCUPANCY,
            S.USED_FRACTION,
            S.COMPACTED,
            S.WINDOW,
            S.EFFECTIVE_WINDOW,
            S.AUTOCOMPACT_THRESHOLD,
            S.MODEL,
        )
        .with_columns(zone(pl.col(S.USED_FRACTION)).alias("zone"))
        .sort(S.TURN_INDEX)
    )
    if rows.is_empty():
        empty = pl.DataFrame({"text": [f"no recorded usage in session {session_id[:8]}"]})
        return alt.layer(alt.Chart(empty).mark_text().encode(text="text:N"))
    limits = pl.DataFrame({"limit": list(LIMIT_LABELS.values()), "tokens": [rows[c].max() for c in LIMIT_LABELS]})
    base = alt.Chart(rows)
    ticks = rows[S.TURN_INDEX].to_list() if rows.height <= 16 else alt.Undefined
    x = alt.X(f"{S.TURN_INDEX}:Q", title="turn", axis=alt.Axis(values=ticks, format="d"))
    line = base.mark_line(color="#4a6fa5").encode(x=x, y=alt.Y(f"{S.OCCUPANCY}:Q", title="occupancy (tokens)"))
    points = base.mark_circle(size=45).encode(
        x=x,
        y=f"{S.OCCUPANCY}:Q",
        color=alt.Color("zone:N", scale=_zone_scale(), legend=None),
        tooltip=[
            alt.Tooltip(f"{S.TURN_INDEX}:Q", title="turn"),
            alt.Tooltip(f"{S.OCCUPANCY}:Q", format=","),
            alt.Tooltip(f"{S.USED_FRACTION}:Q", format=".1%", title="used"),
            f"{S.MODEL}:N",
        ],
    )
    rules = (
        alt.Chart(limits)
        .mark_rule(strokeDash=[6, 3])
        .encode(
            y="tokens:Q",
            color=alt.Color(
                "limit:N",
                scale=alt.Scale(domain=list(LIMIT_LABELS.values()), range=LIMIT_COLOURS),
                title="limits",
            ),
            tooltip=["limit:N", alt.Tooltip("tokens:Q", format=",")],
        )
    )
    layers = [rules, line, points]
    compacted = rows.filter(pl.col(S.COMPACTED))
    if compacted.height:
        layers.append(
            alt.Chart(compacted)
            .mark_point(shape="triangle-down", size=140, filled=True, color="#d1343a")
            .encode(
                x=x,
                y=f"{S.OCCUPANCY}:Q",
                tooltip=[alt.Tooltip(f"{S.TURN_INDEX}:Q", title="compacted in turn")],
            )
        )
    # Everything given to the constructor: each .resolve_scale() or .properties() is a deep
    # copy of the chart (a quarter of the report's chart time went to them).
    return alt.layer(
        *layers, resolve=_INDEPENDENT_COLOURS, title=f"session {session_id[:8]}", width=width, height=height
    )


def occupancy_over_turns(
    turns: Frame,
    *,
    session_id: str | None = None,
    session_ids: Sequence[str] | None = None,
    limit: int = 4,
    columns: int = 2,
) -> alt.LayerChart | alt.ConcatChart:
    """Recorded occupancy per turn with the window, effective-window and auto-compact rules.

    A red triangle marks each turn in which the context was compacted. One session gives one
    layered chart; several (``session_ids``, or the ``limit`` sessions of highest peak) give
    small multiples, each with its own window.
    """
    df = collect(turns)
    if session_id is not None:
        return _one_session_turns(df, session_id, width=WIDTH, height=260)
    if session_ids is None:
        session_ids = (
            df.filter(pl.col(S.OCCUPANCY).is_not_null() & ~pl.col(S.IS_SUBAGENT_FILE).fill_null(False))
            .group_by(S.SESSION_ID)
            .agg(pl.col(S.OCCUPANCY).max().alias("peak"), pl.len().alias("n"))
            .filter(pl.col("n") > 1)
            .sort("peak", S.SESSION_ID, descending=[True, False])
            .head(limit)[S.SESSION_ID]
            .to_list()
        )
    charts = [_one_session_turns(df, sid) for sid in session_ids]
    if not charts:
        charts = [_one_session_turns(df, "")]
    return alt.concat(
        *charts,
        columns=columns,
        title="Occupancy over turns (sessions with the highest peaks)",
        resolve=_INDEPENDENT_COLOURS,
    )


def peak_distribution(sessions: Frame, *, bin_width: float = 0.05) -> alt.LayerChart:
    """How full do windows get: sessions per bin of peak occupancy / window, coloured by zone."""
    df = collect(sessions)
    bins = (
        df.filter(pl.col(S.PEAK_OCCUPANCY).is_not_null() & (pl.col(S.WINDOW) > 0))
        .select((pl.col(S.PEAK_OCCUPANCY) / pl.col(S.WINDOW)).clip(upper_bound=1.2).alias("peak"))
        .with_columns(((pl.col("peak") / bin_width).floor() * bin_width).round(4).alias("bin_start"))
        .group_by("bin_start")
        .agg(pl.len().alias("sessions"))
        .with_columns((pl.col("bin_start") + bin_width).round(4).alias("bin_end"))
        .with_columns(zone(pl.col("bin_start") + bin_width / 2).alias("zone"))
        .sort("bin_start")
    )
    bars = (
        alt.Chart(bins)
        .mark_bar(stroke="white")
        .encode(
            x=alt.X(
                "bin_start:Q",
                bin="binned",
                title="peak occupancy / window",
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, max(1.0, bins["bin_end"].max() or 1.0)]),
            ),
            x2="bin_end:Q",
            y=alt.Y("sessions:Q", title="sessions", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color("zone:N", scale=_zone_scale(), title="zone"),
            tooltip=[
                alt.Tooltip("bin_start:Q", format=".0%", title="from"),
                alt.Tooltip("bin_end:Q", format=".0%", title="to"),
                "sessions:Q",
            ],
        )
    )
    marks = pl.DataFrame(
        {
            "at": [YELLOW_ABOVE, RED_ABOVE, autocompact_threshold_of(200_000) / 200_000],
            "label": ["70%", "90%", "auto-compact (200k)"],
        }
    )
    rules = alt.Chart(marks).mark_rule(strokeDash=[4, 3], color="#777").encode(x="at:Q", tooltip=["label:N"])
    return alt.layer(bars, rules).properties(
        title="Distribution of peak occupancy across sessions", width=WIDTH, height=220
    )


def _day(df: pl.DataFrame) -> pl.Expr:
    time = pl.coalesce(pl.col(S.FIRST_TIME), pl.col(S.LAST_TIME)) if S.FIRST_TIME in df.columns else pl.col(S.LAST_TIME)
    return time.dt.replace_time_zone(None).dt.date().alias("day")


def daily_trend(sessions: Frame) -> alt.VConcatChart:
    """Per day (of a session's start, UTC): tokens by kind, sessions started, and compactions."""
    df = collect(sessions)
    kinds = [c for c in TOKEN_KINDS if c in df.columns]
    daily = (
        df.with_columns(_day(df))
        .filter(pl.col("day").is_not_null())
        .group_by("day")
        .agg(
            *(pl.col(c).fill_null(0).sum() for c in kinds),
            pl.len().alias("sessions"),
            pl.col(S.COMPACTIONS).fill_null(0).sum().alias("compactions"),
        )
        .sort("day")
        .with_columns(pl.col("day").cast(pl.String))
    )
    tokens = (
        daily.select("day", *kinds)
        .rename({c: TOKEN_KINDS[c] for c in kinds})
        .unpivot(index="day", variable_name="kind", value_name="tokens")
    )
    x = alt.X("day:T", timeUnit="utcyearmonthdate", title="day (UTC)", axis=alt.Axis(format="%b %d"))
    top = (
        alt.Chart(tokens, title="Daily tokens (deduplicated), sessions and compactions")
        .mark_bar()
        .encode(
            x=x,
            y=alt.Y("tokens:Q", title="tokens", axis=alt.Axis(format="~s")),
            color=alt.Color("kind:N", title="tokens", sort=list(TOKEN_KINDS.values())),
            tooltip=[
                alt.Tooltip("day:T", timeUnit="utcyearmonthdate"),
                "kind:N",
                alt.Tooltip("tokens:Q", format=","),
            ],
        )
        .properties(width=WIDTH, height=170)
    )
    counts = daily.select("day", "sessions", "compactions").unpivot(index="day", variable_name="count", value_name="n")
    bottom = (
        alt.Chart(counts)
        .mark_bar()
        .encode(
            x=x,
            xOffset="count:N",
            y=alt.Y("n:Q", title="count", axis=alt.Axis(tickMinStep=1)),
            color=alt.Color(
                "count:N",
                scale=alt.Scale(domain=["sessions", "compactions"], range=["#4a6fa5", "#d1343a"]),
                title="count",
            ),
            tooltip=[alt.Tooltip("day:T", timeUnit="utcyearmonthdate"), "count:N", "n:Q"],
        )
        .properties(width=WIDTH, height=110)
    )
    return alt.vconcat(top, bottom, resolve=_INDEPENDENT_COLOURS)


def comparison(sessions: Frame, *, by: Literal["model", "project"] = "model") -> alt.HConcatChart:
    """Sessions, total tokens and mean/max peak occupancy per model or per project."""
    df = collect(sessions)
    group = model_of() if by == "model" else pl.col(S.PROJECT).fill_null("?").str.replace(r".*/", "")
    kinds = [c for c in TOKEN_KINDS if c in df.columns]
    table = (
        df.with_columns(group.alias(by), (pl.col(S.PEAK_OCCUPANCY) / pl.col(S.WINDOW)).alias("peak_fraction"))
        .group_by(by)
        .agg(
            pl.len().alias("sessions"),
            pl.sum_horizontal(*(pl.col(c).fill_null(0) for c in kinds)).sum().alias("tokens")
            if kinds
            else pl.lit(0).alias("tokens"),
            pl.col("peak_fraction").mean().alias("mean_peak"),
            pl.col("peak_fraction").max().alias("max_peak"),
            pl.col(S.COMPACTIONS).fill_null(0).sum().alias("compactions"),
        )
        .with_columns(zone(pl.col("max_peak")).alias("zone"))
        .sort("sessions", by, descending=[True, False])
    )
    order = table[by].to_list()
    y = alt.Y(f"{by}:N", sort=order, title=None)
    base = alt.Chart(table).encode(
        y=y,
        tooltip=[
            f"{by}:N",
            "sessions:Q",
            alt.Tooltip("tokens:Q", format=","),
            alt.Tooltip("mean_peak:Q", format=".1%"),
            alt.Tooltip("max_peak:Q", format=".1%"),
            "compactions:Q",
        ],
    )
    count = (
        base.mark_bar(color="#4a6fa5").encode(x=alt.X("sessions:Q", axis=alt.Axis(tickMinStep=1))).properties(width=140)
    )
    tokens = (
        base.mark_bar(color="#82b366").encode(x=alt.X("tokens:Q", axis=alt.Axis(format="~s"))).properties(width=160)
    )
    peak = alt.layer(
        base.mark_bar(opacity=0.55).encode(
            x=alt.X("max_peak:Q", title="peak / window (bar max, dot mean)", axis=alt.Axis(format="%")),
            color=alt.Color("zone:N", scale=_zone_scale(), legend=None),
        ),
        base.mark_circle(size=70, color="#333333").encode(x="mean_peak:Q"),
    ).properties(width=180)
    return alt.hconcat(count, tokens, peak, title=f"Comparison by {by}")


def _top_with_other(frame: pl.DataFrame, column: str, top: int) -> pl.Expr:
    """``column`` for its ``top`` values by cost, ``other`` for the rest (a legend stays readable)."""
    ranked = frame.group_by(column).agg(pl.col(S.COST_USD).sum()).sort(S.COST_USD, column, descending=[True, False])
    kept = ranked.head(top)[column].implode()
    return pl.when(pl.col(column).is_in(kept)).then(pl.col(column)).otherwise(pl.lit(OTHER))


def cost_per_day(requests: Frame, *, top_models: int = 8) -> alt.Chart:
    """Cost per day (UTC), stacked by model: the ``top_models`` costliest, the rest as ``other``.

    ``requests`` is a priced requests frame (``frames.read_requests``); requests without a
    price are left out and counted in the tooltip.

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = requests_frame([{"time": "2026-03-01T10:00:00Z", "model": "m", "cost_usd": 1.5}])
        >>> cost_per_day(frame).to_dict()["mark"]["type"]
        'bar'
    """
    df = collect(requests).with_columns(pl.col(S.MODEL).fill_null("unknown"))
    daily = (
        df.filter(pl.col(S.TIME).is_not_null())
        .with_columns(
            pl.col(S.TIME).dt.date().cast(pl.String).alias("day"),
            _top_with_other(df, S.MODEL, top_models).alias("model"),
        )
        .group_by("day", "model")
        .agg(
            pl.col(S.COST_USD).sum().alias("cost"),
            pl.len().alias("requests"),
            pl.col(S.COST_USD).null_count().alias("unpriced"),
        )
        .sort("day", "model")
    )
    order = daily.group_by("model").agg(pl.col("cost").sum()).sort("cost", descending=True)["model"].to_list()
    return (
        alt.Chart(daily, title="Cost per day, by model (USD, priced offline at each request's date)")
        .mark_bar()
        .encode(
            # Days with requests only, one band each (a calendar axis over months of history
            # leaves a few pixels per day).
            x=alt.X("day:O", title="day (UTC)", axis=alt.Axis(labelAngle=-45, labelOverlap=True)),
            y=alt.Y("cost:Q", title="cost (USD)", axis=alt.Axis(format="$,.2f")),
            color=alt.Color("model:N", sort=order, title="model"),
            order=alt.Order("cost:Q", sort="descending"),
            tooltip=[
                "day:O",
                "model:N",
                alt.Tooltip("cost:Q", format="$,.2f"),
                "requests:Q",
                alt.Tooltip("unpriced:Q", title="requests without a price"),
            ],
        )
        .properties(width=WIDTH, height=220)
    )


def cost_by(requests: Frame, *, by: Literal["model", "project"] = "project", top: int = 15) -> alt.Chart:
    """Total cost per project (its basename; ChainlessChain sessions record none) or per model:
    the ``top`` costliest, bars labelled with their cost, requests without a price in the tooltip.

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = requests_frame([{"project": "/w/shop", "model": "m", "cost_usd": 2.0}])
        >>> cost_by(frame, by="project").to_dict()["layer"][0]["mark"]["type"]
        'bar'
    """
    df = collect(requests)
    if by == "project":
        label = pl.col(S.PROJECT).str.replace(r".*/", "").fill_null(pl.concat_str(pl.lit("("), S.FORMAT, pl.lit(")")))
    else:
        label = pl.col(S.MODEL).fill_null("unknown")
    table = (
        df.with_columns(label.alias(by))
        .group_by(by)
        .agg(
            pl.col(S.COST_USD).sum().alias("cost"),
            pl.len().alias("requests"),
            pl.col(S.COST_USD).null_count().alias("unpriced"),
        )
        .sort("cost", by, descending=[True, False])
        .head(top)
    )
    base = alt.Chart(table, title=f"Cost by {by} (USD)").encode(
        y=alt.Y(f"{by}:N", sort=table[by].to_list(), title=None),
        x=alt.X("cost:Q", title="cost (USD)", axis=alt.Axis(format="$,.2~f")),
        tooltip=[
            f"{by}:N",
            alt.Tooltip("cost:Q", format="$,.2f"),
            "requests:Q",
            alt.Tooltip("unpriced:Q", title="requests without a price"),
        ],
    )
    bars = base.mark_bar(color="#4a6fa5")
    labels = base.mark_text(align="left", dx=3, fontSize=11).encode(text=alt.Text("cost:Q", format="$,.2f"))
    return alt.layer(bars, labels).properties(width=WIDTH // 2 + 40, height=alt.Step(18))


def _log_cell(column: str, bins: int) -> pl.Expr:
    """The lower edge of the log-spaced cell (one of ``bins``) each value falls in."""
    log = pl.col(column).log10()
    low, span = log.min(), pl.max_horizontal(log.max() - log.min(), pl.lit(1e-9))
    index = ((log - low) / span * bins).floor().clip(0, bins - 1)
    return (10 ** (low + index * span / bins)).alias(column)


def calibration(turns: Frame, *, max_points: int = 2000, bins: int = 40) -> alt.LayerChart:
    """Heuristic estimate against recorded occupancy, per turn (log-log, with the y = x line).

    Up to ``max_points`` turns are drawn as points; beyond that, turns are counted in a
    ``bins`` × ``bins`` grid of log-spaced cells and each cell is one sized circle.
    """
    df = collect(turns)
    pairs = df.filter(
        (pl.col(S.OCCUPANCY) > 0) & (pl.col(S.ESTIMATED_CONTEXT) > 0) & ~pl.col(S.IS_SUBAGENT_FILE).fill_null(False)
    ).select(
        pl.col(S.ESTIMATED_CONTEXT).alias("estimated"),
        pl.col(S.OCCUPANCY).alias("recorded"),
        pl.lit(1).alias("turns"),
        pl.col(S.SESSION_ID).str.slice(0, 8).alias("session"),
    )
    if pairs.height > max_points:
        pairs = (
            pairs.with_columns(_log_cell("estimated", bins).round(0), _log_cell("recorded", bins).round(0))
            .group_by("estimated", "recorded")
            .agg(pl.len().alias("turns"))
            .with_columns(pl.lit("(binned)").alias("session"))
        )
    low = float(min(pairs["recorded"].min() or 1, pairs["estimated"].min() or 1))
    high = float(max(pairs["recorded"].max() or 1, pairs["estimated"].max() or 1))
    diagonal = pl.DataFrame({"estimated": [low, high], "recorded": [low, high]})
    scale = alt.Scale(type="log", domain=[low, high])
    binned = (pairs["turns"].max() or 0) > 1  # no pairs: an empty chart
    points = (
        alt.Chart(pairs)
        .mark_circle(opacity=0.6, color="#4a6fa5")
        .encode(
            x=alt.X("estimated:Q", scale=scale, title="estimated context (tokens, heuristic)"),
            y=alt.Y("recorded:Q", scale=scale, title="recorded occupancy (tokens)"),
            size=alt.Size("turns:Q", legend=None, scale=alt.Scale(range=[30, 400])) if binned else alt.value(40),
            tooltip=[
                "session:N",
                alt.Tooltip("estimated:Q", format=","),
                alt.Tooltip("recorded:Q", format=","),
                "turns:Q",
            ],
        )
    )
    line = alt.Chart(diagonal).mark_line(strokeDash=[4, 4], color="#999").encode(x="estimated:Q", y="recorded:Q")
    return alt.layer(line, points).properties(
        title="Calibration: estimate vs recorded, per turn", width=WIDTH // 2 + 80, height=300
    )


__all__ = [
    "bucket_breakdown",
    "calibration",
    "collect",
    "comparison",
    "cost_by",
    "cost_per_day",
    "daily_trend",
    "occupancy_over_turns",
    "peak_distribution",
    "session_label",
    "zone",
]


def composition_parts(composition: Frame, *, session_id: str | None = None, top_parts: int = 8) -> pl.DataFrame:
    """The rows :func:`composition_over_turns` draws: one session's main transcript (``session_id``,
    else the one with the most turns that recorded their occupancy), ``turn_index``, ``part``
    (``category · item``; beyond the ``top_parts`` largest, ``other``), ``tokens`` (calibrated
    where the turn recorded its occupancy, else estimated) and ``compacted``.
    """
    df = collect(composition)
    if session_id is None:
        counted = (
            df.filter(pl.col(S.OCCUPANCY).is_not_null())
            .group_by(S.SESSION_ID)
            .agg(pl.col(S.TURN_INDEX).n_unique().alias("n"))
            .sort("n", S.SESSION_ID, descending=[True, False])
        )
        session_id = counted[S.SESSION_ID][0] if counted.height else None
    mine = df.filter(pl.col(S.SESSION_ID) == session_id)
    if mine.height:
        mine = mine.filter(pl.col(S.SOURCE_FILE) == mine[S.SOURCE_FILE][0])
    part = pl.concat_str(pl.col(S.CATEGORY).cast(pl.String), pl.lit(" · ") + pl.col(S.ITEM), ignore_nulls=True).alias(
        "part"
    )
    tokens = pl.coalesce(S.TOKENS, S.ESTIMATED_TOKENS).alias(S.TOKENS)
    mine = mine.select(S.TURN_INDEX, part, tokens, S.COMPACTED)
    largest = mine.group_by("part").agg(pl.col(S.TOKENS).max()).sort(S.TOKENS, "part", descending=[True, False])
    kept = largest.head(top_parts)["part"]
    return (
        mine.with_columns(pl.when(pl.col("part").is_in(kept.implode())).then("part").otherwise(pl.lit(OTHER)))
        .group_by(S.TURN_INDEX, "part")
        .agg(pl.col(S.TOKENS).sum(), pl.col(S.COMPACTED).first())
        .filter(pl.col(S.TOKENS) > 0)
        .sort(S.TURN_INDEX, "part")
    )


def composition_over_turns(composition: Frame, *, session_id: str | None = None, top_parts: int = 8) -> alt.LayerChart:
    """What filled one session's window at each turn: the composition frame's parts stacked
    (calibrated to the recorded occupancy, so a bar's height is it), a dashed red rule at each
    turn that followed a compaction."""
    parts = composition_parts(composition, session_id=session_id, top_parts=top_parts)
    bars = (
        alt.Chart(parts)
        .mark_bar()
        .encode(
            x=alt.X(f"{S.TURN_INDEX}:O", title="turn"),
            y=alt.Y(f"sum({S.TOKENS}):Q", title="tokens in the window", stack="zero"),
            color=alt.Color("part:N", title="part", sort="-y"),
            order=alt.Order(f"{S.TOKENS}:Q", sort="descending"),
            tooltip=[f"{S.TURN_INDEX}:O", "part:N", alt.Tooltip(f"{S.TOKENS}:Q", format=",")],
        )
    )
    compactions = parts.filter(pl.col(S.COMPACTED)).select(S.TURN_INDEX).unique()
    rules = (
        alt.Chart(compactions)
        .mark_rule(color="#d1343a", strokeDash=[4, 3])
        .encode(x=alt.X(f"{S.TURN_INDEX}:O"), tooltip=[alt.Tooltip(f"{S.TURN_INDEX}:O", title="compacted at turn")])
    )
    return alt.layer(bars, rules).properties(
        width=WIDTH, height=260, title="What filled the window, turn by turn (estimated parts, calibrated)"
    )


def limits_beside_blocks(limits: Frame, blocks: Frame | None = None) -> alt.VConcatChart | alt.Chart:
    """The plans' rate limits over time (the limits frame: used percent per window and agent,
    each reading a point on its line), above the cost of each 5-hour block (``read_usage(...,
    by="block")``) on the same time axis, so a jump in the 5-hour limit can be set against the
    block that spent it."""
    df = collect(limits).with_columns(
        pl.concat_str(pl.col(S.FORMAT), pl.lit(" · "), pl.col(S.LIMIT_WINDOW)).alias("limit")
    )
    shown = df.select(S.TIME, "limit", S.USED_PERCENT, S.RESETS_AT).sort(S.TIME)
    lines = (
        alt.Chart(shown)
        .mark_line(point=True, interpolate="step-after")
        .encode(
            x=alt.X(f"{S.TIME}:T", title=None),
            y=alt.Y(f"{S.USED_PERCENT}:Q", title="limit used (%)", scale=alt.Scale(domain=[0, 100])),
            color=alt.Color("limit:N", title="limit"),
            tooltip=[
                "limit:N",
                alt.Tooltip(f"{S.TIME}:T", format="%Y-%m-%d %H:%M"),
                alt.Tooltip(f"{S.USED_PERCENT}:Q", format=".1f", title="used %"),
                alt.Tooltip(f"{S.RESETS_AT}:T", format="%Y-%m-%d %H:%M", title="resets"),
            ],
        )
        .properties(width=WIDTH, height=180, title="Rate limits (what the agents reported)")
    )
    if blocks is None:
        return lines
    spent = collect(blocks).select("block_start", "block_end", S.COST_USD, "total_tokens")
    bars = (
        alt.Chart(spent)
        .mark_bar(opacity=0.8, color="#4a6fa5")
        .encode(
            x=alt.X("block_start:T", title="time (UTC)"),
            x2="block_end:T",
            y=alt.Y(f"{S.COST_USD}:Q", title="cost per 5-hour block ($)"),
            tooltip=[
                alt.Tooltip("block_start:T", format="%Y-%m-%d %H:%M", title="block"),
                alt.Tooltip(f"{S.COST_USD}:Q", format="$,.2f", title="cost"),
                alt.Tooltip("total_tokens:Q", format=",", title="tokens"),
            ],
        )
        .properties(width=WIDTH, height=140, title="Usage by 5-hour block")
    )
    return alt.vconcat(lines, bars).resolve_scale(x="shared")


def specs_of(charts: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The Vega-Lite spec of each chart, whatever its data's size: Altair refuses data over 5,000
    rows unless told (a session of more turns than that), and the limit is lifted for these
    only. Not validated against the Vega-Lite schema (0.6 s on 1 GB): the charts are this
    package's, and tests validate every chart the report draws.

    Examples:
        >>> import polars as pl
        >>> many = alt.Chart(pl.DataFrame({"x": range(6_000)})).mark_tick().encode(x="x")
        >>> len(specs_of({"ticks": many})["ticks"]["datasets"].popitem()[1])
        6000
    """
    with alt.data_transformers.disable_max_rows():
        return {name: chart.to_dict(validate=False) for name, chart in charts.items()}
