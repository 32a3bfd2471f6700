"""A batch's frames from its chats: the decoded ``files``, ``messages`` and ``problems``
(:class:`Decoded`), then events, priced requests, turns and sessions, for any format of the
chat-log family (its :class:`~cc_analytics.frames.chatlog.messages.Spec` names it).

Imports: polars (inside functions: the module loads without it), the standard library, the
shared ``frames`` modules (``schema``, ``sources``, ``prices``, ``metrics``, ``requests``) and
``frames.chatlog.messages``. The rules are in ``frames.chatlog.messages``' docstring.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cc_analytics.frames import schema as S
from cc_analytics.frames.chatlog.messages import (
    ASSISTANT,
    CACHED_TOKENS,
    CANDIDATES_TOKENS,
    COMPACTION,
    COUNTS,
    FILE,
    INDEX,
    INFERRED,
    IS_PROMPT,
    IS_REQUEST,
    NAMES_JOIN,
    NO_USAGE,
    PROMPT_TOKENS,
    RECORDED,
    REWOUND,
    TEXT,
    THOUGHTS_TOKENS,
    TIMESTAMP,
    TOOL_PROMPT_TOKENS,
    TURN,
    TYPE,
    UNREADABLE,
    USER,
    WINDOW_SOURCE,
    Chat,
    Spec,
)
from cc_analytics.frames.engine import BATCH_ENGINE

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.sources import TranscriptFile


NAMED_MODEL, NAMED_WINDOW = "_named_model", "_named_window"  # the last model and window the messages name


@dataclass(frozen=True, slots=True)
class Decoded:
    """The frames of one batch: ``files`` (one row each), ``messages`` and ``problems``."""

    files: pl.DataFrame
    messages: pl.DataFrame
    problems: pl.DataFrame


def files_schema() -> pl.Schema:
    """The batch-local ``files`` frame: one row per file, its place in the batch first.

    Examples:
        >>> list(files_schema())[:3]
        ['file', 'source_file', 'session_id']
    """
    import polars as pl

    return pl.Schema(
        {
            FILE: pl.Int64(),
            S.SOURCE_FILE: pl.String(),
            S.SESSION_ID: pl.String(),
            S.AGENT_ID: pl.String(),
            S.IS_SUBAGENT_FILE: pl.Boolean(),
            S.PROJECT: pl.String(),
            S.PROJECT_DIR: pl.String(),
            S.START_TIME: pl.String(),
            S.END_TIME: pl.String(),
            S.EVENTS: pl.Int64(),
        }
    )


def _schemas() -> tuple[pl.Schema, pl.Schema]:
    import polars as pl

    files = files_schema()
    messages = pl.Schema(
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
            S.TOOL_NAMES: pl.String(),  # joined by NAMES_JOIN (a list column costs far more to build)
            S.TOOL_ERRORS: pl.Int64(),
            **{name: pl.Int64() for name in COUNTS},
            S.WINDOW: pl.Int64(),
            WINDOW_SOURCE: pl.String(),
            REWOUND: pl.Boolean(),
            COMPACTION: pl.Boolean(),
            **{bucket: pl.Int64() for bucket in S.BUCKETS},
            "_used": pl.Boolean(),
        }
    )
    return files, messages


def decode(
    spec: Spec, files: Sequence[TranscriptFile], contents: Sequence[bytes] | None = None, *, lean: bool = False
) -> Decoded:
    """Parse each file (its bytes from ``contents`` when given) into the batch's frames
    (``lean``: what the requests are made of, ``messages.LEAN``)."""
    import polars as pl

    from cc_analytics.frames.sources import read_transcript

    files_schema, messages_schema = _schemas()
    file_rows: dict[str, list[Any]] = {name: [] for name in files_schema}
    rows: list[tuple[Any, ...]] = []
    problems: dict[str, list[Any]] = {S.SOURCE_FILE: [], S.LINE: [], S.REASON: []}
    for position, file in enumerate(files):
        shown = file.source_file
        chat = Chat()
        try:
            data = contents[position] if contents is not None else read_transcript(file.path)
        except OSError as error:
            chat.problems.append((None, UNREADABLE.format(error.strerror or error)))
        else:
            chat = spec.parse(shown, data, lean=True) if lean else spec.parse(shown, data)
        for line, reason in chat.problems:
            problems[S.SOURCE_FILE].append(shown)
            problems[S.LINE].append(line)
            problems[S.REASON].append(reason)
        for name, value in zip(
            files_schema,
            (position, shown, file.session_id, file.agent_id, file.is_subagent, chat.project, file.project_dir)
            + (chat.start, chat.updated, chat.events),
            strict=True,
        ):
            file_rows[name].append(value)
        for message in chat.messages:
            usage = message.usage or NO_USAGE
            window = message.window
            rows.append(
                (
                    position,
                    message.line,
                    message.position,
                    message.id,
                    message.type,
                    message.role,
                    message.time,
                    message.model,
                    message.text,
                    NAMES_JOIN.join(message.tool_names) if message.tool_names else None,
                    message.tool_errors,
                    *usage,
                    window,
                    None if window is None else RECORDED if message.window_recorded else INFERRED,
                    message.rewound,
                    message.compaction,
                    *message.buckets,
                    message.usage is not None and usage.used,
                )
            )
    return Decoded(
        pl.DataFrame(file_rows, schema=files_schema),
        messages_frame(rows, messages_schema),
        pl.DataFrame(problems, schema=S.PROBLEMS_SCHEMA),
    )


def frame_of(rows: list[Any], schema: pl.Schema, *, columns: bool = False) -> pl.DataFrame:
    """A frame of ``schema`` from its rows (tuples in the schema's order), column by column
    (``columns``: ``rows`` are the columns already, lists in the schema's order).

    Examples:
        >>> import polars as pl
        >>> frame_of([(1, "a"), (2, None)], pl.Schema({"n": pl.Int64(), "s": pl.String()})).rows()
        [(1, 'a'), (2, None)]
    """
    import polars as pl

    if not columns:
        rows = list(zip(*rows, strict=True)) if rows else [() for _ in schema]
    return pl.DataFrame(
        {name: pl.Series(name, column, dtype=dtype) for (name, dtype), column in zip(schema.items(), rows, strict=True)}
    )


def messages_frame(rows: list[Any], schema: pl.Schema, *, columns: bool = False) -> pl.DataFrame:
    """A messages frame from its rows (:func:`frame_of`, ``columns`` too), its tool names (joined
    by ``NAMES_JOIN``) split back into lists."""
    import polars as pl

    names = pl.col(S.TOOL_NAMES)
    return frame_of(rows, schema, columns=columns).with_columns(
        pl.when(names.is_null()).then(pl.lit([], S.STRINGS)).otherwise(names.str.split(NAMES_JOIN)).alias(S.TOOL_NAMES)
    )


def utc_time(text: pl.Expr) -> pl.Expr:
    """An RFC 3339 timestamp column as a UTC datetime (null when it is not one).

    Examples:
        >>> import polars as pl
        >>> pl.select(utc_time(pl.lit("2026-01-16T18:34:01.000Z"))).item().isoformat()
        '2026-01-16T18:34:01+00:00'
    """
    import polars as pl

    zulu = text.str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", strict=False, time_unit="us", time_zone="UTC")
    offset = text.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", strict=False, time_unit="us")
    return pl.coalesce(zulu, offset.dt.convert_time_zone("UTC")).cast(S.UTC_TIME)


def messages_with_session(decoded: Decoded) -> pl.LazyFrame:
    """The messages with their file's session, and which are requests (the last write of each
    id within a session) and prompts."""
    import polars as pl

    files = decoded.files.lazy().select(FILE, S.SESSION_ID)
    used = pl.col("_used")
    # The write of the greatest (file, index): one window's maximum (an ordered window's row
    # number against the group's length took a 16 MB batch 5.5 ms, this 0.4).
    place = pl.col(FILE).cast(pl.Int64) * (1 << 32) + pl.col(INDEX)
    last_write = place == place.max().over(S.SESSION_ID, S.MESSAGE_ID)
    # An id written again: only its last write can be the request (a null id is its own).
    counted = pl.when(pl.col(S.MESSAGE_ID).is_null()).then(used).otherwise(used & last_write)
    return (
        decoded.messages.lazy()
        .join(files, on=FILE, how="left", maintain_order="left")
        .with_columns(
            counted.alias(IS_REQUEST),
            (pl.col(S.ROLE) == USER).alias(IS_PROMPT),
            utc_time(pl.col(TIMESTAMP)).alias(S.TIME),
        )
    )


def request_rows(spec: Spec, decoded: Decoded, messages: pl.LazyFrame) -> pl.LazyFrame:
    """The requests of a batch in ``REQUESTS_SCHEMA`` (not priced yet), with ``file``, ``index``
    and ``occupancy`` after them."""
    import polars as pl

    files = decoded.files.lazy().select(FILE, S.PROJECT, S.AGENT_ID, S.IS_SUBAGENT_FILE)
    prompt, cached = pl.col(PROMPT_TOKENS), pl.min_horizontal(CACHED_TOKENS, PROMPT_TOKENS)
    columns = {
        S.FORMAT: pl.lit(spec.format),
        S.SESSION_ID: pl.col(S.SESSION_ID),
        S.PROJECT: pl.col(S.PROJECT),
        S.AGENT_ID: pl.col(S.AGENT_ID),
        S.IS_SIDECHAIN: pl.col(S.IS_SUBAGENT_FILE),
        S.REQUEST_ID: pl.lit(None, pl.String),
        S.MESSAGE_ID: pl.col(S.MESSAGE_ID),
        S.TIME: pl.col(S.TIME),
        S.MODEL: pl.col(S.MODEL),
        S.PROVIDER: pl.lit(spec.provider, pl.String),
        S.INPUT_TOKENS: prompt - cached + pl.col(TOOL_PROMPT_TOKENS),
        S.CACHE_CREATION_5M_TOKENS: pl.lit(0),
        S.CACHE_CREATION_1H_TOKENS: pl.lit(0),
        S.CACHE_READ_TOKENS: cached,
        S.OUTPUT_TOKENS: pl.col(CANDIDATES_TOKENS) + pl.col(THOUGHTS_TOKENS),
        S.REASONING_TOKENS: pl.col(THOUGHTS_TOKENS),
        S.WEB_SEARCH_REQUESTS: pl.lit(0),
        S.SERVICE_TIER: pl.lit(None, pl.String),
        S.SPEED: pl.lit(None, pl.String),
        S.COST_USD: pl.lit(None, pl.Float64),
    }
    keep = (FILE, INDEX, (prompt + pl.col(TOOL_PROMPT_TOKENS)).alias(S.OCCUPANCY), S.WINDOW)
    return (
        messages.filter(pl.col(IS_REQUEST))
        .join(files, on=FILE, how="left", maintain_order="left")
        .select(*(expr.alias(name) for name, expr in columns.items()), *keep)
        .cast(pl.Schema({**dict(S.REQUESTS_SCHEMA), S.OCCUPANCY: pl.Int64(), S.WINDOW: pl.Int64()}))
    )


def priced_requests(spec: Spec, decoded: Decoded, messages: pl.LazyFrame) -> pl.DataFrame:
    """The priced requests of a batch, each with its ``file``, ``index``, ``occupancy`` and ``window``."""
    from cc_analytics.frames.prices import price_requests

    return price_requests(request_rows(spec, decoded, messages).collect(engine=BATCH_ENGINE))


def _window_columns(occupancy: pl.Expr, window: pl.Expr) -> list[pl.Expr]:
    import polars as pl

    from cc_analytics.frames import metrics

    return [
        pl.lit(None, pl.Int64).alias(S.EFFECTIVE_WINDOW),
        pl.lit(None, pl.Int64).alias(S.AUTOCOMPACT_THRESHOLD),
        metrics.used_fraction(occupancy, window).alias(S.USED_FRACTION),
        metrics.headroom(occupancy, window).alias(S.HEADROOM),
    ]


def turn_rows(spec: Spec, decoded: Decoded, messages: pl.LazyFrame, requests: pl.DataFrame) -> pl.LazyFrame:
    """One row per turn of each file (``TURNS_SCHEMA``): a user prompt opens one; turn 0 holds
    what comes before the first prompt (when anything does)."""
    import polars as pl

    costs = requests.lazy().select(FILE, INDEX, S.COST_USD, S.OCCUPANCY, pl.lit(True).alias("_request"))
    files = decoded.files.lazy().select(FILE, S.SOURCE_FILE, S.AGENT_ID, S.IS_SUBAGENT_FILE)
    bucket_sum = pl.sum_horizontal(*S.BUCKETS)
    request = pl.col("_request").fill_null(False)
    turns = (
        messages.join(costs, on=[FILE, INDEX], how="left", maintain_order="left")
        .sort(FILE, INDEX)
        .with_columns(pl.col(IS_PROMPT).cast(pl.Int64).cum_sum().over(FILE).alias(TURN))
        .group_by(FILE, TURN, maintain_order=True)
        .agg(
            pl.col(S.SESSION_ID).first(),
            pl.col(S.MESSAGE_ID).drop_nulls().alias(S.EVENT_UUIDS),
            pl.col(TEXT).filter(pl.col(IS_PROMPT)).first().alias(S.PROMPT),
            pl.col(S.TIME).min().alias(S.START_TIME),
            pl.col(S.TIME).max().alias(S.END_TIME),
            pl.col(S.TOOL_NAMES).list.len().sum().cast(pl.Int64).alias(S.TOOL_CALLS),
            pl.col(S.TOOL_NAMES).list.explode(keep_nulls=False, empty_as_null=False).alias(S.TOOL_NAMES),
            pl.col(S.TOOL_ERRORS).sum().cast(pl.Int64),
            pl.coalesce(pl.col(S.MODEL).filter(request).drop_nulls().last(), pl.col(S.MODEL).drop_nulls().last()).alias(
                S.MODEL
            ),
            pl.col(S.OCCUPANCY).filter(request).drop_nulls().last().alias(S.OCCUPANCY),
            pl.col(COMPACTION).any().alias(S.COMPACTED),
            pl.coalesce(
                pl.col(S.WINDOW).filter(request).drop_nulls().last(), pl.col(S.WINDOW).drop_nulls().last()
            ).alias(S.WINDOW),
            *(pl.col(bucket).sum().cast(pl.Int64) for bucket in S.BUCKETS),
            bucket_sum.filter(~pl.col(REWOUND)).sum().cast(pl.Int64).alias("_kept_tokens"),
            pl.col(S.COST_USD).filter(request).sum().alias(S.COST_USD),
            (request & pl.col(S.COST_USD).is_null()).sum().cast(pl.Int64).alias(S.UNPRICED_REQUESTS),
            pl.col(IS_PROMPT).any().alias("_prompted"),
        )
        .with_columns(
            pl.sum_horizontal(*S.BUCKETS).cast(pl.Int64).alias(S.ESTIMATED_TOKENS),
            pl.col("_kept_tokens").cum_sum().over(FILE, order_by=TURN).alias(S.ESTIMATED_CONTEXT),
            pl.when(pl.col("_prompted")).then(pl.lit(USER)).otherwise(pl.lit(ASSISTANT)).alias(S.ROLE),
            (pl.col(TURN) - pl.col(TURN).min().over(FILE)).alias(S.TURN_INDEX),
            pl.lit(spec.format).alias(S.FORMAT),
        )
        .with_columns(
            *_window_columns(pl.col(S.OCCUPANCY), pl.col(S.WINDOW)),
            pl.when(pl.col(S.ESTIMATED_CONTEXT) > 0)
            .then(pl.col(S.OCCUPANCY).cast(pl.Float64) / pl.col(S.ESTIMATED_CONTEXT))
            .alias(S.CALIBRATION),
        )
        .join(files, on=FILE, how="left", maintain_order="left")
    )
    return turns.select(list(S.TURNS_SCHEMA)).cast(S.TURNS_SCHEMA)


def in_context() -> pl.Expr:
    """Whether a message is in its file's context at the end: not rewound, and not before the
    file's last compaction."""
    import polars as pl

    compacted_at = pl.col(INDEX).filter(pl.col(COMPACTION)).max().over(FILE)
    return ~pl.col(REWOUND) & (compacted_at.is_null() | (pl.col(INDEX) >= compacted_at))


def message_totals(messages: pl.LazyFrame, by: str) -> pl.LazyFrame:
    """What a summary takes of the messages, one row per ``by`` (``session_id``, or ``file``:
    then :func:`session_totals` makes the sessions' of the files'): first and last time, the
    models named (in order, each once) and the last one, compactions, the estimate by bucket,
    the estimate and count of the messages in context at the end, the last window named."""
    import polars as pl

    bucket_sum = pl.sum_horizontal(*S.BUCKETS)
    return (
        messages.sort(FILE, INDEX)
        .with_columns(in_context().alias("_now"))
        .group_by(by)
        .agg(
            pl.col(S.TIME).min().alias(S.FIRST_TIME),
            pl.col(S.TIME).max().alias(S.LAST_TIME),
            pl.col(S.MODEL).drop_nulls().unique(maintain_order=True).alias(S.MODELS),
            pl.col(S.MODEL).drop_nulls().last().alias(NAMED_MODEL),
            pl.col(COMPACTION).sum().cast(pl.Int64).alias(S.COMPACTIONS),
            *(pl.col(bucket).sum().cast(pl.Int64) for bucket in S.BUCKETS),
            bucket_sum.filter(pl.col("_now")).sum().cast(pl.Int64).alias(S.CONTEXT_ESTIMATE),
            pl.col("_now").sum().cast(pl.Int64).alias(S.MESSAGES),
            pl.col(S.WINDOW).drop_nulls().last().alias(NAMED_WINDOW),
        )
    )


def file_totals_schema() -> pl.Schema:
    """The columns of the files' totals :func:`session_totals` takes: those of
    :func:`message_totals` by ``file``, and the file's turns."""
    import polars as pl

    return pl.Schema(
        {
            FILE: pl.Int64(),
            S.FIRST_TIME: S.UTC_TIME,
            S.LAST_TIME: S.UTC_TIME,
            S.MODELS: S.STRINGS,
            NAMED_MODEL: pl.String(),
            S.COMPACTIONS: pl.Int64(),
            **{bucket: pl.Int64() for bucket in S.BUCKETS},
            S.CONTEXT_ESTIMATE: pl.Int64(),
            S.MESSAGES: pl.Int64(),
            NAMED_WINDOW: pl.Int64(),
            S.TURNS: pl.Int64(),
        }
    )


def session_totals(files: pl.DataFrame, totals: pl.LazyFrame) -> pl.LazyFrame:
    """The sessions' :func:`message_totals` and turns made of their files' (``totals``, in
    :func:`file_totals_schema`; a file without messages has no row), as :func:`summarize` takes
    them: the same as of the sessions' messages, a file's context being its own."""
    import polars as pl

    sums = [S.COMPACTIONS, *S.BUCKETS, S.CONTEXT_ESTIMATE, S.MESSAGES, S.TURNS]
    return (
        totals.join(files.lazy().select(FILE, S.SESSION_ID), on=FILE, how="left")
        .sort(FILE)
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.FIRST_TIME).min(),
            pl.col(S.LAST_TIME).max(),
            pl.col(S.MODELS).list.explode(keep_nulls=False, empty_as_null=False).unique(maintain_order=True),
            pl.col(NAMED_MODEL).drop_nulls().last(),
            *(pl.col(name).sum().cast(pl.Int64) for name in sums),
            pl.col(NAMED_WINDOW).drop_nulls().last(),
        )
    )


