"""Per-session summaries of ChainlessChain transcripts, and the ``cc context`` report of each session.

Imports: polars, ``format`` (half-up rounding of the JSON fraction), ``frames.metrics``,
``frames.engine`` and the other ``frames.chainless`` modules. A session is one transcript.
Two products, one decoder:

* :func:`context_frame` — what ``cc context`` reports (``CONTEXT_SCHEMA``), from the lean
  profile of the walker: header, recorded window, the replayed messages' buckets and counts,
  window, used fraction, headroom, overflow, activity time;
* :func:`scan_sessions` — one row per session in the shared ``SESSIONS_SCHEMA``
  (``format`` = ``"chainlesschain"``), from the full profile and the turns of the same decode.

Sessions columns, where ChainlessChain differs from Claude Code:

* ``project`` is null (a transcript records no working directory); ``project_dir`` is the
  store folder's name;
* ``first_time``/``last_time``: smallest and largest numeric timestamp (milliseconds);
* ``models``: the recorded (header) model, then every ``token_usage`` record's model, once
  each in order of appearance; ``last_model``: the model of the last main record, else the
  recorded one; ``provider``: the provider ``cc context`` shows (``ollama`` when none);
* ``turns``: rows of the turns frame (turn 0, before the first prompt, included);
* occupancy is estimated (``occupancy_source`` = ``"estimated"``): ``last_occupancy`` =
  ``context_estimate`` = the ``cc context`` total; ``peak_occupancy`` = the largest the
  replayed context grew, message by message;
* ``window``, ``used_fraction``, ``headroom``: as ``cc context`` sizes the session (no flags);
  ``effective_window``, ``autocompact_threshold`` and ``calibration`` (Claude Code concepts,
  or needing a recorded occupancy) are null;
* the five buckets and ``estimated_tokens``: every message the context received over the
  session (message events, ``ws_turn`` settlements, checkpoint snapshots), as in Claude Code;
  ``messages``: the messages in the context now (``cc context``'s ``messageCount``);
* token totals and ``requests``: every ``token_usage`` record, main model, sub-agents and
  semantic compaction alike (what the session cost; only the window uses main records);
  ``cache_hit_ratio`` = cache read / (input + cache creation + cache read); ``cost_usd`` and
  ``unpriced_requests``: those records priced (``frames.chainless.requests``);
* ``compactions``: checkpoints (``compact`` and ``checkpoint_timeline_commit`` with a
  snapshot), with each ``compact``'s ``trigger``, ``originalTokens`` and ``compressedTokens``
  (null for a timeline commit);
* ``files`` is 1, ``subagent_files`` 0, ``events`` the lines that parsed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from operator import attrgetter
from typing import Any

import polars as pl

from cc_analytics.frames import metrics
from cc_analytics.frames.chainless import schema as S
from cc_analytics.frames.chainless.buckets import TOKENS, bucket_counts, bucket_sums, with_tokens
from cc_analytics.frames.chainless.decode import Decoded, Profile, decode
from cc_analytics.frames.chainless.requests import priced_requests
from cc_analytics.frames.chainless.store import Source, resolve
from cc_analytics.frames.chainless.turns import lift_turns, utc_time
from cc_analytics.frames.chainless.windows import resolved_window, shown_model, shown_provider
from cc_analytics.frames.context_report import BREAKDOWN_KEYS, context_report
from cc_analytics.frames.engine import Progress, run_batches, scan_batches
from cc_analytics.frames.requests import cost_totals
from cc_analytics.frames.sources import TranscriptFile
from cc_analytics.frames.tables import Tables

ESTIMATED = "estimated"
# The lean profile keeps little per line: batches of 64 MB (twice the engine's default when it
# was 32 MB) halved the per-batch overhead.
CONTEXT_BATCH_BYTES = 64 * 1024 * 1024
USAGE_COLUMNS = (S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS)
NULL_COLUMNS = (S.PROJECT, S.EFFECTIVE_WINDOW, S.AUTOCOMPACT_THRESHOLD, S.CALIBRATION)


# ------------------------------------------------------------------ the cc context report


def context_rows(
    files: pl.LazyFrame, messages: pl.LazyFrame, *, model: str | None = None, provider: str | None = None
) -> pl.LazyFrame:
    """Per row of a files frame (``FILE`` key): the report columns, from its in-context ``messages``.

    ``model``/``provider`` are the ``--model``/``--provider`` flags; an empty string is no flag.
    """
    counts = with_tokens(messages).group_by(S.FILE).agg(*bucket_sums(), *bucket_counts())
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, *S.MESSAGE_COUNTS, S.MESSAGES]
    used, window = pl.col(S.CONTEXT_ESTIMATE), pl.col(S.WINDOW)
    return (
        files.join(counts, on=S.FILE, how="left", maintain_order="left")
        .with_columns(pl.col(zero).fill_null(0))
        .with_columns(
            shown_model(model).alias(S.MODEL),
            shown_provider(provider).alias(S.PROVIDER),
            resolved_window(model, provider).alias(S.WINDOW),
            pl.col(S.ESTIMATED_TOKENS).alias(S.CONTEXT_ESTIMATE),
            # A transcript without a finite numeric timestamp counts as 0 (§2.4).
            pl.col(S.LAST_ACTIVITY).fill_null(0.0),
        )
        .with_columns(
            metrics.used_fraction(used, window).alias(S.USED_FRACTION),
            metrics.headroom(used, window).alias(S.HEADROOM),
            metrics.overflows(used, window).alias(S.OVERFLOWS),
        )
    )


def context_batch(
    files: list[TranscriptFile],
    *,
    model: str | None = None,
    provider: str | None = None,
    contents: Sequence[bytes] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Report rows and problems of one batch (run in a worker process); ``contents``: the
    files' bytes, when read elsewhere."""
    decoded = decode(files, Profile.CONTEXT, contents=contents)
    rows = context_rows(decoded.files.lazy(), decoded.messages.lazy(), model=model, provider=provider)
    return rows.select(list(S.CONTEXT_SCHEMA)).collect(), decoded.problems


