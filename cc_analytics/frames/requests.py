"""The requests frame: one row per API request, the unit that is priced and summed into usage.

Imports: polars, the standard library, ``frames.pricebook`` (``PROMPT_KINDS``) and
``frames.schema`` (where ``REQUESTS_SCHEMA`` and its column names live, beside the other
shared schemas). Both formats build their requests in
that schema (Claude Code: deduplicated by message id + request id, last line wins, main chain
and subagents alike; ChainlessChain: one ``token_usage`` record each). Token columns follow
Anthropic's convention: ``input_tokens`` is the *uncached* input, and the prompt of a request
is input + both cache writes + cache read. Here: the expressions over requests that sessions,
turns and usage share (cache writes, prompt, total, cost totals), and a builder for tests.

Cost of a group of requests (a session, a turn, a day): ``cost_usd`` is the sum of the costs
that are known, ``unpriced_requests`` how many requests had none (a model the price list does
not know). ``cost_usd`` is null when no request of the group has a price — none recorded
(a ChainlessChain session without ``token_usage`` records, a turn that made no request), or
none the price list knows — so a cost of 0 always means requests priced at 0 (a local model),
never a silent zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import polars as pl

from cc_analytics.frames.pricebook import PROMPT_KINDS
from cc_analytics.frames.schema import (
    CACHE_CREATION_1H_TOKENS,
    CACHE_CREATION_5M_TOKENS,
    CACHE_CREATION_TOKENS,
    COST_USD,
    FORMAT,
    IS_SIDECHAIN,
    MESSAGE_ID,
    REQUEST_ID,
    REQUESTS_SCHEMA,
    TIME,
    TOKEN_KINDS,
    TOTAL_TOKENS,
    UNPRICED_REQUESTS,
    WEB_SEARCH_REQUESTS,
)

_DEFAULTS: dict[str, Any] = {
    FORMAT: None,
    IS_SIDECHAIN: False,
    **dict.fromkeys(TOKEN_KINDS, 0),
    WEB_SEARCH_REQUESTS: 0,
}


def cache_creation_tokens() -> pl.Expr:
    """Tokens written to the prompt cache, both lifetimes: the ``cache_creation_tokens`` of usage.

    Examples:
        >>> requests_frame([{"cache_creation_5m_tokens": 3, "cache_creation_1h_tokens": 4}]).select(
        ...     cache_creation_tokens()
        ... ).item()
        7
    """
    return (pl.col(CACHE_CREATION_5M_TOKENS) + pl.col(CACHE_CREATION_1H_TOKENS)).alias(CACHE_CREATION_TOKENS)


def prompt_tokens() -> pl.Expr:
    """Prompt size of a request: input + cache writes + cache read (long-context tiers use it).

    Examples:
        >>> requests_frame([{"input_tokens": 1, "cache_creation_5m_tokens": 2, "cache_read_tokens": 3}]).select(
        ...     prompt_tokens()
        ... ).item()
        6
    """
    return pl.sum_horizontal(PROMPT_KINDS).alias("prompt_tokens")


def total_tokens() -> pl.Expr:
    """Every token of a request: the four usage kinds summed, as ccusage's ``totalTokens``.

    Examples:
        >>> requests_frame([{"input_tokens": 1, "cache_read_tokens": 3, "output_tokens": 5}]).select(
        ...     total_tokens()
        ... ).item()
        9
    """
    return pl.sum_horizontal(TOKEN_KINDS).alias(TOTAL_TOKENS)


def first_of_each_request() -> pl.Expr:
    """True for the first row of each API request over the whole frame (format, message id and
    request id): a resumed or forked Claude Code session repeats earlier responses in a new
    file, and what is summed over many sessions counts them once. Rows without a message id
    (ChainlessChain records) are each their own request.

    Examples:
        >>> frame = requests_frame(
        ...     [{"session_id": s, "message_id": m, "request_id": "r"} for s, m in (("a", "m1"), ("b", "m1"), ("b", None))]
        ... )
        >>> frame.filter(first_of_each_request())["session_id"].to_list()
        ['a', 'b']
    """
    # One string per row, not a struct: a struct's first-distinct took twice the memory (on
    # 250,000 requests, 76 MB more than the frame's own 35 MB, against 43). The message id's
    # length in bytes before it makes the key one-to-one (a format's name holds no NUL).
    message = pl.col(MESSAGE_ID)
    parts = [FORMAT, message.str.len_bytes().cast(pl.String), message, pl.col(REQUEST_ID).fill_null("")]
    return message.is_null() | pl.concat_str(parts, separator="\x00").is_first_distinct()


def cost_totals() -> list[pl.Expr]:
    """``cost_usd`` and ``unpriced_requests`` of a group of priced requests (an aggregation).

    Examples:
        >>> frame = requests_frame([{"cost_usd": 1.5}, {"cost_usd": None}, {"cost_usd": 0.25}])
        >>> frame.select(cost_totals()).row(0)
        (1.75, 1)
        >>> frame.head(0).select(cost_totals()).row(0)
        (None, 0)
    """
    cost = pl.col(COST_USD)
    # Summed as decimals of 12 places: every priced cost is a whole number of picodollars
    # (frames.prices), so the sum is exact and the same whatever the order of the rows.
    exact = cost.cast(pl.Decimal(38, 12)).sum().cast(pl.Float64)
    return [
        pl.when(cost.is_not_null().any()).then(exact).alias(COST_USD),
        cost.null_count().cast(pl.Int64).alias(UNPRICED_REQUESTS),
    ]


def requests_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """A requests frame from plain mappings: for tests, examples and hand-made timelines.

    Missing columns take their default (format null, no sidechain, zero tokens and
    searches, null otherwise). ``time`` may be an aware or naive (UTC) datetime or an ISO string.

    Examples:
        >>> frame = requests_frame([{"model": "claude-opus-4-5", "time": "2026-01-05T10:00:00Z"}])
        >>> frame.schema == REQUESTS_SCHEMA, frame["time"].item().isoformat()
        (True, '2026-01-05T10:00:00+00:00')
    """
    records = [{**_DEFAULTS, **row} for row in rows]
    for record in records:
        if isinstance(record.get(TIME), str):
            record[TIME] = datetime.fromisoformat(record[TIME])
        if isinstance(record.get(TIME), datetime) and record[TIME].tzinfo is not None:
            record[TIME] = record[TIME].astimezone(UTC).replace(tzinfo=None)
    unknown = {key for record in records for key in record} - set(REQUESTS_SCHEMA)
    if unknown:
        msg = f"not a requests column: {sorted(unknown)!r}"
        raise ValueError(msg)
    naive = {**REQUESTS_SCHEMA, TIME: pl.Datetime("us")}
    return pl.DataFrame(records, schema=naive).with_columns(pl.col(TIME).dt.replace_time_zone("UTC"))
