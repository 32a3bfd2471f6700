"""API requests of Codex sessions: one per ``token_count`` event that records new usage, priced.

Imports: polars, the standard library, ``frames.engine``, ``frames.prices`` and the other
modules of ``frames.codex``. Rules, in Polars expressions over the decoder's usage rows
(each rollout on its own, in file order):

* Codex repeats a ``token_count`` (the same cumulative ``total_token_usage`` written again,
  when rate limits change or a turn ends): an event whose cumulative total equals the
  previous one recorded in the file is a repeat, not a request;
* a request's usage is the event's ``last_token_usage``; without one, the difference between
  its cumulative total and the previous one (each count at least 0);
* within that usage, cached input is at most the input and cache writes at most the uncached
  input; an event whose input, cached input, cache writes, output and reasoning are all 0 is
  no request; neither is one a fork replayed from its parent (``replayed``), though it still
  sets the cumulative total the next event is compared with;
* the model is the latest one named before the event (a ``turn_context``'s ``model``, or the
  event's own), the provider the rollout header's ``model_provider``, the service tier the
  latest ``thread_settings_applied``'s (``priority``/``fast`` → ``priority``, ``flex``;
  ``default``/``standard`` are the standard tier, null).

Shared-schema meaning: Codex's ``input_tokens`` is the whole prompt, cached input and cache
writes included, so ``input_tokens`` here is the rest (``input_tokens − cached_input_tokens −
cache_write_input_tokens``) and the prompt (input + cache writes + cache read) is the recorded
input; ``cache_read_tokens`` is the cached input, ``cache_creation_5m_tokens`` the
``cache_write_input_tokens`` (0 when not recorded), ``output_tokens`` as recorded (reasoning
included) and ``reasoning_tokens`` the ``reasoning_output_tokens``. Occupancy (the
tokens in the context window after the request) is the last usage's ``total_tokens``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import itemgetter

import polars as pl

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import Decoded, Profile, decode
from cc_analytics.frames.codex.plugin import PLUGIN
from cc_analytics.frames.codex.store import Source, resolve
from cc_analytics.frames.engine import BATCH_ENGINE, Progress, run_batches, scan_batches
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.sources import TranscriptFile

POSITION = "position"  # a line's place in the batch: file index, then line number
RAW = tuple(f"raw_{name}" for name in S.USAGE_FIELDS)
RAW_INPUT, RAW_CACHED, RAW_WRITE, RAW_OUTPUT, RAW_REASONING, RAW_TOTAL = RAW
TIERS = {"priority": "priority", "fast": "priority", "flex": "flex"}
# Lines per file in a batch-wide position key; far beyond any rollout's line count.
LINES_PER_FILE = 1 << 40


def utc_time(text: pl.Expr) -> pl.Expr:
    """An RFC 3339 timestamp column as a UTC datetime (null when it is not one).

    Examples:
        >>> pl.select(utc_time(pl.lit("2025-12-18T10:00:00.5Z"))).item().isoformat()
        '2025-12-18T10:00:00.500000+00:00'
    """
    zulu = text.str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", strict=False, time_unit="us", time_zone="UTC")
    offset = text.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", strict=False, time_unit="us")
    return pl.coalesce(zulu, offset.dt.convert_time_zone("UTC")).cast(S.UTC_TIME)


def position() -> pl.Expr:
    """A batch-wide, sorted key of a row's line: its file index, then its line number."""
    return (pl.col(S.FILE).cast(pl.Int64) * LINES_PER_FILE + pl.col(S.LINE)).alias(POSITION)


def in_force(settings: pl.LazyFrame, rows: pl.LazyFrame) -> pl.LazyFrame:
    """``rows`` (with ``FILE`` and ``LINE``) with the ``_model`` and ``_tier`` in force at each:
    the latest setting of its file at or before its line."""
    models = settings.filter(pl.col(S.MODEL).is_not_null()).select(
        position(), pl.col(S.FILE).alias("_model_file"), pl.col(S.MODEL).alias("_model")
    )
    tiers = settings.filter(pl.col(S.SETS_TIER)).select(
        position(), pl.col(S.FILE).alias("_tier_file"), pl.col(S.SERVICE_TIER).alias("_tier")
    )
    # One sorted key over the batch: a match from an earlier file is no setting of this one.
    return (
        rows.with_columns(position())
        .sort(POSITION)
        .join_asof(models.sort(POSITION), on=POSITION, strategy="backward")
        .join_asof(tiers.sort(POSITION), on=POSITION, strategy="backward")
        .with_columns(
            pl.when(pl.col("_model_file") == pl.col(S.FILE)).then(pl.col("_model")).alias("_model"),
            pl.when(pl.col("_tier_file") == pl.col(S.FILE))
            .then(pl.col("_tier").replace_strict(TIERS, default=None, return_dtype=pl.String))
            .alias("_tier"),
        )
        .drop(POSITION, "_model_file", "_tier_file")
    )


