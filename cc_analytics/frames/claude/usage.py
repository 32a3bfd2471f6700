"""Recorded usage of Claude Code sessions: occupancy per request, deduplicated totals, compactions.

Imports: polars and ``claude_schema``. Rules (spec ``claude-code-jsonl.md``):

* occupancy of a request = input + cache creation + cache read tokens of its usage;
* the main chain of a file is its own chain: non-sidechain lines in a main file, sidechain
  lines in a subagent file; API-error lines (``<synthetic>`` model or ``isApiErrorMessage``)
  are left out of it;
* totals count each (message id, request id) once, keeping the last of the split lines;
  lines without a message id are each counted;
* a ``compact_boundary`` system line opens a new context segment of its file.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.claude import schema as S

ON_CHAIN = "on_chain"
IS_COMPACTION = "is_compaction"
SEGMENT = "segment"
USAGE_COLUMNS = (S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS)


def on_chain() -> pl.Expr:
    """Lines of the file's own chain: main lines of a main file, sidechain lines of a subagent."""
    return pl.col(S.IS_SIDECHAIN) == pl.col(S.IS_SUBAGENT_FILE)


def has_usage() -> pl.Expr:
    """Assistant lines with recorded usage that are not API errors."""
    return (pl.col(S.TYPE) == "assistant") & pl.col(S.INPUT_TOKENS).is_not_null() & ~pl.col(S.IS_API_ERROR)


def request_occupancy() -> pl.Expr:
    """Prompt size of a request: input + cache creation + cache read (output not included)."""
    return pl.col(S.INPUT_TOKENS) + pl.col(S.CACHE_CREATION_TOKENS) + pl.col(S.CACHE_READ_TOKENS)


def annotate_usage(events: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``on_chain``, ``occupancy`` (main-chain requests), ``is_compaction``, ``segment``."""
    compaction = (pl.col(S.TYPE) == "system") & (pl.col(S.SUBTYPE) == "compact_boundary") & on_chain()
    return events.with_columns(
        on_chain().alias(ON_CHAIN),
        pl.when(has_usage() & on_chain()).then(request_occupancy()).alias(S.OCCUPANCY),
        compaction.alias(IS_COMPACTION),
    ).with_columns(
        pl.col(IS_COMPACTION).cast(pl.Int64).cum_sum().over(S.SOURCE_FILE).alias(SEGMENT),
    )


def deduplicated_requests(events: pl.LazyFrame, key: str = S.FILE_SESSION_ID) -> pl.LazyFrame:
    """One row per (``key``, message id, request id): the last split line of each response."""
    row_key = pl.concat_str(pl.lit("line:"), pl.col(S.SOURCE_FILE), pl.lit(":"), pl.col(S.LINE))
    message = pl.coalesce(pl.col(S.MESSAGE_ID), row_key)
    return (
        events.filter(has_usage())
        .with_columns(message.alias("_message"), pl.col(S.REQUEST_ID).fill_null("").alias("_req"))
        .unique(subset=[key, "_message", "_req"], keep="last", maintain_order=True)
        .drop("_message", "_req")
    )


def usage_totals(key: str = S.FILE_SESSION_ID) -> list[pl.Expr]:
    """Aggregations over :func:`deduplicated_requests` rows: the four sums, requests, hit ratio."""
    sums = [pl.col(name).sum().alias(name) for name in USAGE_COLUMNS]
    prompt = pl.col(S.INPUT_TOKENS) + pl.col(S.CACHE_CREATION_TOKENS) + pl.col(S.CACHE_READ_TOKENS)
    ratio = pl.col(S.CACHE_READ_TOKENS).sum().cast(pl.Float64) / prompt.sum()
    return [*sums, pl.len().alias(S.REQUESTS), ratio.alias(S.CACHE_HIT_RATIO)]


def compaction_columns() -> list[pl.Expr]:
    """Per file or session: count, triggers, pre-tokens and the first occupancy after each."""
    after = pl.col(S.OCCUPANCY).backward_fill()
    boundary = pl.col(IS_COMPACTION)
    return [
        boundary.sum().cast(pl.Int64).alias(S.COMPACTIONS),
        pl.col(S.COMPACT_TRIGGER).filter(boundary).alias(S.COMPACTION_TRIGGERS),
        pl.col(S.COMPACT_PRE_TOKENS).filter(boundary).alias(S.COMPACTION_PRE_TOKENS),
        after.filter(boundary).alias(S.COMPACTION_POST_TOKENS),
    ]