def summarize(
    spec: Spec,
    decoded: Decoded,
    messages: pl.LazyFrame | None,
    turns: pl.LazyFrame | None,
    requests: pl.DataFrame,
    *,
    totals: pl.LazyFrame | None = None,
) -> pl.DataFrame:
    """One row per session of a batch (``SESSIONS_SCHEMA``), of its ``messages`` and ``turns``,
    or of ``totals``: the sessions' :func:`message_totals` with their turns (:func:`session_totals`)."""
    import polars as pl

    from cc_analytics.frames.requests import cache_creation_tokens, cost_totals, prompt_tokens

    files = decoded.files.lazy()
    per_file = files.group_by(S.SESSION_ID).agg(
        pl.col(S.PROJECT).drop_nulls().first(),
        pl.col(S.PROJECT_DIR).first(),
        pl.len().cast(pl.Int64).alias(S.FILES),
        pl.col(S.IS_SUBAGENT_FILE).sum().cast(pl.Int64).alias(S.SUBAGENT_FILES),
        pl.col(S.EVENTS).sum().cast(pl.Int64),
        utc_time(pl.col(S.START_TIME)).min().alias("_start"),
        utc_time(pl.col(S.END_TIME)).max().alias("_updated"),
    )
    if totals is None:
        assert messages is not None and turns is not None
        turn_counts = turns.group_by(S.SESSION_ID).agg(pl.len().cast(pl.Int64).alias(S.TURNS))
        totals = message_totals(messages, S.SESSION_ID).join(turn_counts, on=S.SESSION_ID, how="left")
    requested = (
        requests.lazy()
        .sort(FILE, INDEX)
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.INPUT_TOKENS).sum(),
            cache_creation_tokens().sum().alias(S.CACHE_CREATION_TOKENS),
            pl.col(S.CACHE_READ_TOKENS).sum(),
            pl.col(S.OUTPUT_TOKENS).sum(),
            pl.len().cast(pl.Int64).alias(S.REQUESTS),
            (pl.col(S.CACHE_READ_TOKENS).sum().cast(pl.Float64) / prompt_tokens().sum()).alias(S.CACHE_HIT_RATIO),
            *cost_totals(),
            pl.col(S.MODEL).drop_nulls().last().alias("_request_model"),
            pl.col(S.OCCUPANCY).last().alias(S.LAST_OCCUPANCY),
            pl.col(S.OCCUPANCY).max().alias(S.PEAK_OCCUPANCY),
            pl.col(S.WINDOW).last().alias("_request_window"),
        )
    )
    zero = [*S.BUCKETS, S.CACHE_CREATION_TOKENS, S.INPUT_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS]
    zero += [S.REQUESTS, S.TURNS, S.COMPACTIONS, S.CONTEXT_ESTIMATE, S.MESSAGES, S.UNPRICED_REQUESTS]
    nulls = pl.lit(None, pl.Int64).repeat_by(pl.col(S.COMPACTIONS))
    summary = (
        per_file.join(totals, on=S.SESSION_ID, how="left")
        .join(requested, on=S.SESSION_ID, how="left")
        .with_columns(pl.col(zero).fill_null(0), pl.col(S.MODELS).fill_null([]))
        .with_columns(
            pl.lit(spec.format).alias(S.FORMAT),
            pl.coalesce(S.FIRST_TIME, "_start").alias(S.FIRST_TIME),
            pl.coalesce(S.LAST_TIME, "_updated").alias(S.LAST_TIME),
            pl.coalesce("_request_model", NAMED_MODEL).alias(S.LAST_MODEL),
            pl.lit(spec.provider, pl.String).alias(S.PROVIDER),
            pl.when(pl.col(S.LAST_OCCUPANCY).is_not_null()).then(pl.lit(RECORDED)).alias(S.OCCUPANCY_SOURCE),
            pl.coalesce("_request_window", NAMED_WINDOW).alias(S.WINDOW),
            pl.lit(None, pl.String).repeat_by(pl.col(S.COMPACTIONS)).alias(S.COMPACTION_TRIGGERS),
            nulls.alias(S.COMPACTION_PRE_TOKENS),
            nulls.alias(S.COMPACTION_POST_TOKENS),
            pl.sum_horizontal(*S.BUCKETS).cast(pl.Int64).alias(S.ESTIMATED_TOKENS),
            pl.when(pl.col(S.CONTEXT_ESTIMATE) > 0)
            .then(pl.col(S.LAST_OCCUPANCY).cast(pl.Float64) / pl.col(S.CONTEXT_ESTIMATE))
            .alias(S.CALIBRATION),
        )
        .with_columns(_window_columns(pl.col(S.LAST_OCCUPANCY), pl.col(S.WINDOW)))
        .select(list(S.SESSIONS_SCHEMA))
        .sort(S.SESSION_ID)
    )
    return summary.collect(engine=BATCH_ENGINE).cast(S.SESSIONS_SCHEMA)