def usage_rows(decoded: Decoded) -> pl.LazyFrame:
    """The decoder's usage rows with what each means: ``raw_*`` (the request's usage, null for
    an event without any), ``is_request``, ``occupancy``, the ``window`` in force and the
    ``_model``/``_tier`` in force (see the module docstring); a request's ``time`` is parsed in
    :func:`request_rows`, for the requests only."""
    has_total, has_last = pl.col(S.HAS_TOTAL), pl.col(S.HAS_LAST)
    totals = [pl.col(name) for name in S.TOTAL_FIELDS]
    lasts = [pl.col(name) for name in S.LAST_FIELDS]
    previous = [pl.when(has_total).then(total).shift(1).forward_fill().over(S.FILE) for total in totals]
    had_total = (has_total.cast(pl.Int64).cum_sum().shift(1).fill_null(0) > 0).over(S.FILE)
    changed = pl.any_horizontal([total != before for total, before in zip(totals, previous, strict=True)])
    advanced = ~has_total | ~had_total | changed
    raw = [
        pl.when(has_last & advanced)
        .then(last)
        .when(has_total)
        .then((total - before.fill_null(0)).clip(lower_bound=0))
        .alias(name)
        for name, last, total, before in zip(RAW, lasts, totals, previous, strict=True)
    ]
    cached = pl.min_horizontal(RAW_CACHED, RAW_INPUT)
    written = pl.min_horizontal(RAW_WRITE, pl.col(RAW_INPUT) - cached)
    used = pl.any_horizontal(
        pl.col(RAW_INPUT) > 0, cached > 0, written > 0, pl.col(RAW_OUTPUT) > 0, pl.col(RAW_REASONING) > 0
    )
    last_total = pl.col(S.LAST_FIELDS[-1])
    occupancy = pl.when(last_total > 0).then(last_total).otherwise(pl.col(S.LAST_FIELDS[0]) + pl.col(S.LAST_FIELDS[3]))
    usage = (
        decoded.usage.lazy()
        .with_columns(advanced.alias("_advanced"), *raw)
        .with_columns(cached.alias(RAW_CACHED))
        .with_columns(written.alias(RAW_WRITE))
        .with_columns(
            (pl.col(RAW_INPUT).is_not_null() & used.fill_null(False)).alias("_used"),
        )
        .with_columns(
            (pl.col("_used") & ~pl.col(S.REPLAYED)).alias(S.IS_REQUEST),
            # A replayed request still says what the fork's context held; a repeat says nothing new.
            pl.when(has_last & pl.col("_advanced") & pl.col("_used")).then(occupancy).alias(S.OCCUPANCY),
            pl.col(S.WINDOW).forward_fill().over(S.FILE).alias(S.WINDOW),
        )
        .drop("_advanced", "_used")
    )
    return in_force(decoded.settings.lazy(), usage)


