"""OpenCode sessions as the shared frames: requests, turns, sessions, events and problems.

Imports: polars, ``frames.engine``, ``frames.metrics``, ``frames.prices``, ``frames.requests``
and the other ``frames.opencode`` modules. The rules (``docs/opencode.md`` says them for
people):

**Requests**: one per assistant message whose recorded usage is not all zero, as ccusage
counts them. Shared-schema meaning: ``input_tokens`` is ``tokens.input`` (OpenCode records it
without the cache), ``cache_read_tokens`` ``tokens.cache.read``, ``cache_creation_5m_tokens``
``tokens.cache.write``, ``reasoning_tokens`` ``tokens.reasoning`` and ``output_tokens``
``tokens.output + tokens.reasoning`` (the schema counts reasoning in the output, and it is
billed as output; OpenCode records the two apart). ``message_id`` is the message's id, ``time``
its ``time.created``; priced offline (``frames.prices``). OpenCode's own ``cost`` is the
events frame's ``recorded_cost_usd``.

**Turns**: a user message opens a turn, unless it only carries a compaction (OpenCode writes
one to ask for a summary); messages before the first turn form turn 0. Per turn: the prompt
(the opener's text parts that are not ``synthetic``), its tool parts (``status`` ``error``:
failed), ``compacted`` (a ``compaction`` part or a ``summary`` message), the buckets of what
its parts add (user text; synthetic text as system; assistant text and reasoning; tool
outputs; tool inputs as tool calls), ``estimated_context`` (the sum since the last
compaction), the model of its last request, and ``occupancy``: the last request's recorded
input + cache read + cache write + output + reasoning (what the next request starts from,
OpenCode's own "context" figure). The window is inferred from the model's name
(:data:`MODEL_WINDOWS`), null when unknown; OpenCode records no window and no threshold.

**Sessions**: a session with its sub-task sessions (units of one ``session_id``); token
totals, requests and cost over all of them, the rest from the session's own (its ``primary``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from operator import itemgetter

import polars as pl

from cc_analytics.frames import metrics
from cc_analytics.frames.engine import BATCH_ENGINE, Progress, run_batches, scan_batches
from cc_analytics.frames.opencode import schema as S
from cc_analytics.frames.opencode.decode import Decoded, decode
from cc_analytics.frames.opencode.plugin import BATCH_BYTES
from cc_analytics.frames.opencode.store import Source, resolve
from cc_analytics.frames.prices import price_requests
from cc_analytics.frames.requests import cache_creation_tokens, cost_totals, prompt_tokens
from cc_analytics.frames.sources import TranscriptFile

RECORDED = "recorded"
PRIMARY = "primary"
MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-4-5", 200_000),
    ("claude-", 200_000),
    ("anthropic/claude-", 200_000),
    ("gpt-5", 400_000),
    ("openai/gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-2.5", 1_048_576),
    ("gemini-3", 1_048_576),
    ("qwen3-coder", 262_144),
    ("kimi-k2", 262_144),
    ("glm-4.6", 200_000),
    ("grok-code-fast", 256_000),
)
"""Windows inferred from a model's name (the first prefix that matches); OpenCode records none."""
BUCKET_OF = {
    ("user", "text", False): S.TOKENS_USER,
    ("user", "text", True): S.TOKENS_SYSTEM,
    ("assistant", "text", False): S.TOKENS_ASSISTANT,
    ("assistant", "text", True): S.TOKENS_SYSTEM,
}


def model_window(model: pl.Expr) -> pl.Expr:
    """The window inferred from a model column (:data:`MODEL_WINDOWS`), null when unknown.

    Examples:
        >>> pl.DataFrame({"m": ["claude-sonnet-4-5", "gpt-5.1", "x", None]}).select(model_window(pl.col("m"))).to_series().to_list()
        [200000, 400000, None, None]
    """
    expr = pl.lit(None, pl.Int64)
    for prefix, window in reversed(MODEL_WINDOWS):
        expr = pl.when(model.str.starts_with(prefix)).then(pl.lit(window, pl.Int64)).otherwise(expr)
    return expr


