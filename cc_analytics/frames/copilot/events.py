"""A GitHub Copilot CLI event log as rows: one per event, and the requests whose usage it records.

Imports: the standard library, ``frames.lines`` (the JSON line policy), ``frames.extension`` (the
optional C loop of the walk, ``_events.c``) and the value helpers of
``frames.chatlog.messages`` (token estimates, counts; no Polars: a worker parses here and hands
the rows on). Rules (``docs/copilot.md``):

* every line is ``{"type", "data", "id", "timestamp", "parentId"}``; a line that is not JSON,
  not an object, or deeper than the policy allows is a problem row (a torn last line: the
  agent may be writing it), and the rest of the file is read;
* ``user.message`` is a prompt (it opens a turn); ``assistant.message`` an answer (its
  ``toolRequests`` its tool calls, ``outputTokens`` its recorded output); ``tool.execution_complete``
  a tool's result (``success: false`` a tool error); ``system.message`` the system prompt;
  ``session.compaction_complete``, and a ``session.truncation`` that removed messages or tokens,
  drop earlier messages from the context (a compaction);
* the model is the answer's ``model``, else the one in force: ``session.start``'s
  ``selectedModel``, then each ``session.model_change``'s ``newModel`` (and ``session.resume``'s);
* **usage.** ``session.shutdown`` records ``modelMetrics``: per model ``usage`` (``inputTokens``
  cache reads and writes included, ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``,
  ``reasoningTokens``) and ``requests.count``, running totals of the session: a later shutdown
  (after a resume) repeats them. Each shutdown gives one request row per model whose totals
  grew: the growth since the previous shutdown, field by field and never below 0 (ccusage's
  reading), with ``input_tokens`` = input − cache reads − cache writes (not below 0). The
  answers it covers (every one before it) are not requests themselves; an answer after the
  last shutdown with usage (a session still running, or killed) is one, with its recorded
  ``outputTokens`` only (its input is not recorded);
* occupancy is the shutdown's ``currentTokens`` (recorded); the window is the ``tokenLimit``
  of the latest ``session.truncation`` (recorded), else unknown.

Examples:
    >>> parsed = parse(b'{"type":"session.start","data":{"sessionId":"s","producer":"copilot-agent","selectedModel":"gpt-5"},"id":"a","timestamp":"2026-01-01T00:00:00Z","parentId":null}\\n'
    ...     b'{"type":"assistant.message","data":{"content":"ok","outputTokens":7},"id":"b","timestamp":"2026-01-01T00:00:01Z","parentId":"a"}\\n')
    >>> [(r[MODEL_AT], r[OUTPUT_AT]) for r in parsed.requests]
    [('gpt-5', 7)]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cc_analytics.frames import extension
from cc_analytics.frames.chatlog.messages import (
    ASSISTANT,
    BAD_COUNT,
    NAMES_JOIN,
    SYSTEM,
    TOOL,
    USER,
    count,
    text_tokens,
    value_tokens,
)
from cc_analytics.frames.lines import kind_name, read_line

# Problem reasons, each written here and nowhere else.
NOT_JSON = "not JSON ({}); line skipped"
TRUNCATED = "truncated last line (the file may still be being written)"
NOT_OBJECT = "not a JSON object ({}); line skipped"
NO_DATA = "event {!r} has no data object ({}); read without it"

ROLES = {
    "user.message": USER,
    "assistant.message": ASSISTANT,
    "assistant.reasoning": ASSISTANT,
    "tool.execution_start": TOOL,
    "tool.execution_complete": TOOL,
}
COMPACTIONS = frozenset({"session.compaction_complete"})
TRUNCATED_KEYS = ("messagesRemovedDuringTruncation", "tokensRemovedDuringTruncation", "droppedTokens")
SHUTDOWN = "session.shutdown"
REQUEST_TYPES = frozenset(
    {"session.start", "session.model_change", "session.resume", "session.truncation", "assistant.message", SHUTDOWN}
)
"""The events a request's figures come from (its usage, model, occupancy and window)."""
USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")

