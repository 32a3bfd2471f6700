"""The lean decode behind ``cc-analytics sessions``: session summaries and requests, exactly
as the tables profile makes them, or not at all.

Imports: polars, the standard library, ``frames.sources`` and the other ``frames.codex``
modules. The sessions command needs of a batch only its session summaries and priced requests
(``iter_tables(turns=False)``). The tables profile (``decode.py``) keeps a row per line and per
detail, for the turns; the lean scan (``scan.py``, which needs no Polars) keeps what the
summary reads: per rollout its header, its line count, last line and earliest and latest
timestamp, its usage and settings rows (the walker's rows, in the walker's schemas), and what
its lines and items add when it is a session's main rollout (``scan.SUMS``: tokens by bucket,
the context at its end, its turns; the lines of its own compactions). This module makes a
batch's frames of its scans, and the summary with the functions and expressions of
``sessions.py``, ``requests.py`` and ``turns.py`` (requests, occupancy, windows, compaction
tokens, models), so that each rule has one definition.

A rollout the scan gives up on (``scan.Unclean``) is decoded by the walker (``Profile.TABLES``,
then ``sessions.summarize``), with every rollout of its session; ``tests/frames/test_codex_lean.py``
holds what ``sessions`` shows to what the tables profile shows.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import polars as pl

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import Decoded, append_file_row
from cc_analytics.frames.codex.requests import priced_requests, usage_rows, utc_time
from cc_analytics.frames.codex.scan import (
    NULL_COUNT,
    SUMS,
    USAGE_NUMBERS,
    USAGE_ROW,
    Scan,
    Unclean,
    scan,
    scan_file,
)
from cc_analytics.frames.codex.sessions import (
    PRIMARY,
    TOKEN_COLUMNS,
    Tables,
    compaction_tokens,
    named_models,
    primary_files,
    request_totals,
)
from cc_analytics.frames.codex.turns import state_at, window_columns
from cc_analytics.frames.engine import BATCH_ENGINE
from cc_analytics.frames.sources import TranscriptFile

# The stats of a batch's rollouts (one row each) beside their SUMS.
MIN_STAMP, MAX_STAMP, LAST_LINE, LINES = "min_stamp", "max_stamp", "last_line", "lines"
STATS_SCHEMA = pl.Schema(
    {
        S.FILE: pl.UInt32(),
        LINES: pl.Int64(),
        LAST_LINE: pl.Int64(),
        MIN_STAMP: pl.String(),
        MAX_STAMP: pl.String(),
        **{name: pl.Int64() for name in SUMS},
    }
)
COMPACTIONS_SCHEMA = pl.Schema({S.FILE: pl.UInt32(), S.LINE: pl.Int64()})


# ------------------------------------------------------------------ a batch


@dataclass
class Batch:
    """Scans of the rollouts of a batch, as the columns and frames the summary reads."""

    files: list[TranscriptFile] = field(default_factory=list)
    scans: list[Scan] = field(default_factory=list)

    def frames(self) -> tuple[Decoded, pl.DataFrame, pl.DataFrame]:
        """The decoded batch (files, usage and settings as the walker makes them, replayed
        lines marked; no lines, items, limits or problems), its stats (one row per rollout:
        ``STATS_SCHEMA`` with ``first_time`` and ``last_time`` for the stamps) and the lines of
        its own compactions."""
        files: dict[str, list[Any]] = {name: [] for name in S.FILES_SCHEMA}
        stats: list[tuple[Any, ...]] = []
        compactions: list[tuple[int, int]] = []
        every_stamp: list[tuple[int, bytes]] = []
        for index, (file, found) in enumerate(zip(self.files, self.scans, strict=True)):
            _file_row(files, index, file, found)
            ends = found.stamps if isinstance(found.stamps, tuple) else (None, None)
            stats.append((index, found.lines, found.last_line, *ends, *found.sums))
            if not isinstance(found.stamps, tuple):
                every_stamp.extend((index, stamp) for stamp in found.stamps)
            compactions.extend((index, line) for line in found.compactions)
        files_frame = pl.DataFrame(files, schema=S.FILES_SCHEMA)
        replays = {index: found.replay for index, found in enumerate(self.scans) if found.replay[1]}

        def table(per_file: list[list[list[Any]]], schema: pl.Schema) -> pl.DataFrame:
            """One frame of every file's columns (the line first; ``schema`` less the file)."""
            names = [name for name in schema if name != S.FILE]
            columns: list[list[Any]] = [[] for _ in names]
            index: list[int] = []
            replayed: list[bool] = []
            for file_index, file_columns in enumerate(per_file):
                lines = file_columns[0]
                for column, values in zip(columns, file_columns, strict=True):
                    column += values
                index += repeat(file_index, len(lines))
                start, end = replays.get(file_index, (0, 0))
                replayed += [start <= line <= end for line in lines] if end else repeat(False, len(lines))
            return pl.DataFrame(
                {S.FILE: index, **dict(zip(names, columns, strict=True)), S.REPLAYED: replayed},
                schema={**schema, S.REPLAYED: pl.Boolean()},
            )

        def rows_of(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
            return [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in range(width)]

        scans = self.scans
        decoded = Decoded(
            files_frame,
            pl.DataFrame(schema={**S.LINES_SCHEMA, S.REPLAYED: pl.Boolean()}),
            pl.DataFrame(schema={**S.ITEMS_SCHEMA, S.REPLAYED: pl.Boolean()}),
            _usage_frame(scans, replays),
            table([rows_of(found.settings, len(S.SETTINGS_SCHEMA) - 1) for found in scans], S.SETTINGS_SCHEMA),
            pl.DataFrame(schema={**S.LIMITS_SCHEMA, S.REPLAYED: pl.Boolean()}),
            pl.DataFrame(
                [
                    (file.source_file, line, reason)
                    for file, found in zip(self.files, scans, strict=True)
                    for line, reason in found.problems
                ],
                schema=S.PROBLEMS_SCHEMA,
                orient="row",
            ),
        )
        return (
            decoded,
            _times(pl.DataFrame(stats, schema=STATS_SCHEMA, orient="row"), every_stamp),
            pl.DataFrame(compactions, schema=COMPACTIONS_SCHEMA, orient="row"),
        )


def _usage_frame(scans: Sequence[Scan], replays: dict[int, tuple[int, int]]) -> pl.DataFrame:
    """The usage rows of a batch's scans (``USAGE_SCHEMA`` and ``replayed``): their packed
    numbers made columns by Polars (every :data:`USAGE_ROW` is one stride of a flat column; no
    Python object a number), their timestamps and models from the lists beside them.

    Examples:
        >>> row = USAGE_ROW.pack(7, 1, 10, 0, 0, 5, 0, 15, 0, *[NULL_COUNT] * 6, NULL_COUNT)
        >>> found = Scan({}, (0, 0), 7, 7, ("", ""), bytearray(row), ["2025-10-01T10:00:00.000Z"], [None], [], (), [])
        >>> _usage_frame([found], {}).select("line", "total_input", "window", "replayed").rows()
        [(7, 10, None, False)]
    """
    width = len(USAGE_NUMBERS)
    numbers = array("q")
    files = array("I")
    for index, found in enumerate(scans):
        numbers.frombytes(found.usage)
        files.extend(array("I", [index]) * (len(found.usage) // USAGE_ROW.size))
    flat = pl.Series(numbers, dtype=pl.Int64())
    flags = (S.HAS_TOTAL, S.HAS_LAST)
    columns = {
        name: flat.gather_every(width, offset) if offset < len(flat) else pl.Series([], dtype=pl.Int64())
        for offset, name in enumerate(USAGE_NUMBERS)
    }
    starts = [replays.get(index, (0, 0)) for index in range(len(scans))]
    file = pl.col(S.FILE)
    frame = pl.DataFrame(
        {
            S.FILE: pl.Series(files, dtype=pl.UInt32()),
            **columns,
            S.TIMESTAMP: pl.Series([stamp for found in scans for stamp in found.usage_stamps], dtype=pl.String()),
            S.USAGE_MODEL: pl.Series([model for found in scans for model in found.usage_models], dtype=pl.String()),
        }
    )
    start = pl.lit(pl.Series([start for start, _ in starts], dtype=pl.Int64())).gather(file)
    end = pl.lit(pl.Series([end for _, end in starts], dtype=pl.Int64())).gather(file)
    line = pl.col(S.LINE)
    return frame.select(
        *(
            pl.col(name).cast(pl.Boolean())
            if name in flags
            else pl.when(pl.col(name) != NULL_COUNT).then(pl.col(name)).alias(name)
            if name not in (S.FILE, S.LINE, S.TIMESTAMP, S.USAGE_MODEL)
            else pl.col(name)
            for name in S.USAGE_SCHEMA
        ),
        ((end > 0) & (start <= line) & (line <= end)).alias(S.REPLAYED),
    )


def _times(stats: pl.DataFrame, stamps: list[tuple[int, bytes]]) -> pl.DataFrame:
    """Stats with each rollout's earliest and latest moment (``first_time``, ``last_time``): of
    its two timestamps kept, or (rollouts whose timestamps are not all of Codex's shape) of every
    line's, parsed as the lines frame parses them."""
    frame = pl.DataFrame(
        {S.FILE: [index for index, _ in stamps], S.TIMESTAMP: [stamp.decode() for _, stamp in stamps]},
        schema={S.FILE: pl.UInt32(), S.TIMESTAMP: pl.String()},
    )
    every = (
        frame.lazy()
        .group_by(S.FILE)
        .agg(utc_time(pl.col(S.TIMESTAMP)).min().alias("_first"), utc_time(pl.col(S.TIMESTAMP)).max().alias("_last"))
    )
    return (
        stats.lazy()
        .join(every, on=S.FILE, how="left", maintain_order="left")
        .with_columns(
            pl.coalesce(utc_time(pl.col(MIN_STAMP)), "_first").alias(S.FIRST_TIME),
            pl.coalesce(utc_time(pl.col(MAX_STAMP)), "_last").alias(S.LAST_TIME),
        )
        .drop(MIN_STAMP, MAX_STAMP, "_first", "_last")
        .collect(engine=BATCH_ENGINE)
    )


def _file_row(cols: dict[str, list[Any]], index: int, file: TranscriptFile, found: Scan) -> None:
    """A files row as ``decode.Walker._file`` makes it."""
    append_file_row(cols, index, file, found.header, found.replay)


# ------------------------------------------------------------------ the summary


def summarize(
    decoded: Decoded, stats: pl.DataFrame, compactions: pl.DataFrame, requests: pl.DataFrame, usage: pl.DataFrame
) -> pl.DataFrame:
    """One row per session of a lean batch (``SESSIONS_SCHEMA``): what
    :func:`cc_analytics.frames.codex.sessions.summarize` makes of the same rollouts, from the
    frames of :meth:`Batch.frames`, the priced requests and ``usage_rows`` of the batch."""
    files = primary_files(decoded)
    attributes = files.select(S.FILE, S.SESSION_ID, PRIMARY)
    primary = pl.col(PRIMARY)
    usage_lazy = usage.lazy()
    stats_lazy = stats.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    requests_lazy = requests.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    session = files.group_by(S.SESSION_ID).agg(
        pl.col(S.PROJECT).filter(primary).drop_nulls().first(),
        pl.col(S.PROJECT_DIR).filter(primary).first(),
        pl.coalesce(pl.col(S.PROVIDER).filter(primary).drop_nulls().first(), pl.col(S.PROVIDER).drop_nulls().first()),
        pl.len().cast(pl.Int64).alias(S.FILES),
        pl.col(S.IS_SUBAGENT_FILE).sum().cast(pl.Int64).alias(S.SUBAGENT_FILES),
    )
    per_file = stats_lazy.group_by(S.SESSION_ID).agg(
        pl.col(S.FIRST_TIME).min(),
        pl.col(S.LAST_TIME).max(),
        pl.col(LINES).sum().alias(S.EVENTS),
        *(pl.col(name).filter(primary).sum() for name in SUMS),
    )
    marked = compactions.lazy().join(attributes, on=S.FILE, how="left").filter(primary)
    compaction_count = marked.group_by(S.SESSION_ID).agg(pl.len().cast(pl.Int64).alias(S.COMPACTIONS))
    named = named_models(decoded, attributes, primary)
    totals = request_totals(requests_lazy, primary)
    ends = stats_lazy.filter(primary).select(S.FILE, pl.col(LAST_LINE).alias(S.LINE))
    end_state = (
        state_at(decoded, ends, usage=usage_lazy, model=False)
        .join(attributes, on=S.FILE, how="left", maintain_order="left")
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.OCCUPANCY).drop_nulls().last().alias(S.LAST_OCCUPANCY),
            pl.col(S.WINDOW).drop_nulls().last().alias("_recorded_window"),
        )
    )
    around = compaction_tokens(decoded, marked.select(S.SESSION_ID, S.FILE, S.LINE), usage=usage_lazy)
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, *TOKEN_COLUMNS, S.REQUESTS, S.TURNS, S.COMPACTIONS]
    zero += [S.CONTEXT_ESTIMATE, S.MESSAGES]
    lists = [S.MODELS, S.COMPACTION_TRIGGERS, S.COMPACTION_PRE_TOKENS, S.COMPACTION_POST_TOKENS]
    summary = (
        session.join(per_file, on=S.SESSION_ID, how="left")
        .join(compaction_count, on=S.SESSION_ID, how="left")
        .join(named, on=S.SESSION_ID, how="left")
        .join(totals, on=S.SESSION_ID, how="left")
        .join(end_state, on=S.SESSION_ID, how="left")
        .join(around, on=S.SESSION_ID, how="left")
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
            pl.when(pl.col(S.LAST_OCCUPANCY).is_not_null()).then(pl.lit("recorded")).alias(S.OCCUPANCY_SOURCE),
            pl.lit(S.CODEX).alias(S.FORMAT),
            pl.lit(None, pl.Int64).alias(S.AUTOCOMPACT_THRESHOLD),
        )
        .with_columns(window_columns())
        .select(list(S.SESSIONS_SCHEMA))
        .sort(S.SESSION_ID)
        .cast(S.SESSIONS_SCHEMA)
    )
    return summary.collect(engine=BATCH_ENGINE)