def utc(milliseconds: pl.Expr) -> pl.Expr:
    """Epoch milliseconds as a UTC time."""
    return pl.from_epoch(milliseconds, time_unit="ms").cast(S.UTC_TIME)


# -- requests --------------------------------------------------------------------------------


def is_request() -> pl.Expr:
    """An assistant message with recorded usage that is not all zero."""
    usage = [pl.col(name) for name in S.USAGE_COLUMNS]
    return (
        (pl.col(S.ROLE) == "assistant")
        & pl.all_horizontal(amount.is_not_null() for amount in usage)
        & pl.any_horizontal(amount > 0 for amount in usage)
    )


def occupancy() -> pl.Expr:
    """A request's recorded input, cache read and write, output and reasoning: the context after it."""
    return pl.sum_horizontal(pl.col(name) for name in S.USAGE_COLUMNS).alias(S.OCCUPANCY)


def request_rows(decoded: Decoded, *, keep: Sequence[str] = ()) -> pl.LazyFrame:
    """The requests of a batch in ``REQUESTS_SCHEMA`` (not priced), then the columns ``keep``."""
    files = decoded.files.lazy().select(S.FILE, S.SESSION_ID, S.AGENT_ID, S.IS_SUBAGENT_FILE, S.PROJECT)
    columns = {
        S.FORMAT: pl.lit(S.OPENCODE),
        S.SESSION_ID: pl.col(S.SESSION_ID),
        S.PROJECT: pl.col(S.PROJECT),
        S.AGENT_ID: pl.col(S.AGENT_ID),
        S.IS_SIDECHAIN: pl.col(S.IS_SUBAGENT_FILE),
        S.REQUEST_ID: pl.lit(None, pl.String),
        S.MESSAGE_ID: pl.col(S.MESSAGE_ID),
        S.TIME: utc(pl.col(S.CREATED)),
        S.MODEL: pl.col(S.MODEL),
        S.PROVIDER: pl.col(S.PROVIDER),
        S.INPUT_TOKENS: pl.col(S.TOKENS_INPUT),
        S.CACHE_CREATION_5M_TOKENS: pl.col(S.TOKENS_CACHE_WRITE),
        S.CACHE_CREATION_1H_TOKENS: pl.lit(0),
        S.CACHE_READ_TOKENS: pl.col(S.TOKENS_CACHE_READ),
        S.OUTPUT_TOKENS: pl.col(S.TOKENS_OUTPUT) + pl.col(S.TOKENS_REASONING),
        S.REASONING_TOKENS: pl.col(S.TOKENS_REASONING),
        S.WEB_SEARCH_REQUESTS: pl.lit(0),
        S.SERVICE_TIER: pl.lit(None, pl.String),
        S.SPEED: pl.lit(None, pl.String),
        S.COST_USD: pl.lit(None, pl.Float64),
    }
    return (
        decoded.messages.lazy()
        .filter(is_request())
        .join(files, on=S.FILE, how="left")
        .sort(S.FILE, S.CREATED, S.MESSAGE_ID, nulls_last=True)
        .select(*(expr.alias(name) for name, expr in columns.items()), *keep)
        .cast(S.REQUESTS_SCHEMA)
    )


def priced_requests(decoded: Decoded) -> pl.DataFrame:
    """The priced requests of a batch, each with its ``file`` and ``occupancy``."""
    usage = decoded.messages.lazy().select(S.FILE, S.MESSAGE_ID, occupancy())
    rows = request_rows(decoded, keep=(S.FILE,)).join(
        usage, on=[S.FILE, S.MESSAGE_ID], how="left", maintain_order="left"
    )
    return price_requests(rows.collect(engine=BATCH_ENGINE))


