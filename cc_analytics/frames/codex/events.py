"""Codex rollouts as the events frame (one row per JSON object line) and the problems frame.

Imports: polars, ``frames.engine``, ``frames.estimate`` and the other ``frames.codex`` modules.
Loaders come in pairs: ``scan_*`` returns a LazyFrame that decodes batch by batch when
collected, ``read_*`` a DataFrame. ``source`` is a rollout, a folder (a Codex home: its
``sessions`` and ``archived_sessions``), a glob, TranscriptFiles, a list of those, or None for
the default stores.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import Profile, decode
from cc_analytics.frames.codex.requests import usage_rows, utc_time
from cc_analytics.frames.codex.store import Source, resolve
from cc_analytics.frames.engine import Progress, scan_batches
from cc_analytics.frames.estimate import estimate_tokens
from cc_analytics.frames.sources import TranscriptFile


def events_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The events frame of one batch (run in a worker process)."""
    decoded = decode(files, Profile.EVENTS)
    tokens = (
        decoded.items.lazy()
        .group_by(S.FILE, S.LINE)
        .agg(pl.coalesce(S.TOKENS, estimate_tokens(S.TEXT)).fill_null(0).sum().alias(S.TOKENS))
    )
    usage = usage_rows(decoded).select(S.FILE, S.LINE, *S.LAST_FIELDS, *S.TOTAL_FIELDS, S.WINDOW, S.IS_REQUEST)
    files_frame = decoded.files.lazy().select(S.FILE, S.SOURCE_FILE, S.SESSION_ID, S.AGENT_ID)
    return (
        decoded.lines.lazy()
        .join(files_frame, on=S.FILE, how="left", maintain_order="left")
        .join(tokens, on=[S.FILE, S.LINE], how="left", maintain_order="left")
        .join(usage, on=[S.FILE, S.LINE], how="left", maintain_order="left")
        .with_columns(utc_time(pl.col(S.TIMESTAMP)).alias(S.TIME))
        .select(list(S.EVENTS_SCHEMA))
        .collect()
        .cast(S.EVENTS_SCHEMA)
    )


def problems_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The problems of one batch: the tables profile parses every line sessions read."""
    return decode(files, Profile.TABLES).problems


def scan_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per line of every rollout that is a JSON object (``EVENTS_SCHEMA``).

    Lines that did not parse are in :func:`scan_problems` instead. ``type`` is the line's
    envelope type and ``payload_type`` its payload's; ``replayed`` marks a fork's copy of its
    parent's history; the detail columns are filled for the lines they describe: ``role`` and
    ``text`` for messages, prompts and summaries, ``model``/``cwd``/``turn_id`` for
    ``turn_context``, ``tool``/``call_id``/``is_error`` for tool calls and outputs, ``tokens``
    (the estimate of what the line adds to the context), and the recorded usage of
    ``token_count`` lines (``last_*``, ``total_*``, ``window``, ``is_request``).

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "rollout-a.jsonl").write_text(
        ...     '{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"a"}}\\n'
        ...     '{"timestamp":"2025-10-01T10:00:01Z","type":"turn_context","payload":{"model":"gpt-5"}}\\n42\\n')
        >>> scan_events(folder).select("session_id", "line", "type", "model").collect().rows()
        [('a', 1, 'session_meta', None), ('a', 2, 'turn_context', 'gpt-5')]
    """
    return scan_batches(
        events_batch, resolve(source), S.EVENTS_SCHEMA, "codex_events", workers=workers, on_progress=on_progress
    )


def read_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_events`.

    Examples:
        >>> read_events([]).columns[:4]
        ['source_file', 'session_id', 'agent_id', 'line']
    """
    return scan_events(source, workers=workers, on_progress=on_progress).collect()


def scan_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, what could not be used whole: ``source_file``, ``line`` (null for the whole file), ``reason``.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "rollout-a.jsonl").write_text('{"timestamp":"t","type":"session_meta","payload":{}}\\n{"a":1,}\\n')
        >>> scan_problems(folder).select("line", "reason").collect().rows()
        [(2, 'not JSON (trailing comma is not allowed); line skipped')]
    """
    return scan_batches(
        problems_batch, resolve(source), S.PROBLEMS_SCHEMA, "codex_problems", workers=workers, on_progress=on_progress
    )


def read_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_problems`.

    Examples:
        >>> read_problems([]).columns
        ['source_file', 'line', 'reason']
    """
    return scan_problems(source, workers=workers, on_progress=on_progress).collect()
