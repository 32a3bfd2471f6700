"""Claude Code events as frames: one row per usable JSONL line, and the lines that were not.

Imports: polars, the standard library, ``frames.engine`` (the batch engine) and the other
modules of ``frames.claude``. Events keep every column and block text
(:data:`~cc_analytics.frames.claude.decode.EVENTS`); problems come from the cheapest decode
(:data:`~cc_analytics.frames.claude.decode.SESSIONS`), whose line rules are the same.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import EVENTS, SESSIONS, Decoded, decode_files
from cc_analytics.frames.claude.discovery import TranscriptFile, resolve
from cc_analytics.frames.engine import Progress, scan_batches
from cc_analytics.frames.sources import Source


def events_of(decoded: Decoded) -> pl.DataFrame:
    """The events frame of a decoded batch: scalar columns plus the per-line block lists."""
    kind = pl.col(S.KIND)
    tool_use = kind == "tool_use"
    tool_result = kind == "tool_result"
    lists = (
        decoded.blocks.lazy()
        .group_by(S.ROW)
        .agg(
            pl.col(S.NAME).filter(tool_use).alias(S.TOOL_USE_NAMES),
            pl.col(S.BLOCK_ID).filter(tool_use).alias(S.TOOL_USE_IDS),
            pl.col(S.TEXT).filter(tool_use).alias(S.TOOL_USE_INPUTS),
            pl.col(S.BLOCK_ID).filter(tool_result).alias(S.TOOL_RESULT_IDS),
            pl.col(S.IS_ERROR).filter(tool_result).alias(S.TOOL_RESULT_ERRORS),
            pl.col(S.IS_ERROR).filter(tool_result).any().alias(S.IS_ERROR),
            pl.col(S.TEXT).filter(tool_result).str.join("\n").alias(S.TOOL_RESULT_TEXT),
        )
    )
    empty_text = pl.col(S.TOOL_RESULT_TEXT)
    frame = (
        decoded.events.lazy()
        .with_row_index(S.ROW)
        .with_columns(pl.col(S.ROW).cast(pl.Int64))
        .join(lists, on=S.ROW, how="left", maintain_order="left")
        .with_columns(pl.when(empty_text != "").then(empty_text).alias(S.TOOL_RESULT_TEXT))
        .select(list(S.EVENTS_SCHEMA))
    )
    return frame.collect().cast(S.EVENTS_SCHEMA)


def events_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """Events of one batch (run in a worker process)."""
    return events_of(decode_files(files, EVENTS))


def problems_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """Problem rows of one batch (run in a worker process)."""
    return decode_files(files, SESSIONS).problems


def scan_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per usable JSONL line of every transcript of ``source``.

    ``source`` is a transcript file, a folder, a glob, a list of these (or of
    ``TranscriptFile``), or None for the Claude Code projects folders
    (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``). Malformed lines are left out;
    :func:`scan_problems` lists them.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...     '"message":{"role":"user","content":"hi"}}\\n')
        >>> scan_events(folder).select("type", "prompt_text").collect().row(0)
        ('user', 'hi')
    """
    return scan_batches(
        events_batch, resolve(source), S.EVENTS_SCHEMA, "claude_events", workers=workers, on_progress=on_progress
    )


def read_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_events`.

    Examples:
        >>> read_events([]).schema == S.EVENTS_SCHEMA
        True
    """
    return scan_events(source, workers=workers, on_progress=on_progress).collect()


def scan_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row (``source_file``, ``line``, ``reason``) per line left out or read only in part.

    ``line`` is null for a problem of the file as a whole (a file that cannot be read).

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text('{"type":"summary"}\\n{"type":5}\\n')
        >>> scan_problems(folder).select("line", "reason").collect().rows()
        [(2, "missing or non-string 'type'")]
    """
    return scan_batches(
        problems_batch,
        resolve(source),
        S.PROBLEMS_SCHEMA,
        "claude_problems",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=SESSIONS.batch_bytes,
    )


def read_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_problems`.

    Examples:
        >>> read_problems([]).schema == S.PROBLEMS_SCHEMA
        True
    """
    return scan_problems(source, workers=workers, on_progress=on_progress).collect()