# The optional C loop of the full walk (``_events.c``, see ``frames.extension``): None when it
# was not built or the environment asks for pure Python; :func:`parse` then reads every line in
# Python, with the same rows.
NATIVE = "cc_analytics.frames.copilot._events"
_EXTENSION = extension.load(NATIVE)
SCAN_LINES: Any = None if _EXTENSION is None else _EXTENSION.scan_lines
TALLY_LINES: Any = None if _EXTENSION is None else getattr(_EXTENSION, "tally_lines", None)
LAID_OUT: Any = None if _EXTENSION is None else _EXTENSION.laid_out

# Places in a request row (:attr:`Parsed.requests`).
(
    INDEX_AT,
    MESSAGE_AT,
    REQUEST_AT,
    TIME_AT,
    MODEL_AT,
    INPUT_AT,
    CACHE_WRITE_AT,
    CACHE_READ_AT,
    OUTPUT_AT,
    REASONING_AT,
    OCCUPANCY_AT,
    WINDOW_AT,
) = range(12)
# The columns of an event row (:attr:`Parsed.events`), and the one set after the row is made.
EVENT_WIDTH = 25
USED_AT = EVENT_WIDTH - 1
# Places in an event row that a tally reads (the order of ``_Walk.row``'s).
_ROLE_COLUMN, _STAMP_COLUMN, _MODEL_COLUMN, _TOOLS_COLUMN, _COMPACTION_COLUMN, _BUCKETS_COLUMN = 4, 5, 6, 8, 18, 19

# Places in a file's tally (:attr:`Parsed.tally`, ``parse(..., tally=True)``): what a session's
# summary takes of its events, kept as the walk goes instead of a row per event. ``ROWS``: the
# events so far (the next one's index); ``FIRST_STAMP``/``LAST_STAMP``: the least and greatest
# timestamp text, when every timestamp is plain (:func:`plain_stamp`) and of one length
# (``STAMP_SIZE``; then the order of the texts is the order of the times), else ``ODD_STAMPS``
# is set and the file is read again in full; ``MODELS``: the models the events name, in order,
# each once, ``LAST_MODEL`` the last one named; ``COMPACTIONS``; the estimate ``BUCKETS``
# (5 places); ``CONTEXT`` and ``MESSAGES``: the estimate and the count of the events from the
# last compaction on (the context at the end); ``PROMPTS``; ``FIRST_PROMPT`` and
# ``FIRST_TOOL``: the index of the first prompt and of the first event that calls a tool (-1:
# none). The C loop (``tally_lines``) keeps the same places.
(
    ROWS,
    FIRST_STAMP,
    LAST_STAMP,
    STAMP_SIZE,
    ODD_STAMPS,
    MODELS,
    LAST_MODEL,
    COMPACTIONS_AT,
    BUCKETS_AT,
) = range(9)
CONTEXT_AT = BUCKETS_AT + 5
MESSAGES_AT, PROMPTS_AT, FIRST_PROMPT, FIRST_TOOL = range(CONTEXT_AT + 1, CONTEXT_AT + 5)
TALLY_WIDTH = FIRST_TOOL + 1
_PLAIN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z")


def new_tally() -> list[Any]:
    """A tally of no event (:data:`TALLY_WIDTH` places)."""
    tally: list[Any] = [0] * TALLY_WIDTH
    tally[FIRST_STAMP] = tally[LAST_STAMP] = tally[LAST_MODEL] = None
    tally[ODD_STAMPS] = False
    tally[MODELS] = []
    tally[FIRST_PROMPT] = tally[FIRST_TOOL] = -1
    return tally


def plain_stamp(stamp: str) -> bool:
    """Whether a timestamp is written ``YYYY-MM-DDTHH:MM:SS[.f]Z`` (1 to 9 digits of fraction):
    of such texts of one length, the order of the texts is the order of the times.

    Examples:
        >>> plain_stamp("2026-01-01T00:00:00.000Z"), plain_stamp("2026-01-01T00:00:00+00:00")
        (True, False)
    """
    return _PLAIN.fullmatch(stamp) is not None


