"""Per-session summaries of Claude Code transcripts.

Imports: polars, ``frames.engine`` and the other modules of ``frames.claude``. A session is a
main transcript plus its subagent files (they share a batch, see ``frames.engine``); each
batch is decoded with the measured profile (:data:`~cc_analytics.frames.claude.decode.SESSIONS`)
and reduced to one row per session, so the summary of a whole corpus is the concatenation of
small frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from operator import itemgetter

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.buckets import TOKENS, bucket_sums
from cc_analytics.frames.claude.decode import SESSIONS, Decoded, Walked, frames_of, walk_files
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.claude.events import Source, resolve
from cc_analytics.frames.claude.requests import (
    ON_CHAIN,
    PROVIDER,
    SEGMENT,
    compaction_columns,
    priced_requests,
    request_totals,
    session_projects,
)
from cc_analytics.frames.claude.turns import prepare
from cc_analytics.frames.claude.windows import context_window, window_columns
from cc_analytics.frames.engine import BATCH_ENGINE, Progress, scan_batches

KEY = S.FILE_SESSION_ID
RECORDED = "recorded"


def summarize(
    events: pl.DataFrame,
    blocks: pl.DataFrame,
    files: Sequence[TranscriptFile],
    requests: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per session from prepared events and blocks (see ``claude_turns.prepare``) and
    their priced requests (:func:`~cc_analytics.frames.claude.requests.priced_requests`, computed
    here when not given)."""
    if requests is None:
        requests = priced_requests(events, files)
    lazy_events = events.lazy()
    main = lazy_events.filter(~pl.col(S.IS_SUBAGENT_FILE))
    overall = lazy_events.group_by(KEY).agg(
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
    totals = requests.lazy().group_by(S.SESSION_ID).agg(request_totals()).rename({S.SESSION_ID: KEY})
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
    projects = session_projects(lazy_events, files)
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, S.CONTEXT_ESTIMATE, S.TURNS, S.COMPACTIONS]
    zero += [S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS]
    zero.append(S.REQUESTS)
    summary = (
        overall.join(chain, on=KEY, how="left")
        .join(totals, on=KEY, how="left")
        .join(buckets, on=KEY, how="left")
        .join(projects, on=KEY, how="left")
        .with_columns(
            pl.col(zero).fill_null(0),
            pl.col(S.UNPRICED_REQUESTS).fill_null(0),
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
    return summary.collect(engine=BATCH_ENGINE).cast(S.SESSIONS_SCHEMA)


def prepared(decoded: Decoded, *, prompts: bool = True) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Prepared events and blocks of a measured decode, materialised once (see ``turns.prepare``).

    Blocks also carry their session (``file_session_id``) and ``is_subagent_file``. Without
    ``prompts`` the events leave out the prompts' texts, which only the turns read (the summary
    reads whether a line opens a turn, made here): a big batch's largest column.
    """
    events, blocks = prepare(decoded)
    if not prompts:
        events = events.drop(S.PROMPT_TEXT)
    attributes = events.select(S.ROW, KEY, S.IS_SUBAGENT_FILE)
    blocks = blocks.join(attributes, on=S.ROW, how="left")
    events_df, blocks_df = pl.collect_all([events, blocks], engine=BATCH_ENGINE)
    return events_df, blocks_df


def sessions_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Session summaries and problems of one batch (run in a worker process)."""
    return sessions_of(walk_files(files, SESSIONS))


def sessions_of(walked: Walked) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`sessions_batch` from a batch's walk (the half a worker process hands back)."""
    decoded = frames_of(walked)
    problems = decoded.problems
    events, blocks = prepared(decoded, prompts=False)
    del decoded  # its events' texts can go before the summary is made
    return summarize(events, blocks, walked.files), problems


def scan_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per session (main transcript with its subagent files) of ``source``.

    ``source`` is a transcript file, a folder, a glob, a list of these (or of
    ``TranscriptFile``), or None for the Claude Code projects folders. Totals count each
    (message id, request id) once across the session's files; occupancy, window,
    compactions and buckets describe the main chain. The frame is in ``SESSIONS_SCHEMA``
    with ``format`` = ``"claude-code"``.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hi"}}\\n')
        >>> scan_sessions(folder).select("format", "session_id", "turns", "tokens_user").collect().row(0)
        ('claude-code', 's', 1, 1)
    """
    return scan_batches(
        partial(walk_files, profile=SESSIONS),
        resolve(source),
        S.SESSIONS_SCHEMA,
        "claude_sessions",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=SESSIONS.batch_bytes,
        finish=sessions_of,
        pick=itemgetter(0),
    )


def read_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_sessions`, sorted by session id.

    Examples:
        >>> read_sessions([]).schema == S.SESSIONS_SCHEMA
        True
    """
    return scan_sessions(source, workers=workers, on_progress=on_progress).collect().sort(S.SESSION_ID)
