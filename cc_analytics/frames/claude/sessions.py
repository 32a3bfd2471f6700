"""Per-session summaries of Claude Code transcripts, and the ``context`` report of one session.

Imports: polars, ``cc_analytics.format`` and the other ``claude_*`` frame modules. A session
is a main transcript plus its subagent files (they share a batch, see ``claude_events``);
each batch is reduced to one row per session, so the summary of a whole corpus is the
concatenation of small frames.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from cc_analytics.format import fraction_4
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.buckets import BUCKET, BUCKET_NAMES, TOKENS, bucket_sums
from cc_analytics.frames.claude.decode_lean import decode_summary_files
from cc_analytics.frames.claude.discovery import TranscriptFile, find_session
from cc_analytics.frames.claude.events import Source, resolve
from cc_analytics.frames.claude.turns import prepare
from cc_analytics.frames.claude.usage import (
    ON_CHAIN,
    SEGMENT,
    compaction_columns,
    deduplicated_requests,
    usage_totals,
)
from cc_analytics.frames.claude.windows import context_window, window_columns
from cc_analytics.frames.engine import BATCH_BYTES, Progress, lazy_source, run_batches

KEY = S.FILE_SESSION_ID
PROVIDER = "anthropic"
RECORDED = "recorded"
CONTEXT_KEYS = ("system", "user", "assistant", "tool", "toolCalls")
# A batch is a few thousand rows: the in-memory engine runs these small queries in about
# two thirds of the CPU time the default (streaming) engine takes to set them up.
BATCH_ENGINE = "in-memory"
# Session batches can be larger than the events' default: what a batch keeps per line is a
# few dozen bytes (no text), so doubling it costs little memory and halves per-batch overhead.
SESSIONS_BATCH_BYTES = 2 * BATCH_BYTES


def summarize(events: pl.DataFrame, blocks: pl.DataFrame, files: Sequence[TranscriptFile]) -> pl.DataFrame:
    """One row per session from prepared events and blocks (see ``claude_turns.prepare``)."""
    lazy_events = events.lazy()
    main = lazy_events.filter(~pl.col(S.IS_SUBAGENT_FILE))
    overall = lazy_events.group_by(KEY).agg(
        pl.col(S.CWD).drop_nulls().first().alias(S.PROJECT),
        pl.col(S.TIMESTAMP).min().alias(S.FIRST_TIME),
        pl.col(S.TIMESTAMP).max().alias(S.LAST_TIME),
        pl.col(S.MODEL)
        .filter(pl.col(S.MODEL).is_not_null() & ~pl.col(S.IS_API_ERROR))
        .unique(maintain_order=True)
        .alias(S.MODELS),
        pl.col(S.SOURCE_FILE).n_unique().cast(pl.Int64).alias(S.FILES),
        pl.col(S.SOURCE_FILE).filter(pl.col(S.IS_SUBAGENT_FILE)).n_unique().cast(pl.Int64).alias(S.SUBAGENT_FILES),
        pl.len().cast(pl.Int64).alias(S.EVENTS),
    )
    chain = main.group_by(KEY).agg(
        pl.struct(S.SOURCE_FILE, S.TURN_INDEX).n_unique().cast(pl.Int64).alias(S.TURNS),
        pl.col(S.OCCUPANCY).drop_nulls().last().alias(S.LAST_OCCUPANCY),
        pl.col(S.OCCUPANCY).max().alias(S.PEAK_OCCUPANCY),
        pl.col(S.MODEL).filter(pl.col(ON_CHAIN) & ~pl.col(S.IS_API_ERROR)).drop_nulls().last().alias(S.LAST_MODEL),
        pl.col(S.VERSION).drop_nulls().last(),
        *compaction_columns(),
    )
    totals = deduplicated_requests(lazy_events, KEY).group_by(KEY).agg(usage_totals(KEY))
    chain_blocks = blocks.lazy().filter(pl.col(ON_CHAIN) & ~pl.col(S.IS_SUBAGENT_FILE))
    last_segment = pl.col(SEGMENT) == pl.col(SEGMENT).max().over(S.SOURCE_FILE)
    buckets = (
        chain_blocks.with_columns(last_segment.alias("_current"))
        .group_by(KEY)
        .agg(
            *bucket_sums(),
            pl.col(TOKENS).filter(pl.col("_current")).sum().cast(pl.Int64).alias(S.CONTEXT_ESTIMATE),
        )
    )
    places = pl.LazyFrame(
        {
            KEY: [f.session_id for f in files],
            S.PROJECT_DIR: [f.project_dir for f in files],
            "_sub": [f.is_subagent for f in files],
        },
        schema={KEY: pl.String, S.PROJECT_DIR: pl.String, "_sub": pl.Boolean},
    )
    project_dirs = places.sort("_sub").group_by(KEY).agg(pl.col(S.PROJECT_DIR).first())
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, S.CONTEXT_ESTIMATE, S.TURNS, S.COMPACTIONS]
    zero += [S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS]
    zero.append(S.REQUESTS)
    summary = (
        overall.join(chain, on=KEY, how="left")
        .join(totals, on=KEY, how="left")
        .join(buckets, on=KEY, how="left")
        .join(project_dirs, on=KEY, how="left")
        .with_columns(
            pl.col(zero).fill_null(0),
            pl.col(S.PROJECT).fill_null(pl.col(S.PROJECT_DIR)),
            context_window(S.LAST_MODEL, S.VERSION, S.PEAK_OCCUPANCY).alias(S.WINDOW),
        )
        .with_columns(
            *window_columns(S.LAST_OCCUPANCY),
            pl.when(pl.col(S.CONTEXT_ESTIMATE) > 0)
            .then(pl.col(S.LAST_OCCUPANCY).cast(pl.Float64) / pl.col(S.CONTEXT_ESTIMATE))
            .alias(S.CALIBRATION),
            pl.col(S.COMPACTION_TRIGGERS).fill_null([]),
            pl.col(S.COMPACTION_PRE_TOKENS).fill_null([]),
            pl.col(S.COMPACTION_POST_TOKENS).fill_null([]),
            pl.lit(S.CLAUDE).alias(S.FORMAT),
            pl.lit(PROVIDER).alias(S.PROVIDER),
            pl.lit(RECORDED).alias(S.OCCUPANCY_SOURCE),
            pl.lit(None, pl.Int64).alias(S.MESSAGES),
        )
        .rename({KEY: S.SESSION_ID})
        .select(list(S.SESSIONS_SCHEMA))
        .sort(S.SESSION_ID)
    )
    return summary.collect(engine=BATCH_ENGINE).cast(dict(S.SESSIONS_SCHEMA))


def prepared(files: Sequence[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Decode ``files`` (the lean columns) and materialise prepared events and blocks once, plus problems."""
    decoded = decode_summary_files(files)
    events, blocks = prepare(decoded)
    attributes = events.select(S.ROW, KEY, S.IS_SUBAGENT_FILE)
    blocks = blocks.join(attributes, on=S.ROW, how="left")
    events_df, blocks_df = pl.collect_all([events, blocks], engine=BATCH_ENGINE)
    return events_df, blocks_df, decoded.problems


