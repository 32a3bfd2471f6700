"""The requests frame: one row per API request, the unit that is priced and summed into usage.

Imports: polars and ``frames.schema``. Both formats will build their requests in
:data:`REQUESTS_SCHEMA` (Claude Code: deduplicated by message id + request id, last line
wins, main chain and subagents alike; ChainlessChain: one ``token_usage`` record each).
Token columns follow Anthropic's convention: ``input_tokens`` is the *uncached* input, and the
prompt of a request is input + both cache writes + cache read. ``provider`` is null when the
transcript does not name one (Claude Code): the model name then decides.

Until the pipeline refactor lands, the column names live here; they move to ``frames.schema``
unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import polars as pl

from cc_analytics.frames.schema import (
    AGENT_ID,
    CACHE_CREATION_TOKENS,
    CACHE_READ_TOKENS,
    CLAUDE,
    FORMAT,
    INPUT_TOKENS,
    MODEL,
    OUTPUT_TOKENS,
    PROJECT,
    PROVIDER,
    SESSION_ID,
    UTC_TIME,
)

IS_SIDECHAIN = "is_sidechain"
REQUEST_ID = "request_id"
MESSAGE_ID = "message_id"
TIME = "time"
CACHE_CREATION_5M_TOKENS = "cache_creation_5m_tokens"
CACHE_CREATION_1H_TOKENS = "cache_creation_1h_tokens"
WEB_SEARCH_REQUESTS = "web_search_requests"
SERVICE_TIER = "service_tier"
SPEED = "speed"
COST_USD = "cost_usd"
TOTAL_TOKENS = "total_tokens"

# The five priced token kinds, in the order of the schema.
TOKEN_KINDS = (INPUT_TOKENS, CACHE_CREATION_5M_TOKENS, CACHE_CREATION_1H_TOKENS, CACHE_READ_TOKENS, OUTPUT_TOKENS)
# The tokens that make up the prompt of a request (what long-context tiers are decided on).
PROMPT_KINDS = TOKEN_KINDS[:-1]

REQUESTS_SCHEMA = pl.Schema(
    {
        FORMAT: pl.String(),
        SESSION_ID: pl.String(),
        PROJECT: pl.String(),
        AGENT_ID: pl.String(),
        IS_SIDECHAIN: pl.Boolean(),
        REQUEST_ID: pl.String(),
        MESSAGE_ID: pl.String(),
        TIME: UTC_TIME,
        MODEL: pl.String(),
        PROVIDER: pl.String(),
        INPUT_TOKENS: pl.Int64(),
        CACHE_CREATION_5M_TOKENS: pl.Int64(),
        CACHE_CREATION_1H_TOKENS: pl.Int64(),
        CACHE_READ_TOKENS: pl.Int64(),
        OUTPUT_TOKENS: pl.Int64(),
        WEB_SEARCH_REQUESTS: pl.Int64(),
        SERVICE_TIER: pl.String(),
        SPEED: pl.String(),
        COST_USD: pl.Float64(),
    }
)

_DEFAULTS: dict[str, Any] = {
    FORMAT: CLAUDE,
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


def requests_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """A requests frame from plain mappings: for tests, examples and hand-made timelines.

    Missing columns take their default (format ``claude-code``, no sidechain, zero tokens and
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
