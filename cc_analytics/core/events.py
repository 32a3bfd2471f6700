"""Transcript bytes → events: line splitting, strict JSON, per-type validation (spec §4).

Two policies share one walk. ``strict=True`` raises the first problem exactly as the
reference library does (its exception type and message), so behaviour can be compared.
The default, lenient policy warns (:class:`TranscriptWarning`, naming file, line and
reason) and skips or normalises the line instead; ``docs/core-differences.md`` lists
what it does with each problem.

Imports: standard library only.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

from cc_analytics.core.jsontext import MAX_DEPTH, MISSING, TOO_DEEP, LongInt, decode_line, fget
from cc_analytics.core.timestamps import check_timestamp, timestamp_error

USER, ASSISTANT, SYSTEM, ATTACHMENT, MODE, OTHER = range(6)
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U64_MAX = 2**64 - 1
CACHE_FIELDS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
SERVER_FIELDS = ("web_search_requests", "web_fetch_requests")
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
QUEUED_LABELS = {"human": "user", "peer": "peer", "channel": "channel"}
_NEG_ZERO = re.compile(rb"-0(?![0-9.eE])")


class TranscriptWarning(UserWarning):
    """A transcript line that the reference library would reject, skipped or normalised."""


class _SkipLine(Exception):
    pass


class ToolCall:
    """One ``tool_use`` block of an assistant line."""

    __slots__ = ("id", "name", "input", "lineno", "digest")

    def __init__(self, id: str, name: str, tool_input: Any, lineno: int) -> None:
        self.id = id
        self.name = name
        self.input = tool_input
        self.lineno = lineno
        self.digest: str | None = None


class ToolResult:
    """One ``tool_result`` block of a user line, with the line's ``toolUseResult`` payload."""

    __slots__ = ("tool_use_id", "content", "is_error", "payload")

    def __init__(self, tool_use_id: str, content: str, is_error: bool, payload: Any) -> None:
        self.tool_use_id = tool_use_id
        self.content = content
        self.is_error = is_error
        self.payload = payload


class Event:
    """One parsed transcript line.

    ``uuid`` is None for events without an envelope (mode and other lines). ``items`` holds
    what rendering needs: assistant text (str) and ToolCall blocks; user ToolResult blocks;
    for a queued-command attachment one ``(label, prompt)`` pair.
    """

    __slots__ = ("kind", "lineno", "uuid", "session_id", "opens", "text", "items")

    def __init__(self, kind: int, lineno: int) -> None:
        self.kind = kind
        self.lineno = lineno
        self.uuid: str | None = None
        self.session_id: str | None = None
        self.opens = False
        self.text = ""
        self.items: tuple = ()


def _problem(ctx: _Context, exc: BaseException, action: str, *, skip: bool) -> None:
    if ctx.strict:
        raise exc
    reason = f"{type(exc).__name__}: {exc}"
    warnings.warn(f"{ctx.source}:{ctx.lineno}: {reason}; {action}", TranscriptWarning, stacklevel=4)
    if skip:
        raise _SkipLine


class _Context:
    __slots__ = ("strict", "source", "lineno", "line")

    def __init__(self, strict: bool, source: str) -> None:
        self.strict = strict
        self.source = source
        self.lineno = 0
        self.line = b""


def _type_name(value: Any) -> str:
    """The Python type name the reference reports; its parser reads integers beyond 64 bits as floats."""
    if isinstance(value, dict):
        return "dict"
    if type(value) is LongInt or (type(value) is int and not I64_MIN <= value <= U64_MAX):
        return "float"
    return type(value).__name__


def _content(ctx: _Context, obj: dict) -> Any:
    message = fget(obj, "message", MISSING)
    if message is MISSING:
        _problem(ctx, KeyError("'message'"), "line skipped", skip=True)
    if not isinstance(message, dict) or "content" not in message:
        _problem(ctx, KeyError("'content'"), "line skipped", skip=True)
    return message, fget(message, "content")


def _envelope(ctx: _Context, obj: dict, event: Event) -> bool:
    """Check uuid, sessionId and timestamp; return whether the year is 0 (drop the line)."""
    uuid = fget(obj, "uuid")
    if not isinstance(uuid, str):
        _problem(ctx, KeyError("'uuid'"), "line skipped", skip=True)
    session_id = fget(obj, "sessionId")
    if not isinstance(session_id, str):
        _problem(ctx, KeyError("'sessionId'"), "line skipped", skip=True)
    event.uuid = uuid
    event.session_id = session_id
    ts = fget(obj, "timestamp")
    if not isinstance(ts, str):
        _problem(ctx, KeyError("'timestamp'"), "timestamp ignored", skip=False)
        return False
    reason, year_zero = check_timestamp(ts)
    if reason is not None:
        _problem(ctx, timestamp_error(ts, reason), "timestamp ignored", skip=False)
    return year_zero