def sessions_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Session summaries and problems of one batch (run in a worker process)."""
    events, blocks, problems = prepared(files)
    return summarize(events, blocks, files), problems


def iter_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(sessions, problems) frames batch by batch: what ``scan_sessions`` and the CLI consume."""
    files = resolve(source)
    yield from run_batches(
        sessions_batch, files, workers=workers, on_progress=on_progress, batch_bytes=SESSIONS_BATCH_BYTES
    )


def scan_sessions(source: Source = None, *, workers: int | None = 1) -> pl.LazyFrame:
    """Lazily, one row per session (main transcript with its subagent files) of ``source``.

    Totals count each (message id, request id) once across the session's files; occupancy,
    window, compactions and buckets describe the main chain.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hi"}}\\n')
        >>> scan_sessions(folder).select("session_id", "turns", "tokens_user").collect().row(0)
        ('s', 1, 1)
    """
    files = resolve(source)

    def produce() -> Iterator[pl.DataFrame]:
        for sessions, _problems in run_batches(
            sessions_batch, files, workers=workers, batch_bytes=SESSIONS_BATCH_BYTES
        ):
            yield sessions

    return lazy_source(produce, S.SESSIONS_SCHEMA, "claude_sessions")


def read_sessions(source: Source = None, *, workers: int | None = 1) -> pl.DataFrame:
    """Eager :func:`scan_sessions`, sorted by session id."""
    return scan_sessions(source, workers=workers).collect().sort(S.SESSION_ID)


