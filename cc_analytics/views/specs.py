"""The one chart module: each function takes a sessions, turns or requests frame and returns its
chart's Vega-Lite spec, a plain dict that holds the rows it draws.

Imports: polars, the standard library, ``frames.schema`` (column names), ``frames.metrics``
(colour zones) and ``views.common`` (colours and labels); never Altair. The report embeds these
dicts as they are (importing Altair, building its objects and serializing them again cost
about 1.4 CPU seconds of a warm report on 1 GB); ``views.charts`` turns each into an Altair
chart for notebooks. Every function aggregates with Polars first and puts only the few rows
it draws in the spec, so a chart's size does not grow with the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

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

Spec = dict[str, Any]

VEGA_LITE = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
CONFIG = {"view": {"continuousWidth": 300, "continuousHeight": 300}}  # Altair's default, kept
WIDTH = 560
OTHER = "other"
TYPES = {"Q": "quantitative", "N": "nominal", "O": "ordinal", "T": "temporal"}
SHORTHAND = re.compile(r"(?:(?P<aggregate>\w+)\((?P<inner>\w+)\)|(?P<field>\w+)):(?P<type>[QNOT])")
ZONE_SCALE = {"domain": list(ZONE_COLOURS), "range": list(ZONE_COLOURS.values())}
INDEPENDENT_COLOURS = {"scale": {"color": "independent"}}
ISO = "%Y-%m-%dT%H:%M:%S"


def session_label() -> pl.Expr:
    """``project-basename · 1a2b3c4d``: short, unique enough to read on an axis."""
    project = pl.col(S.PROJECT).fill_null("?").str.replace(r".*/", "")
    return pl.concat_str(project, pl.lit(" · "), pl.col(S.SESSION_ID).str.slice(0, 8))


def model_of() -> pl.Expr:
    """The model a session is filed under: its last model, else its first listed one."""
    return pl.coalesce(pl.col(S.LAST_MODEL), pl.col(S.MODELS).list.first()).fill_null("unknown")


def channel(shorthand: str, **properties: Any) -> Spec:
    """An encoding channel from Altair's shorthand (``"tokens:Q"``, ``"sum(tokens):Q"``).

    Examples:
        >>> channel("sum(tokens):Q", title=None)
        {'aggregate': 'sum', 'field': 'tokens', 'type': 'quantitative', 'title': None}
    """
    parsed = SHORTHAND.fullmatch(shorthand)
    if parsed is None:
        msg = f"not a channel shorthand: {shorthand!r}"
        raise ValueError(msg)
    head = {"aggregate": parsed["aggregate"]} if parsed["aggregate"] else {}
    field = parsed["inner"] or parsed["field"]
    return {**head, "field": field, "type": TYPES[parsed["type"]], **properties}


def inline(frame: pl.DataFrame) -> Spec:
    """``frame``'s rows as inline data, JSON-ready as Altair would write them: dates and times as
    ISO strings (a time zone kept as its offset), NaN and infinities as null."""
    columns = []
    for name, dtype in frame.schema.items():
        column = pl.col(name)
        if dtype == pl.Date:
            column = column.cast(pl.Datetime).dt.to_string(ISO)
        elif isinstance(dtype, pl.Datetime):
            column = column.dt.to_string(f"{ISO}%.f" + ("%z" if dtype.time_zone else ""))
        elif dtype.is_float():
            column = pl.when(column.is_finite()).then(column)
        columns.append(column.alias(name))
    return {"values": frame.select(columns).to_dicts()}


def top_level(spec: Spec) -> Spec:
    """``spec`` as a page embeds it: the schema it follows and Altair's default view size."""
    return {"$schema": VEGA_LITE, "config": CONFIG, **spec}


def bucket_breakdown(sessions: Frame, *, top: int = 25, normalize: bool = True, unattributed: bool = False) -> Spec:
    """The spec of ``charts.bucket_breakdown``: the five buckets stacked, per session."""
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
    x = channel(
        "tokens:Q",
        stack="normalize" if normalize else "zero",
        title="share of estimated tokens" if normalize else "tokens",
        axis={"format": "%" if normalize else ",d"},
    )
    return top_level(
        {
            "title": "What fills the context: buckets per session (estimated, all turns)",
            "data": inline(long),
            "mark": {"type": "bar"},
            "encoding": {
                "x": x,
                "y": channel("session:N", sort=frame["session"].to_list(), title=None),
                "color": channel(
                    "bucket:N", scale={"domain": names, "range": BUCKET_COLOURS[: len(names)]}, title="bucket"
                ),
                "order": channel("order:Q"),
                "tooltip": [channel("session:N"), channel("bucket:N"), channel("tokens:Q", format=",")],
            },
            "width": WIDTH,
        }
    )


