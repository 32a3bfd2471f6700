"""Context-window metrics for ChainlessChain sessions, as Polars expressions over all sessions.

Imports: polars, ``frames.estimate``, ``frames.chainless``, ``format`` (for half-up rounding).
One row per session: header model/provider, recorded window, the five buckets, the four
counts, window, used fraction, remaining and overflow — all per ``cc-context.md`` §5–8.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import polars as pl

from cc_analytics.format import fraction_4
from cc_analytics.frames.chainless.events import decode_context_files, iter_batches, replayed
from cc_analytics.frames.estimate import estimate_tokens

DEFAULT_WINDOW = 32768
BATCH_BYTES = 64 * 1024 * 1024
MODEL_WINDOWS: dict[str, int] = {
    "qwen2.5:7b": 32768,
    "qwen2.5:14b": 32768,
    "qwen2.5-coder:14b": 32768,
    "qwen2:7b": 32768,
    "llama3:8b": 8192,
    "mistral:7b": 32768,
    "codellama:7b": 16384,
    "gpt-4o": 128000,
    "gpt-4o-mini": 128000,
    "gpt-4-turbo": 128000,
    "gpt-3.5-turbo": 16385,
    "o1": 200000,
    "claude-opus-4-6": 200000,
    "claude-sonnet-4-6": 200000,
    "doubao-seed-1-6-251015": 32768,
    "claude-haiku-4-5-20251001": 200000,
    "deepseek-chat": 64000,
    "deepseek-coder": 64000,
    "deepseek-reasoner": 64000,
    "qwen-turbo": 131072,
    "qwen-plus": 131072,
    "qwen-max": 32768,
    "gemini-2.0-flash": 1048576,
    "gemini-2.0-pro": 1048576,
    "gemini-1.5-flash": 1048576,
    "moonshot-v1-auto": 131072,
    "moonshot-v1-8k": 8192,
    "moonshot-v1-32k": 32768,
    "moonshot-v1-128k": 131072,
    "doubao-seed-2-1-pro-260628": 32768,
}
PROVIDER_WINDOWS: dict[str, int] = {
    "ollama": 32768,
    "openai": 128000,
    "anthropic": 200000,
    "deepseek": 64000,
    "dashscope": 131072,
    "gemini": 1048576,
    "kimi": 131072,
    "volcengine": 32768,
    "minimax": 32768,
    "mistral": 32768,
}
DEFAULT_PROVIDER = "ollama"
BUCKETS = ("system", "user", "assistant", "tool")
BREAKDOWN_KEYS = ("system", "user", "assistant", "tool", "toolCalls")

CONTEXT_SCHEMA: dict[str, pl.DataType] = {
    "session_id": pl.String(),
    "model": pl.String(),
    "provider": pl.String(),
    "context_window": pl.Int64(),
    "total_tokens": pl.Int64(),
    "used_fraction": pl.Float64(),
    "remaining_tokens": pl.Int64(),
    "message_count": pl.Int64(),
    **{f"{name}_tokens": pl.Int64() for name in ("system", "user", "assistant", "tool", "tool_calls")},
    **{f"{name}_count": pl.Int64() for name in BUCKETS},
    "overflows": pl.Boolean(),
    "last_activity": pl.Float64(),
}


def bucket() -> pl.Expr:
    """Bucket of a replayed message: its role when system/user/tool, every other role assistant."""
    role = pl.col("role")
    return pl.when(role.is_in(["system", "user", "tool"])).then(role).otherwise(pl.lit("assistant"))


def table_window(model: pl.Expr, provider: pl.Expr) -> pl.Expr:
    """Window from the tables: exact model entry, else provider default, else 32768."""
    by_model = model.replace_strict(MODEL_WINDOWS, default=None, return_dtype=pl.Int64)
    by_provider = provider.replace_strict(PROVIDER_WINDOWS, default=None, return_dtype=pl.Int64)
    return pl.coalesce(by_model, by_provider, pl.lit(DEFAULT_WINDOW, dtype=pl.Int64))


def message_buckets(messages: pl.LazyFrame, *, by: str = "session_id") -> pl.LazyFrame:
    """Per session (rows grouped by ``by``): tokens and counts of each bucket, tool-call tokens
    and the message count."""
    tokens = estimate_tokens("text")
    call_tokens = estimate_tokens("tool_calls_text").fill_null(0)
    in_bucket = {name: bucket() == name for name in BUCKETS}
    return messages.group_by(by).agg(
        *(tokens.filter(in_bucket[name]).sum().alias(f"{name}_tokens") for name in BUCKETS),
        call_tokens.sum().alias("tool_calls_tokens"),
        *(in_bucket[name].sum().cast(pl.Int64).alias(f"{name}_count") for name in BUCKETS),
        pl.len().cast(pl.Int64).alias("message_count"),
    )


def session_headers(events: pl.LazyFrame) -> pl.LazyFrame:
    """Per session: recorded model/provider (first session_start; a ``null`` line before it hides it),
    the last main-model usage record, and the activity time (largest numeric timestamp)."""
    is_start = pl.col("type") == "session_start"
    first_start = pl.col("line").filter(is_start).min()
    null_before = (pl.col("is_null") & (pl.col("line") < first_start)).any()
    start_value = lambda name: pl.col(name).filter(is_start & (pl.col("line") == first_start)).first()  # noqa: E731
    main = (pl.col("type") == "token_usage") & pl.col("is_main_usage").fill_null(False)
    last_main = pl.col("line").filter(main).max()
    at_last_main = main & (pl.col("line") == last_main)
    return events.group_by("session_id").agg(
        pl.when(null_before).then(pl.lit("")).otherwise(start_value("model").fill_null("")).alias("recorded_model"),
        pl.when(null_before)
        .then(pl.lit(""))
        .otherwise(start_value("provider").fill_null(""))
        .alias("recorded_provider"),
        last_main.is_not_null().alias("has_main_record"),
        pl.col("recorded_window").filter(at_last_main).first().alias("record_window"),
        pl.col("model").filter(at_last_main).first().alias("record_model"),
        pl.col("provider").filter(at_last_main).first().alias("record_provider"),
        pl.col("timestamp").max().fill_null(0.0).alias("last_activity"),
    )


def context_frame(
    events: pl.DataFrame | pl.LazyFrame,
    messages: pl.DataFrame | pl.LazyFrame,
    *,
    sessions: Iterable[str] | None = None,
    model: str | None = None,
    provider: str | None = None,
) -> pl.LazyFrame:
    """One row per session with the ``cc context`` report columns (see ``CONTEXT_SCHEMA``).

    ``sessions`` lists the session ids to report (default: those with at least one event), so
    an empty transcript still gets its row. ``model``/``provider`` are the ``--model``/``--provider``
    flags; an empty string is no flag.

    Examples:
        >>> from cc_analytics.frames.chainless.events import decode_files
        >>> f = decode_files([])
        >>> context_frame(f.events, f.messages).collect().height
        0
    """
    model = model or None
    provider = provider or None
    events = events.lazy()
    headers = session_headers(events)
    if sessions is not None:
        ids = pl.LazyFrame({"session_id": list(sessions)}, schema={"session_id": pl.String})
        headers = ids.join(headers, on="session_id", how="left").with_columns(
            pl.col("recorded_model", "recorded_provider").fill_null(""),
            pl.col("last_activity").fill_null(0.0),
        )
    counts = message_buckets(replayed(messages, events))
    return _report(headers, counts, on="session_id", model=model, provider=provider)


def _report(
    headers: pl.LazyFrame, counts: pl.LazyFrame, *, on: str, model: str | None, provider: str | None
) -> pl.LazyFrame:
    """The report columns from per-session headers and bucket counts joined ``on`` their key."""
    model_expr = pl.lit(model, dtype=pl.String) if model else pl.col("recorded_model").replace("", None)
    provider_expr = (
        pl.lit(provider, dtype=pl.String)
        if provider
        else pl.col("recorded_provider").replace("", None).fill_null(DEFAULT_PROVIDER)
    )
    conflict = pl.lit(False)
    if model:
        conflict = conflict | pl.col("record_model").ne_missing(pl.lit(model))
    if provider:
        conflict = conflict | pl.col("record_provider").ne_missing(pl.lit(provider))
    recorded_ok = pl.col("record_window").is_not_null() & ~conflict
    token_cols = [f"{name}_tokens" for name in (*BUCKETS, "tool_calls")]
    count_cols = [f"{name}_count" for name in BUCKETS]
    frame = (
        headers.join(counts, on=on, how="left")
        .with_columns(pl.col(token_cols + count_cols + ["message_count"]).fill_null(0))
        .with_columns(model_expr.alias("model"), provider_expr.alias("provider"))
        .with_columns(
            pl.when(recorded_ok)
            .then(pl.col("record_window"))
            .otherwise(table_window(pl.col("model"), pl.col("provider")))
            .alias("context_window"),
            pl.sum_horizontal(token_cols).alias("total_tokens"),
        )
        .with_columns(
            (pl.col("total_tokens") / pl.col("context_window")).alias("used_fraction"),
            (pl.col("context_window") - pl.col("total_tokens")).clip(lower_bound=0).alias("remaining_tokens"),
            (pl.col("total_tokens") > pl.col("context_window")).alias("overflows"),
        )
    )
    return frame.select(list(CONTEXT_SCHEMA)).sort("session_id")


def read_context(
    paths: Iterable[Path],
    *,
    model: str | None = None,
    provider: str | None = None,
    batch_bytes: int = BATCH_BYTES,
    workers: int | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Context report rows and problems for many transcripts, decoded in bounded batches.

    Returns ``(context, problems)``. Memory is bounded by ``batch_bytes`` of input per worker;
    large inputs are spread over ``workers`` processes (default: the CPU count). Batches go
    through the lean decoder (:func:`~cc_analytics.frames.chainless.decode_context_files`:
    per-file header values and the replayed messages only, no events frame); the estimate and
    the buckets are the same expressions as :func:`context_frame`'s, which gives the same rows
    from the full events frame (``tests/frames/test_chainless_context.py`` checks the two agree).

    Examples:
        >>> frame, problems = read_context([])
        >>> frame.height, problems.height
        (0, 0)
    """
    batches = list(iter_batches(list(paths), batch_bytes=batch_bytes))
    jobs = [(batch, model, provider) for batch in batches]
    workers = workers or os.cpu_count() or 1
    if len(jobs) > 1 and workers > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context) as pool:
            results = list(pool.map(_context_batch, jobs))
    else:
        results = [_context_batch(job) for job in jobs] or [_context_batch(([], None, None))]
    return (
        pl.concat([frame for frame, _ in results]),
        pl.concat([problems for _, problems in results]),
    )


def _context_batch(job: tuple[list[Path], str | None, str | None]) -> tuple[pl.DataFrame, pl.DataFrame]:
    batch, model, provider = job
    headers, messages, problems = decode_context_files(batch)
    counts = message_buckets(messages.lazy(), by="file")
    frame = _report(headers.lazy(), counts, on="file", model=model or None, provider=provider or None)
    return frame.collect(), problems


def report_dict(row: dict) -> dict:
    """The ``--json`` report of one session row, keys in ``cc context`` order."""
    return {
        "sessionId": row["session_id"],
        "model": row["model"],
        "provider": row["provider"],
        "contextWindow": row["context_window"],
        "totalTokens": row["total_tokens"],
        "usedFraction": fraction_4(row["used_fraction"]),
        "remainingTokens": row["remaining_tokens"],
        "messageCount": row["message_count"],
        "breakdown": {
            "system": row["system_tokens"],
            "user": row["user_tokens"],
            "assistant": row["assistant_tokens"],
            "tool": row["tool_tokens"],
            "toolCalls": row["tool_calls_tokens"],
        },
        "counts": {name: row[f"{name}_count"] for name in BUCKETS},
        "overflows": row["overflows"],
    }