# ------------------------------------------------------------------ a batch's tables


ORDER = "_order"


def sessions_tables(files: Sequence[TranscriptFile], contents: Sequence[bytes] | None = None) -> Tables:
    """Sessions (and priced requests, problems; no turns) of one batch: the lean scan for the
    sessions it reads whole, the walker for the others (see the module docstring).

    Examples:
        >>> sessions_tables([]).sessions.height
        0
    """
    from cc_analytics.frames.codex.decode import Profile, decode
    from cc_analytics.frames.codex.sessions import summarize as summarize_decoded
    from cc_analytics.frames.codex.turns import lift_turns

    lean = Batch()
    lean_order: list[int] = []
    unclean: set[str] = set()
    for index, file in enumerate(files):
        if file.session_id in unclean:
            continue
        try:
            found = scan(contents[index]) if contents is not None else scan_file(file)
        except (OSError, ValueError, Unclean):
            unclean.add(file.session_id)
            continue
        lean.files.append(file)
        lean.scans.append(found)
        lean_order.append(index)
    if unclean:
        keep = [i for i, file in enumerate(lean.files) if file.session_id not in unclean]
        lean.files = [lean.files[i] for i in keep]
        lean.scans = [lean.scans[i] for i in keep]
        lean_order = [lean_order[i] for i in keep]
    sessions: list[pl.DataFrame] = []
    requests: list[pl.DataFrame] = []
    problems: list[pl.DataFrame] = []
    if lean.files:
        decoded, stats, compactions = lean.frames()
        usage = usage_rows(decoded).collect(engine=BATCH_ENGINE)
        priced = priced_requests(decoded, usage.lazy())
        sessions.append(summarize(decoded, stats, compactions, priced, usage))
        requests.append(_in_batch_order(priced, lean_order))
        problems.append(_problems_in_batch_order(decoded.problems, lean.files, lean_order))
    if unclean:
        order = [i for i, file in enumerate(files) if file.session_id in unclean]
        walked = [files[i] for i in order]
        decoded = decode(walked, Profile.TABLES, contents=None if contents is None else [contents[i] for i in order])
        priced = priced_requests(decoded)
        turn_rows = lift_turns(decoded, priced.lazy()).collect(engine=BATCH_ENGINE)
        sessions.append(summarize_decoded(decoded, turn_rows, priced))
        requests.append(_in_batch_order(priced, order))
        problems.append(_problems_in_batch_order(decoded.problems, walked, order))
    problem_rows = (
        pl.concat(problems).sort(ORDER, maintain_order=True).drop(ORDER)
        if problems
        else pl.DataFrame(schema=S.PROBLEMS_SCHEMA)
    )
    if not sessions:
        return Tables(
            pl.DataFrame(schema=S.SESSIONS_SCHEMA),
            pl.DataFrame(schema=S.TURNS_SCHEMA),
            problem_rows,
            pl.DataFrame(schema=S.REQUESTS_SCHEMA),
        )
    joined = pl.concat(requests).sort(ORDER, maintain_order=True).select(list(S.REQUESTS_SCHEMA))
    return Tables(
        pl.concat(sessions).sort(S.SESSION_ID),
        pl.DataFrame(schema=S.TURNS_SCHEMA),
        problem_rows,
        joined,
    )


