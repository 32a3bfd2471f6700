"""What each API request cost, offline, from genai-prices' bundled snapshot.

Imports: polars, the standard library, ``frames.schema`` and ``frames.pricebook`` (the
Polars-free half: the :class:`PriceBook`, genai-prices' answers, price periods and the scalar
twin of this pricing for one request, ``pricebook.request_cost``); ``genai_prices`` only when
a key is not in the book (loading it costs about 0.3 CPU seconds per process; its answers are
kept on disk per genai-prices release).

How a requests frame is priced (:func:`price_requests`), without a Python loop over rows:

1. the distinct (provider, model) pairs are resolved once through genai-prices, which also
   tells at which dates (and, for off-peak discounts, at which UTC times of day) a model's
   prices change;
2. each request gets its *price period* from those change points (a Polars expression), and
   the distinct (provider, model, speed, service tier, period) keys — a few dozen rows for a
   year of transcripts — are priced through genai-prices: per token of each kind, per
   long-context tier, per web search and per request;
3. that small table is joined back and the cost is a sum of ``tokens × price`` in exact
   decimals (``Decimal(38, 18)``), rounded once to the ``Float64`` of ``cost_usd``.

Step 2 asks genai-prices itself for every number, by pricing probe usages (n tokens of one
kind at a prompt size inside the tier) and dividing: the library's own rules decide how a
1-hour cache write is priced when a model lists no 1-hour rate, or cache reads when it lists
no cache price. Rules of our own:

* a request whose model is ``<synthetic>`` (Claude Code's locally made messages) costs 0;
* a request to a local provider (:data:`LOCAL_PROVIDERS`) costs 0;
* a model genai-prices does not know, or a null model, gets a null cost — never a silent
  zero; :func:`unpriced` counts and names them;
* the provider a transcript records is a hint: a name genai-prices does not know as a
  provider (after :data:`PROVIDER_ALIASES`) falls back to finding the provider by model name;
* ``speed`` and ``service_tier`` are passed as genai-prices' price context, so fast mode and
  service-tier variants are priced where the snapshot has them; a value other than
  ``standard`` that the snapshot has no prices for (fast mode of a model it prices only at
  standard speed) is an unknown mode: a null cost, named by :func:`unpriced`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, time
from decimal import Decimal
from typing import Any, TypeVar

import polars as pl

from cc_analytics.errors import InputError
from cc_analytics.frames import pricebook
from cc_analytics.frames.engine import BATCH_ENGINE
from cc_analytics.frames.pricebook import (
    EPOCH,
    FREE,
    LOCAL_PROVIDERS,
    PRICE_COLUMNS,
    PRICED,
    PROMPT_KINDS,
    PROVIDER_ALIASES,
    SCALE,
    STANDARD,
    SYNTHETIC,
    UNKNOWN,
    UNKNOWN_MODE,
    Band,
    PriceBook,
    Resolved,
    bands,
    price_period,
    resolve,
)
from cc_analytics.frames.schema import (
    COST_USD,
    MODEL,
    PROVIDER,
    REQUESTS,
    SERVICE_TIER,
    SPEED,
    TIME,
)

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)

__all__ = [
    "FREE",
    "LOCAL_PROVIDERS",
    "PRICED",
    "PROVIDER_ALIASES",
    "SYNTHETIC",
    "UNKNOWN",
    "UNKNOWN_MODE",
    "Band",
    "PriceBook",
    "Resolved",
    "known_models",
    "price_requests",
    "price_table",
    "request_mode",
    "unpriced",
]

# Price table columns (:func:`price_table`).
PERIOD_START = "period_start"
STATUS = "status"
PRICED_PROVIDER = "priced_provider"
PRICED_MODEL = "priced_model"
ABOVE_PROMPT_TOKENS = "above_prompt_tokens"
MODE = "mode"
REQUEST_USD = "request_usd"

KEYS = (PROVIDER, MODEL, SPEED, SERVICE_TIER)
NEEDED = (*KEYS, TIME, *PRICE_COLUMNS)


def price_requests(requests: FrameT) -> FrameT:
    """Set ``cost_usd`` of every request (replacing any value it had).

    A LazyFrame stays lazy: pricing runs on the collected rows when the plan is collected
    (it has to see the distinct models first), in one pass over them.

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = requests_frame(
        ...     [
        ...         {"model": "claude-opus-4-5", "time": "2026-01-05T10:00:00Z", "input_tokens": 1_000_000},
        ...         {"model": "<synthetic>", "time": "2026-01-05T10:00:00Z", "output_tokens": 10},
        ...         {"model": "no-such-model", "time": "2026-01-05T10:00:00Z", "output_tokens": 10},
        ...     ]
        ... )
        >>> price_requests(frame)["cost_usd"].to_list()
        [5.0, 0.0, None]
    """
    schema = requests.collect_schema() if isinstance(requests, pl.LazyFrame) else requests.schema
    missing = [name for name in NEEDED if name not in schema]
    if missing:
        msg = f"not a requests frame: no {', '.join(map(repr, missing))} column\nHint: build it in REQUESTS_SCHEMA"
        raise InputError(msg)
    if isinstance(requests, pl.LazyFrame):
        return requests.map_batches(_price_frame, schema={**schema, COST_USD: pl.Float64()})
    return _price_frame(requests)


def without_price() -> pl.Expr:
    """The requests without a price: the one rule that :func:`unpriced` counts and
    ``frames.api.iter_tables(requests="unpriced")`` keeps.

    Examples:
        >>> pl.DataFrame({"cost_usd": [0.5, None]}).filter(without_price()).height
        1
    """
    return pl.col(COST_USD).is_null()


def unpriced(requests: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The requests without a price, counted by provider, model and mode (most first).

    ``mode`` names a speed or service tier other than the standard one (``speed fast``), null
    for the standard mode: a model the price list knows may still lack the price of a mode.

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = price_requests(requests_frame([{"model": "mystery-1", "time": "2026-01-05T10:00:00Z"}] * 2))
        >>> unpriced(frame).rows()
        [(None, 'mystery-1', None, 2)]
    """
    lazy = requests.lazy() if isinstance(requests, pl.DataFrame) else requests
    return (
        lazy.filter(without_price())
        .group_by(PROVIDER, MODEL, request_mode().alias(MODE))
        .agg(pl.len().alias(REQUESTS))
        .sort([REQUESTS, MODEL, PROVIDER, MODE], descending=[True, False, False, False], nulls_last=True)
        .collect(engine=BATCH_ENGINE)
    )