def iter_context(
    source: Source = None,
    *,
    model: str | None = None,
    provider: str | None = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(report rows, problems) batch by batch: what :func:`context_frame` and the CLI consume."""
    work = partial(context_batch, model=model or None, provider=provider or None)
    files = resolve(source)
    yield from run_batches(work, files, workers=workers, on_progress=on_progress, batch_bytes=CONTEXT_BATCH_BYTES)


def context_frame(
    source: Source = None,
    *,
    model: str | None = None,
    provider: str | None = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> pl.DataFrame:
    """One row per session with what ``cc context`` reports (``CONTEXT_SCHEMA``), sorted by id.

    ``model``/``provider`` are the ``--model``/``--provider`` flags (an empty string is no
    flag). An unreadable transcript is an empty session here and a problem in
    :func:`~cc_analytics.frames.chainless.read_problems`.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"session_start","timestamp":1767225600000,"data":{"provider":"deepseek"}}\\n'
        ...     '{"type":"user_message","timestamp":1767225601000,"data":{"role":"user","content":"你好世界"}}\\n')
        >>> context_frame(folder).select("provider", "window", "context_estimate", "messages").row(0)
        ('deepseek', 64000, 3, 1)
        >>> context_frame(folder, model="gpt-4o").select("model", "window").row(0)
        ('gpt-4o', 128000)
    """
    batches = iter_context(source, model=model, provider=provider, workers=workers, on_progress=on_progress)
    parts = [rows for rows, _ in batches]
    frame = pl.concat(parts) if parts else pl.DataFrame(schema=S.CONTEXT_SCHEMA)
    return frame.sort(S.SESSION_ID, maintain_order=True)


def report_dict(row: dict[str, Any], *, session_id: str | None = None) -> dict[str, Any]:
    """The ``--json`` report of one :func:`context_frame` row (``session_id`` shown instead of the
    row's, e.g. the id as typed), built by the one ``context`` report builder."""
    return context_report(
        row[S.SESSION_ID] if session_id is None else session_id,
        model=row[S.MODEL],
        provider=row[S.PROVIDER],
        window=row[S.WINDOW],
        breakdown=dict(zip(BREAKDOWN_KEYS, (row[name] for name in S.BUCKETS), strict=True)),
        counts={
            "system": row[S.MESSAGES_SYSTEM],
            "user": row[S.MESSAGES_USER],
            "assistant": row[S.MESSAGES_ASSISTANT],
            "tool": row[S.MESSAGES_TOOL],
        },
        message_count=row[S.MESSAGES],
    )


# ------------------------------------------------------------------ sessions


def summarize(decoded: Decoded, turns: pl.DataFrame, requests: pl.DataFrame) -> pl.DataFrame:
    """One row per transcript of a batch decoded with ``Profile.EVENTS`` (``SESSIONS_SCHEMA``),
    with its turns and priced requests (:func:`~cc_analytics.frames.chainless.requests.priced_requests`)."""
    files = decoded.files.lazy()
    cost = requests.lazy().group_by(S.FILE).agg(*cost_totals())
    events = decoded.events.lazy()
    messages = decoded.messages.lazy()
    now = context_rows(files, messages.filter(pl.col(S.IN_CONTEXT))).select(
        S.FILE, S.PROVIDER, S.WINDOW, S.CONTEXT_ESTIMATE, S.MESSAGES
    )
    # Messages come in file order; within a segment the context only grows.
    running = pl.col(TOKENS).cum_sum().over(S.FILE, S.SEGMENT)
    history = with_tokens(messages).group_by(S.FILE).agg(*bucket_sums(), running.max().alias(S.PEAK_OCCUPANCY))
    per_turn = turns.lazy().group_by(S.SOURCE_FILE).agg(pl.len().cast(pl.Int64).alias(S.TURNS))
    prompt = pl.col(S.INPUT_TOKENS) + pl.col(S.CACHE_CREATION_TOKENS) + pl.col(S.CACHE_READ_TOKENS)
    usage = (
        events.filter(pl.col(S.TYPE) == "token_usage")
        .group_by(S.FILE)
        .agg(
            *(pl.col(name).sum() for name in USAGE_COLUMNS),
            pl.len().cast(pl.Int64).alias(S.REQUESTS),
            (pl.col(S.CACHE_READ_TOKENS).sum().cast(pl.Float64) / prompt.sum()).alias(S.CACHE_HIT_RATIO),
            pl.col(S.MODEL).drop_nulls().alias("_usage_models"),
        )
    )
    checkpoint = pl.col(S.IS_CHECKPOINT)
    per_line = events.group_by(S.FILE).agg(
        pl.len().cast(pl.Int64).alias(S.EVENTS),
        checkpoint.sum().cast(pl.Int64).alias(S.COMPACTIONS),
        pl.col(S.TRIGGER).filter(checkpoint).alias(S.COMPACTION_TRIGGERS),
        pl.col(S.PRE_TOKENS).filter(checkpoint).alias(S.COMPACTION_PRE_TOKENS),
        pl.col(S.POST_TOKENS).filter(checkpoint).alias(S.COMPACTION_POST_TOKENS),
    )
    header_model = pl.when(pl.col(S.RECORDED_MODEL) != "").then(pl.col(S.RECORDED_MODEL))
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, *USAGE_COLUMNS, S.REQUESTS, S.TURNS, S.EVENTS, S.COMPACTIONS]
    empty_lists = [S.COMPACTION_TRIGGERS, S.COMPACTION_PRE_TOKENS, S.COMPACTION_POST_TOKENS, "_usage_models"]
    summary = (
        files.join(now, on=S.FILE, how="left", maintain_order="left")
        .join(history, on=S.FILE, how="left", maintain_order="left")
        .join(per_turn, on=S.SOURCE_FILE, how="left", maintain_order="left")
        .join(usage, on=S.FILE, how="left", maintain_order="left")
        .join(per_line, on=S.FILE, how="left", maintain_order="left")
        .join(cost, on=S.FILE, how="left", maintain_order="left")
        .with_columns(
            pl.col(zero).fill_null(0), pl.col(empty_lists).fill_null([]), pl.col(S.UNPRICED_REQUESTS).fill_null(0)
        )
        .with_columns(
            pl.concat_list(header_model, "_usage_models")
            .list.drop_nulls()
            .list.unique(maintain_order=True)
            .alias(S.MODELS),
            pl.coalesce(S.RECORD_MODEL, shown_model()).alias(S.LAST_MODEL),
            utc_time(pl.col(S.FIRST_ACTIVITY)).alias(S.FIRST_TIME),
            utc_time(pl.col(S.LAST_ACTIVITY)).alias(S.LAST_TIME),
            pl.col(S.CONTEXT_ESTIMATE).alias(S.LAST_OCCUPANCY),
            pl.col(S.PEAK_OCCUPANCY).fill_null(0),
            pl.lit(ESTIMATED).alias(S.OCCUPANCY_SOURCE),
            metrics.used_fraction(S.CONTEXT_ESTIMATE, S.WINDOW).alias(S.USED_FRACTION),
            metrics.headroom(S.CONTEXT_ESTIMATE, S.WINDOW).alias(S.HEADROOM),
            pl.lit(1).alias(S.FILES),
            pl.lit(0).alias(S.SUBAGENT_FILES),
            pl.lit(S.CHAINLESS).alias(S.FORMAT),
            *(pl.lit(None, S.SESSIONS_SCHEMA[name]).alias(name) for name in NULL_COLUMNS),
        )
        .select(list(S.SESSIONS_SCHEMA))
        .sort(S.SESSION_ID, maintain_order=True)
    )
    return summary.collect().cast(S.SESSIONS_SCHEMA)