def requests_tables(
    files: Sequence[TranscriptFile], contents: Sequence[bytes] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The priced requests (``REQUESTS_SCHEMA``, in batch and line order) and the problems of one
    batch, what the ``usage`` command reads: the lean scan for the rollouts it reads whole, the
    walker's usage profile for the others. A rollout's requests depend on its own lines only, so
    each is read by one or the other (the problems come from the walker only: a rollout the lean
    scan reads has none). ``contents``: each file's bytes, when read elsewhere.

    Examples:
        >>> [frame.height for frame in requests_tables([])]
        [0, 0]
    """
    from cc_analytics.frames.codex.decode import Profile, decode
    from cc_analytics.frames.codex.requests import request_rows
    from cc_analytics.frames.prices import price_requests

    lean = Batch()
    lean_order: list[int] = []
    walked: list[int] = []
    for index, file in enumerate(files):
        try:
            found = scan(contents[index]) if contents is not None else scan_file(file)
        except (OSError, ValueError, Unclean):
            walked.append(index)
            continue
        if found.problems:  # the usage profile parses fewer lines, so has fewer problems: the walker's
            walked.append(index)
            continue
        lean.files.append(file)
        lean.scans.append(found)
        lean_order.append(index)
    parts: list[pl.DataFrame] = []
    problems = pl.DataFrame(schema=S.PROBLEMS_SCHEMA)
    for decoded, order in (
        (lean.frames()[0] if lean.files else None, lean_order),
        (
            decode([files[i] for i in walked], Profile.USAGE, contents=_some(contents, walked)) if walked else None,
            walked,
        ),
    ):
        if decoded is None:
            continue
        priced = price_requests(request_rows(decoded, keep=(S.FILE,)).collect(engine=BATCH_ENGINE))
        parts.append(_in_batch_order(priced, order))
        if order is walked:
            problems = decoded.problems
    if not parts:
        return pl.DataFrame(schema=S.REQUESTS_SCHEMA), problems
    requests = pl.concat(parts).sort(ORDER, maintain_order=True).select(list(S.REQUESTS_SCHEMA))
    return requests, problems


def _some(contents: Sequence[bytes] | None, order: list[int]) -> list[bytes] | None:
    return None if contents is None else [contents[i] for i in order]


def _problems_in_batch_order(problems: pl.DataFrame, files: Sequence[TranscriptFile], order: list[int]) -> pl.DataFrame:
    """Problem rows with their file's place in the batch (``_order``): ``files`` are those the
    rows were read from, ``order`` their places."""
    places = pl.DataFrame(
        {S.SOURCE_FILE: [file.source_file for file in files], ORDER: order},
        schema={S.SOURCE_FILE: pl.String(), ORDER: pl.Int64()},
    ).unique(S.SOURCE_FILE, keep="first", maintain_order=True)
    return problems.join(places, on=S.SOURCE_FILE, how="left", maintain_order="left")


def _in_batch_order(priced: pl.DataFrame, order: list[int]) -> pl.DataFrame:
    """Priced requests with their file's place in the batch (``_order``)."""
    places = pl.DataFrame({S.FILE: range(len(order)), ORDER: order}, schema={S.FILE: pl.UInt32(), ORDER: pl.Int64()})
    return priced.join(places, on=S.FILE, how="left", maintain_order="left")
