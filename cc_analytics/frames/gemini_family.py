"""What Gemini CLI and its fork Qwen Code share: a chat's messages in one intermediate form,
every frame made from them (events, requests, turns, sessions, problems), the verbs and the
``context`` report, and where the chats are (:class:`Store`), for both packages.

Imports: orjson, polars, the standard library and the shared ``frames`` modules (``context_report``,
``engine``, ``estimate``, ``lines``, ``metrics``, ``plugin``, ``prices``, ``requests``,
``schema``, ``sources``, ``tables``). It names no format: each package passes its own
:class:`Spec` (its ``format`` value and label, its parser, its resolver, its provider, its
windows) and makes its own :class:`Store` (its home folder, its file names, how a file names
its session), so the two agree wherever their files do and differ only in how a file becomes a
:class:`Chat` and where the agent keeps it. A format's verbs module is its :class:`Spec` and
:func:`verbs`; its store module, its :class:`Store`.

Both agents speak the Gemini API: a model message is made of *parts* (text, a ``thought``
flag, ``functionCall``, ``functionResponse``) and its usage counts the prompt (cached input
included), the cached input, the candidates (output, thoughts not included), the thoughts and
the tool-use prompt. Rules shared by both formats:

* a request is a model message with usage (any count above 0); a message written again under
  the same id (a Gemini ``.jsonl`` rewrites one as it streams; a Qwen record repeated with its
  uuid) is one request, the **last** write wins, within a session (its files in path order);
* shared-schema meaning: ``input_tokens`` = prompt − cached + tool-use prompt (the uncached
  input), ``cache_read_tokens`` = cached (at most the prompt), ``output_tokens`` = candidates
  + thoughts (what is billed as output), ``reasoning_tokens`` = thoughts; no cache writes;
* occupancy (recorded): a request's prompt (cached included) + tool-use prompt, what the model
  read; the window is the one the file records (Qwen's ``contextWindowSize``) or, when none
  is, the window of the model's name (:attr:`Spec.window_of`, *inferred*);
* a user prompt opens a turn (turn 0 holds what comes before the first); messages a rewind
  removed from the history (``rewound``) stay in events and turns, and their requests count
  (the tokens were spent), but not in the context at the end;
* a file is one session; its session id comes from the file (``Spec.parse``).

Examples:
    >>> usage = Usage(prompt=1000, cached=200, output=100, thoughts=50, tool=7)
    >>> shared_tokens(usage)
    {'input_tokens': 807, 'cache_read_tokens': 200, 'output_tokens': 150, 'reasoning_tokens': 50}
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from cc_analytics.frames import schema as S
from cc_analytics.frames.lines import kind_name

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.engine import Progress
    from cc_analytics.frames.sources import Source, TranscriptFile
    from cc_analytics.frames.tables import Tables

# Roles of a message (the ``role`` column of events).
USER, ASSISTANT, TOOL, SYSTEM = "user", "assistant", "tool", "system"
RECORDED, INFERRED = "recorded", "inferred"

# Problem reasons, each written here and nowhere else.
NOT_JSON = "not JSON ({}); line skipped"
NOT_JSON_FILE = "not JSON ({}); file skipped"
TRUNCATED = "truncated last line (the file may still be being written)"
NOT_OBJECT = "not a JSON object ({}); line skipped"
UNREADABLE = "unreadable: {}"
BAD_COUNT = "{} is {!r}, not a whole number of at least 0; taken as 0"

# Columns of the batch-local frames.
FILE = "file"
INDEX = "index"
TYPE = "type"
TIMESTAMP = "timestamp"
TEXT = "text"
TOOL_CALL_COUNT = "tool_call_count"
PROMPT_TOKENS = "prompt_tokens"
CACHED_TOKENS = "cached_tokens"
CANDIDATES_TOKENS = "candidates_tokens"
THOUGHTS_TOKENS = "thoughts_tokens"
TOOL_PROMPT_TOKENS = "tool_prompt_tokens"
WINDOW_SOURCE = "window_source"
REWOUND = "rewound"
COMPACTION = "compaction"
IS_PROMPT = "is_prompt"
IS_REQUEST = "is_request"
TURN = "turn"
COUNTS = (PROMPT_TOKENS, CACHED_TOKENS, CANDIDATES_TOKENS, THOUGHTS_TOKENS, TOOL_PROMPT_TOKENS)


class Usage(NamedTuple):
    """A model message's usage as the Gemini API counts it (``prompt`` includes ``cached``)."""

    prompt: int = 0
    cached: int = 0
    output: int = 0
    thoughts: int = 0
    tool: int = 0

    @property
    def used(self) -> bool:
        return any(self)