def _tool_result(ctx: _Context, block: dict, payload: Any) -> ToolResult | None:
    if "content" not in block:
        _problem(ctx, KeyError("'content'"), "tool result read as empty", skip=False)
        content: Any = ""
    else:
        content = fget(block, "content")
    if isinstance(content, list):
        pieces = []
        for item in content:
            if isinstance(item, dict) and fget(item, "type") == "text":
                text = fget(item, "text")
                if isinstance(text, str):
                    pieces.append(text)
        content = "".join(pieces)
    elif not isinstance(content, str):
        exc = ValueError(f"unexpected result content shape: {_type_name(content)}")
        _problem(ctx, exc, "tool result read as empty", skip=False)
        content = ""
    tool_use_id = fget(block, "tool_use_id")
    if not isinstance(tool_use_id, str):
        _problem(ctx, KeyError("'tool_use_id'"), "tool result dropped", skip=False)
        return None
    return ToolResult(tool_use_id, content, bool(fget(block, "is_error")), payload)


def _user(ctx: _Context, obj: dict, event: Event) -> bool:
    _, content = _content(ctx, obj)
    results = []
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = []
        payload = fget(obj, "toolUseResult", MISSING)
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = fget(block, "type")
            if kind == "text":
                piece = fget(block, "text")
                if isinstance(piece, str):
                    texts.append(piece)
            elif kind == "tool_result":
                result = _tool_result(ctx, block, payload)
                if result is not None:
                    results.append(result)
        text = " ".join(texts)
    else:
        exc = ValueError("message content is neither a string nor a list")
        _problem(ctx, exc, "line skipped", skip=True)
    year_zero = _envelope(ctx, obj, event)
    event.text = text
    event.items = tuple(results)
    interrupted = isinstance(fget(obj, "interruptedMessageId"), str)
    event.opens = not (interrupted or fget(obj, "isMeta") or fget(obj, "isSidechain") or fget(obj, "isCompactSummary"))
    return year_zero


def _assistant_block(ctx: _Context, block: Any, items: list) -> None:
    kind = fget(block, "type") if isinstance(block, dict) else None
    if not isinstance(kind, str):
        _problem(ctx, KeyError("'type'"), "content block dropped", skip=False)
        return
    if kind == "text":
        text = fget(block, "text")
        if not isinstance(text, str):
            _problem(ctx, KeyError("'text'"), "content block dropped", skip=False)
            return
        items.append(text)
    elif kind == "thinking":
        if not isinstance(fget(block, "thinking"), str):
            _problem(ctx, KeyError("'thinking'"), "content block dropped", skip=False)
    elif kind == "tool_use":
        tool_id = fget(block, "id")
        name = fget(block, "name")
        if not isinstance(tool_id, str):
            _problem(ctx, KeyError("'id'"), "tool call dropped", skip=False)
        elif not isinstance(name, str):
            _problem(ctx, KeyError("'name'"), "tool call dropped", skip=False)
        elif "input" not in block:
            _problem(ctx, KeyError("'input'"), "tool call dropped", skip=False)
        else:
            items.append(ToolCall(tool_id, name, fget(block, "input"), ctx.lineno))
    elif kind == "fallback":
        for end in ("from", "to"):
            side = fget(block, end, MISSING)
            if side is MISSING:
                _problem(ctx, KeyError(f"'{end}'"), "content block dropped", skip=False)
                return
            if not isinstance(side, dict) or not isinstance(fget(side, "model"), str):
                _problem(ctx, KeyError("'model'"), "content block dropped", skip=False)
                return


def _usage_field(ctx: _Context, obj: dict, name: str) -> bool:
    value = fget(obj, name)
    if type(value) is int and I64_MIN <= value <= I64_MAX:
        if value != 0 or b"-0" not in ctx.line or not _NEG_ZERO.search(ctx.line):
            return True
        # a "-0" somewhere on the line: decide on the lexeme of this very field
        if not re.search(rb'"' + re.escape(name.encode()) + rb'"\s*:\s*-0(?![0-9.eE])', ctx.line):
            return True
    _problem(ctx, KeyError(f"'{name}'"), "usage ignored", skip=False)
    return False


def _usage(ctx: _Context, usage: Any) -> None:
    if not usage:
        return
    if not isinstance(usage, dict):
        _problem(ctx, KeyError("'input_tokens'"), "usage ignored", skip=False)
        return
    cache = fget(usage, "cache_creation")
    if isinstance(cache, dict):
        for name in CACHE_FIELDS:
            if not _usage_field(ctx, cache, name):
                return
    server = fget(usage, "server_tool_use")
    if isinstance(server, dict):
        for name in SERVER_FIELDS:
            if not _usage_field(ctx, server, name):
                return
    for name in TOKEN_FIELDS:
        if not _usage_field(ctx, usage, name):
            return