def events_frame(
    spec: Spec, decoded: Decoded, *, messages: pl.LazyFrame | None = None, schema: pl.Schema | None = None
) -> pl.DataFrame:
    """The events frame of a batch (``schema``, :func:`events_schema` unless given): one row
    per message of ``messages`` (:func:`messages_with_session` unless given)."""
    import polars as pl

    schema = events_schema() if schema is None else schema
    files = decoded.files.lazy().select(FILE, S.SOURCE_FILE, S.PROJECT)
    return (
        (messages_with_session(decoded) if messages is None else messages)
        .join(files, on=FILE, how="left", maintain_order="left")
        .with_columns(
            pl.lit(spec.format).alias(S.FORMAT),
            pl.sum_horizontal(*S.BUCKETS).cast(pl.Int64).alias(S.ESTIMATED_TOKENS),
        )
        .select(list(schema))
        .collect()
        .cast(schema)
    )


def events_schema() -> pl.Schema:
    """The events frame's columns: where the message is (``source_file``, ``line`` — null in a
    JSON document —, ``index``), what it is (``message_id``, ``type`` as written, ``role``,
    ``time``, ``model``, ``text``, ``tool_names``, ``tool_errors``), its usage as recorded
    (``prompt_tokens`` cached included, ``cached_tokens``, ``candidates_tokens``,
    ``thoughts_tokens``, ``tool_prompt_tokens``), the ``window`` and whether it was recorded
    or inferred, ``is_request`` (the write of its id that counts), ``rewound``,
    ``compaction`` and the estimated tokens it adds.

    Examples:
        >>> list(events_schema())[:5]
        ['format', 'source_file', 'session_id', 'project', 'line']
    """
    import polars as pl

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
            **{name: pl.Int64() for name in COUNTS},
            S.WINDOW: pl.Int64(),
            WINDOW_SOURCE: pl.String(),
            IS_REQUEST: pl.Boolean(),
            REWOUND: pl.Boolean(),
            COMPACTION: pl.Boolean(),
            S.ESTIMATED_TOKENS: pl.Int64(),
        }
    )