def claude_context(
    session_id: str, *, roots: list[Path] | None = None, model: str | None = None
) -> dict[str, Any] | None:
    """The ``context`` report of one Claude Code session, or None when it is not found.

    Keys, in order: the ChainlessChain ``cc context`` keys (``sessionId``, ``model``,
    ``provider``, ``contextWindow``, ``totalTokens``, ``usedFraction``, ``remainingTokens``,
    ``messageCount``, ``breakdown``, ``counts``, ``overflows``) measured with the heuristic
    buckets over the current context (main chain since the last compaction), then recorded
    fields (``recordedTokens``, ``peakTokens``, ``compactions`` …); see ``docs/claude-context.md``.
    ``model`` sizes the window for that model instead of the recorded one.
    """
    files = find_session(session_id, roots)
    if not files:
        return None
    events, blocks, _problems = prepared(files)
    row = summarize(events, blocks, files).row(0, named=True)
    current = blocks.filter(
        pl.col(ON_CHAIN) & ~pl.col(S.IS_SUBAGENT_FILE) & (pl.col(SEGMENT) == pl.col(SEGMENT).max().over(S.SOURCE_FILE))
    )
    per_bucket = current.group_by(BUCKET).agg(
        pl.col(TOKENS).sum().alias("tokens"), pl.col(S.ROW).n_unique().alias("messages")
    )
    tokens = dict.fromkeys(BUCKET_NAMES, 0)
    counts = dict.fromkeys(BUCKET_NAMES, 0)
    for bucket, value, messages in per_bucket.iter_rows():
        tokens[bucket] = int(value)
        counts[bucket] = int(messages)
    breakdown = dict(zip(CONTEXT_KEYS, (tokens[name] for name in BUCKET_NAMES), strict=True))
    total = sum(breakdown.values())
    shown_model = model or row[S.LAST_MODEL]
    if model:
        window = int(pl.select(context_window(pl.lit(model), pl.lit(None, pl.String))).item())
    else:
        window = int(row[S.WINDOW])
    effective = window - (row[S.WINDOW] - row[S.EFFECTIVE_WINDOW])
    threshold = effective - (row[S.EFFECTIVE_WINDOW] - row[S.AUTOCOMPACT_THRESHOLD])
    recorded = row[S.LAST_OCCUPANCY]
    history = [
        {"trigger": trigger, "preTokens": pre, "postTokens": post}
        for trigger, pre, post in zip(
            row[S.COMPACTION_TRIGGERS],
            row[S.COMPACTION_PRE_TOKENS],
            row[S.COMPACTION_POST_TOKENS],
            strict=True,
        )
    ]
    return {
        "sessionId": session_id,
        "model": shown_model,
        "provider": PROVIDER,
        "contextWindow": window,
        "totalTokens": total,
        "usedFraction": fraction_4(total / window),
        "remainingTokens": max(0, window - total),
        "messageCount": current.select(pl.col(S.ROW).n_unique()).item(),
        "breakdown": breakdown,
        "counts": {key: counts[name] for key, name in zip(CONTEXT_KEYS[:4], BUCKET_NAMES[:4], strict=True)},
        "overflows": total > window,
        "recordedTokens": recorded,
        "recordedFraction": None if recorded is None else fraction_4(recorded / window),
        "recordedRemainingTokens": None if recorded is None else max(0, window - recorded),
        "peakTokens": row[S.PEAK_OCCUPANCY],
        "effectiveWindow": effective,
        "autoCompactThreshold": threshold,
        "compactions": row[S.COMPACTIONS],
        "compactionHistory": history,
        "inputTokens": row[S.INPUT_TOKENS],
        "cacheCreationTokens": row[S.CACHE_CREATION_TOKENS],
        "cacheReadTokens": row[S.CACHE_READ_TOKENS],
        "outputTokens": row[S.OUTPUT_TOKENS],
        "cacheHitRatio": None if row[S.CACHE_HIT_RATIO] is None else fraction_4(row[S.CACHE_HIT_RATIO]),
        "requests": row[S.REQUESTS],
        "turns": row[S.TURNS],
        "models": list(row[S.MODELS]),
        "estimateCalibration": None if row[S.CALIBRATION] is None else fraction_4(row[S.CALIBRATION]),
        "project": row[S.PROJECT],
        "firstTime": _iso(row[S.FIRST_TIME]),
        "lastTime": _iso(row[S.LAST_TIME]),
        "files": row[S.FILES],
        "subagentFiles": row[S.SUBAGENT_FILES],
    }


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