def tables_batch(files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None) -> Tables:
    """Sessions, turns (empty unless ``turns``), problems and priced requests of one batch from one decode
    (run in a worker process); ``contents``: the files' bytes, when read elsewhere."""
    decoded = decode(files, Profile.EVENTS, contents=contents)
    requests = priced_requests(decoded)
    turn_rows = lift_turns(decoded, requests.lazy()).collect()
    sessions = summarize(decoded, turn_rows, requests)
    return Tables(
        sessions, turn_rows if turns else turn_rows.clear(), decoded.problems, requests.select(list(S.REQUESTS_SCHEMA))
    )


def iter_tables(
    source: Source = None,
    *,
    turns: bool = True,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> Iterator[Tables]:
    """Sessions, turns (empty unless ``turns``) and problems batch by batch, each batch decoded once.

    Examples:
        >>> [batch.sessions.height for batch in iter_tables([])]
        []
    """
    work = partial(tables_batch, turns=turns)
    yield from run_batches(work, resolve(source), workers=workers, on_progress=on_progress)


def scan_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per session (transcript) of ``source`` in the shared ``SESSIONS_SCHEMA``.

    Occupancy is the ``cc context`` estimate; what each column means for ChainlessChain is in
    the module docstring.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"session_start","timestamp":1767225600000,"data":{"model":"gpt-4o"}}\\n'
        ...     '{"type":"user_message","timestamp":1767225601000,"data":{"role":"user","content":"hi"}}\\n')
        >>> scan_sessions(folder).select("format", "session_id", "turns", "window", "context_estimate").collect().row(0)
        ('chainlesschain', 's', 2, 128000, 1)
    """
    return scan_batches(
        tables_batch,
        resolve(source),
        S.SESSIONS_SCHEMA,
        "chainless_sessions",
        workers=workers,
        on_progress=on_progress,
        pick=attrgetter("sessions"),
    )


def read_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_sessions`, sorted by session id.

    Examples:
        >>> read_sessions([]).height
        0
    """
    return scan_sessions(source, workers=workers, on_progress=on_progress).collect().sort(S.SESSION_ID)