def request_rows(decoded: Decoded, *, keep: Sequence[str] = (), usage: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """The requests of a decoded batch in ``REQUESTS_SCHEMA`` (not priced yet), followed by the
    usage columns named in ``keep`` (``file``, ``line``, ``occupancy``, ``window`` …); ``usage``:
    :func:`usage_rows` of the batch, when already made."""
    files = decoded.files.lazy().select(S.FILE, S.SESSION_ID, S.AGENT_ID, S.IS_SUBAGENT_FILE, S.PROJECT, S.PROVIDER)
    columns = {
        S.FORMAT: pl.lit(S.CODEX),
        S.SESSION_ID: pl.col(S.SESSION_ID),
        S.PROJECT: pl.col(S.PROJECT),
        S.AGENT_ID: pl.col(S.AGENT_ID),
        S.IS_SIDECHAIN: pl.col(S.IS_SUBAGENT_FILE),
        S.REQUEST_ID: pl.lit(None, pl.String),
        S.MESSAGE_ID: pl.lit(None, pl.String),
        S.TIME: utc_time(pl.col(S.TIMESTAMP)),  # parsed for the requests only
        S.MODEL: pl.col("_model"),
        S.PROVIDER: pl.col(S.PROVIDER),
        S.INPUT_TOKENS: pl.col(RAW_INPUT) - pl.col(RAW_CACHED) - pl.col(RAW_WRITE),
        S.CACHE_CREATION_5M_TOKENS: pl.col(RAW_WRITE),
        S.CACHE_CREATION_1H_TOKENS: pl.lit(0),
        S.CACHE_READ_TOKENS: pl.col(RAW_CACHED),
        S.OUTPUT_TOKENS: pl.col(RAW_OUTPUT),
        S.REASONING_TOKENS: pl.col(RAW_REASONING),
        S.WEB_SEARCH_REQUESTS: pl.lit(0),
        S.SERVICE_TIER: pl.col("_tier"),
        S.SPEED: pl.lit(None, pl.String),
        S.COST_USD: pl.lit(None, pl.Float64),
    }
    return (
        (usage_rows(decoded) if usage is None else usage)
        .filter(pl.col(S.IS_REQUEST))
        .join(files, on=S.FILE, how="left", maintain_order="left")
        .select(*(expr.alias(name) for name, expr in columns.items()), *keep)
        .cast(S.REQUESTS_SCHEMA)
    )


def priced_requests(decoded: Decoded, usage: pl.LazyFrame | None = None) -> pl.DataFrame:
    """The priced requests of a decoded batch, each with its ``file``, ``line`` and ``occupancy``
    (what turns and sessions sum and read); ``usage``: :func:`usage_rows` of the batch, when made."""
    rows = request_rows(decoded, keep=(S.FILE, S.LINE, S.OCCUPANCY), usage=usage)
    return price_requests(rows.collect(engine=BATCH_ENGINE))


def requests_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The priced requests and the problems of one batch of rollouts (run in a thread):
    the lean scan's where it reads a rollout whole, the usage profile's elsewhere
    (``lean.requests_tables``; the same rows)."""
    from cc_analytics.frames.codex.lean import requests_tables

    return requests_tables(files)


def walked_requests_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`requests_batch` by the walker's usage profile alone (what the lean scan equals)."""
    decoded = decode(files, Profile.USAGE)
    return price_requests(request_rows(decoded).collect(engine=BATCH_ENGINE)), decoded.problems


def iter_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(priced requests, problems) of ``source`` batch by batch: what the ``usage`` command reads.

    The lean scan (``frames.codex.lean``, with its C loop when built) reads the rollouts it can
    read whole; the walker's usage profile reads only the headers, ``turn_context``,
    ``token_count`` and ``thread_settings_applied`` lines of the others (see ``frames.codex.decode``).
    """
    files = resolve(source)
    batch_bytes, threads = PLUGIN.batching(sum(file.size for file in files), turns=False)
    yield from run_batches(
        requests_batch, files, workers=workers, on_progress=on_progress, batch_bytes=batch_bytes, threads=threads
    )


def scan_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per API request of ``source`` (``REQUESTS_SCHEMA``), priced.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> usage = '{"input_tokens":1000,"cached_input_tokens":200,"output_tokens":50,"total_tokens":1050}'
        >>> count = ('{"timestamp":"2025-10-01T10:00:0%dZ","type":"event_msg","payload":{"type":"token_count",'
        ...          '"info":{"total_token_usage":%s,"last_token_usage":%s}}}\\n' % (5, usage, usage))
        >>> _ = (folder / "rollout-a.jsonl").write_text(
        ...     '{"timestamp":"2025-10-01T10:00:00Z","type":"turn_context","payload":{"model":"gpt-5"}}\\n'
        ...     + count + count.replace(":05Z", ":06Z"))  # Codex repeats the event: one request
        >>> scan_requests(folder).select("model", "input_tokens", "cache_read_tokens", "cost_usd").collect().rows()
        [('gpt-5', 800, 200, 0.001525)]
    """
    files = resolve(source)
    batch_bytes, threads = PLUGIN.batching(sum(file.size for file in files), turns=False)
    return scan_batches(
        requests_batch,
        files,
        S.REQUESTS_SCHEMA,
        "codex_requests",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=batch_bytes,
        threads=threads,
        pick=itemgetter(0),
    )


def read_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_requests`, in session and line order.

    Examples:
        >>> read_requests([]).schema == S.REQUESTS_SCHEMA
        True
    """
    return scan_requests(source, workers=workers, on_progress=on_progress).collect()