def _one_session_turns(
    turns: pl.DataFrame, session_id: str, *, width: int = WIDTH // 2 - 20, height: int = 180
) -> Spec:
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
        empty = {"values": [{"text": f"no recorded usage in session {session_id[:8]}"}]}
        return {"layer": [{"data": empty, "mark": {"type": "text"}, "encoding": {"text": channel("text:N")}}]}
    limits = pl.DataFrame({"limit": list(LIMIT_LABELS.values()), "tokens": [rows[c].max() for c in LIMIT_LABELS]})
    axis: Spec = {"format": "d"}
    if rows.height <= 16:
        axis["values"] = rows[S.TURN_INDEX].to_list()
    x = channel(f"{S.TURN_INDEX}:Q", title="turn", axis=axis)
    rules = {
        "data": inline(limits),
        "mark": {"type": "rule", "strokeDash": [6, 3]},
        "encoding": {
            "y": channel("tokens:Q"),
            "color": channel(
                "limit:N", scale={"domain": list(LIMIT_LABELS.values()), "range": LIMIT_COLOURS}, title="limits"
            ),
            "tooltip": [channel("limit:N"), channel("tokens:Q", format=",")],
        },
    }
    line = {
        "mark": {"type": "line", "color": "#4a6fa5"},
        "encoding": {"x": x, "y": channel(f"{S.OCCUPANCY}:Q", title="occupancy (tokens)")},
    }
    points = {
        "mark": {"type": "circle", "size": 45},
        "encoding": {
            "x": x,
            "y": channel(f"{S.OCCUPANCY}:Q"),
            "color": channel("zone:N", scale=ZONE_SCALE, legend=None),
            "tooltip": [
                channel(f"{S.TURN_INDEX}:Q", title="turn"),
                channel(f"{S.OCCUPANCY}:Q", format=","),
                channel(f"{S.USED_FRACTION}:Q", format=".1%", title="used"),
                channel(f"{S.MODEL}:N"),
            ],
        },
    }
    layers = [rules, line, points]
    compacted = rows.filter(pl.col(S.COMPACTED))
    if compacted.height:
        layers.append(
            {
                "data": inline(compacted),
                "mark": {"type": "point", "shape": "triangle-down", "size": 140, "filled": True, "color": "#d1343a"},
                "encoding": {
                    "x": x,
                    "y": channel(f"{S.OCCUPANCY}:Q"),
                    "tooltip": [channel(f"{S.TURN_INDEX}:Q", title="compacted in turn")],
                },
            }
        )
    # The turns once, for the layers that draw them (the line and the points): the others bring their own.
    return {
        "data": inline(rows),
        "layer": layers,
        "resolve": INDEPENDENT_COLOURS,
        "title": f"session {session_id[:8]}",
        "width": width,
        "height": height,
    }


def occupancy_over_turns(
    turns: Frame,
    *,
    session_id: str | None = None,
    session_ids: Sequence[str] | None = None,
    limit: int = 4,
    columns: int = 2,
) -> Spec:
    """The spec of ``charts.occupancy_over_turns``: a layer for one session, else a concat."""
    df = collect(turns)
    if session_id is not None:
        return top_level(_one_session_turns(df, session_id, width=WIDTH, height=260))
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
    charts = [_one_session_turns(df, sid) for sid in session_ids] or [_one_session_turns(df, "")]
    return top_level(
        {
            "concat": charts,
            "columns": columns,
            "title": "Occupancy over turns (sessions with the highest peaks)",
            "resolve": INDEPENDENT_COLOURS,
        }
    )


