"""Usage over time: tokens, cost and requests by day, week, month, session, model, project or 5-hour block.

Imports: polars, the standard library, ``frames.requests``, ``frames.prices`` and the error
types. Input is a requests frame (:mod:`cc_analytics.frames.requests`), priced by
:func:`~cc_analytics.frames.prices.price_requests`; one without a ``cost_usd`` column is
priced here.

Each API request counts once over the whole frame (:func:`~cc_analytics.frames.requests.first_of_each_request`:
a response a resumed or forked session repeats in a new file is counted in the first
session read; the sessions frame counts it in each session whose transcript holds it).

Every row has the four token kinds (``cache_creation_tokens`` = both cache lifetimes),
``total_tokens``, ``cost_usd`` (the sum over the requests that have a price; null when none
has), ``requests`` and ``unpriced_requests`` (so a missing price is never a silent zero),
``first_time``/``last_time`` and the sorted ``models``. ``breakdown=True`` adds, under each
group's row (whose ``model`` is null), one row per model of the group.

Days, weeks (Monday to Sunday) and months are calendar periods in ``timezone``; ``since``
and ``until`` are inclusive calendar days there. The default timezone is the machine's
(:func:`~cc_analytics.frames.zones.local_timezone`).

**5-hour blocks**, as ccusage users know them: a block starts at its first request's time
floored to the UTC hour and covers 5 hours; a request later than that (strictly: one at
exactly 5 h still belongs to it) starts the next block, and so does one after a gap of 5 h.
Blocks are cut over all requests of the frame, whatever the session, since the limit they
track is the account's. Each block has ``block_start``, ``block_end``, its last activity
(``last_time``), burn rates (``tokens_per_hour``, ``cost_per_hour``: over the time from its
first to its last request, null for a single instant), and ``is_active``: the newest block,
if the reference time (``now``, by default the newest request) is not past its end. The
active block gets ``projected_tokens`` and ``projected_cost_usd``: its figures plus its burn
rate until its end. ccusage's "gap" rows (spans without requests) are not rows here.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Literal, TypeVar
from zoneinfo import ZoneInfo

import polars as pl

from cc_analytics.errors import InputError
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.requests import cache_creation_tokens, cost_totals, first_of_each_request, total_tokens
from cc_analytics.frames.schema import (
    CACHE_CREATION_TOKENS,
    CACHE_READ_TOKENS,
    COST_USD,
    FIRST_TIME,
    INPUT_TOKENS,
    LAST_TIME,
    MODEL,
    MODELS,
    OUTPUT_TOKENS,
    PROJECT,
    REQUESTS,
    SESSION_ID,
    TIME,
    TOTAL_TOKENS,
    UNPRICED_REQUESTS,
    UTC_TIME,
)
from cc_analytics.frames.zones import day_or_instant, resolve_timezone
from cc_analytics.frames.zones import local_timezone as local_timezone  # the API's since it was here

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)
By = Literal["day", "week", "month", "session", "model", "project", "block", "machine"]

BY: tuple[By, ...] = ("day", "week", "month", "session", "model", "project", "block", "machine")
MACHINE = "machine"  # a column of the frames read from archives (``archive --machine``)
BLOCK_HOURS = 5
DAY, WEEK, MONTH = "day", "week", "month"
BLOCK_START = "block_start"
BLOCK_END = "block_end"
IS_ACTIVE = "is_active"
TOKENS_PER_HOUR = "tokens_per_hour"
COST_PER_HOUR = "cost_per_hour"
PROJECTED_TOKENS = "projected_tokens"
PROJECTED_COST_USD = "projected_cost_usd"

_BLOCK = timedelta(hours=BLOCK_HOURS)
_HOUR_US = 3_600_000_000


def usage(
    requests: FrameT,
    by: By = "day",
    *,
    timezone: str | None = None,
    breakdown: bool = False,
    since: date | datetime | str | None = None,
    until: date | datetime | str | None = None,
    now: datetime | None = None,
) -> FrameT:
    """Tokens, cost and requests per ``by`` group, sorted by group.

    Args:
        requests: a requests frame, priced or not.
        by: ``day``, ``week``, ``month``, ``session``, ``model``, ``project``, ``block`` or
            ``machine`` (requests read from archives: they have a ``machine`` column).
        timezone: an IANA name for calendar periods and ``since``/``until``; default local.
        breakdown: add a row per model under each group (not for ``by="model"``).
        since: first calendar day kept (a date, ``YYYY-MM-DD`` or ``YYYYMMDD``), or an instant.
        until: last calendar day kept, likewise (inclusive).
        now: the reference time of the active block (default: the newest request).

    Examples:
        >>> from cc_analytics.frames.prices import price_requests
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = price_requests(
        ...     requests_frame(
        ...         [
        ...             {"model": "claude-opus-4-5", "time": "2026-01-05T23:30:00Z", "output_tokens": 40_000},
        ...             {"model": "claude-haiku-4-5", "time": "2026-01-06T00:30:00Z", "output_tokens": 200_000},
        ...         ]
        ...     )
        ... )
        >>> usage(frame, "day", timezone="UTC").select("day", "output_tokens", "cost_usd").rows()
        [(datetime.date(2026, 1, 5), 40000, 1.0), (datetime.date(2026, 1, 6), 200000, 1.0)]
        >>> usage(frame, "day", timezone="Asia/Tokyo").select("day", "requests", "cost_usd").rows()
        [(datetime.date(2026, 1, 6), 2, 2.0)]
        >>> usage(frame, "block").select("block_start", "requests", "is_active").rows()
        [(datetime.datetime(2026, 1, 5, 23, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC')), 2, True)]
    """
    if by not in BY:
        msg = f"cannot group usage by {by!r}\nHint: use one of {', '.join(BY)}"
        raise InputError(msg)
    lazy = requests.lazy()
    if by == MACHINE and MACHINE not in lazy.collect_schema():
        msg = (
            "usage by machine needs requests read from archives (they have a machine column)\n"
            "Hint: archive each machine with `cc-analytics archive --machine NAME --to PREFIX/NAME`, then read PREFIX."
        )
        raise InputError(msg)
    if COST_USD not in lazy.collect_schema():
        lazy = price_requests(lazy)
    zone = resolve_timezone(timezone)
    local = pl.col(TIME).dt.convert_time_zone(zone)
    lazy = lazy.filter(first_of_each_request()).filter(*_window(local, since, until, zone))
    keys: list[pl.Expr | str]
    if by == "block":
        lazy = assign_blocks(lazy)
        keys = [BLOCK_START]
    elif by in (DAY, WEEK, MONTH):
        period = {DAY: local, WEEK: local.dt.truncate("1w"), MONTH: local.dt.truncate("1mo")}[by]
        keys = [period.dt.date().alias(by)]
    else:
        keys = [{"session": SESSION_ID, "model": MODEL, "project": PROJECT, MACHINE: MACHINE}[by]]
    extra = [pl.col(PROJECT).drop_nulls().first()] if by == "session" else []
    groups = lazy.group_by(keys).agg(*extra, *_metrics())
    key_names: list[str] = groups.collect_schema().names()[: len(keys)]
    by_model = breakdown and by != "model"
    if by_model:
        per_model = lazy.group_by([*keys, MODEL]).agg(*extra, *_metrics())
        groups = pl.concat([groups.with_columns(pl.lit(None, pl.String()).alias(MODEL)), per_model], how="diagonal")
    order = [*key_names, MODEL] if by_model else key_names
    table = groups.sort(order, nulls_last=[True] * len(key_names) + [False] * int(by_model))
    rest = [name for name in groups.collect_schema().names() if name not in order]
    table = table.select(*order, *rest).with_columns(pl.col(REQUESTS, UNPRICED_REQUESTS).cast(pl.Int64))
    if by == "block":
        table = _block_figures(table, now)
    return table.collect() if isinstance(requests, pl.DataFrame) else table


def assign_blocks(requests: FrameT) -> FrameT:
    """Add ``block_start``: the UTC start of each request's 5-hour block.

    One sequential scan decides where blocks begin, but it runs over the distinct active
    hours (at most 24 a day), not over requests: whether a request opens a block depends only
    on its hour and on whether it falls exactly on that hour (see the module docstring). The
    rest is vectorised, so the cost is O(n) Polars work plus O(hours) Python.

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> times = ["2026-01-05T10:20:00Z", "2026-01-05T15:00:00Z", "2026-01-05T15:00:00.001Z"]
        >>> frame = assign_blocks(requests_frame([{"time": t} for t in times]))
        >>> [t.hour for t in frame["block_start"]]
        [10, 10, 15]
    """
    if isinstance(requests, pl.LazyFrame):
        schema = {**requests.collect_schema(), BLOCK_START: UTC_TIME}
        return requests.map_batches(assign_blocks, schema=schema)
    hour = pl.col(TIME).dt.truncate("1h")
    on_the_hour = pl.col(TIME) == hour
    hours = (
        requests.lazy()
        .filter(pl.col(TIME).is_not_null())
        .select(hour.alias("_hour"), on_the_hour.alias("_exact"))
        .unique()
        .sort("_hour", "_exact", descending=[False, True])
        .collect()
    )
    starts: list[datetime] = []
    start: datetime | None = None
    for moment, exact in hours.iter_rows():
        # A request at exactly start + 5 h still belongs to the block; any later one opens a new one.
        if start is None or (moment > start + _BLOCK if exact else moment >= start + _BLOCK):
            start = moment
        starts.append(start)
    table = hours.with_columns(pl.Series(BLOCK_START, starts, dtype=UTC_TIME))
    return (
        requests.with_columns(hour.alias("_hour"), on_the_hour.alias("_exact"))
        .join(table, on=["_hour", "_exact"], how="left", maintain_order="left")
        .drop("_hour", "_exact")
    )


# ------------------------------------------------------------------ helpers


def _window(
    local: pl.Expr, since: date | datetime | str | None, until: date | datetime | str | None, zone: str
) -> list[pl.Expr]:
    """Filters keeping requests from ``since`` to ``until`` (calendar days in ``zone``, inclusive)."""
    filters = []
    for bound, keep in ((since, lambda a, b: a >= b), (until, lambda a, b: a <= b)):
        if bound is None:
            continue
        value = day_or_instant(bound)
        if isinstance(value, datetime):
            instant = value if value.tzinfo else value.replace(tzinfo=ZoneInfo(zone))
            filters.append(keep(pl.col(TIME), pl.lit(instant.astimezone(UTC), UTC_TIME)))
        else:
            filters.append(keep(local.dt.date(), pl.lit(value)))
    return filters


def _metrics() -> list[pl.Expr]:
    return [
        pl.col(TIME).min().alias(FIRST_TIME),
        pl.col(TIME).max().alias(LAST_TIME),
        pl.col(MODEL).drop_nulls().unique().sort().alias(MODELS),
        pl.col(INPUT_TOKENS).sum(),
        cache_creation_tokens().sum().alias(CACHE_CREATION_TOKENS),
        pl.col(CACHE_READ_TOKENS).sum(),
        pl.col(OUTPUT_TOKENS).sum(),
        total_tokens().sum().alias(TOTAL_TOKENS),
        pl.len().alias(REQUESTS),
        *cost_totals(),
    ]


def _block_figures(table: pl.LazyFrame, now: datetime | None) -> pl.LazyFrame:
    end = pl.col(BLOCK_START) + _BLOCK
    hours = (pl.col(LAST_TIME) - pl.col(FIRST_TIME)).dt.total_microseconds() / _HOUR_US
    per_hour = pl.when(hours > 0)
    reference = pl.col(LAST_TIME).max() if now is None else pl.lit(now.astimezone(UTC), UTC_TIME)
    active = (pl.col(BLOCK_START) == pl.col(BLOCK_START).max()) & (reference <= end)
    remaining = (end - reference).dt.total_microseconds().clip(lower_bound=0) / _HOUR_US
    rest = [name for name in table.collect_schema().names() if name != BLOCK_START]
    return (
        table.with_columns(
            end.alias(BLOCK_END),
            active.fill_null(False).alias(IS_ACTIVE),
            per_hour.then(pl.col(TOTAL_TOKENS) / hours).alias(TOKENS_PER_HOUR),
            per_hour.then(pl.col(COST_USD) / hours).alias(COST_PER_HOUR),
        )
        .with_columns(
            pl.when(IS_ACTIVE)
            .then((pl.col(TOTAL_TOKENS) + pl.col(TOKENS_PER_HOUR) * remaining).round().cast(pl.Int64))
            .alias(PROJECTED_TOKENS),
            pl.when(IS_ACTIVE).then(pl.col(COST_USD) + pl.col(COST_PER_HOUR) * remaining).alias(PROJECTED_COST_USD),
        )
        .select(
            BLOCK_START,
            BLOCK_END,
            IS_ACTIVE,
            *rest,
            TOKENS_PER_HOUR,
            COST_PER_HOUR,
            PROJECTED_TOKENS,
            PROJECTED_COST_USD,
        )
    )
