"""ChainlessChain transcripts as the events frame (one row per JSONL line) and the problems frame.

Imports: polars, ``frames.engine`` and ``frames.chainless``'s ``schema``, ``store`` and
``decode``. Loaders come in pairs: ``scan_*`` returns a LazyFrame that decodes batch by batch
when collected, ``read_*`` a DataFrame. ``source`` is a transcript, a sessions folder, a
glob, TranscriptFiles, a list of those, or None for the default store.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.chainless import schema as S
from cc_analytics.frames.chainless.decode import Profile, decode
from cc_analytics.frames.chainless.store import Source, resolve
from cc_analytics.frames.engine import Progress, scan_batches
from cc_analytics.frames.sources import TranscriptFile


def events_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The events frame of one batch (run in a worker process)."""
    return decode(files, Profile.EVENTS).events.drop(S.FILE)


def problems_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The problems of one batch: the lean profile walks the same rules."""
    return decode(files, Profile.CONTEXT).problems


def scan_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per line of every transcript that parsed as JSON (``EVENTS_SCHEMA``).

    Lines that did not parse are in :func:`scan_problems` instead. ``timestamp`` is the
    line's finite numeric timestamp in milliseconds; the detail columns are filled for the
    types they describe (messages and checkpoints, ``session_start``, ``token_usage``,
    ``tool_call``) and null elsewhere.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text(
        ...     '{"type":"session_start","timestamp":1767225600000,"data":{"model":"gpt-4o"}}\\n42\\n')
        >>> scan_events(folder).select("session_id", "line", "type", "model").collect().rows()
        [('s', 1, 'session_start', 'gpt-4o'), ('s', 2, None, None)]
    """
    return scan_batches(
        events_batch, resolve(source), S.EVENTS_SCHEMA, "chainless_events", workers=workers, on_progress=on_progress
    )


def read_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_events`.

    Examples:
        >>> read_events([]).columns[:4]
        ['source_file', 'session_id', 'line', 'type']
    """
    return scan_events(source, workers=workers, on_progress=on_progress).collect()


def scan_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, what could not be used whole: ``source_file``, ``line`` (null for the whole file), ``reason``.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text('{"type":"system"}\\n{"a":1,}\\n')
        >>> scan_problems(folder).select("line", "reason").collect().rows()
        [(2, 'not strict JSON (trailing comma is not allowed); line skipped')]
    """
    return scan_batches(
        problems_batch,
        resolve(source),
        S.PROBLEMS_SCHEMA,
        "chainless_problems",
        workers=workers,
        on_progress=on_progress,
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