def peak_distribution(sessions: Frame, *, bin_width: float = 0.05) -> Spec:
    """The spec of ``charts.peak_distribution``: sessions per bin of peak / window, and rules."""
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
    bars = {
        "data": inline(bins),
        "mark": {"type": "bar", "stroke": "white"},
        "encoding": {
            "x": channel(
                "bin_start:Q",
                bin="binned",
                title="peak occupancy / window",
                axis={"format": "%"},
                scale={"domain": [0, max(1.0, bins["bin_end"].max() or 1.0)]},
            ),
            "x2": {"field": "bin_end"},
            "y": channel("sessions:Q", title="sessions", axis={"tickMinStep": 1}),
            "color": channel("zone:N", scale=ZONE_SCALE, title="zone"),
            "tooltip": [
                channel("bin_start:Q", format=".0%", title="from"),
                channel("bin_end:Q", format=".0%", title="to"),
                channel("sessions:Q"),
            ],
        },
    }
    marks = pl.DataFrame(
        {
            "at": [YELLOW_ABOVE, RED_ABOVE, autocompact_threshold_of(200_000) / 200_000],
            "label": ["70%", "90%", "auto-compact (200k)"],
        }
    )
    rules = {
        "data": inline(marks),
        "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#777"},
        "encoding": {"x": channel("at:Q"), "tooltip": [channel("label:N")]},
    }
    return top_level(
        {
            "layer": [bars, rules],
            "title": "Distribution of peak occupancy across sessions",
            "width": WIDTH,
            "height": 220,
        }
    )


def _day(df: pl.DataFrame) -> pl.Expr:
    time = pl.coalesce(pl.col(S.FIRST_TIME), pl.col(S.LAST_TIME)) if S.FIRST_TIME in df.columns else pl.col(S.LAST_TIME)
    return time.dt.replace_time_zone(None).dt.date().alias("day")


def daily_trend(sessions: Frame) -> Spec:
    """The spec of ``charts.daily_trend``: tokens by kind above sessions and compactions, per day."""
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
    counts = daily.select("day", "sessions", "compactions").unpivot(index="day", variable_name="count", value_name="n")
    x = channel("day:T", timeUnit="utcyearmonthdate", title="day (UTC)", axis={"format": "%b %d"})
    day = channel("day:T", timeUnit="utcyearmonthdate")
    upper = {
        "title": "Daily tokens (deduplicated), sessions and compactions",
        "data": inline(tokens),
        "mark": {"type": "bar"},
        "encoding": {
            "x": x,
            "y": channel("tokens:Q", title="tokens", axis={"format": "~s"}),
            "color": channel("kind:N", title="tokens", sort=list(TOKEN_KINDS.values())),
            "tooltip": [day, channel("kind:N"), channel("tokens:Q", format=",")],
        },
        "width": WIDTH,
        "height": 170,
    }
    lower = {
        "data": inline(counts),
        "mark": {"type": "bar"},
        "encoding": {
            "x": x,
            "xOffset": channel("count:N"),
            "y": channel("n:Q", title="count", axis={"tickMinStep": 1}),
            "color": channel(
                "count:N", scale={"domain": ["sessions", "compactions"], "range": ["#4a6fa5", "#d1343a"]}, title="count"
            ),
            "tooltip": [day, channel("count:N"), channel("n:Q")],
        },
        "width": WIDTH,
        "height": 110,
    }
    return top_level({"vconcat": [upper, lower], "resolve": INDEPENDENT_COLOURS})


def comparison(sessions: Frame, *, by: Literal["model", "project"] = "model") -> Spec:
    """The spec of ``charts.comparison``: sessions, tokens and peaks side by side, per model or project."""
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
    shared = {
        "y": channel(f"{by}:N", sort=table[by].to_list(), title=None),
        "tooltip": [
            channel(f"{by}:N"),
            channel("sessions:Q"),
            channel("tokens:Q", format=","),
            channel("mean_peak:Q", format=".1%"),
            channel("max_peak:Q", format=".1%"),
            channel("compactions:Q"),
        ],
    }
    count = {
        "mark": {"type": "bar", "color": "#4a6fa5"},
        "encoding": {**shared, "x": channel("sessions:Q", axis={"tickMinStep": 1})},
        "width": 140,
    }
    tokens = {
        "mark": {"type": "bar", "color": "#82b366"},
        "encoding": {**shared, "x": channel("tokens:Q", axis={"format": "~s"})},
        "width": 160,
    }
    peak_x = channel("max_peak:Q", title="peak / window (bar max, dot mean)", axis={"format": "%"})
    peak = {
        "layer": [
            {
                "mark": {"type": "bar", "opacity": 0.55},
                "encoding": {**shared, "x": peak_x, "color": channel("zone:N", scale=ZONE_SCALE, legend=None)},
            },
            {
                "mark": {"type": "circle", "size": 70, "color": "#333333"},
                "encoding": {**shared, "x": channel("mean_peak:Q")},
            },
        ],
        "width": 180,
    }
    return top_level({"data": inline(table), "hconcat": [count, tokens, peak], "title": f"Comparison by {by}"})