def tally_of_rows(parsed: Parsed) -> list[Any]:
    """The tally of a full parse's event rows: what ``parse(..., tally=True)`` keeps instead of them.

    Examples:
        >>> line = b'{"type":"session.compaction_complete","data":{},"id":"c","timestamp":"2026-01-01T00:00:00Z"}\\n'
        >>> tally_of_rows(parse(line))[COMPACTIONS_AT] == parse(line, tally=True).tally[COMPACTIONS_AT] == 1
        True
    """
    tally = new_tally()
    columns = parsed.events
    for row in zip(*columns, strict=True):
        buckets = row[_BUCKETS_COLUMN : _BUCKETS_COLUMN + 5]
        tools = row[_TOOLS_COLUMN] is not None
        _count_event(
            tally, row[_STAMP_COLUMN], row[_ROLE_COLUMN], row[_MODEL_COLUMN], tools, row[_COMPACTION_COLUMN], buckets
        )
    return tally


def _count_event(
    tally: list[Any],
    stamp: str | None,
    role: str,
    model: str | None,
    tools: bool,
    compaction: bool,
    buckets: tuple[int, int, int, int, int],
) -> None:
    """Add one event to a file's tally (the C loop's ``count_event``)."""
    index = tally[ROWS]
    tally[ROWS] = index + 1
    if stamp is not None and not tally[ODD_STAMPS]:
        if plain_stamp(stamp) and tally[STAMP_SIZE] in (0, len(stamp)):
            tally[STAMP_SIZE] = len(stamp)
            if tally[FIRST_STAMP] is None or stamp < tally[FIRST_STAMP]:
                tally[FIRST_STAMP] = stamp
            if tally[LAST_STAMP] is None or stamp > tally[LAST_STAMP]:
                tally[LAST_STAMP] = stamp
        else:
            tally[ODD_STAMPS] = True
    if model is not None:
        tally[LAST_MODEL] = model
        if model not in tally[MODELS]:
            tally[MODELS].append(model)
    total = 0
    for place, value in enumerate(buckets):
        tally[BUCKETS_AT + place] += value
        total += value
    if compaction:
        tally[COMPACTIONS_AT] += 1
        tally[CONTEXT_AT], tally[MESSAGES_AT] = total, 1
    else:
        tally[CONTEXT_AT] += total
        tally[MESSAGES_AT] += 1
    if role == USER:
        tally[PROMPTS_AT] += 1
        if tally[FIRST_PROMPT] < 0:
            tally[FIRST_PROMPT] = index
    if tools and tally[FIRST_TOOL] < 0:
        tally[FIRST_TOOL] = index


@dataclass(slots=True)
class Parsed:
    """One file's events (rows of ``verbs._events_schema`` without the file, column by column:
    the frame is made of the columns without turning rows over), requests and problems."""

    session_id: str | None = None
    project: str | None = None
    start: str | None = None
    events: list[list[Any]] = field(default_factory=lambda: [[] for _ in range(EVENT_WIDTH)])
    requests: list[tuple[Any, ...]] = field(default_factory=list)
    problems: list[tuple[int | None, str]] = field(default_factory=list)
    lines: int = 0
    tally: list[Any] | None = None  # ``parse(..., tally=True)``: the events' tally, and no event rows
    window: int | None = None  # the window the walk ended with (the last one an event recorded)

    def turns(self) -> int:
        """The turns of a tallied file: one a prompt, and turn 0 when an event before the first
        prompt is a request or calls a tool (``verbs.turn_events``)."""
        assert self.tally is not None
        first = self.tally[FIRST_PROMPT]
        indexes = [self.tally[FIRST_TOOL], *(request[INDEX_AT] for request in self.requests)]
        early = any(index >= 0 and (first < 0 or index < first) for index in indexes)
        return self.tally[PROMPTS_AT] + int(early)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _counts(values: Any, where: str, problems: list[str]) -> tuple[int, ...] | None:
    """The usage counts of ``values`` (None when it is not an object); a bad count is 0 and named."""
    if not isinstance(values, Mapping):
        return None
    out = []
    for key in USAGE_KEYS:
        value = values.get(key)
        number = count(value)
        if number is None and value is not None:
            problems.append(BAD_COUNT.format(f"{where}.{key}", value))
        out.append(number or 0)
    return tuple(out)


