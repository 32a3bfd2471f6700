"""Heuristic token buckets of ChainlessChain messages, with the shared estimator.

Imports: polars, ``frames.estimate`` (the one token estimator) and ``frames.chainless.schema``.
Rules (``cc-context.md`` §7–8): a message's text is estimated once and lands in the bucket
its role names when that is ``system``, ``user`` or ``tool``, else in ``assistant``; the
``JSON.stringify`` of a non-empty ``tool_calls`` array is estimated once more, into
``tool_calls``, whatever the role.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.chainless import schema as S
from cc_analytics.frames.estimate import estimate_tokens

BUCKET = "bucket"
TEXT_TOKENS = S.TEXT_TOKENS
CALL_TOKENS = S.CALL_TOKENS
TOKENS = "tokens"
ROLE_BUCKETS = ("system", "user", "assistant", "tool")
# Bucket name → its column: tokens_system, tokens_user, tokens_assistant, tokens_tool.
TOKEN_COLUMNS = dict(zip(ROLE_BUCKETS, S.BUCKETS[:4], strict=True))
COUNT_COLUMNS = dict(zip(ROLE_BUCKETS, S.MESSAGE_COUNTS, strict=True))


def bucket() -> pl.Expr:
    """Bucket of a message: its role when system/user/tool, every other role assistant."""
    role = pl.col(S.ROLE)
    return pl.when(role.is_in(["system", "user", "tool"])).then(role).otherwise(pl.lit("assistant"))


def with_tokens(messages: pl.LazyFrame) -> pl.LazyFrame:
    """Messages with their bucket, text tokens, tool-call tokens and the two summed.

    Tokens the decoder already measured (the estimate's scalar fast path) are kept; the
    expression measures the rest.
    """
    return messages.with_columns(
        bucket().alias(BUCKET),
        pl.coalesce(TEXT_TOKENS, estimate_tokens(S.TEXT)).alias(TEXT_TOKENS),
        pl.coalesce(CALL_TOKENS, estimate_tokens(S.TOOL_CALLS_TEXT)).fill_null(0).alias(CALL_TOKENS),
    ).with_columns((pl.col(TEXT_TOKENS) + pl.col(CALL_TOKENS)).alias(TOKENS))


def bucket_sums() -> list[pl.Expr]:
    """Aggregations over :func:`with_tokens` rows: the five bucket columns and their sum."""
    in_bucket = {name: pl.col(BUCKET) == name for name in ROLE_BUCKETS}
    return [
        *(pl.col(TEXT_TOKENS).filter(in_bucket[name]).sum().alias(TOKEN_COLUMNS[name]) for name in ROLE_BUCKETS),
        pl.col(CALL_TOKENS).sum().alias(S.TOKENS_TOOL_CALLS),
        pl.col(TOKENS).sum().alias(S.ESTIMATED_TOKENS),
    ]


def bucket_counts() -> list[pl.Expr]:
    """Aggregations over :func:`with_tokens` rows: messages per role bucket, and all messages."""
    return [
        *((pl.col(BUCKET) == name).sum().cast(pl.Int64).alias(COUNT_COLUMNS[name]) for name in ROLE_BUCKETS),
        pl.len().cast(pl.Int64).alias(S.MESSAGES),
    ]
