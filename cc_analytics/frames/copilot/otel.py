"""GitHub Copilot CLI's OpenTelemetry file export as rows: one request per model call it records.

Imports: the standard library, ``frames.lines`` (the JSON line policy) and the row layout of
``frames.copilot.events`` (no Polars: a worker parses here and hands the rows on).

With ``COPILOT_OTEL_FILE_EXPORTER_PATH`` set (or the file exporter chosen otherwise), Copilot
CLI appends its telemetry to a JSON Lines file, one signal a line: ``{"type": "span", ...}``
with the span's ``attributes`` (OpenTelemetry's GenAI conventions), its ``traceId`` and its
``startTime``/``endTime`` as ``[seconds, nanoseconds]``; ``{"type": "log", ...}`` for events;
metrics. One file holds the spans of many sessions. What we read (``docs/copilot.md``, as
ccusage 20.0.24 reads the same files, found by experiment with it):

* a **request** is a span (``type`` "span" or none) with token usage. A model call's span
  (``gen_ai.operation.name`` ``chat``, or a name starting with ``chat``) always is; an agent's
  (``invoke_agent``, by operation or name) sums its calls, so it is one only in a trace without
  a model call's span; a span of another operation (a tool's) only in a file without either.
  In a file without such spans, a ``log`` record whose ``event.name`` is
  ``gen_ai.client.inference.operation.details`` is one instead;
* its usage: ``gen_ai.usage.input_tokens`` (cache reads included: ``input_tokens`` = input −
  cache reads, not below 0), ``gen_ai.usage.output_tokens``, cache reads
  (``gen_ai.usage.cache_read.input_tokens``), cache writes
  (``gen_ai.usage.cache_write.input_tokens``, else ``…cache_creation.input_tokens``) and
  reasoning (``gen_ai.usage.reasoning.output_tokens``, else ``…reasoning_tokens``; inside the
  output); a count may be written as a number or as a string of digits; a span whose counts
  are all 0 is no request;
* its session: the first of ``session.id``, ``copilot_chat.chat_session_id``,
  ``copilot_chat.session_id``, ``gen_ai.conversation.id``, ``github.copilot.interaction_id``,
  ``gen_ai.response.id``, then the span's ``traceId``, else ``unknown-session`` (as ccusage names it);
* its model: ``gen_ai.response.model``, else ``gen_ai.request.model``, without the
  ``-1m-internal`` suffix of Copilot's long-context variants (priced as their model);
* its time: ``endTime``, else ``startTime``, else ``timestamp`` (microseconds since 1970). A
  request without one is a problem row and left out (ccusage dates it at the time of the run);
* spans are not de-duplicated (each is one call), as ccusage counts them.

Examples:
    >>> line = (b'{"type":"span","traceId":"t","name":"chat gpt-4.1","startTime":[1767261600,0],'
    ...     b'"endTime":[1767261601,500000000],"attributes":{"gen_ai.operation.name":"chat",'
    ...     b'"gen_ai.conversation.id":"c1","gen_ai.response.model":"gpt-4.1","gen_ai.usage.input_tokens":1000,'
    ...     b'"gen_ai.usage.output_tokens":50,"gen_ai.usage.cache_read.input_tokens":800}}')
    >>> [(found.session_id, found.requests[0][4:10]) for found in parse(line + b"\\n")]
    [('c1', ('gpt-4.1', 200, 0, 800, 50, 0))]
    >>> parse(line + b"\\n")[0].requests[0][3]
    '2026-01-01T10:00:01.500000Z'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from cc_analytics.frames.chatlog.messages import ASSISTANT, BAD_COUNT, Chat, count, jsonl_objects
from cc_analytics.frames.copilot.events import Parsed

SPAN, LOG = "span", "log"
KINDS = {SPAN: "otel.span", LOG: "otel.log"}
"""The ``type`` of a call's event row."""
CHAT, AGENT = "chat", "invoke_agent"
OTHER = "other"
INFERENCE_EVENT = "gen_ai.client.inference.operation.details"
SESSION_KEYS = (
    "session.id",
    "copilot_chat.chat_session_id",
    "copilot_chat.session_id",
    "gen_ai.conversation.id",
    "github.copilot.interaction_id",
    "gen_ai.response.id",
)
INPUT, OUTPUT = "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE = ("gen_ai.usage.cache_write.input_tokens", "gen_ai.usage.cache_creation.input_tokens")
REASONING = ("gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens")
MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model")
LONG_CONTEXT = "-1m-internal"
UNKNOWN_SESSION = "unknown-session"
"""The session of a call that names none (no id among :data:`SESSION_KEYS`, no ``traceId``), as ccusage names it."""
NO_TIME = "a model call's span has no time (endTime, startTime or timestamp); left out"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _count(value: Any) -> int | None:
    """A count as the export writes it: a whole number >= 0, or a string of digits."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    return count(value)


def _time(record: Mapping[str, Any]) -> str | None:
    """The record's time as RFC 3339 (UTC, microseconds): its end, else its start, else its timestamp."""
    for key in ("endTime", "startTime"):
        value = record.get(key)
        if isinstance(value, list) and len(value) == 2:
            seconds, nanos = _count(value[0]), _count(value[1])
            if seconds is not None and nanos is not None:
                return _stamp(seconds * 1_000_000 + nanos // 1000)
    micros = _count(record.get("timestamp"))
    return None if micros is None else _stamp(micros)


def _stamp(micros: int) -> str | None:
    try:
        return (EPOCH + timedelta(microseconds=micros)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except OverflowError:
        return None


def _session(record: Mapping[str, Any], attributes: Mapping[str, Any]) -> str:
    for key in SESSION_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value
    trace = record.get("traceId")
    return trace if isinstance(trace, str) and trace.strip() else UNKNOWN_SESSION


def _role(record: Mapping[str, Any], attributes: Mapping[str, Any]) -> str:
    """Whether a span is a model call's (:data:`CHAT`), an agent's (:data:`AGENT`) or another's."""
    operation, name = attributes.get("gen_ai.operation.name"), record.get("name")
    name = name if isinstance(name, str) else ""
    if operation == CHAT or name.startswith(CHAT):
        return CHAT
    if operation == AGENT or name.startswith(AGENT):
        return AGENT
    return OTHER


def _model(attributes: Mapping[str, Any]) -> str | None:
    for key in MODEL_KEYS:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.removesuffix(LONG_CONTEXT)
    return None


class _Call:
    """One model call of the file: where it is and what it records."""

    __slots__ = ("line", "session", "span_id", "response_id", "time", "model", "usage", "kind", "trace", "role")

    def __init__(
        self, line: int, record: Mapping[str, Any], attributes: Mapping[str, Any], usage: tuple[int, ...]
    ) -> None:
        self.line = line
        self.kind = LOG if record.get("type") == LOG else SPAN
        trace = record.get("traceId")
        self.trace = trace if isinstance(trace, str) else None
        self.role = _role(record, attributes)
        self.session = _session(record, attributes)
        identifier = record.get("spanId") or record.get("id")
        self.span_id = identifier if isinstance(identifier, str) else None
        response = attributes.get("gen_ai.response.id")
        self.response_id = response if isinstance(response, str) else None
        self.time = _time(record)
        self.model = _model(attributes)
        self.usage = usage  # input (cache reads included), output, cache reads, cache writes, reasoning


def _usage(line: int, attributes: Mapping[str, Any], problems: list[tuple[int | None, str]]) -> tuple[int, ...]:
    counts = []
    for key in (INPUT, OUTPUT, CACHE_READ, CACHE_WRITE, REASONING):
        name = key if isinstance(key, str) else next((k for k in key if attributes.get(k) is not None), key[0])
        value = attributes.get(name)
        number = _count(value)
        if number is None and value is not None:
            problems.append((line, BAD_COUNT.format(name, value)))
        counts.append(number or 0)
    return tuple(counts)


def parse(data: bytes, *, lean: bool = False) -> list[Parsed]:
    """The sessions of one export file, each a :class:`~cc_analytics.frames.copilot.events.Parsed`
    with its ``session_id`` (in the order their first call comes); the file's problems are the
    first one's (a file without calls gives one Parsed without a session, holding them).
    ``lean``: the requests only, no event rows (what ``usage`` reads).

    A model call's span is a request as soon as it is read (it always is one); the spans and
    records that may not be (an agent's, another operation's, the inference events) wait for
    the end of the file, and are few: an export's memory is its rows, not its records.
    """
    chat = Chat()  # the lines read and the problems
    problems = chat.problems
    out = _Rows(lean)
    chats: set[str | None] = set()  # the traces with a model call's span
    agents: list[_Call] = []
    others: list[_Call] = []
    logs: list[_Call] = []
    for number, record in jsonl_objects(data, chat):
        kind = record.get("type")
        attributes = record.get("attributes")
        if kind not in (None, SPAN, LOG) or not isinstance(attributes, Mapping):
            continue
        if kind == LOG and (chats or attributes.get("event.name") != INFERENCE_EVENT):
            continue
        usage = _usage(number, attributes, problems)
        if not any(usage[:4]):
            continue
        call = _Call(number, record, attributes, usage)
        if kind == LOG:
            logs.append(call)
        elif call.role == CHAT:
            chats.add(call.trace)
            logs.clear()  # a span records the calls: the inference events are not read
            out.add(call, problems)
        else:
            (agents if call.role == AGENT else others).append(call)
    late = [call for call in agents if call.trace not in chats]
    for call in late or ([] if chats else others) or ([] if chats or others else logs):
        out.add(call, problems)
    found = list(out.sessions.values()) or [Parsed()]
    found[0].problems.extend(problems)
    found[0].lines = chat.events
    return found


class _Rows:
    """The sessions' rows as the calls come: one string object for each model and session."""

    __slots__ = ("lean", "sessions", "strings")

    def __init__(self, lean: bool) -> None:
        self.lean = lean
        self.sessions: dict[str, Parsed] = {}
        self.strings: dict[str, str] = {}

    def add(self, call: _Call, problems: list[tuple[int | None, str]]) -> None:
        """The call's event row (unless lean) and request row; a call without a time is a problem."""
        if call.time is None:
            problems.append((call.line, NO_TIME))
            return
        session = self.strings.setdefault(call.session, call.session)
        model = None if call.model is None else self.strings.setdefault(call.model, call.model)
        parsed = self.sessions.get(session)
        if parsed is None:
            parsed = self.sessions[session] = Parsed(session_id=session, start=call.time)
        entered, output, read, written, reasoning = call.usage
        index = len(parsed.requests)
        identifier = call.span_id or call.response_id
        if not self.lean:
            row: tuple[Any, ...] = (call.line, index, identifier, KINDS[call.kind], ASSISTANT, call.time, model)
            row += (None, None, 0, entered, output, read, written, reasoning, 1, None, None, False, 0, 0, 0, 0, 0, True)
            for column, item in zip(parsed.events, row, strict=True):
                column.append(item)
        parsed.requests.append(
            (index, identifier, call.response_id, call.time, model, max(0, entered - read), written, read, output)
            + (min(reasoning, output), None, None)
        )
