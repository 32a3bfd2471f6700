"""Heuristic token buckets of Claude Code content, with the shared estimator.

Imports: polars, ``estimate`` (the one token estimator) and ``claude_schema``. Each content
block is estimated once (the ceiling applies per block, as the ChainlessChain rule applies it
per message) and lands in one of the five ``cc context`` buckets:

* ``system``: text of ``system`` lines (not the compaction marker), harness-injected user
  text (``isMeta``) and the post-compaction summary (``isCompactSummary``);
* ``user``: prompts the person typed (string content or text blocks) and queued prompts;
* ``assistant``: assistant text and thinking text (the signature is not text);
* ``tool``: tool-result content;
* ``tool_calls``: tool name followed by its compact JSON input.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.estimate import estimate_tokens

BUCKET = "bucket"
TOKENS = "tokens"
BUCKET_NAMES = ("system", "user", "assistant", "tool", "tool_calls")
BUCKET_ENUM = pl.Enum(BUCKET_NAMES)
SYSTEM_LIKE = "system_like"


def bucket_of() -> pl.Expr:
    """Bucket of a block row; needs ``kind`` and ``system_like`` (meta or compact-summary line)."""
    kind = pl.col(S.KIND)
    return (
        pl.when((kind == "system") | ((kind == "prompt") & pl.col(SYSTEM_LIKE)))
        .then(pl.lit("system"))
        .when(kind == "prompt")
        .then(pl.lit("user"))
        .when(kind.is_in(["text", "thinking"]))
        .then(pl.lit("assistant"))
        .when(kind == "tool_result")
        .then(pl.lit("tool"))
        .otherwise(pl.lit("tool_calls"))
        .cast(BUCKET_ENUM)
    )


def block_text() -> pl.Expr:
    """The text a block is measured by (tool calls: name then compact input)."""
    kind = pl.col(S.KIND)
    call = pl.concat_str(pl.col(S.NAME).fill_null(""), pl.col(S.TEXT))
    return pl.when(kind == "tool_use").then(call).otherwise(pl.col(S.TEXT))


def block_tokens() -> pl.Expr:
    """Estimated tokens of each block (0 for a block without text)."""
    return estimate_tokens(block_text()).fill_null(0)


def with_buckets(blocks: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``bucket`` and ``tokens`` to block rows (which carry ``system_like``).

    Blocks that were measured as they were decoded (a ``decode`` profile without texts)
    already carry ``tokens`` and no text: only the bucket is added.
    """
    if TOKENS in blocks.collect_schema():
        return blocks.with_columns(bucket_of().alias(BUCKET))
    return blocks.with_columns(bucket_of().alias(BUCKET), block_tokens().alias(TOKENS))


def bucket_sums(mask: pl.Expr | None = None) -> list[pl.Expr]:
    """Aggregations: the five bucket columns and their total, over rows where ``mask`` holds."""
    tokens = pl.col(TOKENS) if mask is None else pl.col(TOKENS).filter(mask)
    bucket = pl.col(BUCKET) if mask is None else pl.col(BUCKET).filter(mask)
    sums = [
        tokens.filter(bucket == name).sum().cast(pl.Int64).alias(column)
        for name, column in zip(BUCKET_NAMES, S.BUCKETS, strict=True)
    ]
    return [*sums, tokens.sum().cast(pl.Int64).alias(S.ESTIMATED_TOKENS)]