def request_mode() -> pl.Expr:
    """The non-standard speed and service tier of a request, described (null for the standard mode).

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = requests_frame([{"speed": "fast", "service_tier": "standard"}, {"service_tier": "priority"}, {}])
        >>> frame.select(request_mode()).to_series().to_list()
        ['speed fast', 'service tier priority', None]
    """
    parts = [
        pl.when(pl.col(name).is_not_null() & (pl.col(name) != STANDARD)).then(pl.lit(f"{label} ") + pl.col(name))
        for name, label in ((SPEED, "speed"), (SERVICE_TIER, "service tier"))
    ]
    described = pl.concat_str(parts, separator=", ", ignore_nulls=True)
    return pl.when(described != "").then(described)


def price_table(requests: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The prices :func:`price_requests` uses for these requests, one row per key and tier.

    Prices are in USD per million tokens (per thousand web searches, per request), as
    published; ``period_start`` is when the model's price period begins (1970-01-01 when its
    prices never changed), ``above_prompt_tokens`` the prompt size a long-context tier starts
    above (null for the base prices).

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> table = price_table(requests_frame([{"model": "claude-sonnet-4-5", "time": "2026-01-05T10:00:00Z"}]))
        >>> table.select("priced_model", "above_prompt_tokens", "input_mtok", "cache_write_1h_mtok").rows()
        [('claude-sonnet-4-5', None, Decimal('3.000000'), Decimal('6.000000')), ('claude-sonnet-4-5', 200000, Decimal('6.000000'), Decimal('12.000000'))]
    """
    frame = requests.collect() if isinstance(requests, pl.LazyFrame) else requests
    rows = []
    for key in _index(frame).keys:
        provider, model, _, _, start = key
        status, priced_provider, priced_model, tiers = bands(*key)
        own_start = price_period(resolve(provider, model), start)
        for band in tiers or (None,):
            row: dict[str, Any] = dict(zip(KEYS, key, strict=False))
            row |= {
                PERIOD_START: own_start,
                STATUS: status,
                PRICED_PROVIDER: priced_provider,
                PRICED_MODEL: priced_model,
            }
            row[ABOVE_PROMPT_TOKENS] = band.above if band else None
            for (name, per), value in zip(PRICE_COLUMNS.values(), band.per_unit if band else (), strict=False):
                row[name] = Decimal(value * per).scaleb(-SCALE)
            row[REQUEST_USD] = Decimal(band.request).scaleb(-SCALE) if band else None
            rows.append(row)
    schema = {
        **{name: pl.String() for name in KEYS},
        PERIOD_START: pl.Datetime("us", "UTC"),
        STATUS: pl.String(),
        PRICED_PROVIDER: pl.String(),
        PRICED_MODEL: pl.String(),
        ABOVE_PROMPT_TOKENS: pl.Int64(),
        **{name: pl.Decimal(38, 6) for name, _ in PRICE_COLUMNS.values()},
        REQUEST_USD: pl.Decimal(38, 12),
    }
    pricebook.save_book()
    order = [*KEYS, PERIOD_START, ABOVE_PROMPT_TOKENS]
    return pl.DataFrame(rows, schema=schema).unique(maintain_order=True).sort(order)


# ------------------------------------------------------------------ the vectorised pricing


Key = tuple[str | None, str | None, str | None, str | None, datetime]


@dataclass(frozen=True, slots=True)
class KeyIndex:
    """Each request's pricing key as a row number of ``keys`` (the distinct keys)."""

    row: pl.Series
    keys: tuple[Key, ...]


