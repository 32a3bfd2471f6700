"""The rate limits Codex records with its token counts: one row per window per event.

Imports: polars, ``frames.engine`` and the other ``frames.codex`` modules. Each
``token_count`` event may carry ``rate_limits`` (a ChatGPT plan's usage as the server
reported it): a ``primary`` and a ``secondary`` window (the five-hour and the weekly one),
each with ``used_percent``, ``window_minutes`` and when it resets (``resets_at``, epoch
seconds, or ``resets_in_seconds`` in earlier versions), plus ``plan_type`` and ``limit_id``
where present; the earliest versions wrote the flat keys ``primary_used_percent`` … instead.
Windows are kept as recorded (a 0-minute window included); a fork's replayed events are left
out. ``resets_at`` is a UTC datetime: the epoch seconds, else the event's time plus the
seconds to reset.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import Decoded, Profile, decode
from cc_analytics.frames.codex.requests import utc_time
from cc_analytics.frames.codex.store import Source, resolve
from cc_analytics.frames.engine import Progress, scan_batches
from cc_analytics.frames.sources import TranscriptFile


def rate_limit_rows(decoded: Decoded) -> pl.DataFrame:
    """The rate-limits frame (``RATE_LIMITS_SCHEMA``) of a decoded batch."""
    files = decoded.files.lazy().select(S.FILE, S.SESSION_ID, S.AGENT_ID, S.SOURCE_FILE)
    time = utc_time(pl.col(S.TIMESTAMP))
    epoch = pl.from_epoch(pl.col(S.RESETS_AT_EPOCH), time_unit="s").dt.replace_time_zone("UTC")
    later = time + pl.duration(seconds=pl.col(S.RESETS_IN_SECONDS))
    return (
        decoded.limits.lazy()
        .filter(~pl.col(S.REPLAYED))
        .join(files, on=S.FILE, how="left", maintain_order="left")
        .with_columns(time.alias(S.TIME), pl.coalesce(epoch, later).cast(S.UTC_TIME).alias(S.RESETS_AT))
        .select(list(S.RATE_LIMITS_SCHEMA))
        .collect()
        .cast(S.RATE_LIMITS_SCHEMA)
    )


def rate_limits_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The rate limits of one batch of rollouts (run in a worker process)."""
    return rate_limit_rows(decode(files, Profile.USAGE))


def scan_rate_limits(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per rate-limit window of every ``token_count`` of ``source`` (``RATE_LIMITS_SCHEMA``).

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "rollout-a.jsonl").write_text(
        ...     '{"timestamp":"2025-12-18T10:00:04Z","type":"event_msg","payload":{"type":"token_count","info":null,'
        ...     '"rate_limits":{"plan_type":"pro","primary":{"used_percent":1.0,"window_minutes":300,'
        ...     '"resets_at":1766052000},"secondary":null}}}\\n')
        >>> row = scan_rate_limits(folder).collect().row(0, named=True)
        >>> row["limit_window"], row["used_percent"], row["window_minutes"], row["resets_at"].isoformat(), row["plan_type"]
        ('primary', 1.0, 300, '2025-12-18T10:00:00+00:00', 'pro')
    """
    return scan_batches(
        rate_limits_batch,
        resolve(source),
        S.RATE_LIMITS_SCHEMA,
        "codex_rate_limits",
        workers=workers,
        on_progress=on_progress,
    )


def read_rate_limits(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_rate_limits`.

    Examples:
        >>> read_rate_limits([]).columns[:5]
        ['session_id', 'agent_id', 'source_file', 'line', 'time']
    """
    return scan_rate_limits(source, workers=workers, on_progress=on_progress).collect()


def scan_limits(
    source: Source = None,
    *,
    history: object = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> pl.LazyFrame:
    """:func:`scan_rate_limits` in the shared ``LIMITS_SCHEMA`` (``history`` is not Codex's: its
    rollouts record the limits). A window is named by its length where it is a known one
    (``LIMIT_NAMES``: 300 minutes ``five_hour``, 10,080 ``seven_day``), else as recorded
    (``primary``, ``secondary``); ``origin`` is ``"transcript"``.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "rollout-a.jsonl").write_text(
        ...     '{"timestamp":"2025-12-18T10:00:04Z","type":"event_msg","payload":{"type":"token_count","info":null,'
        ...     '"rate_limits":{"plan_type":"pro","primary":{"used_percent":1.0,"window_minutes":300,'
        ...     '"resets_at":1766052000},"secondary":null}}}\\n')
        >>> scan_limits(folder).collect().select("format", "limit_window", "used_percent", "origin").row(0)
        ('codex', 'five_hour', 1.0, 'transcript')
    """
    from cc_analytics.frames import schema as shared

    names = pl.col(S.WINDOW_MINUTES).replace_strict(shared.LIMIT_NAMES, default=None, return_dtype=pl.String)
    return (
        scan_rate_limits(source, workers=workers, on_progress=on_progress)
        .with_columns(
            pl.lit(S.CODEX).alias(shared.FORMAT),
            pl.coalesce(names, pl.col(S.LIMIT_WINDOW)).alias(shared.LIMIT_WINDOW),
            pl.lit("transcript").alias(shared.LIMITS_ORIGIN),
        )
        .select(list(shared.LIMITS_SCHEMA))
        .cast(shared.LIMITS_SCHEMA)
    )


def read_limits(
    source: Source = None,
    *,
    history: object = None,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> pl.DataFrame:
    """Eager :func:`scan_limits`."""
    return scan_limits(source, history=history, workers=workers, on_progress=on_progress).collect()