def _top_with_other(frame: pl.DataFrame, column: str, top: int) -> pl.Expr:
    """``column`` for its ``top`` values by cost, ``other`` for the rest (a legend stays readable)."""
    ranked = frame.group_by(column).agg(pl.col(S.COST_USD).sum()).sort(S.COST_USD, column, descending=[True, False])
    kept = ranked.head(top)[column].implode()
    return pl.when(pl.col(column).is_in(kept)).then(pl.col(column)).otherwise(pl.lit(OTHER))


def cost_per_day(requests: Frame, *, top_models: int = 8) -> Spec:
    """The spec of ``charts.cost_per_day``: cost per day, stacked by model."""
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
    return top_level(
        {
            "title": "Cost per day, by model (USD, priced offline at each request's date)",
            "data": inline(daily),
            "mark": {"type": "bar"},
            "encoding": {
                # Days with requests only, one band each (a calendar axis over months of history
                # leaves a few pixels per day).
                "x": channel("day:O", title="day (UTC)", axis={"labelAngle": -45, "labelOverlap": True}),
                "y": channel("cost:Q", title="cost (USD)", axis={"format": "$,.2f"}),
                "color": channel("model:N", sort=order, title="model"),
                "order": channel("cost:Q", sort="descending"),
                "tooltip": [
                    channel("day:O"),
                    channel("model:N"),
                    channel("cost:Q", format="$,.2f"),
                    channel("requests:Q"),
                    channel("unpriced:Q", title="requests without a price"),
                ],
            },
            "width": WIDTH,
            "height": 220,
        }
    )


def cost_by(requests: Frame, *, by: Literal["model", "project"] = "project", top: int = 15) -> Spec:
    """The spec of ``charts.cost_by``: the costliest projects or models, bars labelled with their cost."""
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
    encoding = {
        "y": channel(f"{by}:N", sort=table[by].to_list(), title=None),
        "x": channel("cost:Q", title="cost (USD)", axis={"format": "$,.2~f"}),
        "tooltip": [
            channel(f"{by}:N"),
            channel("cost:Q", format="$,.2f"),
            channel("requests:Q"),
            channel("unpriced:Q", title="requests without a price"),
        ],
    }
    bars = {"mark": {"type": "bar", "color": "#4a6fa5"}, "encoding": encoding}
    labels = {
        "mark": {"type": "text", "align": "left", "dx": 3, "fontSize": 11},
        "encoding": {**encoding, "text": channel("cost:Q", format="$,.2f")},
    }
    return top_level(
        {
            "title": f"Cost by {by} (USD)",
            "data": inline(table),
            "layer": [bars, labels],
            "width": WIDTH // 2 + 40,
            "height": {"step": 18},
        }
    )


def _log_cell(column: str, bins: int) -> pl.Expr:
    """The lower edge of the log-spaced cell (one of ``bins``) each value falls in."""
    log = pl.col(column).log10()
    low, span = log.min(), pl.max_horizontal(log.max() - log.min(), pl.lit(1e-9))
    index = ((log - low) / span * bins).floor().clip(0, bins - 1)
    return (10 ** (low + index * span / bins)).alias(column)


def calibration(turns: Frame, *, max_points: int = 2000, bins: int = 40) -> Spec:
    """The spec of ``charts.calibration``: estimate against recorded occupancy, log-log."""
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
            .sort("estimated", "recorded")  # the same page from the same turns
        )
    low = float(min(pairs["recorded"].min() or 1, pairs["estimated"].min() or 1))
    high = float(max(pairs["recorded"].max() or 1, pairs["estimated"].max() or 1))
    diagonal = pl.DataFrame({"estimated": [low, high], "recorded": [low, high]})
    scale = {"type": "log", "domain": [low, high]}
    binned = (pairs["turns"].max() or 0) > 1  # no pairs: an empty chart
    size = channel("turns:Q", legend=None, scale={"range": [30, 400]}) if binned else {"value": 40}
    points = {
        "data": inline(pairs),
        "mark": {"type": "circle", "opacity": 0.6, "color": "#4a6fa5"},
        "encoding": {
            "x": channel("estimated:Q", scale=scale, title="estimated context (tokens, heuristic)"),
            "y": channel("recorded:Q", scale=scale, title="recorded occupancy (tokens)"),
            "size": size,
            "tooltip": [
                channel("session:N"),
                channel("estimated:Q", format=","),
                channel("recorded:Q", format=","),
                channel("turns:Q"),
            ],
        },
    }
    line = {
        "data": inline(diagonal),
        "mark": {"type": "line", "strokeDash": [4, 4], "color": "#999"},
        "encoding": {"x": channel("estimated:Q"), "y": channel("recorded:Q")},
    }
    return top_level(
        {
            "layer": [line, points],
            "title": "Calibration: estimate vs recorded, per turn",
            "width": WIDTH // 2 + 80,
            "height": 300,
        }
    )


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