def _index(frame: pl.DataFrame) -> KeyIndex:
    """Number the distinct (provider, model, speed, service tier, price period) keys of the requests.

    Strings are read once per key column (a cast to a fresh categorical, whose codes are
    dense); the rest is integer arithmetic, and a key's number is looked up, not searched.
    """
    pair, pairs = _codes(frame, (PROVIDER, MODEL))
    context, contexts = _codes(frame, (SPEED, SERVICE_TIER))
    pair_names = _names(frame, pair, pairs, (PROVIDER, MODEL))
    context_names = _names(frame, context, contexts, (SPEED, SERVICE_TIER))
    resolved = [resolve(*names) for names in pair_names.values()]
    dates = sorted({day for model in resolved if model for day in model.change_dates})
    times = sorted({moment for model in resolved if model for moment in model.change_times})
    moments = frame.get_column(TIME)
    day = _period(moments, [datetime.combine(point, time(0), UTC) for point in dates])
    tod = _period(moments.dt.time(), times) if times else 0
    size = pairs * contexts * (len(dates) + 1) * (len(times) + 1)
    code = ((pair * contexts + context) * (len(dates) + 1) + day) * (len(times) + 1) + tod
    distinct = _present(code, size)
    lookup = pl.zeros(size, pl.UInt32, eager=True).scatter(distinct, range(len(distinct)))
    keys = []
    for value in distinct:
        rest, tod_index = divmod(value, len(times) + 1)
        rest, day_index = divmod(rest, len(dates) + 1)
        pair_code, context_code = divmod(rest, contexts)
        start = datetime.combine([EPOCH, *dates][day_index], [time(0), *times][tod_index], UTC)
        keys.append((*pair_names[pair_code], *context_names[context_code], start))
    return KeyIndex(lookup.gather(code), tuple(keys))


def _present(code: pl.Series, size: int) -> list[int]:
    """The distinct values of a code below ``size``, ascending (a scatter, not a hash table)."""
    return pl.zeros(size, pl.Boolean, eager=True).scatter(code, True).arg_true().to_list()