NO_USAGE = Usage()
NAMES_JOIN = "\x1f"  # tool names of a message, joined (the unit separator: in no tool's name)


class Message(NamedTuple):
    """One message of a chat, whatever file it came from (the parsers' output)."""

    line: int | None  # the line of a .jsonl (null in a JSON document)
    position: int  # its place among the file's messages, from 0
    id: str | None
    type: str | None  # as written (its format names its types)
    role: str  # USER, ASSISTANT, TOOL or SYSTEM
    time: str | None  # RFC 3339 text as written
    model: str | None
    text: str | None  # a prompt's or an answer's visible text
    tool_names: tuple[str, ...] = ()
    tool_errors: int = 0
    usage: Usage | None = None
    window: int | None = None  # recorded by the file, else inferred from the model
    window_recorded: bool = False
    rewound: bool = False
    compaction: bool = False
    buckets: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)  # system, user, assistant, tool, tool calls


@dataclass(slots=True)
class Chat:
    """What a parser makes of one file: its session, messages and problems."""

    session_id: str | None = None
    project: str | None = None
    start: str | None = None  # the header's start and last update (RFC 3339 text)
    updated: str | None = None
    messages: list[Message] = field(default_factory=list)
    problems: list[tuple[int | None, str]] = field(default_factory=list)
    events: int = 0  # JSON objects read (lines of a .jsonl; the messages of a document)


def no_window(model: str | None) -> int | None:
    """No window known by the model's name (what a :class:`Spec` assumes unless told)."""
    return None


@dataclass(frozen=True, slots=True)
class Spec:
    """What one format gives the shared code: all that differs between the two agents' frames
    (module-level functions: batches are pickled).

    Examples:
        >>> spec = Spec("toy", "Toy", parse=lambda shown, data: Chat(), resolve=lambda source, planned=False: [])
        >>> spec.provider, spec.window_of("toy-1"), spec.default_window
        (None, None, 1048576)
    """

    format: str  # the frames' ``format`` value
    label: str  # what people call the agent (in the verbs' docstrings)
    parse: Callable[[str, bytes], Chat]  # (shown path, bytes) -> Chat
    resolve: Callable[..., list[TranscriptFile]]  # (source, planned=False) -> files
    provider: str | None = None  # the ``provider`` of its requests (None: not recorded)
    window_of: Callable[[str | None], int | None] = no_window  # the window of a model's name
    default_window: int = 1_048_576  # what ``context`` assumes when no window is recorded or known


# ------------------------------------------------------------------ values


def count(value: Any) -> int | None:
    """A token count as written: a whole number ≥ 0, else None (a float that is whole counts).

    Examples:
        >>> count(12), count(3.0), count(-1), count("7"), count(True)
        (12, 3, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def usage_of(values: dict[str, Any], keys: Sequence[str], problems: list[str]) -> Usage:
    """A :class:`Usage` from the counts named by ``keys`` (prompt, cached, output, thoughts,
    tool); a count that is not a whole number ≥ 0 is 0 and named in ``problems``.

    Examples:
        >>> usage_of({"input": 10, "cached": 4, "output": "x"}, ("input", "cached", "output", "thoughts", "tool"), [])
        Usage(prompt=10, cached=4, output=0, thoughts=0, tool=0)
    """
    out = []
    for key in keys:
        value = values.get(key)
        number = count(value)
        if number is None and value is not None:
            problems.append(BAD_COUNT.format(key, value))
        out.append(number or 0)
    return Usage(*out)


def shared_tokens(usage: Usage) -> dict[str, int]:
    """The shared requests schema's token columns of one usage (see the module docstring)."""
    cached = min(usage.cached, usage.prompt)
    return {
        S.INPUT_TOKENS: usage.prompt - cached + usage.tool,
        S.CACHE_READ_TOKENS: cached,
        S.OUTPUT_TOKENS: usage.output + usage.thoughts,
        S.REASONING_TOKENS: usage.thoughts,
    }