def requests_batch(files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The priced requests and the problems of one batch (run in a worker process)."""
    decoded = decode(files, parts=False)
    return price_requests(request_rows(decoded).collect(engine=BATCH_ENGINE)), decoded.problems


def iter_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
    """(priced requests, problems) of ``source`` batch by batch: what the ``usage`` command reads."""
    yield from run_batches(
        requests_batch, resolve(source), workers=workers, on_progress=on_progress, batch_bytes=BATCH_BYTES
    )


def scan_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per API request of ``source`` (``REQUESTS_SCHEMA``), priced."""
    return scan_batches(
        requests_batch,
        resolve(source),
        S.REQUESTS_SCHEMA,
        "opencode_requests",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=BATCH_BYTES,
        pick=itemgetter(0),
    )


def read_requests(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.DataFrame:
    """Eager :func:`scan_requests`.

    Examples:
        >>> read_requests([]).schema == S.REQUESTS_SCHEMA
        True
    """
    return scan_requests(source, workers=workers, on_progress=on_progress).collect()


# -- turns -----------------------------------------------------------------------------------


def ordered_messages(decoded: Decoded) -> pl.LazyFrame:
    """Messages in session and time order, each with its turn (``turn_index``) and whether it
    holds a compaction (``compacted``)."""
    compaction = (
        decoded.parts.lazy()
        .filter(pl.col(S.PART_TYPE) == "compaction")
        .select(S.FILE, S.MESSAGE_ID, pl.lit(True).alias("_compaction"))
        .unique()
    )
    opens = (pl.col(S.ROLE) == "user") & ~pl.col("_compaction")
    count = opens.cast(pl.Int64).cum_sum().over(S.FILE)
    return (
        decoded.messages.lazy()
        .join(compaction, on=[S.FILE, S.MESSAGE_ID], how="left")
        .with_columns(pl.col("_compaction").fill_null(False))
        .sort(S.FILE, S.CREATED, S.MESSAGE_ID, nulls_last=True)
        .with_columns(opens.alias("_opens"), count.alias("_count"))
        .with_columns(
            (pl.col("_count") - pl.col("_count").min().over(S.FILE)).alias(S.TURN_INDEX),
            (pl.col("_compaction") | pl.col(S.SUMMARY)).alias(S.COMPACTED),
        )
    )


def part_buckets(decoded: Decoded, messages: pl.LazyFrame) -> pl.LazyFrame:
    """Per part: its message's turn and role, and the tokens it adds to each bucket."""
    parts = decoded.parts.lazy().join(
        messages.select(S.FILE, S.MESSAGE_ID, S.ROLE, S.TURN_INDEX), on=[S.FILE, S.MESSAGE_ID], how="inner"
    )
    text = pl.col(S.TEXT_TOKENS)
    is_text = pl.col(S.PART_TYPE) == "text"
    synthetic = pl.col(S.SYNTHETIC)
    user = pl.col(S.ROLE) == "user"
    return parts.with_columns(
        pl.when(is_text & user & ~synthetic).then(text).otherwise(0).alias(S.TOKENS_USER),
        pl.when(is_text & synthetic).then(text).otherwise(0).alias(S.TOKENS_SYSTEM),
        pl.when((is_text & ~user & ~synthetic) | (pl.col(S.PART_TYPE) == "reasoning"))
        .then(text)
        .otherwise(0)
        .alias(S.TOKENS_ASSISTANT),
        pl.when(pl.col(S.PART_TYPE) == "tool").then(text).otherwise(0).alias(S.TOKENS_TOOL),
        pl.when(pl.col(S.PART_TYPE) == "tool").then(pl.col(S.CALL_TOKENS)).otherwise(0).alias(S.TOKENS_TOOL_CALLS),
    )


def lift_turns(decoded: Decoded, requests: pl.DataFrame) -> pl.DataFrame:
    """One row per turn of every session of the batch (``TURNS_SCHEMA``, after the batch-local ``file``)."""
    messages = ordered_messages(decoded)
    keys = [S.FILE, S.TURN_INDEX]
    parts = part_buckets(decoded, messages)
    openers = messages.filter(pl.col("_opens")).select(S.FILE, S.MESSAGE_ID, S.TURN_INDEX)
    prompts = (
        parts.filter((pl.col(S.PART_TYPE) == "text") & ~pl.col(S.SYNTHETIC))
        .join(openers, on=[S.FILE, S.MESSAGE_ID, S.TURN_INDEX], how="inner")
        .group_by(keys, maintain_order=True)
        .agg(pl.col(S.TEXT).drop_nulls().str.join("\n").alias(S.PROMPT))
    )
    tools = (
        parts.sort(S.FILE, S.TURN_INDEX, S.PART_ID)
        .group_by(keys, maintain_order=True)
        .agg(
            (pl.col(S.PART_TYPE) == "tool").sum().cast(pl.Int64).alias(S.TOOL_CALLS),
            pl.col(S.TOOL)
            .filter(pl.col(S.PART_TYPE) == "tool")
            .drop_nulls()
            .unique(maintain_order=True)
            .alias(S.TOOL_NAMES),
            (pl.col(S.STATUS) == "error").sum().cast(pl.Int64).alias(S.TOOL_ERRORS),
            *(pl.col(name).sum() for name in S.BUCKETS),
        )
    )
    priced = requests.lazy().select(
        S.FILE, S.MESSAGE_ID, S.COST_USD, S.OCCUPANCY, pl.col(S.MODEL).alias("_request_model")
    )
    with_requests = messages.join(priced, on=[S.FILE, S.MESSAGE_ID], how="left", maintain_order="left")
    per_turn = with_requests.group_by(keys, maintain_order=True).agg(
        pl.when(pl.col("_opens").first()).then(pl.lit("user")).otherwise(pl.lit("assistant")).alias(S.ROLE),
        utc(pl.col(S.CREATED).min()).alias(S.START_TIME),
        utc(pl.max_horizontal(pl.col(S.CREATED).max(), pl.col(S.COMPLETED).max())).alias(S.END_TIME),
        pl.col("_request_model").drop_nulls().last().alias("_last_request_model"),
        pl.col(S.MODEL).drop_nulls().last().alias("_named_model"),
        pl.col(S.OCCUPANCY).drop_nulls().last(),
        pl.col(S.COMPACTED).any(),
        *cost_totals(),
    )
    files = decoded.files.lazy().select(S.FILE, S.SOURCE_FILE, S.SESSION_ID, S.AGENT_ID, S.IS_SUBAGENT_FILE)
    turns = (
        per_turn.join(prompts, on=keys, how="left")
        .join(tools, on=keys, how="left")
        .join(files, on=S.FILE, how="left")
        .sort(keys)
        .with_columns(
            pl.col(S.TOOL_CALLS, S.TOOL_ERRORS, *S.BUCKETS).fill_null(0),
            pl.col(S.TOOL_NAMES).fill_null([]),
            pl.coalesce("_last_request_model", "_named_model").alias(S.MODEL),
        )
        .with_columns(pl.sum_horizontal(S.BUCKETS).alias(S.ESTIMATED_TOKENS))
        .with_columns(
            # The context since the last compaction (a compacted turn starts a new one).
            pl.col(S.ESTIMATED_TOKENS)
            .cum_sum()
            .over(S.FILE, pl.col(S.COMPACTED).cast(pl.Int64).cum_sum().over(S.FILE))
            .alias(S.ESTIMATED_CONTEXT),
            pl.col(S.OCCUPANCY).forward_fill().over(S.FILE),
            pl.lit(S.OPENCODE).alias(S.FORMAT),
            pl.lit(None, S.STRINGS).alias(S.EVENT_UUIDS),
            pl.lit(None, pl.Int64).alias(S.AUTOCOMPACT_THRESHOLD),
        )
        .with_columns(window_columns())
    )
    return (
        turns.select(S.FILE, *S.TURNS_SCHEMA)
        .collect(engine=BATCH_ENGINE)
        .cast(pl.Schema({S.FILE: pl.Int64(), **S.TURNS_SCHEMA}))
    )


def window_columns() -> list[pl.Expr]:
    """Window (inferred from the model), effective window (the same: OpenCode reserves none
    that it records), used fraction, headroom and calibration of rows with ``occupancy``,
    ``model`` and ``estimated_context``."""
    window = model_window(pl.col(S.MODEL))
    used = pl.col(S.OCCUPANCY)
    return [
        window.alias(S.WINDOW),
        window.alias(S.EFFECTIVE_WINDOW),
        metrics.used_fraction(used, window).alias(S.USED_FRACTION),
        metrics.headroom(used, window).alias(S.HEADROOM),
        pl.when(pl.col(S.ESTIMATED_CONTEXT) > 0)
        .then(used.cast(pl.Float64) / pl.col(S.ESTIMATED_CONTEXT))
        .alias(S.CALIBRATION),
    ]


def turns_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The turns of one batch (run in a worker process)."""
    decoded = decode(files)
    return lift_turns(decoded, priced_requests(decoded)).drop(S.FILE)


def scan_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per turn of ``source`` (``TURNS_SCHEMA``): a user message opens a turn."""
    return scan_batches(
        turns_batch,
        resolve(source),
        S.TURNS_SCHEMA,
        "opencode_turns",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=BATCH_BYTES,
    )


def read_turns(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_turns`.

    Examples:
        >>> read_turns([]).schema == S.TURNS_SCHEMA
        True
    """
    return scan_turns(source, workers=workers, on_progress=on_progress).collect()


# -- sessions --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tables:
    """What one decode of a batch gives: sessions, turns, problems and priced requests."""

    sessions: pl.DataFrame
    turns: pl.DataFrame
    problems: pl.DataFrame
    requests: pl.DataFrame


def summarize(decoded: Decoded, turns: pl.DataFrame, requests: pl.DataFrame) -> pl.DataFrame:
    """One row per session of a batch (``SESSIONS_SCHEMA``) from its turns and priced requests."""
    main = ~pl.col(S.IS_SUBAGENT_FILE)
    files = decoded.files.lazy().with_columns((main | ~main.any().over(S.SESSION_ID)).alias(PRIMARY))
    attributes = files.select(S.FILE, S.SESSION_ID, PRIMARY)
    primary = pl.col(PRIMARY)
    session = (
        files.sort(S.FILE)
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.PROJECT).filter(primary).drop_nulls().first(),
            pl.col(S.PROJECT_DIR).filter(primary).first(),
            pl.len().cast(pl.Int64).alias(S.FILES),
            pl.col(S.IS_SUBAGENT_FILE).sum().cast(pl.Int64).alias(S.SUBAGENT_FILES),
        )
    )
    messages = decoded.messages.lazy().join(attributes, on=S.FILE, how="left")
    per_message = messages.group_by(S.SESSION_ID).agg(
        utc(pl.col(S.CREATED).min()).alias(S.FIRST_TIME),
        utc(pl.max_horizontal(pl.col(S.CREATED).max(), pl.col(S.COMPLETED).max())).alias(S.LAST_TIME),
        pl.col(S.MESSAGE_ID).filter(primary).len().cast(pl.Int64).alias(S.MESSAGES),
        pl.col(S.MODEL).filter(primary).drop_nulls().last().alias("_named_model"),
        pl.col(S.PROVIDER).filter(primary).drop_nulls().last().alias("_named_provider"),
    )
    parts = decoded.parts.lazy().join(attributes, on=S.FILE, how="left")
    per_part = parts.group_by(S.SESSION_ID).agg(
        (pl.col(S.PART_TYPE) == "compaction").filter(primary).sum().cast(pl.Int64).alias(S.COMPACTIONS),
        pl.len().cast(pl.Int64).alias("_parts"),
    )
    events = messages.group_by(S.SESSION_ID).agg(pl.len().cast(pl.Int64).alias("_messages"))
    ordered = requests.lazy().join(attributes, on=S.FILE, how="left").sort(S.TIME, maintain_order=True)
    totals = ordered.group_by(S.SESSION_ID).agg(
        pl.col(S.INPUT_TOKENS).sum(),
        cache_creation_tokens().sum().alias(S.CACHE_CREATION_TOKENS),
        pl.col(S.CACHE_READ_TOKENS).sum(),
        pl.col(S.OUTPUT_TOKENS).sum(),
        pl.len().cast(pl.Int64).alias(S.REQUESTS),
        (pl.col(S.CACHE_READ_TOKENS).sum().cast(pl.Float64) / prompt_tokens().sum()).alias(S.CACHE_HIT_RATIO),
        *cost_totals(),
        pl.col(S.MODEL).drop_nulls().unique(maintain_order=True).alias(S.MODELS),
        pl.col(S.MODEL).filter(primary).drop_nulls().last().alias("_request_model"),
        pl.col(S.PROVIDER).filter(primary).drop_nulls().last().alias("_request_provider"),
        pl.col(S.OCCUPANCY).filter(primary).max().alias(S.PEAK_OCCUPANCY),
    )
    own_turns = turns.lazy().drop(S.SESSION_ID).join(attributes, on=S.FILE, how="left").filter(primary)
    per_turn = (
        own_turns.sort(S.TURN_INDEX)
        .group_by(S.SESSION_ID)
        .agg(
            pl.len().cast(pl.Int64).alias(S.TURNS),
            pl.col(S.OCCUPANCY).drop_nulls().last().alias(S.LAST_OCCUPANCY),
            pl.col(S.ESTIMATED_CONTEXT).last().alias(S.CONTEXT_ESTIMATE),
            *(pl.col(name).sum() for name in S.BUCKETS),
            pl.col(S.ESTIMATED_TOKENS).sum(),
        )
    )
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS]
    zero += [S.OUTPUT_TOKENS, S.REQUESTS, S.TURNS, S.COMPACTIONS, S.CONTEXT_ESTIMATE, S.MESSAGES, S.UNPRICED_REQUESTS]
    summary = (
        session.join(per_message, on=S.SESSION_ID, how="left")
        .join(per_part, on=S.SESSION_ID, how="left")
        .join(events, on=S.SESSION_ID, how="left")
        .join(totals, on=S.SESSION_ID, how="left")
        .join(per_turn, on=S.SESSION_ID, how="left")
        .with_columns(
            pl.col(zero).fill_null(0),
            pl.col(S.MODELS).fill_null([]),
            pl.coalesce("_request_model", "_named_model").alias(S.LAST_MODEL),
            pl.coalesce("_request_provider", "_named_provider").alias(S.PROVIDER),
            (pl.col("_messages").fill_null(0) + pl.col("_parts").fill_null(0)).alias(S.EVENTS),
            pl.lit(S.OPENCODE).alias(S.FORMAT),
            pl.lit(None, pl.Int64).alias(S.AUTOCOMPACT_THRESHOLD),
            pl.lit([], S.STRINGS).alias(S.COMPACTION_TRIGGERS),
            pl.lit([], pl.List(pl.Int64)).alias(S.COMPACTION_PRE_TOKENS),
            pl.lit([], pl.List(pl.Int64)).alias(S.COMPACTION_POST_TOKENS),
        )
        .with_columns(
            pl.col(S.LAST_MODEL).alias(S.MODEL),
            pl.col(S.LAST_OCCUPANCY).alias(S.OCCUPANCY),
            pl.col(S.CONTEXT_ESTIMATE).alias(S.ESTIMATED_CONTEXT),
            pl.when(pl.col(S.LAST_OCCUPANCY).is_not_null()).then(pl.lit(RECORDED)).alias(S.OCCUPANCY_SOURCE),
        )
        .with_columns(window_columns())
        .select(list(S.SESSIONS_SCHEMA))
        .sort(S.SESSION_ID)
    )
    return summary.collect(engine=BATCH_ENGINE).cast(S.SESSIONS_SCHEMA)


def tables_batch(files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None) -> Tables:
    """Sessions, turns (empty unless ``turns``), problems and priced requests of one batch from
    one decode (run in a worker process); ``contents``: the units' bytes, when read elsewhere."""
    decoded = decode(files, contents=contents)
    requests = priced_requests(decoded)
    turn_rows = lift_turns(decoded, requests)
    sessions = summarize(decoded, turn_rows, requests)
    shown = turn_rows.drop(S.FILE)
    return Tables(
        sessions, shown if turns else shown.clear(), decoded.problems, requests.select(list(S.REQUESTS_SCHEMA))
    )


def iter_tables(
    source: Source = None,
    *,
    turns: bool = True,
    workers: int | None = 1,
    on_progress: Progress | None = None,
) -> Iterator[Tables]:
    """Sessions, turns (empty unless ``turns``), problems and requests batch by batch.

    Examples:
        >>> [batch.sessions.height for batch in iter_tables([])]
        []
    """
    work = partial(tables_batch, turns=turns)
    yield from run_batches(work, resolve(source), workers=workers, on_progress=on_progress, batch_bytes=BATCH_BYTES)


def sessions_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The session summaries of one batch (run in a worker process)."""
    return tables_batch(files, turns=False).sessions


def scan_sessions(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, one row per session of ``source`` (``SESSIONS_SCHEMA``, ``format`` = ``"opencode"``):
    a session with its sub-task sessions."""
    return scan_batches(
        sessions_batch,
        resolve(source),
        S.SESSIONS_SCHEMA,
        "opencode_sessions",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=BATCH_BYTES,
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


# -- events and problems ---------------------------------------------------------------------


def events_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The events frame of one batch: its messages, then each message's parts."""
    decoded = decode(files, texts=True)
    names = decoded.files.lazy().select(S.FILE, S.SOURCE_FILE, S.SESSION_ID, S.AGENT_ID)
    messages = decoded.messages.lazy().select(
        S.FILE,
        pl.lit("message").alias(S.KIND),
        S.MESSAGE_ID,
        pl.lit(None, pl.String).alias(S.PART_ID),
        S.CREATED,
        S.ROLE,
        S.MODEL,
        S.PROVIDER,
        *S.USAGE_COLUMNS,
        S.RECORDED_COST,
        pl.lit(0, pl.Int64).alias("_order"),
    )
    times = decoded.messages.lazy().select(S.FILE, S.MESSAGE_ID, pl.col(S.CREATED).alias("_message_time"))
    parts = (
        decoded.parts.lazy()
        .join(times, on=[S.FILE, S.MESSAGE_ID], how="left")
        .select(
            S.FILE,
            pl.lit("part").alias(S.KIND),
            S.MESSAGE_ID,
            S.PART_ID,
            pl.coalesce(S.START, "_message_time").alias(S.CREATED),
            S.PART_TYPE,
            S.TEXT,
            S.TOOL,
            S.STATUS,
            (pl.col(S.TEXT_TOKENS) + pl.col(S.CALL_TOKENS)).alias(S.TOKENS),
            pl.lit(1, pl.Int64).alias("_order"),
        )
    )
    return (
        pl.concat([messages, parts], how="diagonal_relaxed")
        .join(times.rename({"_message_time": "_anchor"}), on=[S.FILE, S.MESSAGE_ID], how="left")
        .sort(S.FILE, "_anchor", S.MESSAGE_ID, "_order", S.CREATED, S.PART_ID, nulls_last=True)
        .join(names, on=S.FILE, how="left", maintain_order="left")
        .with_columns(utc(pl.col(S.CREATED)).alias(S.TIME))
        .select(list(S.EVENTS_SCHEMA))
        .collect()
        .cast(S.EVENTS_SCHEMA)
    )


def problems_batch(files: list[TranscriptFile]) -> pl.DataFrame:
    """The problems of one batch."""
    return decode(files).problems


def scan_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.LazyFrame:
    """Lazily, one row per message and part of every session (``EVENTS_SCHEMA``): ``kind``
    ``message`` rows carry the usage as recorded and OpenCode's own cost
    (``recorded_cost_usd``), ``part`` rows the part's type, text, tool and estimated tokens."""
    return scan_batches(
        events_batch,
        resolve(source),
        S.EVENTS_SCHEMA,
        "opencode_events",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=BATCH_BYTES,
    )


def read_events(source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None) -> pl.DataFrame:
    """Eager :func:`scan_events`.

    Examples:
        >>> read_events([]).columns[:4]
        ['source_file', 'session_id', 'agent_id', 'kind']
    """
    return scan_events(source, workers=workers, on_progress=on_progress).collect()


def scan_problems(
    source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
) -> pl.LazyFrame:
    """Lazily, what could not be used whole: ``source_file``, ``line`` (null), ``reason``."""
    return scan_batches(
        problems_batch,
        resolve(source),
        S.PROBLEMS_SCHEMA,
        "opencode_problems",
        workers=workers,
        on_progress=on_progress,
        batch_bytes=BATCH_BYTES,
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
