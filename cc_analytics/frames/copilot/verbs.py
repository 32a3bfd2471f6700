"""The verbs of the GitHub Copilot CLI format: events, turns, sessions, problems and requests frames.

Imports: polars, the standard library, the shared ``frames`` modules (``prices``, ``schema``,
``sources``), ``frames.chatlog`` (its frame builders: events, turns and sessions from a
messages frame and a requests frame; the verbs and the ``context`` report, made from this
module's :class:`~cc_analytics.frames.chatlog.verbs.Batches` through :data:`SPEC`), and the
other modules of ``frames.copilot``. The rules are in ``frames.copilot.events`` and
``docs/copilot.md``: requests come from ``session.shutdown``'s per-model totals (their growth
since the previous shutdown) and, after the last shutdown, from each answer's recorded output.

Examples:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "session-state" / "s1"
    >>> folder.mkdir(parents=True)
    >>> _ = (folder / "events.jsonl").write_text(
    ...     '{"type":"session.start","data":{"sessionId":"s1","producer":"copilot-agent"},"id":"a",'
    ...     '"timestamp":"2026-03-01T10:00:00Z","parentId":null}\\n'
    ...     '{"type":"user.message","data":{"content":"hi"},"id":"b","timestamp":"2026-03-01T10:00:01Z","parentId":"a"}\\n'
    ...     '{"type":"session.shutdown","data":{"currentTokens":900,"modelMetrics":{"gpt-4.1":{"requests":{"count":2},'
    ...     '"usage":{"inputTokens":1000,"outputTokens":50,"cacheReadTokens":800,"cacheWriteTokens":0}}}},'
    ...     '"id":"c","timestamp":"2026-03-01T10:05:00Z","parentId":"b"}\\n')
    >>> read_requests(folder.parent).select("model", "input_tokens", "cache_read_tokens", "output_tokens", "cost_usd").row(0)
    ('gpt-4.1', 200, 800, 50, 0.0012)
    >>> read_sessions(folder.parent).select("session_id", "turns", "last_occupancy", "requests").row(0)
    ('s1', 1, 900, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any

import polars as pl

from cc_analytics.frames import schema as S
from cc_analytics.frames.chatlog import builders
from cc_analytics.frames.chatlog.messages import (
    COMPACTION,
    FILE,
    INDEX,
    IS_PROMPT,
    IS_REQUEST,
    REWOUND,
    TEXT,
    TIMESTAMP,
    TYPE,
    USER,
    Chat,
    Spec,
)
from cc_analytics.frames.chatlog.verbs import Batches, verbs
from cc_analytics.frames.copilot import otel
from cc_analytics.frames.copilot.events import (
    BUCKETS_AT,
    COMPACTIONS_AT,
    CONTEXT_AT,
    EVENT_WIDTH,
    FIRST_STAMP,
    LAST_MODEL,
    LAST_STAMP,
    MESSAGES_AT,
    MODELS,
    ODD_STAMPS,
    ROWS,
    Parsed,
    parse,
)
from cc_analytics.frames.copilot.plugin import BATCH_BYTES, PLUGIN, REQUESTS_BATCH_BYTES, TALLY_BATCH_BYTES
from cc_analytics.frames.copilot.store import OTEL_UNIT, resolve
from cc_analytics.frames.engine import BATCH_ENGINE
from cc_analytics.frames.sources import TranscriptFile, read_transcript

if TYPE_CHECKING:
    from cc_analytics.frames.tables import Tables

FORMAT = PLUGIN.name
PROVIDER: str | None = None  # Copilot CLI serves several providers' models: found by the model's name
DEFAULT_WINDOW = 128_000
"""The window the ``context`` gauge assumes when no truncation recorded one (``windowAssumed``)."""
UNREADABLE = "unreadable: {}"

USAGE_INPUT = "usage_input"
USAGE_OUTPUT = "usage_output"
USAGE_CACHE_READ = "usage_cache_read"
USAGE_CACHE_WRITE = "usage_cache_write"
USAGE_REASONING = "usage_reasoning"
USAGE_REQUESTS = "usage_requests"
USAGE = (USAGE_INPUT, USAGE_OUTPUT, USAGE_CACHE_READ, USAGE_CACHE_WRITE, USAGE_REASONING)
USED = "_used"


def _spec_parse(shown: str, data: bytes) -> Chat:  # its own batches never parse into messages
    return Chat()


def _events_schema() -> pl.Schema:
    """The batch-local events (the order of ``events.Parsed.events`` rows, after ``file``)."""
    return pl.Schema(
        {
            FILE: pl.Int64(),
            S.LINE: pl.Int64(),
            INDEX: pl.Int64(),
            S.MESSAGE_ID: pl.String(),
            TYPE: pl.String(),
            S.ROLE: pl.String(),
            TIMESTAMP: pl.String(),
            S.MODEL: pl.String(),
            TEXT: pl.String(),
            S.TOOL_NAMES: pl.String(),
            S.TOOL_ERRORS: pl.Int64(),
            **{name: pl.Int64() for name in USAGE},
            USAGE_REQUESTS: pl.Int64(),
            S.OCCUPANCY: pl.Int64(),
            S.WINDOW: pl.Int64(),
            COMPACTION: pl.Boolean(),
            **{bucket: pl.Int64() for bucket in S.BUCKETS},
            USED: pl.Boolean(),
        }
    )


def _requests_schema() -> pl.Schema:
    """The batch-local requests (the order of ``events.Parsed.requests`` rows, after ``file``)."""
    return pl.Schema(
        {
            FILE: pl.Int64(),
            INDEX: pl.Int64(),
            S.MESSAGE_ID: pl.String(),
            S.REQUEST_ID: pl.String(),
            TIMESTAMP: pl.String(),
            S.MODEL: pl.String(),
            S.INPUT_TOKENS: pl.Int64(),
            S.CACHE_CREATION_5M_TOKENS: pl.Int64(),
            S.CACHE_READ_TOKENS: pl.Int64(),
            S.OUTPUT_TOKENS: pl.Int64(),
            S.REASONING_TOKENS: pl.Int64(),
            S.OCCUPANCY: pl.Int64(),
            S.WINDOW: pl.Int64(),
        }
    )


class Batch:
    """The decoded frames of one batch: ``decoded`` (files, events, problems), raw ``requests``,
    and (``decode(..., tally=True)``) the ``tallies`` of the files read without event rows
    (``_tallies_schema``; the events are the other files')."""

    __slots__ = ("decoded", "requests", "tallies")

    def __init__(self, decoded: builders.Decoded, requests: pl.DataFrame, tallies: pl.DataFrame | None = None) -> None:
        self.decoded = decoded
        self.requests = requests
        self.tallies = tallies


def _tallies_schema() -> pl.Schema:
    """A tallied file's row (``events.Parsed.tally``): its unit, first and last timestamp text,
    then the columns of ``builders.file_totals_schema`` after its times."""
    return pl.Schema(
        {
            FILE: pl.Int64(),
            FIRST_TIME_TEXT: pl.String(),
            LAST_TIME_TEXT: pl.String(),
            **{name: dtype for name, dtype in builders.file_totals_schema().items() if name not in TIMES},
        }
    )


FIRST_TIME_TEXT, LAST_TIME_TEXT = "_first_stamp", "_last_stamp"
TIMES = (FILE, S.FIRST_TIME, S.LAST_TIME)


def _tally_row(unit: int, parsed: Parsed) -> tuple[Any, ...]:
    tally = parsed.tally
    assert tally is not None
    return (
        unit,
        tally[FIRST_STAMP],
        tally[LAST_STAMP],
        tally[MODELS],
        tally[LAST_MODEL],
        tally[COMPACTIONS_AT],
        *tally[BUCKETS_AT : BUCKETS_AT + 5],
        tally[CONTEXT_AT],
        tally[MESSAGES_AT],
        parsed.window,
        parsed.turns(),
    )


def decode(
    files: Sequence[TranscriptFile],
    contents: Sequence[bytes] | None = None,
    *,
    lean: bool = False,
    tally: bool = False,
    full: frozenset[int] = frozenset(),
) -> Batch:
    """Parse each file (its bytes from ``contents`` when given) into the batch's frames
    (``lean``: only the events requests are made of, ``events.parse``; ``tally``: an event log
    is tallied instead of making its event rows, unless its place in ``files`` is in ``full``
    or its timestamps cannot be ordered as text: then, as an export file, it is read in full)."""
    file_rows: list[tuple[Any, ...]] = []
    event_columns: list[list[Any]] = [[] for _ in range(EVENT_WIDTH + 1)]  # the file's, then a row's
    request_rows: list[tuple[Any, ...]] = []
    tally_rows: list[tuple[Any, ...]] = []
    problems: list[tuple[str, int | None, str]] = []
    unit = 0  # a file's place, or a session's of an export file (each its own ``file`` row)
    for position, file in enumerate(files):
        shown = file.source_file
        export = file.session_id == OTEL_UNIT
        try:
            data = contents[position] if contents is not None else read_transcript(file.path)
        except OSError as error:
            found = [Parsed(problems=[(None, UNREADABLE.format(error.strerror or error))])]
        else:
            if export:
                found = otel.parse(data, lean=lean)
            else:
                one = parse(data, lean=lean, tally=tally and position not in full)
                if one.tally is not None and one.tally[ODD_STAMPS]:
                    one = parse(data)
                found = [one]
        for parsed in found:
            problems.extend((shown, line, reason) for line, reason in parsed.problems)
            if export and parsed.session_id is None:
                continue  # a file of the export without calls: its problems only
            session = parsed.session_id if export else file.session_id
            file_rows.append(
                (unit, shown, session, file.agent_id, file.is_subagent, parsed.project, file.project_dir)
                + (parsed.start, None, parsed.lines)
            )
            if parsed.tally is not None:
                if parsed.tally[ROWS]:  # as a file without events has no messages' totals
                    tally_rows.append(_tally_row(unit, parsed))
            else:
                event_columns[0].extend(repeat(unit, len(parsed.events[0])))
                for column, values in zip(event_columns[1:], parsed.events, strict=True):
                    column.extend(values)
            request_rows.extend((unit, *row) for row in parsed.requests)
            unit += 1
    events = builders.messages_frame(event_columns, _events_schema(), columns=True).with_columns(
        pl.lit(False).alias(REWOUND)
    )
    decoded = builders.Decoded(
        builders.frame_of(file_rows, builders.files_schema()),
        events,
        pl.DataFrame(problems, schema=S.PROBLEMS_SCHEMA, orient="row"),
    )
    tallies = builders.frame_of(tally_rows, _tallies_schema()) if tally else None
    return Batch(decoded, builders.frame_of(request_rows, _requests_schema()), tallies)


def events_with_session(decoded: builders.Decoded) -> pl.LazyFrame:
    """The events with their file's session, which are requests and prompts, and their time."""
    files = decoded.files.lazy().select(FILE, S.SESSION_ID)
    return (
        decoded.messages.lazy()
        .join(files, on=FILE, how="left", maintain_order="left")
        .with_columns(
            pl.col(USED).alias(IS_REQUEST),
            (pl.col(S.ROLE) == USER).alias(IS_PROMPT),
            builders.utc_time(pl.col(TIMESTAMP)).alias(S.TIME),
        )
    )


def turn_events(events: pl.LazyFrame) -> pl.LazyFrame:
    """The events turns are made of: a ``user.message`` opens a turn; what comes before a
    file's first prompt (its ``session.start``, the system prompt) belongs to none, unless it
    holds a request or a tool call (then it is turn 0)."""
    prompted = pl.col(IS_PROMPT).cast(pl.Int64).cum_sum().over(FILE, order_by=INDEX) > 0
    return events.filter(prompted | pl.col(IS_REQUEST) | (pl.col(S.TOOL_NAMES).list.len() > 0))


def priced_requests(batch: Batch) -> pl.DataFrame:
    """The priced requests of a batch (``REQUESTS_SCHEMA``), with ``file``, ``index``,
    ``occupancy`` and ``window`` after them."""
    from cc_analytics.frames.prices import price_requests

    files = batch.decoded.files.lazy().select(FILE, S.SESSION_ID, S.PROJECT, S.AGENT_ID, S.IS_SUBAGENT_FILE)
    columns = {
        S.FORMAT: pl.lit(FORMAT),
        S.SESSION_ID: pl.col(S.SESSION_ID),
        S.PROJECT: pl.col(S.PROJECT),
        S.AGENT_ID: pl.col(S.AGENT_ID),
        S.IS_SIDECHAIN: pl.col(S.IS_SUBAGENT_FILE),
        S.REQUEST_ID: pl.col(S.REQUEST_ID),
        S.MESSAGE_ID: pl.col(S.MESSAGE_ID),
        S.TIME: builders.utc_time(pl.col(TIMESTAMP)),
        S.MODEL: pl.col(S.MODEL),
        S.PROVIDER: pl.lit(PROVIDER, pl.String),
        S.INPUT_TOKENS: pl.col(S.INPUT_TOKENS),
        S.CACHE_CREATION_5M_TOKENS: pl.col(S.CACHE_CREATION_5M_TOKENS),
        S.CACHE_CREATION_1H_TOKENS: pl.lit(0),
        S.CACHE_READ_TOKENS: pl.col(S.CACHE_READ_TOKENS),
        S.OUTPUT_TOKENS: pl.col(S.OUTPUT_TOKENS),
        S.REASONING_TOKENS: pl.col(S.REASONING_TOKENS),
        S.WEB_SEARCH_REQUESTS: pl.lit(0),
        S.SERVICE_TIER: pl.lit(None, pl.String),
        S.SPEED: pl.lit(None, pl.String),
        S.COST_USD: pl.lit(None, pl.Float64),
    }
    rows = (
        batch.requests.lazy()
        .join(files, on=FILE, how="left", maintain_order="left")
        .select(*(expr.alias(name) for name, expr in columns.items()), FILE, INDEX, S.OCCUPANCY, S.WINDOW)
        .cast(
            pl.Schema(
                {
                    **dict(S.REQUESTS_SCHEMA),
                    FILE: pl.Int64(),
                    INDEX: pl.Int64(),
                    S.OCCUPANCY: pl.Int64(),
                    S.WINDOW: pl.Int64(),
                }
            )
        )
    )
    return price_requests(rows.collect(engine=BATCH_ENGINE))


def events_schema() -> pl.Schema:
    """The events frame's columns: where the event is (``source_file``, ``line``, ``index``),
    what it is (``message_id``: its ``id``, ``type`` as written, ``role``, ``time``, ``model``,
    ``text``, ``tool_names``, ``tool_errors``), the usage it records as Copilot CLI counts it
    (``usage_input`` with cache reads and writes included, ``usage_output``, ``usage_cache_read``,
    ``usage_cache_write``, ``usage_reasoning``, ``usage_requests``: a shutdown's growth per
    model, one row per model; an answer's ``outputTokens``), the recorded ``occupancy`` and
    ``window``, ``is_request``, ``compaction`` and the estimated tokens it adds.

    Examples:
        >>> list(events_schema())[:5]
        ['format', 'source_file', 'session_id', 'project', 'line']
    """
    return pl.Schema(
        {
            S.FORMAT: pl.String(),
            S.SOURCE_FILE: pl.String(),
            S.SESSION_ID: pl.String(),
            S.PROJECT: pl.String(),
            S.LINE: pl.Int64(),
            INDEX: pl.Int64(),
            S.MESSAGE_ID: pl.String(),
            TYPE: pl.String(),
            S.ROLE: pl.String(),
            S.TIME: S.UTC_TIME,
            S.MODEL: pl.String(),
            TEXT: pl.String(),
            S.TOOL_NAMES: S.STRINGS,
            S.TOOL_ERRORS: pl.Int64(),
            **{name: pl.Int64() for name in USAGE},
            USAGE_REQUESTS: pl.Int64(),
            S.OCCUPANCY: pl.Int64(),
            S.WINDOW: pl.Int64(),
            IS_REQUEST: pl.Boolean(),
            COMPACTION: pl.Boolean(),
            S.ESTIMATED_TOKENS: pl.Int64(),
        }
    )


# ------------------------------------------------------------------ batches


def batch_tables(files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None) -> Tables:
    """Sessions, turns (empty unless ``turns``), problems and priced requests of one batch from
    one decode (run in a worker process); ``contents``: the files' bytes, when read elsewhere.
    (Not named ``tables_batch``: that is the verb the family makes of it.)"""
    from cc_analytics.frames.tables import Tables

    if not turns:
        return _summary_tables(files, contents)
    batch = decode(files, contents)
    events = events_with_session(batch.decoded).collect(engine=BATCH_ENGINE).lazy()
    requests = priced_requests(batch)
    turn_frame = builders.turn_rows(SPEC, batch.decoded, turn_events(events), requests).collect(engine=BATCH_ENGINE)
    sessions = builders.summarize(SPEC, batch.decoded, events, turn_frame.lazy(), requests)
    return Tables(
        sessions,
        turn_frame,
        batch.decoded.problems,
        requests.select(list(S.REQUESTS_SCHEMA)),
    )


def _summary_tables(files: list[TranscriptFile], contents: Sequence[bytes] | None) -> Tables:
    """:func:`batch_tables` without turns: each event log tallied (``events.parse``'s
    ``tally``), its events never made into rows; the sessions are the same. A file whose least
    or greatest timestamp text is not a time is read again in full (the order of the texts is
    then not that of the times they name)."""
    from cc_analytics.frames.tables import Tables

    batch = decode(files, contents, tally=True)
    tallies = _timed(batch)
    untimed = (pl.col(FIRST_TIME_TEXT).is_not_null() & pl.col(S.FIRST_TIME).is_null()) | (
        pl.col(LAST_TIME_TEXT).is_not_null() & pl.col(S.LAST_TIME).is_null()
    )
    again = tallies.filter(untimed).select(FILE).collect().to_series().to_list()
    if again:  # rare: read those files in full, in their places
        places = _places(files, batch.decoded.files)
        batch = decode(files, contents, tally=True, full=frozenset(places[unit] for unit in again))
        tallies = _timed(batch)
    requests = priced_requests(batch)
    totals = [tallies.select(list(builders.file_totals_schema()))]
    if batch.decoded.messages.height:  # the files read in full: export files, odd timestamps
        events = events_with_session(batch.decoded).collect(engine=BATCH_ENGINE).lazy()
        # their turns as builders.turn_rows makes them, counted by unit ((file, session) is one)
        unit = [S.SOURCE_FILE, S.SESSION_ID]
        turn_counts = (
            builders.turn_rows(SPEC, batch.decoded, turn_events(events), requests)
            .group_by(unit)
            .agg(pl.len().cast(pl.Int64).alias(S.TURNS))
            .join(batch.decoded.files.lazy().select(FILE, *unit), on=unit)
        )
        read = builders.message_totals(events, FILE).join(turn_counts.select(FILE, S.TURNS), on=FILE, how="left")
        totals.append(read.with_columns(pl.col(S.TURNS).fill_null(0)).select(list(builders.file_totals_schema())))
    per_session = builders.session_totals(batch.decoded.files, pl.concat(totals, how="vertical"))
    sessions = builders.summarize(SPEC, batch.decoded, None, None, requests, totals=per_session)
    turns = pl.DataFrame(schema=S.TURNS_SCHEMA)
    return Tables(sessions, turns, batch.decoded.problems, requests.select(list(S.REQUESTS_SCHEMA)))


def _timed(batch: Batch) -> pl.LazyFrame:
    """A batch's tallies with the times of their first and last timestamp texts."""
    assert batch.tallies is not None
    return batch.tallies.lazy().with_columns(
        builders.utc_time(pl.col(FIRST_TIME_TEXT)).alias(S.FIRST_TIME),
        builders.utc_time(pl.col(LAST_TIME_TEXT)).alias(S.LAST_TIME),
    )


def _places(files: Sequence[TranscriptFile], decoded_files: pl.DataFrame) -> dict[int, int]:
    """Each unit's place in ``files`` (an export file makes a unit per session it holds)."""
    places = {path.source_file: place for place, path in enumerate(files)}
    return dict(
        zip(decoded_files[FILE].to_list(), (places[shown] for shown in decoded_files[S.SOURCE_FILE]), strict=True)
    )


def requests_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(priced requests, problems) of one batch."""
    batch = decode(files, lean=True)
    return priced_requests(batch).select(list(S.REQUESTS_SCHEMA)), batch.decoded.problems


def events_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    decoded = decode(files).decoded
    return builders.events_frame(SPEC, decoded, messages=events_with_session(decoded), schema=events_schema())


def problems_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    return decode(files).decoded.problems


def context_events(files: list[TranscriptFile], contents: Sequence[bytes] | None = None) -> pl.LazyFrame:
    """The events of a batch with their session (what the ``context`` report reads)."""
    return events_with_session(decode(files, contents).decoded)


# ------------------------------------------------------------------ the verbs

BATCHES = Batches(
    batch_tables,
    requests_batch,
    events_batch,
    problems_batch,
    context_events,
    events_schema,
    BATCH_BYTES,
    REQUESTS_BATCH_BYTES,
    TALLY_BATCH_BYTES,
)
SPEC = Spec(
    FORMAT,
    "GitHub Copilot CLI",
    parse=_spec_parse,
    resolve=resolve,
    provider=PROVIDER,
    default_window=DEFAULT_WINDOW,
    batches=BATCHES,
)

# scan_/read_ events, turns, sessions, problems and requests, iter_requests, iter_tables,
# tables_batch and context_report: the family's verbs, made of this format's batches. The
# ``context`` report: the occupancy the last shutdown recorded (``currentTokens``) against the
# window the last truncation recorded (else DEFAULT_WINDOW, assumed).
globals().update(verbs(SPEC))