def parse_line(line: bytes) -> tuple[Any, str | None]:
    """A line's value and None, or None and the reason it is not JSON (orjson first; what it
    refuses is read by the JSON line policy, ``frames.lines.read_line``).

    Examples:
        >>> parse_line(b'{"a":1}')
        ({'a': 1}, None)
        >>> parse_line(b"{not json")[1]
        'not JSON (unexpected character, expected a string key); line skipped'
    """
    try:
        return orjson.loads(line), None
    except orjson.JSONDecodeError:
        pass
    from cc_analytics.frames.lines import read_line
    from cc_analytics.jsonline import LineError

    try:
        return read_line(line), None
    except LineError as error:
        return None, NOT_JSON.format(error)


def jsonl_objects(data: bytes, chat: Chat) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every line of a ``.jsonl`` that is a JSON object; the other
    lines become problems of ``chat`` (a last line without its newline that does not parse is
    a truncated line, the agent may be writing it)."""
    torn = 0 if data.endswith(b"\n") else data.count(b"\n") + 1
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        value, reason = parse_line(line)
        if reason is not None:
            chat.problems.append((number, TRUNCATED if number == torn else reason))
            continue
        if not isinstance(value, dict):
            chat.problems.append((number, NOT_OBJECT.format(kind_name(value))))
            continue
        chat.events += 1
        yield number, value


def text_tokens(text: str | None) -> int:
    """Estimated tokens of a text (``frames.estimate``), 0 for none."""
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) >> 2
    from cc_analytics.frames.estimate import estimate_text_tokens
    from cc_analytics.frames.estimate import text_tokens as fast

    found = fast(text)
    return estimate_text_tokens(text) if found is None else found


def value_tokens(value: Any) -> int:
    """Estimated tokens of a JSON value (a string as text, anything else as its JSON)."""
    if value is None:
        return 0
    if isinstance(value, str):
        return text_tokens(value)
    return text_tokens(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode())


class Parts(NamedTuple):
    """What a list of Gemini API parts holds."""

    text: str | None  # the visible text (thought parts left out)
    tool_names: tuple[str, ...]
    tool_errors: int
    text_tokens: int  # of the visible text and the thoughts
    call_tokens: int  # of the function calls (name and arguments)
    result_tokens: int  # of the function responses


def read_parts(parts: Any) -> Parts:
    """The text, tool calls and estimated tokens of Gemini API ``parts`` (a list of objects;
    a string counts as one text part).

    Examples:
        >>> read_parts([{"text": "hi"}, {"text": "hmm", "thought": True}, {"functionCall": {"name": "ls", "args": {}}}])[:3]
        ('hi', ('ls',), 0)
    """
    if isinstance(parts, str):
        return Parts(parts, (), 0, text_tokens(parts), 0, 0)
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list):
        return Parts(None, (), 0, 0, 0, 0)
    texts: list[str] = []
    names: list[str] = []
    errors = tokens = calls = results = 0
    for part in parts:
        if not isinstance(part, dict):
            continue
        text = part.get("text")
        if isinstance(text, str):
            tokens += text_tokens(text)
            if part.get("thought") is not True:
                texts.append(text)
        call = part.get("functionCall")
        if isinstance(call, dict):
            name = call.get("name")
            names.append(name if isinstance(name, str) else "")
            calls += value_tokens(name) + value_tokens(call.get("args"))
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            results += value_tokens(body)
            if isinstance(body, dict) and "error" in body:
                errors += 1
    return Parts("\n".join(texts) if texts else None, tuple(names), errors, tokens, calls, results)


def buckets(role: str, parts: Parts, *, extra_tool: int = 0, extra_calls: int = 0) -> tuple[int, int, int, int, int]:
    """The five estimate buckets (system, user, assistant, tool, tool calls) of one message."""
    system = parts.text_tokens if role == SYSTEM else 0
    user = parts.text_tokens if role == USER else 0
    assistant = parts.text_tokens if role == ASSISTANT else 0
    tool = parts.result_tokens + extra_tool + (parts.text_tokens if role == TOOL else 0)
    return (system, user, assistant, tool, parts.call_tokens + extra_calls)


@functools.lru_cache(maxsize=256)
def window_by_prefix(model: str | None, table: tuple[tuple[str, int], ...]) -> int | None:
    """The window of the first entry of ``table`` whose prefix starts the model's name
    (a provider prefix, ``models/`` or ``google/``, is left out), else None.

    Examples:
        >>> window_by_prefix("models/gemini-2.5-pro", (("gemini-1.5-pro", 2), ("gemini-", 1)))
        1
    """
    if not model:
        return None
    name = model.rsplit("/", 1)[-1].lower()
    return next((window for prefix, window in table if name.startswith(prefix)), None)


# ------------------------------------------------------------------ decoding a batch


@dataclass(frozen=True, slots=True)
class Decoded:
    """The frames of one batch: ``files`` (one row each), ``messages`` and ``problems``."""

    files: pl.DataFrame
    messages: pl.DataFrame
    problems: pl.DataFrame


def _schemas() -> tuple[pl.Schema, pl.Schema]:
    import polars as pl

    files = pl.Schema(
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


def decode(spec: Spec, files: Sequence[TranscriptFile], contents: Sequence[bytes] | None = None) -> Decoded:
    """Parse each file (its bytes from ``contents`` when given) into the batch's frames."""
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
            chat = spec.parse(shown, data)
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
        _messages_frame(rows, messages_schema),
        pl.DataFrame(problems, schema=S.PROBLEMS_SCHEMA),
    )