def composition_over_turns(composition: Frame, *, session_id: str | None = None, top_parts: int = 8) -> Spec:
    """The spec of ``charts.composition_over_turns``: one session's parts stacked per turn."""
    parts = composition_parts(composition, session_id=session_id, top_parts=top_parts)
    bars = {
        "data": inline(parts),
        "mark": {"type": "bar"},
        "encoding": {
            "x": channel(f"{S.TURN_INDEX}:O", title="turn"),
            "y": channel(f"sum({S.TOKENS}):Q", title="tokens in the window", stack="zero"),
            "color": channel("part:N", title="part", sort="-y"),
            "order": channel(f"{S.TOKENS}:Q", sort="descending"),
            "tooltip": [channel(f"{S.TURN_INDEX}:O"), channel("part:N"), channel(f"{S.TOKENS}:Q", format=",")],
        },
    }
    compactions = parts.filter(pl.col(S.COMPACTED)).select(S.TURN_INDEX).unique()
    rules = {
        "data": inline(compactions),
        "mark": {"type": "rule", "color": "#d1343a", "strokeDash": [4, 3]},
        "encoding": {
            "x": channel(f"{S.TURN_INDEX}:O"),
            "tooltip": [channel(f"{S.TURN_INDEX}:O", title="compacted at turn")],
        },
    }
    return top_level(
        {
            "layer": [bars, rules],
            "width": WIDTH,
            "height": 260,
            "title": "What filled the window, turn by turn (estimated parts, calibrated)",
        }
    )


def limits_beside_blocks(limits: Frame, blocks: Frame | None = None) -> Spec:
    """The spec of ``charts.limits_beside_blocks``: the limits' lines, above each block's cost when given."""
    df = collect(limits).with_columns(
        pl.concat_str(pl.col(S.FORMAT), pl.lit(" · "), pl.col(S.LIMIT_WINDOW)).alias("limit")
    )
    shown = df.select(S.TIME, "limit", S.USED_PERCENT, S.RESETS_AT).sort(S.TIME)
    lines = {
        "data": inline(shown),
        "mark": {"type": "line", "point": True, "interpolate": "step-after"},
        "encoding": {
            "x": channel(f"{S.TIME}:T", title=None),
            "y": channel(f"{S.USED_PERCENT}:Q", title="limit used (%)", scale={"domain": [0, 100]}),
            "color": channel("limit:N", title="limit"),
            "tooltip": [
                channel("limit:N"),
                channel(f"{S.TIME}:T", format="%Y-%m-%d %H:%M"),
                channel(f"{S.USED_PERCENT}:Q", format=".1f", title="used %"),
                channel(f"{S.RESETS_AT}:T", format="%Y-%m-%d %H:%M", title="resets"),
            ],
        },
        "width": WIDTH,
        "height": 180,
        "title": "Rate limits (what the agents reported)",
    }
    if blocks is None:
        return top_level(lines)
    spent = collect(blocks).select("block_start", "block_end", S.COST_USD, "total_tokens")
    bars = {
        "data": inline(spent),
        "mark": {"type": "bar", "opacity": 0.8, "color": "#4a6fa5"},
        "encoding": {
            "x": channel("block_start:T", title="time (UTC)"),
            "x2": {"field": "block_end"},
            "y": channel(f"{S.COST_USD}:Q", title="cost per 5-hour block ($)"),
            "tooltip": [
                channel("block_start:T", format="%Y-%m-%d %H:%M", title="block"),
                channel(f"{S.COST_USD}:Q", format="$,.2f", title="cost"),
                channel("total_tokens:Q", format=",", title="tokens"),
            ],
        },
        "width": WIDTH,
        "height": 140,
        "title": "Usage by 5-hour block",
    }
    return top_level({"vconcat": [lines, bars], "resolve": {"scale": {"x": "shared"}}})
