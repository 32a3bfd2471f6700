"""Per-session summaries of Codex rollouts, and the batch tables the archive and reports read.

Imports: polars, ``frames.engine``, ``frames.requests`` and the other ``frames.codex`` modules.
A session is a main rollout and the rollouts of the subagents it spawned (they share a batch,
see ``frames.engine``). Columns, where Codex differs from Claude Code:

* ``project``: the main rollout header's ``cwd``; ``project_dir``: its folder below the store
  (``2025/12/18``); ``provider``: the header's ``model_provider``;
* ``first_time``/``last_time``: the earliest and latest line timestamp of all its rollouts;
* ``models``: every model named (``turn_context``, ``token_count``) by its rollouts, once
  each in order, replayed lines left out; ``last_model``: the model of the main rollout's
  last request, else the last one it named;
* ``turns``: the main rollout's turns (turn 0 included);
* occupancy is recorded (``occupancy_source`` = ``"recorded"``): ``last_occupancy`` is the
  main rollout's last recorded occupancy (the last request's ``total_tokens``; a fork's
  replayed one when it made none), ``peak_occupancy`` the largest of its own requests';
  ``window``, ``effective_window``, ``used_fraction``, ``headroom`` as for turns
  (``frames.codex.turns``); ``autocompact_threshold`` is null (Codex does not record it);
* token totals, ``requests``, ``cache_hit_ratio`` (cache read / prompt), ``cost_usd`` and
  ``unpriced_requests``: every request of every rollout (``frames.codex.requests``);
* ``compactions``: the main rollout's own (``frames.codex.turns.is_compaction``), with the
  occupancy recorded before each (``compaction_pre_tokens``) and the first after it
  (``compaction_post_tokens``); triggers are not recorded (null each);
* the five buckets and ``estimated_tokens``: what the main rollout's own lines added to the
  context, base instructions included; ``context_estimate``: the main rollout's context at
  its end (instructions and every item since the last compaction); ``messages``: the items
  in it; ``calibration`` = ``last_occupancy`` / ``context_estimate``;
* ``files``, ``subagent_files``; ``events``: the lines that are JSON objects.

A session whose main rollout is not among the files (its subagents' only) is summarised from
those, as if each were its main rollout.

Without turns (``iter_tables(turns=False)``, what ``cc-analytics sessions`` reads, and
``scan_sessions``), a batch is read by the lean scan of ``frames.codex.lean`` wherever it
gives the same tables (it leaves the sessions it cannot read whole to the walker), in batches
of ``plugin.lean_batch_bytes``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial

import polars as pl

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import Decoded, Profile, decode
from cc_analytics.frames.codex.plugin import PLUGIN
from cc_analytics.frames.codex.requests import POSITION, position, priced_requests, usage_rows
from cc_analytics.frames.codex.store import Source, resolve
from cc_analytics.frames.codex.turns import (
    IS_COMPACTION,
    IS_HEADER,
    SEGMENT,
    bucket_sums,
    lift_turns,
    prepare,
    state_at,
    window_columns,
)
from cc_analytics.frames.engine import BATCH_ENGINE, Progress, run_batches, scan_batches
from cc_analytics.frames.requests import cache_creation_tokens, cost_totals, prompt_tokens
from cc_analytics.frames.sources import TranscriptFile

RECORDED = "recorded"
PRIMARY = "primary"  # the session's main rollout (each of its rollouts when that one is absent)
TOKEN_COLUMNS = (S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS)


@dataclass(frozen=True, slots=True)
class Tables:
    """What one decode of a batch gives: sessions, turns, problems and priced requests."""

    sessions: pl.DataFrame
    turns: pl.DataFrame
    problems: pl.DataFrame
    requests: pl.DataFrame


def primary_files(decoded: Decoded) -> pl.LazyFrame:
    """The files frame with ``primary``: the main rollout of its session, or every rollout of a
    session whose main rollout is not in the batch."""
    main = ~pl.col(S.IS_SUBAGENT_FILE)
    return decoded.files.lazy().with_columns((main | ~main.any().over(S.SESSION_ID)).alias(PRIMARY))


def current_context(items: pl.LazyFrame, lines: pl.LazyFrame) -> pl.LazyFrame:
    """The items in each file's context at its end: its base instructions, and the items of its
    last segment (since its last compaction), replayed ones included."""
    last_segment = lines.group_by(S.FILE).agg(pl.col(SEGMENT).max().alias("_last_segment"))
    return (
        items.join(last_segment, on=S.FILE, how="left")
        .filter(pl.col(IS_HEADER) | (pl.col(SEGMENT) == pl.col("_last_segment")))
        .drop("_last_segment")
    )


def summarize(decoded: Decoded, turns: pl.DataFrame, requests: pl.DataFrame) -> pl.DataFrame:
    """One row per session of a batch decoded with ``Profile.TABLES`` (``SESSIONS_SCHEMA``), from
    its turns and priced requests (:func:`~cc_analytics.frames.codex.requests.priced_requests`)."""
    files = primary_files(decoded)
    lines, items = prepare(decoded)
    attributes = files.select(S.FILE, S.SESSION_ID, PRIMARY)
    lines = lines.join(attributes, on=S.FILE, how="left", maintain_order="left")
    items = items.join(attributes, on=S.FILE, how="left", maintain_order="left")
    requests_lazy = requests.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    primary = pl.col(PRIMARY)
    session = files.group_by(S.SESSION_ID).agg(
        pl.col(S.PROJECT).filter(primary).drop_nulls().first(),
        pl.col(S.PROJECT_DIR).filter(primary).first(),
        pl.coalesce(pl.col(S.PROVIDER).filter(primary).drop_nulls().first(), pl.col(S.PROVIDER).drop_nulls().first()),
        pl.len().cast(pl.Int64).alias(S.FILES),
        pl.col(S.IS_SUBAGENT_FILE).sum().cast(pl.Int64).alias(S.SUBAGENT_FILES),
    )
    per_line = lines.group_by(S.SESSION_ID).agg(
        pl.col(S.TIME).min().alias(S.FIRST_TIME),
        pl.col(S.TIME).max().alias(S.LAST_TIME),
        pl.len().cast(pl.Int64).alias(S.EVENTS),
        pl.col(IS_COMPACTION).filter(primary).sum().cast(pl.Int64).alias(S.COMPACTIONS),
    )
    named = named_models(decoded, attributes, primary)
    totals = request_totals(requests_lazy, primary)
    # The recorded state at the end of each primary file, and around each of its compactions.
    ends = lines.filter(primary).group_by(S.FILE).agg(pl.col(S.LINE).max())
    end_state = (
        state_at(decoded, ends)
        .join(attributes, on=S.FILE, how="left", maintain_order="left")
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.OCCUPANCY).drop_nulls().last().alias(S.LAST_OCCUPANCY),
            pl.col(S.WINDOW).drop_nulls().last().alias("_recorded_window"),
        )
    )
    compactions = compaction_tokens(decoded, lines.filter(primary & pl.col(IS_COMPACTION)))
    own_items = items.filter(primary & ~pl.col(S.REPLAYED))
    buckets = own_items.group_by(S.SESSION_ID).agg(*bucket_sums())
    now = (
        current_context(items.filter(primary), lines.filter(primary))
        .group_by(S.SESSION_ID)
        .agg(pl.col(S.TOKENS).sum().alias(S.CONTEXT_ESTIMATE), pl.len().cast(pl.Int64).alias(S.MESSAGES))
    )
    main_turns = (
        turns.lazy()
        .join(files.select(S.SOURCE_FILE, PRIMARY), on=S.SOURCE_FILE, how="left")
        .filter(pl.col(PRIMARY))
        .group_by(S.SESSION_ID)
        .agg(pl.len().cast(pl.Int64).alias(S.TURNS))
    )
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, *TOKEN_COLUMNS, S.REQUESTS, S.TURNS, S.COMPACTIONS]
    zero += [S.CONTEXT_ESTIMATE, S.MESSAGES]
    lists = [S.MODELS, S.COMPACTION_TRIGGERS, S.COMPACTION_PRE_TOKENS, S.COMPACTION_POST_TOKENS]
    summary = (
        session.join(per_line, on=S.SESSION_ID, how="left")
        .join(named, on=S.SESSION_ID, how="left")
        .join(totals, on=S.SESSION_ID, how="left")
        .join(end_state, on=S.SESSION_ID, how="left")
        .join(compactions, on=S.SESSION_ID, how="left")
        .join(buckets, on=S.SESSION_ID, how="left")
        .join(now, on=S.SESSION_ID, how="left")
        .join(main_turns, on=S.SESSION_ID, how="left")
        .with_columns(
            pl.col(zero).fill_null(0),
            pl.col(lists).fill_null([]),
            pl.col(S.UNPRICED_REQUESTS).fill_null(0),
            pl.coalesce("_request_model", "_named_model").alias(S.LAST_MODEL),
        )
        .with_columns(
            pl.col(S.LAST_MODEL).alias(S.MODEL),
            pl.col("_recorded_window").alias(S.WINDOW),
            pl.col(S.LAST_OCCUPANCY).alias(S.OCCUPANCY),
            pl.col(S.CONTEXT_ESTIMATE).alias(S.ESTIMATED_CONTEXT),
            pl.when(pl.col(S.LAST_OCCUPANCY).is_not_null()).then(pl.lit(RECORDED)).alias(S.OCCUPANCY_SOURCE),
            pl.lit(S.CODEX).alias(S.FORMAT),
            pl.lit(None, pl.Int64).alias(S.AUTOCOMPACT_THRESHOLD),
        )
        .with_columns(window_columns())
        .select(list(S.SESSIONS_SCHEMA))
        .sort(S.SESSION_ID)
    )
    return summary.collect(engine=BATCH_ENGINE).cast(S.SESSIONS_SCHEMA)


def compaction_tokens(decoded: Decoded, markers: pl.LazyFrame, *, usage: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Per session: the triggers (null: not recorded), the occupancy recorded before each
    compaction marker and the first recorded after it; ``usage``: ``usage_rows`` of the batch,
    when already made."""
    targets = markers.select(S.SESSION_ID, S.FILE, S.LINE, pl.lit(None, pl.String).alias(S.COMPACTION_TRIGGERS))
    before = state_at(decoded, targets.select(S.FILE, (pl.col(S.LINE) - 1).alias(S.LINE)), usage=usage, model=False)
    after = first_after(decoded, targets.select(S.FILE, S.LINE), usage=usage)
    return (
        targets.join(
            before.select(S.FILE, (pl.col(S.LINE) + 1).alias(S.LINE), S.OCCUPANCY), on=[S.FILE, S.LINE], how="left"
        )
        .join(after, on=[S.FILE, S.LINE], how="left")
        .sort(S.FILE, S.LINE)
        .group_by(S.SESSION_ID, maintain_order=True)
        .agg(
            pl.col(S.COMPACTION_TRIGGERS),
            pl.col(S.OCCUPANCY).alias(S.COMPACTION_PRE_TOKENS),
            pl.col("_after").alias(S.COMPACTION_POST_TOKENS),
        )
    )