def _requests_count(metric: Mapping[str, Any]) -> int:
    requests = metric.get("requests")
    if isinstance(requests, Mapping):
        requests = requests.get("count")
    return count(requests) or 0


class _Walk:
    """The state of one file's walk: the model in force, the window, the last totals per model."""

    def __init__(self, parsed: Parsed, *, lean: bool = False) -> None:
        self.parsed = parsed
        self.lean = lean  # requests only: no estimates, no tool names
        self.tally = parsed.tally  # a tally instead of event rows
        self.rows = not lean and self.tally is None  # event rows are kept
        self.model: str | None = None
        self.window: int | None = None
        self.totals: dict[str, tuple[int, ...]] = {}
        self.pending: list[tuple[int, tuple[Any, ...]]] = []  # uncovered answers: (event row, request)
        self.made = 0  # the rows a lean walk made (it keeps none: only their place, id and time)

    def row(
        self,
        line: int,
        value: Mapping[str, Any],
        kind: str | None,
        role: str,
        *,
        model: str | None = None,
        text: str | None = None,
        tools: tuple[str, ...] = (),
        errors: int = 0,
        usage: tuple[int, ...] = (0, 0, 0, 0, 0),
        requests: int = 0,
        occupancy: int | None = None,
        compaction: bool = False,
        buckets: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0),
        suffix: str = "",
    ) -> list[Any]:
        identifier = _text(value.get("id"))
        if self.tally is not None:  # the tally: what the row would add to the session's summary
            index = self.tally[ROWS]
            stamp = _text(value.get("timestamp"))
            _count_event(self.tally, stamp, role, model, bool(tools), compaction, buckets)
            return [line, index, None if identifier is None else identifier + suffix, kind, role, stamp]
        if self.lean:  # requests only: what a request takes of its row (place, id, time), no columns
            self.made += 1
            return [
                line,
                self.made - 1,
                None if identifier is None else identifier + suffix,
                kind,
                role,
                _text(value.get("timestamp")),
            ]
        columns = self.parsed.events
        built = [
            line,
            len(columns[0]),
            None if identifier is None else identifier + suffix,
            kind,
            role,
            _text(value.get("timestamp")),
            model,
            text,
            NAMES_JOIN.join(tools) if tools else None,
            errors,
            *usage,
            requests,
            occupancy,
            self.window,
            compaction,
            *buckets,
            False,
        ]
        for column, item in zip(columns, built, strict=True):
            column.append(item)
        return built

    def check(self, line: int, value: dict[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
        """The event's type and data; an event without a data object is named."""
        kind = value.get("type")
        kind = kind if isinstance(kind, str) else None
        data = value.get("data")
        if not isinstance(data, Mapping):
            if data is not None or kind is None:
                self.parsed.problems.append((line, NO_DATA.format(kind, kind_name(data))))
            data = {}
        return kind, data

    def event(self, line: int, value: dict[str, Any]) -> None:
        kind, data = self.check(line, value)
        if kind == "session.start":
            self.parsed.session_id = self.parsed.session_id or _text(data.get("sessionId"))
            self.parsed.start = self.parsed.start or _text(data.get("startTime"))
            self._context(data)
            self.model = _text(data.get("selectedModel")) or self.model
            self.row(line, value, kind, SYSTEM, model=self.model)
        elif kind in ("session.model_change", "session.resume"):
            self._context(data)
            self.model = _text(data.get("newModel")) or _text(data.get("selectedModel")) or self.model
            self.row(line, value, kind, SYSTEM, model=self.model if kind == "session.model_change" else None)
        elif kind == "user.message":
            content = _text(data.get("content"))
            self.row(line, value, kind, USER, text=content, buckets=(0, text_tokens(content), 0, 0, 0))
        elif kind == "system.message":
            content = data.get("content")
            self.row(line, value, kind, SYSTEM, buckets=(value_tokens(content), 0, 0, 0, 0))
        elif kind == "assistant.message":
            self._answer(line, value, data)
        elif kind == "assistant.reasoning":
            self.row(line, value, kind, ASSISTANT, buckets=(0, 0, value_tokens(data.get("content")), 0, 0))
        elif kind == "tool.execution_complete":
            result = data.get("result")
            content = result.get("content") if isinstance(result, Mapping) else result
            failed = data.get("success") is False
            self.row(line, value, kind, TOOL, errors=int(failed), buckets=(0, 0, 0, value_tokens(content), 0))
        elif kind == "session.truncation":
            limit = count(data.get("tokenLimit"))
            self.window = limit or self.window
            dropped = any(count(data.get(key)) for key in TRUNCATED_KEYS)
            self.row(line, value, kind, SYSTEM, compaction=dropped)
        elif kind == SHUTDOWN:
            self._shutdown(line, value, data)
        else:
            role = ROLES.get(kind, SYSTEM) if kind is not None else SYSTEM
            self.row(line, value, kind, role, compaction=kind in COMPACTIONS)

    def _context(self, data: Mapping[str, Any]) -> None:
        context = data.get("context")
        if isinstance(context, Mapping) and isinstance(context.get("cwd"), str):
            self.parsed.project = context["cwd"]

    def _answer(self, line: int, value: Mapping[str, Any], data: Mapping[str, Any]) -> None:
        model = _text(data.get("model")) or self.model
        content = data.get("content")
        names: list[str] = []
        calls = 0
        tool_requests = None if self.lean else data.get("toolRequests")
        if isinstance(tool_requests, list):
            for call in tool_requests:
                if isinstance(call, Mapping):
                    name = call.get("name")
                    names.append(name if isinstance(name, str) else "")
                    calls += value_tokens(name) + value_tokens(call.get("arguments"))
        said = 0 if self.lean else value_tokens(content) + value_tokens(data.get("reasoningText"))
        output = data.get("outputTokens")
        tokens = count(output)
        if tokens is None and output is not None:
            self.parsed.problems.append((line, BAD_COUNT.format("outputTokens", output)))
        built = self.row(
            line,
            value,
            "assistant.message",
            ASSISTANT,
            model=model,
            text=_text(content),
            tools=tuple(names),
            usage=(0, tokens or 0, 0, 0, 0),
            buckets=(0, 0, said, 0, calls),
        )
        if tokens:
            identifier = _text(data.get("messageId")) or built[2]
            request_id = _text(data.get("requestId")) or _text(data.get("apiCallId"))
            request = (built[1], identifier, request_id, built[5], model, 0, 0, 0, tokens, 0, None, self.window)
            self.pending.append((built[1], request))

    def _shutdown(self, line: int, value: Mapping[str, Any], data: Mapping[str, Any]) -> None:
        metrics = data.get("modelMetrics")
        occupancy = count(data.get("currentTokens"))
        grown: list[tuple[str, tuple[int, ...], int]] = []
        covered = False
        if isinstance(metrics, Mapping):
            for model, metric in metrics.items():
                if not isinstance(metric, Mapping):
                    continue
                bad: list[str] = []
                usage = _counts(metric.get("usage"), f"modelMetrics.{model}.usage", bad)
                self.parsed.problems.extend((line, reason) for reason in bad)
                if usage is None:
                    continue
                covered = True
                totals = (*usage, _requests_count(metric))
                before = self.totals.get(model, (0,) * len(totals))
                self.totals[model] = totals
                delta = tuple(max(0, now - then) for now, then in zip(totals, before, strict=True))
                if any(delta):
                    grown.append((model, delta, delta[-1]))
        if not grown:
            self.row(line, value, SHUTDOWN, SYSTEM, occupancy=occupancy)
        for place, (model, delta, requests) in enumerate(grown):
            entered, output, read, written, reasoning = delta[:5]
            built = self.row(
                line,
                value,
                SHUTDOWN,
                SYSTEM,
                model=model,
                usage=(entered, output, read, written, reasoning),
                requests=requests,
                occupancy=occupancy,
                suffix="" if place == 0 else f"/{model}",
            )
            if self.rows:
                self.parsed.events[USED_AT][built[1]] = True
            self.parsed.requests.append(
                (
                    built[1],
                    built[2],
                    None,
                    built[5],
                    model,
                    max(0, entered - read - written),
                    written,
                    read,
                    output,
                    min(reasoning, output),
                    occupancy,
                    self.window,
                )
            )
        if covered:
            self.pending.clear()

    def finish(self) -> None:
        """The answers no shutdown covered are requests (their recorded output only)."""
        for index, request in self.pending:
            if self.rows:
                self.parsed.events[USED_AT][index] = True
            self.parsed.requests.append(request)
        self.pending.clear()
        self.parsed.requests.sort(key=lambda request: request[INDEX_AT])
        self.parsed.window = self.window


_LAYOUT = b'{"type":"'
_DATA = b'","data":{'
_REQUEST_TYPES = frozenset(kind.encode() for kind in REQUEST_TYPES)


def _other_event(line: bytes) -> bool:
    """Whether a line is, by its layout, an event of a type no request is made of."""
    if not line.startswith(_LAYOUT) or not line.endswith(b"}"):
        return False
    end = line.find(b'"', len(_LAYOUT))
    if end < 0:
        return False
    kind = line[len(_LAYOUT) : end]
    return b"\\" not in kind and kind not in _REQUEST_TYPES and line.startswith(_DATA, end)


_ANSWER = b"assistant.message"
_SHUTDOWN = SHUTDOWN.encode()


def parse(data: bytes, *, lean: bool = False, tally: bool = False, native: bool = True) -> Parsed:
    """The :class:`Parsed` rows of one event log's bytes.

    ``lean``: only what the requests are made of is read (:data:`REQUEST_TYPES`): the same
    requests. A line of another event written in Copilot CLI's layout
    (``{"type":"…","data":{…}}``, not a torn last line) is not parsed at all, nor, in a file
    whose every line has that layout, an answer before the last shutdown that recorded usage
    (its output is in that shutdown's totals); any other line is parsed and checked as usual.
    So the problems are the same but for a line of that layout broken inside, or a covered
    answer's bad ``outputTokens``, which only the full read names.

    ``tally``: every line is read as in full, and instead of event rows the file's
    :attr:`Parsed.tally` (what a session's summary takes of them): the same requests and
    problems.

    ``native``: the full read takes the C loop (:data:`SCAN_LINES`) when it is built, the tally
    its own (:data:`TALLY_LINES`), and the lean read finds the lines it reads in C
    (:data:`LAID_OUT`); the same rows either way.

    Examples:
        >>> line = '{"type":"%s","data":%s,"id":"e","timestamp":"2026-01-01T00:00:0%dZ","parentId":null}\\n'
        >>> lines = line % ("user.message", '{"content":"hi there"}', 1)
        >>> lines += line % ("assistant.message", '{"content":"ok","model":"m","outputTokens":3}', 2)
        >>> counted = parse(lines.encode(), tally=True)
        >>> counted.tally[ROWS], counted.tally[LAST_STAMP], counted.tally[MODELS], counted.turns()
        (2, '2026-01-01T00:00:02Z', ['m'], 1)
    """
    if lean:
        found = LAID_OUT(data) if native and LAID_OUT is not None else _laid_out(data)
        if found is not None:
            return _parse_laid_out(data, *found, native=native)
    parsed = Parsed(tally=new_tally() if tally and not lean else None)
    walk = _Walk(parsed, lean=lean)
    torn = 0 if data.endswith(b"\n") else data.count(b"\n") + 1
    if not lean and native:
        loop = SCAN_LINES if parsed.tally is None else TALLY_LINES
        if loop is not None:
            _walk_native(walk, data, torn, loop)
            return parsed
    for number, line in enumerate(data.split(b"\n"), start=1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        if lean and number != torn and _other_event(line):
            parsed.lines += 1
            continue
        _line(walk, number, line, torn)
    walk.finish()
    return parsed


def _line(walk: _Walk, number: int, line: bytes, torn: int) -> None:
    """One line of the walk (not blank, its trailing CRs left out)."""
    parsed = walk.parsed
    try:
        value = read_line(line)
    except ValueError as error:
        parsed.problems.append((number, TRUNCATED if number == torn else NOT_JSON.format(error)))
        return
    if not isinstance(value, dict):
        parsed.problems.append((number, NOT_OBJECT.format(kind_name(value))))
        return
    parsed.lines += 1
    kind = value.get("type")
    if walk.lean and not (isinstance(kind, str) and kind in REQUEST_TYPES):
        walk.check(number, value)
        return
    walk.event(number, value)


def _walk_native(walk: _Walk, data: bytes, torn: int, loop: Any) -> None:
    """The full walk with a C loop (:data:`SCAN_LINES`, or :data:`TALLY_LINES` for a tally)
    taking the common lines: the lines it declines (the session events, anything unusual) are
    read here, one at a time, as the Python walk reads every line."""
    parsed = walk.parsed
    kept = parsed.events if parsed.tally is None else parsed.tally
    state = [0]
    start = number = 0
    while True:
        found = loop(data, start, number, torn, kept, walk.pending, walk.model, walk.window, state)
        if found is None:
            break
        begin, end, number = found
        _line(walk, number, data[begin:end].rstrip(b"\r"), torn)
        start = end + 1
    parsed.lines += state[0]
    walk.finish()


def _laid_out(data: bytes) -> tuple[int, list[tuple[int, bytes, int, int]]] | None:
    """When every line is in Copilot CLI's layout and the file ends with a newline: its number
    of lines and, for each line of a type a request is made of (:data:`REQUEST_TYPES`), its
    (place from 0, type, start, end) in ``data``; else None. (:data:`LAID_OUT` in C.)"""
    lines = data.split(b"\n")
    if lines[-1]:
        return None
    wanted: list[tuple[int, bytes, int, int]] = []
    start = len(_LAYOUT)
    offset = 0
    for place, line in enumerate(lines[:-1]):
        end = line.find(b'"', start)
        if not (line.startswith(_LAYOUT) and line.endswith(b"}") and line.startswith(_DATA, end)):
            return None
        kind = line[start:end]
        if b"\\" in kind:
            return None
        if kind in _REQUEST_TYPES:
            wanted.append((place, kind, offset, offset + len(line)))
        offset += len(line) + 1
    return len(lines) - 1, wanted


def _parse_laid_out(
    data: bytes, count: int, found: list[tuple[int, bytes, int, int]], *, native: bool = True
) -> Parsed:
    """:func:`parse` ``lean`` of a file whose every line is in Copilot CLI's layout (``count``
    lines; ``found``: the lines of the types a request is made of, :func:`_laid_out`). An
    answer after the last shutdown is read by the C loop when it is built (``native``): its
    request pends as the Python walk's would; a line the loop declines is read here."""
    parsed = Parsed(lines=count)
    walk = _Walk(parsed, lean=True)

    def value_at(start: int, end: int) -> Any:
        try:
            return read_line(data[start:end])
        except ValueError as error:
            return error

    covered = -1  # the answers before the last shutdown with usage are in its totals
    read: dict[int, Any] = {}  # the shutdowns read while looking for it
    for place, kind, start, end in reversed(found):
        if kind == _SHUTDOWN:
            read[place] = value_at(start, end)
            if _has_usage(read[place]):
                covered = place
                break
    loop = TALLY_LINES if native else None
    counted, lines, view = new_tally(), [0], memoryview(data)  # the loop's tally: only its index is read
    for place, kind, start, end in found:
        if kind == _ANSWER:
            if place < covered:
                continue
            if loop is not None:
                counted[ROWS] = walk.made
                if loop(view[start:end], 0, place, 0, counted, walk.pending, walk.model, walk.window, lines) is None:
                    walk.made = counted[ROWS]  # taken: its row's place counted, its request pending
                    continue
        value = read[place] if place in read else value_at(start, end)
        if isinstance(value, ValueError):
            parsed.problems.append((place + 1, NOT_JSON.format(value)))
        elif isinstance(value, dict):
            walk.event(place + 1, value)
        else:
            parsed.problems.append((place + 1, NOT_OBJECT.format(kind_name(value))))
    walk.finish()
    return parsed


def _has_usage(value: Any) -> bool:
    """Whether a parsed shutdown records some model's usage (it covers the answers before it)."""
    data = value.get("data") if isinstance(value, dict) else None
    metrics = data.get("modelMetrics") if isinstance(data, Mapping) else None
    return isinstance(metrics, Mapping) and any(
        isinstance(metric, Mapping) and isinstance(metric.get("usage"), Mapping) for metric in metrics.values()
    )
