"""Claude Code's rate limits as a frame: the history the status line keeps, in ``LIMITS_SCHEMA``.

Imports: polars, ``frames.schema`` and ``frames.claude.kept``. Claude Code's transcripts record
no rate limits; it passes them to its ``statusLine`` command, and ``cc-analytics statusline``
keeps them (:mod:`cc_analytics.frames.claude.kept`). So these rows come from that history,
whatever the transcripts given: one per window per kept line, ``origin`` ``"statusline"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import polars as pl

from cc_analytics.frames import schema as S
from cc_analytics.frames.claude.kept import HISTORY, folder_of, history_rows
from cc_analytics.frames.claude.schema import CLAUDE
from cc_analytics.frames.engine import Progress
from cc_analytics.frames.sources import Source

ORIGIN = "statusline"


def scan_limits(
    source: Source = None,
    *,
    history: Path | str | Literal[False] | None = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> pl.LazyFrame:
    """Lazily, the rate limits Claude Code passed to the status line (``LIMITS_SCHEMA``), from
    ``history`` (None: the cache folder's; False: none). ``source`` and ``workers`` are
    accepted as every verb accepts them; the transcripts hold no limits.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.frames.claude.kept import keep, HISTORY
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> keep({"session_id": "s", "rate_limits": {"five_hour": {"used_percentage": 23.5, "resets_at": 1738425600}}},
        ...      folder=folder, now=1738410000)
        >>> row = scan_limits(history=folder / HISTORY).collect().row(0, named=True)
        >>> row["limit_window"], row["window_minutes"], row["used_percent"], row["resets_at"].isoformat()
        ('five_hour', 300, 23.5, '2025-02-01T16:00:00+00:00')
    """
    if history is False:
        return pl.LazyFrame(schema=S.LIMITS_SCHEMA)
    path = Path(history) if history is not None else folder_of() / HISTORY
    rows = list(history_rows(path))
    if on_progress is not None:
        on_progress(1, 1)
    if not rows:
        return pl.LazyFrame(schema=S.LIMITS_SCHEMA)
    frame = pl.DataFrame(
        rows,
        schema={
            S.SESSION_ID: pl.String(),
            S.TIME: pl.Float64(),  # epoch seconds, made UTC times below
            S.LIMIT_WINDOW: pl.String(),
            S.WINDOW_MINUTES: pl.Int64(),
            S.USED_PERCENT: pl.Float64(),
            S.RESETS_AT: pl.Float64(),
            S.LINE: pl.Int64(),
        },
    )
    return (
        frame.lazy()
        .with_columns(
            _utc(S.TIME),
            _utc(S.RESETS_AT),
            pl.lit(CLAUDE).alias(S.FORMAT),
            pl.lit(None, pl.String).alias(S.PLAN_TYPE),
            pl.lit(ORIGIN).alias(S.LIMITS_ORIGIN),
            pl.lit(str(path)).alias(S.SOURCE_FILE),
        )
        .select(list(S.LIMITS_SCHEMA))
        .cast(S.LIMITS_SCHEMA)
    )


def read_limits(
    source: Source = None,
    *,
    history: Path | str | Literal[False] | None = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> pl.DataFrame:
    """Eager :func:`scan_limits`, in the history's order."""
    return scan_limits(source, history=history, workers=workers, on_progress=on_progress).collect()


def _utc(column: str) -> pl.Expr:
    micro = (pl.col(column) * 1_000_000).round().cast(pl.Int64)
    return pl.from_epoch(micro, time_unit="us").dt.replace_time_zone("UTC").alias(column)