def _names(frame: pl.DataFrame, code: pl.Series, size: int, names: tuple[str, ...]) -> dict[int, tuple[Any, ...]]:
    """The column values each present code stands for, read from one row holding it."""
    rows = pl.zeros(size, pl.UInt32, eager=True).scatter(code, pl.int_range(len(code), eager=True, dtype=pl.UInt32))
    present = _present(code, size)
    return dict(zip(present, frame.select(*names)[rows.gather(present)].rows(), strict=True))


def _codes(frame: pl.DataFrame, names: Iterable[str]) -> tuple[pl.Series, int]:
    """A dense UInt64 code of the tuple of string columns (exact), and how many codes there can be."""
    packed = pl.zeros(frame.height, pl.UInt64, eager=True)
    size = 1
    for name in names:
        physical = frame.get_column(name).cast(pl.Categorical(pl.Categories.random())).to_physical()
        count = 0 if physical.null_count() == len(physical) else int(physical.max()) + 1  # type: ignore[arg-type]
        packed = packed * (count + 1) + physical.fill_null(count).cast(pl.UInt64)  # null: the last code
        size *= count + 1
    return packed, size


def _period(values: pl.Series, change_points: list[Any]) -> pl.Series:
    """How many change points are at or before each value: the index of its price period.

    A null time gets the latest prices, as genai-prices does for a request without a time.
    """
    index = pl.zeros(len(values), pl.UInt64, eager=True)
    for point in change_points:
        index = index + (values >= point).fill_null(True).cast(pl.UInt64)
    return index


def _price_frame(requests: pl.DataFrame) -> pl.DataFrame:
    if requests.is_empty():
        return requests.with_columns(pl.lit(None, pl.Float64()).alias(COST_USD))
    index = _index(requests)
    priced = [bands(*key)[3] for key in index.keys]
    pricebook.save_book()
    tiers = max((len(key_bands) - 1 for key_bands in priced if key_bands), default=0)
    row = pl.col("_price_row")

    def per_key(values: list[Any], dtype: pl.DataType) -> pl.Expr:
        return pl.lit(pl.Series(values, dtype=dtype)).gather(row)

    prompt = pl.sum_horizontal(pl.col(kind).fill_null(0) for kind in PROMPT_KINDS)
    band = pl.lit(0, pl.UInt32)
    for tier in range(1, tiers + 1):
        above = [key_bands[tier].above if key_bands and tier < len(key_bands) else None for key_bands in priced]
        band = band + (prompt > per_key(above, pl.Int64())).fill_null(False).cast(pl.UInt32)
    slot = pl.col("_price_slot")

    def per_slot(quantity: int) -> pl.Expr:
        values = [
            key_bands[min(tier, len(key_bands) - 1)].per_unit[quantity] if key_bands else None
            for key_bands in priced
            for tier in range(tiers + 1)
        ]
        return pl.lit(pl.Series(values, dtype=pl.Int64())).gather(slot)

    picodollars = per_key([key_bands[0].request if key_bands else None for key_bands in priced], pl.Int64())
    for quantity, name in enumerate(PRICE_COLUMNS):
        picodollars = picodollars + pl.col(name).fill_null(0) * per_slot(quantity)
    # Divided by a column, not a scalar: Polars multiplies by the reciprocal of a scalar
    # divisor, which is not correctly rounded (one entry more than keys, so that a single
    # key still makes a column).
    dollars = picodollars.cast(pl.Float64) / per_key([10.0**SCALE] * (len(priced) + 1), pl.Float64())
    return (
        requests.with_columns(index.row.alias("_price_row"))
        .with_columns((row * (tiers + 1) + band).alias("_price_slot"))
        .with_columns(dollars.alias(COST_USD))
        .drop("_price_row", "_price_slot")
    )


def known_models(names: Iterable[str], *, provider: str | None = None) -> dict[str, str | None]:
    """The genai-prices model id each name resolves to (None when it is unknown).

    Examples:
        >>> known_models(["claude-opus-4-5-20251101", "gpt-4o", "mystery-1"])
        {'claude-opus-4-5-20251101': 'claude-opus-4-5', 'gpt-4o': 'gpt-4o', 'mystery-1': None}
    """
    known = {name: (found.model_id if (found := resolve(provider, name)) else None) for name in names}
    pricebook.save_book()
    return known