def _messages_frame(rows: list[tuple[Any, ...]], schema: pl.Schema) -> pl.DataFrame:
    """The messages frame from its rows, column by column; tool names split back into lists."""
    import polars as pl

    columns = list(zip(*rows, strict=True)) if rows else [() for _ in schema]
    frame = pl.DataFrame(
        {
            name: pl.Series(name, column, dtype=dtype)
            for (name, dtype), column in zip(schema.items(), columns, strict=True)
        }
    )
    names = pl.col(S.TOOL_NAMES)
    return frame.with_columns(
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
    last_write = (
        pl.int_range(pl.len()).over(S.SESSION_ID, S.MESSAGE_ID, order_by=[FILE, INDEX])
        == pl.len().over(S.SESSION_ID, S.MESSAGE_ID) - 1
    )
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

    return price_requests(request_rows(spec, decoded, messages).collect())


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


def summarize(
    spec: Spec, decoded: Decoded, messages: pl.LazyFrame, turns: pl.LazyFrame, requests: pl.DataFrame
) -> pl.DataFrame:
    """One row per session of a batch (``SESSIONS_SCHEMA``)."""
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
    bucket_sum = pl.sum_horizontal(*S.BUCKETS)
    per_message = (
        messages.sort(FILE, INDEX)
        .with_columns(in_context().alias("_now"))
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.TIME).min().alias(S.FIRST_TIME),
            pl.col(S.TIME).max().alias(S.LAST_TIME),
            pl.col(S.MODEL).drop_nulls().unique(maintain_order=True).alias(S.MODELS),
            pl.col(S.MODEL).drop_nulls().last().alias("_named_model"),
            pl.col(COMPACTION).sum().cast(pl.Int64).alias(S.COMPACTIONS),
            *(pl.col(bucket).sum().cast(pl.Int64) for bucket in S.BUCKETS),
            bucket_sum.filter(pl.col("_now")).sum().cast(pl.Int64).alias(S.CONTEXT_ESTIMATE),
            pl.col("_now").sum().cast(pl.Int64).alias(S.MESSAGES),
            pl.col(S.WINDOW).drop_nulls().last().alias("_named_window"),
        )
    )
    totals = (
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
    turn_counts = turns.group_by(S.SESSION_ID).agg(pl.len().cast(pl.Int64).alias(S.TURNS))
    zero = [*S.BUCKETS, S.CACHE_CREATION_TOKENS, S.INPUT_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS]
    zero += [S.REQUESTS, S.TURNS, S.COMPACTIONS, S.CONTEXT_ESTIMATE, S.MESSAGES, S.UNPRICED_REQUESTS]
    nulls = pl.lit(None, pl.Int64).repeat_by(pl.col(S.COMPACTIONS))
    summary = (
        per_file.join(per_message, on=S.SESSION_ID, how="left")
        .join(totals, on=S.SESSION_ID, how="left")
        .join(turn_counts, on=S.SESSION_ID, how="left")
        .with_columns(pl.col(zero).fill_null(0), pl.col(S.MODELS).fill_null([]))
        .with_columns(
            pl.lit(spec.format).alias(S.FORMAT),
            pl.coalesce(S.FIRST_TIME, "_start").alias(S.FIRST_TIME),
            pl.coalesce(S.LAST_TIME, "_updated").alias(S.LAST_TIME),
            pl.coalesce("_request_model", "_named_model").alias(S.LAST_MODEL),
            pl.lit(spec.provider, pl.String).alias(S.PROVIDER),
            pl.when(pl.col(S.LAST_OCCUPANCY).is_not_null()).then(pl.lit(RECORDED)).alias(S.OCCUPANCY_SOURCE),
            pl.coalesce("_request_window", "_named_window").alias(S.WINDOW),
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
    return summary.collect().cast(S.SESSIONS_SCHEMA)


def events_frame(spec: Spec, decoded: Decoded) -> pl.DataFrame:
    """The events frame of a batch (:func:`events_schema`): one row per message."""
    import polars as pl

    files = decoded.files.lazy().select(FILE, S.SOURCE_FILE, S.PROJECT)
    return (
        messages_with_session(decoded)
        .join(files, on=FILE, how="left", maintain_order="left")
        .with_columns(
            pl.lit(spec.format).alias(S.FORMAT),
            pl.sum_horizontal(*S.BUCKETS).cast(pl.Int64).alias(S.ESTIMATED_TOKENS),
        )
        .select(list(events_schema()))
        .collect()
        .cast(events_schema())
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


# ------------------------------------------------------------------ batches


def tables_batch(
    spec: Spec, files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None
) -> Tables:
    """Sessions, turns (empty unless ``turns``), problems and priced requests of one batch from
    one decode (run in a worker process); ``contents``: the files' bytes, when read elsewhere."""
    from cc_analytics.frames.tables import Tables

    decoded = decode(spec, files, contents)
    messages = messages_with_session(decoded).collect().lazy()
    requests = priced_requests(spec, decoded, messages)
    turn_frame = turn_rows(spec, decoded, messages, requests).collect()
    sessions = summarize(spec, decoded, messages, turn_frame.lazy(), requests)
    return Tables(
        sessions,
        turn_frame if turns else turn_frame.clear(),
        decoded.problems,
        requests.select(list(S.REQUESTS_SCHEMA)),
    )


def requests_batch(spec: Spec, files: list[TranscriptFile]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(priced requests, problems) of one batch."""
    decoded = decode(spec, files)
    requests = priced_requests(spec, decoded, messages_with_session(decoded))
    return requests.select(list(S.REQUESTS_SCHEMA)), decoded.problems


def events_batch(spec: Spec, files: list[TranscriptFile]) -> pl.DataFrame:
    return events_frame(spec, decode(spec, files))


def problems_batch(spec: Spec, files: list[TranscriptFile]) -> pl.DataFrame:
    return decode(spec, files).problems


def sessions_batch(spec: Spec, files: list[TranscriptFile]) -> pl.DataFrame:
    return tables_batch(spec, files, turns=False).sessions


def turns_batch(spec: Spec, files: list[TranscriptFile]) -> pl.DataFrame:
    return tables_batch(spec, files).turns


# ------------------------------------------------------------------ the verbs


BATCH_BYTES = 16 * 1024 * 1024
"""Bytes of chats per batch: a batch's messages are Python objects until its frames are made, so
smaller batches than the engine's keep two workers' tree under 300 MB on a 1 GB home."""


def verbs(spec: Spec) -> dict[str, Any]:
    """The verbs module's functions for a format (``frames.plugin.VERBS``, the batch functions
    and ``context_report``), each with the front's signature.

    Examples:
        >>> from cc_analytics.frames.plugin import BATCH_VERBS, VERBS
        >>> made = verbs(Spec("toy", "Toy", parse=lambda shown, data: Chat(), resolve=lambda source, planned=False: []))
        >>> sorted({*VERBS, *BATCH_VERBS, "context_report"}) == sorted(made)
        True
        >>> made["read_sessions"]([]).height, made["scan_requests"].__doc__
        (0, 'Lazily, the requests frame of Toy chats in ``source`` (None: the default stores).')
    """

    from cc_analytics.frames.engine import run_batches, scan_batches

    made: dict[str, Any] = {}

    def lazy(
        work: Callable[..., Any],
        schema: pl.Schema,
        table: str,
        *,
        pick: Callable[[Any], pl.DataFrame] | None = None,
    ) -> None:
        def scan(
            source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
        ) -> pl.LazyFrame:
            return scan_batches(
                partial(work, spec),
                spec.resolve(source),
                schema,
                f"{spec.format}_{table}",
                workers=workers,
                on_progress=on_progress,
                batch_bytes=BATCH_BYTES,
                pick=pick,
            )

        def read(
            source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
        ) -> pl.DataFrame:
            frame = scan(source, workers=workers, on_progress=on_progress).collect()
            return frame.sort(S.SESSION_ID, maintain_order=True) if table == "sessions" else frame

        scan.__doc__ = f"Lazily, the {table} frame of {spec.label} chats in ``source`` (None: the default stores)."
        read.__doc__ = f"Eager ``scan_{table}``."
        scan.__name__, read.__name__ = f"scan_{table}", f"read_{table}"
        made[scan.__name__], made[read.__name__] = scan, read

    lazy(events_batch, events_schema(), "events")
    lazy(turns_batch, S.TURNS_SCHEMA, "turns")
    lazy(sessions_batch, S.SESSIONS_SCHEMA, "sessions")
    lazy(problems_batch, S.PROBLEMS_SCHEMA, "problems")
    lazy(requests_batch, S.REQUESTS_SCHEMA, "requests", pick=itemgetter(0))  # priced; the problems left out

    def iter_requests(
        source: Source = None, *, workers: int | None = 1, on_progress: Progress | None = None
    ) -> Iterator[tuple[pl.DataFrame, pl.DataFrame]]:
        """(priced requests, problems) of ``source`` batch by batch: what ``usage`` reads."""
        yield from run_batches(
            partial(requests_batch, spec),
            spec.resolve(source),
            workers=workers,
            on_progress=on_progress,
            batch_bytes=BATCH_BYTES,
        )

    def iter_tables(
        source: Source = None, *, turns: bool = True, workers: int | None = 1, on_progress: Progress | None = None
    ) -> Iterator[Tables]:
        """Sessions, turns (empty unless ``turns``), problems and requests batch by batch, each
        batch decoded once."""
        work = partial(tables_batch, spec, turns=turns)
        yield from run_batches(
            work, spec.resolve(source), workers=workers, on_progress=on_progress, batch_bytes=BATCH_BYTES
        )

    def batch(files: list[TranscriptFile], *, turns: bool = True, contents: Sequence[bytes] | None = None) -> Tables:
        """The tables of one batch (bytes in: what the archive runs)."""
        return tables_batch(spec, files, turns=turns, contents=contents)

    report = partial(context_report, spec)
    report.__doc__ = f"What ``cc-analytics context`` prints for a {spec.label} session (:func:`context_report`)."
    made.update(iter_requests=iter_requests, iter_tables=iter_tables, tables_batch=batch, context_report=report)
    return made


# ------------------------------------------------------------------ the context report


def context_report(
    spec: Spec,
    session_id: str,
    files: Sequence[TranscriptFile],
    *,
    contents: Sequence[bytes] | None = None,
    model: str | None = None,
    provider: str | None = None,
) -> dict[str, Any] | None:
    """The ``context`` report of one session: the recorded occupancy (the last request's
    prompt) against the window (recorded, else the model's, else ``spec.default_window``, the
    agent's own default: ``windowAssumed``), with the estimate's breakdown of the messages in
    the context now. None when the files hold no message."""
    import polars as pl

    from cc_analytics.frames.context_report import BREAKDOWN_KEYS
    from cc_analytics.frames.context_report import context_report as build_report

    if not files:
        return None
    batch = tables_batch(spec, list(files), contents=contents)
    sessions = batch.sessions.filter(pl.col(S.SESSION_ID) == session_id)
    if sessions.is_empty():
        return None
    row = sessions.row(0, named=True)
    shown_model = model or row[S.LAST_MODEL]
    known = (spec.window_of(model) if model else None) or row[S.WINDOW] or spec.window_of(shown_model)
    window = known or spec.default_window  # a window neither recorded nor known: the agent's default, assumed
    now = (
        messages_with_session(decode(spec, list(files), contents))
        .filter(pl.col(S.SESSION_ID) == session_id)
        .filter(in_context())
        .collect()
    )
    breakdown = dict(zip(BREAKDOWN_KEYS, (int(now[bucket].sum()) for bucket in S.BUCKETS), strict=True))
    roles = dict(now.group_by(S.ROLE).len().iter_rows())
    counts = {key: int(roles.get(key, 0)) for key in (SYSTEM, USER, ASSISTANT, TOOL)}
    recorded = {
        "windowAssumed": not known,
        "recordedTokens": row[S.LAST_OCCUPANCY],
        "estimatedTokens": row[S.CONTEXT_ESTIMATE],
        "requests": row[S.REQUESTS],
        "costUsd": row[S.COST_USD],
    }
    return build_report(
        session_id,
        model=shown_model,
        provider=provider or row[S.PROVIDER] or "",
        window=int(window),
        breakdown=breakdown,
        counts=counts,
        message_count=int(row[S.MESSAGES] or 0),
        recorded=recorded,
        total=row[S.LAST_OCCUPANCY],
    )


# ------------------------------------------------------------------ stores (standard library only)

CHATS = "chats"
MAIN = "main"  # the layout of every chat (no subagent files)


@dataclass(frozen=True, slots=True)
class Store:
    """Where an agent of the family keeps its chats: ``<home>/<folder>/<project>/chats/``, and
    which session each file holds (each format's store module makes one; standard library only:
    the plugin plans files with it).

    Examples:
        >>> store = Store(lambda: Path("/h/.toy"), "tmp", ("*.jsonl",), lambda path, head: path.stem)
        >>> store.default_stores()
        [PosixPath('/h/.toy/tmp')]
        >>> chat = store.classify(Path("/h/.toy/tmp/p1/chats/a.jsonl"), size=3, head=b"")
        >>> chat.session_id, chat.layout, chat.project_dir
        ('a', 'main', 'p1')
        >>> store.resolve([])
        []
    """

    home: Callable[[], Path]  # the agent's home folder, from its environment
    folder: str  # the store in the home folder (its projects' folders are in it)
    patterns: tuple[str, ...]  # the names of chat files in a ``chats`` folder
    session_id: Callable[[Path, bytes], str]  # (path, first bytes) -> the file's session id
    home_name: str | None = None  # a folder stands for its store when so named (None: any folder)

    def default_stores(self) -> list[Path]:
        """The folder the agent keeps its projects' chats in, existing or not."""
        return [self.home() / self.folder]

    def store_paths(self, stores: list[Path]) -> list[Path]:
        """The chats under existing stores (a home folder stands for its store)."""
        from cc_analytics.frames.sources import name_filter

        roots = [
            store / self.folder if (store / self.folder).is_dir() and self.home_name in (None, store.name) else store
            for store in stores
        ]
        return chat_files(roots, name_filter(self.patterns))

    def classify(self, path: Path, *, size: int, head: bytes) -> TranscriptFile:
        """A chat as the loaders see it, from its path, size and first bytes."""
        from cc_analytics.frames.sources import TranscriptFile as File
        from cc_analytics.frames.sources import shown

        return File(path, shown(self.session_id(path, head)), None, MAIN, shown(project_dir_of(path)), size)

    def transcript_file(self, path: Path) -> TranscriptFile:
        return self.classify(path, size=file_size(path), head=head_of(path))

    def resolve(self, source: Source = None, *, planned: bool = False) -> list[TranscriptFile]:
        """The chats of a file, a folder (searched recursively), a glob, TranscriptFiles or a list
        of these, one session each; None: the default stores."""
        return resolve_files(
            source,
            planned=planned,
            default_paths=lambda: self.store_paths(self.default_stores()),
            classify=self.transcript_file,
        )


def header_session_id(head: bytes, search: re.Pattern[bytes] | None = None) -> str | None:
    """The ``sessionId`` of a file's first line (when that line has none, the string ``search``
    finds first in ``head``, its group 1), if it is a safe session id; else None.

    Examples:
        >>> header_session_id(b'{"sessionId": "s1"}\\n{}'), header_session_id(b'{"sessionId": "../x"}')
        ('s1', None)
        >>> import re
        >>> header_session_id(b'{\\n "sessionId": "s2",', re.compile(rb'"sessionId"\\s*:\\s*"([^"]*)"'))
        's2'
    """
    from cc_analytics.frames.plugin import is_safe_id

    end = head.find(b"\n")
    try:
        value = json.loads(head if end < 0 else head[:end])
    except ValueError:
        value = None
    found = value.get("sessionId") if isinstance(value, dict) else None
    if not isinstance(found, str) and search is not None:
        match = search.search(head)
        if match is not None:
            try:
                found = json.loads(b'"' + match.group(1) + b'"')
            except ValueError:
                found = None
    return found if isinstance(found, str) and found.strip() and is_safe_id(found) else None


def chat_files(stores: Sequence[Path], wanted: Callable[[str], bool]) -> list[Path]:
    """The files under existing ``stores`` that lie in a ``chats`` folder and whose names
    ``wanted`` takes, sorted (the agents keep other files beside their chats)."""
    from cc_analytics.frames.sources import walk

    return [
        path
        for path in walk([store for store in stores if store.is_dir()])
        if path.parent.name == CHATS and wanted(path.name)
    ]


def project_dir_of(path: Path) -> str:
    """The folder a chat's ``chats`` folder is in (a project's hash or name), else the file's folder.

    Examples:
        >>> project_dir_of(Path("/h/agent/tmp/0b7d/chats/session-a.json")), project_dir_of(Path("a/b.jsonl"))
        ('0b7d', 'a')
    """
    parent = path.parent
    return parent.parent.name if parent.name == CHATS and parent.parent.name else parent.name


def resolve_files(
    source: Source,
    *,
    planned: bool,
    default_paths: Callable[[], list[Path]],
    classify: Callable[[Path], TranscriptFile],
) -> list[TranscriptFile]:
    """The files of ``source`` (None: ``default_paths()``), each classified once (its real path
    once), in session then path order."""
    from cc_analytics.frames.sources import RealPaths, expand, source_list
    from cc_analytics.frames.sources import TranscriptFile as File

    files: list[TranscriptFile] = []
    paths: list[Path] = []
    if source is None:
        paths = default_paths()
    elif planned:
        paths = [Path(p) for p in source]  # type: ignore[arg-type, union-attr]
    else:
        for item in source_list(source):
            if isinstance(item, File):
                files.append(item)
            else:
                paths.extend(expand(item))
    real = RealPaths()
    seen = {real(f.path) for f in files}
    for path in paths:
        key = real(path)
        if key not in seen:
            seen.add(key)
            files.append(classify(path))
    return sorted(files, key=lambda f: (f.session_id, str(f.path)))


def head_of(path: Path) -> bytes:
    """A file's first bytes (``frames.sources.SNIFF_BYTES``), b"" when it cannot be read."""
    from cc_analytics.frames.sources import SNIFF_BYTES, read_transcript

    try:
        return read_transcript(path, SNIFF_BYTES)
    except OSError:
        return b""


def file_size(path: Path) -> int:
    from cc_analytics.frames.sources import file_size as size

    return size(path)