def _assistant(ctx: _Context, obj: dict, event: Event) -> bool:
    message, content = _content(ctx, obj)
    items: list = []
    if isinstance(content, list):
        for block in content:
            _assistant_block(ctx, block, items)
    else:
        exc = ValueError("message content is neither a string nor a list")
        if isinstance(content, str):
            _problem(ctx, exc, "string content read as one text block", skip=False)
            items.append(content)
        else:
            _problem(ctx, exc, "line skipped", skip=True)
    year_zero = _envelope(ctx, obj, event)
    if not isinstance(fget(message, "model"), str):
        _problem(ctx, KeyError("'model'"), "model ignored", skip=False)
    _usage(ctx, fget(message, "usage"))
    event.items = tuple(items)
    return year_zero


def _attachment(ctx: _Context, obj: dict, event: Event) -> bool:
    year_zero = _envelope(ctx, obj, event)
    attachment = fget(obj, "attachment")
    if isinstance(attachment, dict) and fget(attachment, "type") == "queued_command":
        prompt = fget(attachment, "prompt")
        if isinstance(prompt, str):
            mode = fget(attachment, "commandMode")
            label = None
            if mode == "task-notification":
                label = "notification"
            elif mode == "prompt":
                origin = fget(attachment, "origin")
                kind = fget(origin, "kind") if isinstance(origin, dict) else None
                if isinstance(kind, str):
                    label = QUEUED_LABELS.get(kind)
            if label is not None:
                event.items = ((label, prompt),)
    return year_zero


def _event(ctx: _Context, obj: dict) -> Event | None:
    kind = fget(obj, "type")
    if not isinstance(kind, str):
        _problem(ctx, KeyError("'type'"), "line skipped", skip=True)
    if kind == "user":
        event = Event(USER, ctx.lineno)
        year_zero = _user(ctx, obj, event)
    elif kind == "assistant":
        event = Event(ASSISTANT, ctx.lineno)
        year_zero = _assistant(ctx, obj, event)
    elif kind == "system":
        event = Event(SYSTEM, ctx.lineno)
        year_zero = _envelope(ctx, obj, event)
        if not isinstance(fget(obj, "subtype"), str):
            _problem(ctx, KeyError("'subtype'"), "subtype ignored", skip=False)
    elif kind == "attachment":
        event = Event(ATTACHMENT, ctx.lineno)
        year_zero = _attachment(ctx, obj, event)
    elif kind == "mode" or kind == "permission-mode":
        event = Event(MODE, ctx.lineno)
        field = "mode" if kind == "mode" else "permissionMode"
        if not isinstance(fget(obj, "sessionId"), str):
            _problem(ctx, KeyError("'sessionId'"), "read as an unknown line", skip=False)
        elif not isinstance(fget(obj, field), str):
            _problem(ctx, KeyError(f"'{field}'"), "read as an unknown line", skip=False)
        return event
    else:
        return Event(OTHER, ctx.lineno)
    return None if year_zero else event


def parse_events(
    raw: bytes,
    *,
    strict: bool = False,
    source: str = "<bytes>",
    decode: Callable[[bytes], Any] = decode_line,
) -> list[Event]:
    """Parse transcript bytes into events in file order (spec §4).

    Lines that are blank, not strict JSON or not objects are skipped silently, as the
    reference does; year-0 lines are dropped. A line the reference rejects raises its
    error with ``strict=True``, else it is skipped or normalised with a warning.
    ``decode`` reads one line; a replacement must return what :func:`decode_line` returns
    for every line (``cc_analytics.frames.lines.decode_line`` is a faster one).

    Examples:
        >>> raw = b'{"type":"summary"}\\n{"type":"user","uuid":"u1","sessionId":"S",' \\
        ...     b'"timestamp":"2026-03-01T10:00:00Z","message":{"content":"hi"}}\\n'
        >>> [(e.uuid, e.text) for e in parse_events(raw)]
        [(None, ''), ('u1', 'hi')]
    """
    ctx = _Context(strict, source)
    events: list[Event] = []
    append = events.append
    for lineno, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        obj = decode(line)
        if not isinstance(obj, dict):
            if obj is TOO_DEEP:
                ctx.lineno = lineno
                exc = ValueError(f"JSON nested more than {MAX_DEPTH} levels deep")
                _problem(ctx, exc, "line skipped", skip=False)
            continue
        ctx.lineno = lineno
        ctx.line = line
        try:
            event = _event(ctx, obj)
        except _SkipLine:
            continue
        if event is not None:
            append(event)
    return events