def first_after(decoded: Decoded, targets: pl.LazyFrame, *, usage: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Per (``file``, ``line``) of ``targets``: the first occupancy recorded after the line in its
    file (``_after``), null when none is; ``usage``: ``usage_rows`` of the batch, when made."""
    recorded = (
        (usage_rows(decoded) if usage is None else usage)
        .filter(pl.col(S.OCCUPANCY).is_not_null())
        .select(position(), pl.col(S.FILE).alias("_state_file"), pl.col(S.OCCUPANCY).alias("_after"))
        .sort(POSITION)
    )
    return (
        targets.unique()
        .with_columns(position())
        .sort(POSITION)
        .join_asof(recorded, on=POSITION, strategy="forward", allow_exact_matches=False)
        .with_columns(pl.when(pl.col("_state_file") == pl.col(S.FILE)).then(pl.col("_after")).alias("_after"))
        .drop(POSITION, "_state_file")
    )


def tables_batch(files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None) -> Tables:
    """Sessions, turns (empty unless ``turns``), problems and priced requests of one batch from
    one decode (run in a worker process); ``contents``: the files' bytes, when read elsewhere.

    Without turns, the sessions the lean scan reads whole are read by it
    (:func:`cc_analytics.frames.codex.lean.sessions_tables`): the same tables, for less.
    """
    if not turns:
        from cc_analytics.frames.codex.lean import sessions_tables

        return sessions_tables(files, contents)
    decoded = decode(files, Profile.TABLES, contents=contents)
    requests = priced_requests(decoded)
    turn_rows = lift_turns(decoded, requests.lazy()).collect(engine=BATCH_ENGINE)
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
    """Sessions, turns (empty unless ``turns``), problems and requests batch by batch, each batch
    decoded once.

    Examples:
        >>> [batch.sessions.height for batch in iter_tables([])]
        []
    """
    work = partial(tables_batch, turns=turns)
    files = resolve(source)
    # Without turns, the lean scan (its time spent in its C loop and Polars, outside the GIL) in
    # bigger batches, in threads of this process; the walker's in worker processes.
    batch_bytes, threads = PLUGIN.batching(sum(file.size for file in files), turns=turns)
    yield from run_batches(
        work, files, workers=workers, on_progress=on_progress, batch_bytes=batch_bytes, threads=threads
    )


def sessions_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The session summaries of one batch (run in a thread: the lean scan's)."""
    return tables_batch(files, turns=False).sessions


def scan_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per session of ``source`` in the shared ``SESSIONS_SCHEMA``
    (``format`` = ``"codex"``): a main rollout with the rollouts of the subagents it spawned.

    Occupancy is recorded; what each column means for Codex is in the module docstring.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> usage = '{"input_tokens":16341,"cached_input_tokens":3584,"output_tokens":81,"total_tokens":16422}'
        >>> _ = (folder / "rollout-a.jsonl").write_text(
        ...     '{"timestamp":"2025-10-01T10:00:00Z","type":"session_meta","payload":{"id":"a","cwd":"/w"}}\\n'
        ...     '{"timestamp":"2025-10-01T10:00:01Z","type":"turn_context","payload":{"model":"gpt-5"}}\\n'
        ...     '{"timestamp":"2025-10-01T10:00:09Z","type":"event_msg","payload":{"type":"token_count",'
        ...     '"info":{"total_token_usage":%s,"last_token_usage":%s,"model_context_window":258400}}}\\n' % (usage, usage))
        >>> scan_sessions(folder).select("session_id", "project", "last_occupancy", "window", "requests").collect().row(0)
        ('a', '/w', 16422, 258400, 1)
    """
    files = resolve(source)
    batch_bytes, threads = PLUGIN.batching(sum(file.size for file in files), turns=False)
    return scan_batches(
        sessions_batch,
        files,
        S.SESSIONS_SCHEMA,
        "codex_sessions",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=batch_bytes,
        threads=threads,
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


def named_models(decoded: Decoded, attributes: pl.LazyFrame, primary: pl.Expr) -> pl.LazyFrame:
    """Per session: every model its turn contexts name (``models``, in order) and the last one
    its primary rollout names (``_named_model``); replayed lines name none."""
    settings = (
        decoded.settings.lazy()
        .filter(pl.col(S.MODEL).is_not_null() & ~pl.col(S.REPLAYED))
        .join(attributes, on=S.FILE, how="left")
        .sort(S.FILE, S.LINE)
    )
    return settings.group_by(S.SESSION_ID).agg(
        pl.col(S.MODEL).unique(maintain_order=True).alias(S.MODELS),
        pl.col(S.MODEL).filter(primary).last().alias("_named_model"),
    )


def request_totals(requests: pl.LazyFrame, primary: pl.Expr) -> pl.LazyFrame:
    """Per session: the requests' token totals, count, cache hit ratio and cost, the last model
    and the peak occupancy of the primary rollout's requests (``_request_model``, ``peak_occupancy``)."""
    return requests.group_by(S.SESSION_ID).agg(
        pl.col(S.INPUT_TOKENS).sum(),
        cache_creation_tokens().sum().alias(S.CACHE_CREATION_TOKENS),
        pl.col(S.CACHE_READ_TOKENS).sum(),
        pl.col(S.OUTPUT_TOKENS).sum(),
        pl.len().cast(pl.Int64).alias(S.REQUESTS),
        (pl.col(S.CACHE_READ_TOKENS).sum().cast(pl.Float64) / prompt_tokens().sum()).alias(S.CACHE_HIT_RATIO),
        *cost_totals(),
        pl.col(S.MODEL).filter(primary).drop_nulls().last().alias("_request_model"),
        pl.col(S.OCCUPANCY).filter(primary).max().alias(S.PEAK_OCCUPANCY),
    )
