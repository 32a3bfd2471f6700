"""Per-line decoder for ChainlessChain session JSONL: bytes in, Polars column lists out.

Imports: orjson, polars, the standard library and ``frames.estimate``. This is the one place
that looks at individual lines; everything downstream is Polars expressions. Rules follow
``cc-context.md`` §3–5: strict JSON per line, CRLF tolerated, unparsable lines skipped and
counted, non-object lines kept as events that match no type.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from cc_analytics.frames.estimate import content_text, js_stringify, well_formed

MESSAGE_EVENT_TYPES = frozenset({"user_message", "assistant_message", "system"})
CHECKPOINT_EVENT_TYPES = frozenset({"compact", "checkpoint_timeline_commit"})
MAIN_USAGE_SOURCES = (None, "", "model")
MIN_RECORDED_WINDOW = 1024
MAX_RECORDED_WINDOW = 16_777_216
MAX_SAFE_INTEGER = 2**53 - 1
WS_TURN_MAX_TEXT = 4 * 1024 * 1024

EVENT_SCHEMA: dict[str, pl.DataType] = {
    "session_id": pl.String(),
    "line": pl.Int64(),
    "type": pl.String(),
    "timestamp": pl.Float64(),
    "is_object": pl.Boolean(),
    "is_null": pl.Boolean(),
    "role": pl.String(),
    "content": pl.String(),
    "content_json": pl.String(),
    "tool_calls": pl.String(),
    "model": pl.String(),
    "provider": pl.String(),
    "is_checkpoint": pl.Boolean(),
    "usage_input_tokens": pl.Int64(),
    "usage_output_tokens": pl.Int64(),
    "usage_cache_read_tokens": pl.Int64(),
    "usage_cache_creation_tokens": pl.Int64(),
    "context_window": pl.Float64(),
    "recorded_window": pl.Int64(),
    "is_main_usage": pl.Boolean(),
    "attribution": pl.String(),
    "source": pl.String(),
}

MESSAGE_SCHEMA: dict[str, pl.DataType] = {
    "session_id": pl.String(),
    "line": pl.Int64(),
    "position": pl.Int64(),
    "from_checkpoint": pl.Boolean(),
    "role": pl.String(),
    "text": pl.String(),
    "tool_calls_text": pl.String(),
}

PROBLEM_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "line": pl.Int64(),
    "reason": pl.String(),
}

_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]*")
_CLAIM_ID = re.compile(r"claim-[0-9a-f-]{36}")
_WS_KEYS = frozenset({"schemaVersion", "requestId", "outcome", "user", "assistant"})
_WS_CLAIM_KEYS = _WS_KEYS | {"inputDigest", "opaqueClaimId"}
# JavaScript's String.prototype.trim() whitespace (WhiteSpace + LineTerminator).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class _Reject(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _Reject(name)


def parse_line(raw: bytes) -> tuple[bool, Any, str | None]:
    """Strictly parse one line as ECMAScript ``JSON.parse`` would: ``(ok, value, reason)``."""
    try:
        return True, orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        first_error = str(exc)
    text = raw.decode("utf-8", "replace")
    # orjson refuses what JavaScript accepts: lone surrogate escapes, 1e400 (Infinity),
    # and nesting deeper than 1024. The standard library parser takes those.
    try:
        return True, json.loads(text, parse_constant=_reject_constant), None
    except (ValueError, RecursionError):
        return False, None, first_error.split(":")[0]


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a decoded JSON value."""
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return True


def js_string(value: Any) -> str:
    """JavaScript ``String(value)`` for a decoded JSON value."""
    if isinstance(value, str):
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return js_stringify(value)


def _is_js_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int_or_none(value: Any) -> int | None:
    if type(value) is int or (type(value) is float and math.isfinite(value) and value == int(value)):
        return int(value) if abs(value) < 2**63 else None
    return None


def _recorded_window(value: Any) -> int | None:
    # The size test comes first: math.isfinite cannot take an int beyond the double range.
    if not _is_js_number(value) or abs(value) > MAX_SAFE_INTEGER:
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    number = int(value)
    return number if MIN_RECORDED_WINDOW <= number <= MAX_RECORDED_WINDOW else None


def is_replayable(message: Any) -> bool:
    """A JSON object whose ``role`` is a string (content optional)."""
    return isinstance(message, dict) and isinstance(message.get("role"), str)


def ws_turn_messages(data: Any) -> list[dict[str, Any]]:
    """The two messages of a valid, completed ``ws_turn`` settlement, else none (§4.3)."""
    if not isinstance(data, dict) or data.get("outcome") != "completed":
        return []
    version = data.get("schemaVersion")
    if not _is_js_number(version) or version != 1:
        return []
    claimed = data.get("inputDigest") is not None or data.get("opaqueClaimId") is not None
    if set(data) != (_WS_CLAIM_KEYS if claimed else _WS_KEYS):
        return []
    user, assistant = data["user"], data["assistant"]
    for message, role in ((user, "user"), (assistant, "assistant")):
        if not isinstance(message, dict) or set(message) != {"role", "content"}:
            return []
        if message["role"] != role:
            return []
    request_id = data["requestId"]
    if not isinstance(request_id, str) or not _REQUEST_ID.fullmatch(request_id):
        return []
    if unicodedata.normalize("NFC", request_id) != request_id:
        return []
    if len(request_id.encode("utf-8", "surrogatepass")) > 128:
        return []
    u_text, a_text = user["content"], assistant["content"]
    if not isinstance(u_text, str) or not isinstance(a_text, str):
        return []
    if not a_text.strip(_JS_SPACE):
        return []
    if max(len(u_text), len(a_text)) > WS_TURN_MAX_TEXT:
        return []
    if claimed:
        digest = "sha256:" + hashlib.sha256(u_text.encode("utf-8", "surrogatepass")).hexdigest()
        claim = data["opaqueClaimId"]
        if data["inputDigest"] != digest or not isinstance(claim, str):
            return []
        if not _CLAIM_ID.fullmatch(claim):
            return []
    return [{"role": "user", "content": u_text}, {"role": "assistant", "content": a_text}]


CORE_COLUMNS = ("session_id", "line", "type", "timestamp", "is_object", "is_null")
DETAIL_COLUMNS = tuple(name for name in EVENT_SCHEMA if name not in CORE_COLUMNS or name in ("session_id", "line"))
DETAIL_TYPES = MESSAGE_EVENT_TYPES | CHECKPOINT_EVENT_TYPES | {"session_start", "token_usage"}


def _same(text: str) -> str:
    return text


class ColumnBuffer:
    """Column lists for events, replay candidates and problems of many files.

    Every line fills the six core columns; only the lines whose type carries details
    (messages, checkpoints, headers, usage) fill a detail row, joined on at the end.
    """

    def __init__(self) -> None:
        self.core: dict[str, list[Any]] = {name: [] for name in CORE_COLUMNS}
        self.detail: dict[str, list[Any]] = {name: [] for name in DETAIL_COLUMNS}
        self.messages: dict[str, list[Any]] = {name: [] for name in MESSAGE_SCHEMA}
        self.problems: dict[str, list[Any]] = {name: [] for name in PROBLEM_SCHEMA}

    def add_file(self, path: Path, session_id: str, data: bytes) -> None:
        """Decode every line of one transcript into the buffers."""
        core = self.core
        sid_col, line_col, type_col = core["session_id"], core["line"], core["type"]
        ts_col, obj_col, null_col = core["timestamp"], core["is_object"], core["is_null"]
        loads = orjson.loads
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if not raw:
                continue
            try:
                value = loads(raw)
                clean = _same
            except orjson.JSONDecodeError:
                ok, value, reason = parse_line(raw)
                if not ok:
                    self._problem(path, number, f"not strict JSON ({reason}); line skipped")
                    continue
                clean = well_formed
            sid_col.append(session_id)
            line_col.append(number)
            is_dict = type(value) is dict
            obj_col.append(is_dict)
            null_col.append(value is None)
            if not is_dict:
                type_col.append(None)
                ts_col.append(None)
                continue
            kind = value.get("type")
            stamp = value.get("timestamp")
            type_col.append(clean(kind) if isinstance(kind, str) else None)
            ts_col.append(_finite_number(stamp))
            if type(kind) is not str:  # matches no type (and may not be hashable)
                continue
            if kind in DETAIL_TYPES:
                data_value = value.get("data")
                if isinstance(data_value, dict):
                    self._details(session_id, number, kind, data_value, clean)
            elif kind == "ws_turn":
                for position, message in enumerate(ws_turn_messages(value.get("data"))):
                    self._message(session_id, number, position, False, message, clean)

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """Events, replay candidates and problems as DataFrames with explicit schemas."""
        core = pl.DataFrame(self.core, schema={name: EVENT_SCHEMA[name] for name in CORE_COLUMNS})
        detail = pl.DataFrame(self.detail, schema={name: EVENT_SCHEMA[name] for name in DETAIL_COLUMNS})
        events = (
            core.join(detail, on=["session_id", "line"], how="left", maintain_order="left")
            .with_columns(pl.col("is_checkpoint").fill_null(False))
            .select(list(EVENT_SCHEMA))
        )
        return (
            events,
            pl.DataFrame(self.messages, schema=MESSAGE_SCHEMA),
            pl.DataFrame(self.problems, schema=PROBLEM_SCHEMA),
        )

    def _problem(self, path: Path, line: int, reason: str) -> None:
        self.problems["file"].append(str(path))
        self.problems["line"].append(line)
        self.problems["reason"].append(reason)

    def _message(
        self, session_id: str, line: int, position: int, checkpoint: bool, message: dict[str, Any], clean: Any
    ) -> None:
        calls = message.get("tool_calls")
        content = message.get("content")
        cols = self.messages
        cols["session_id"].append(session_id)
        cols["line"].append(line)
        cols["position"].append(position)
        cols["from_checkpoint"].append(checkpoint)
        cols["role"].append(clean(message["role"]))
        cols["text"].append(clean(content) if type(content) is str else well_formed(content_text(content)))
        cols["tool_calls_text"].append(well_formed(js_stringify(calls)) if isinstance(calls, list) and calls else None)

    def _details(self, session_id: str, line: int, kind: str, data: dict[str, Any], clean: Any) -> None:
        row = dict.fromkeys(DETAIL_COLUMNS)
        row["session_id"] = session_id
        row["line"] = line
        row["is_checkpoint"] = False
        if kind in MESSAGE_EVENT_TYPES:
            if is_replayable(data):
                self._message(session_id, line, 0, False, data, clean)
            self._message_columns(row, data, clean)
        elif kind in CHECKPOINT_EVENT_TYPES:
            self._message_columns(row, data, clean)
            if isinstance(data.get("messages"), list):
                row["is_checkpoint"] = True
                kept = (m for m in data["messages"] if is_replayable(m))
                for position, message in enumerate(kept):
                    self._message(session_id, line, position, True, message, clean)
        elif kind == "session_start":
            row["model"] = well_formed(js_string(data["model"])) if js_truthy(data.get("model")) else ""
            provider = data.get("provider")
            row["provider"] = well_formed(js_string(provider)) if js_truthy(provider) else ""
        else:
            self._usage(row, data, clean)
        for name, column in self.detail.items():
            column.append(row[name])

    def _message_columns(self, row: dict[str, Any], data: dict[str, Any], clean: Any) -> None:
        role = data.get("role")
        row["role"] = clean(role) if isinstance(role, str) else None
        content = data.get("content")
        if isinstance(content, str):
            row["content"] = clean(content)
        elif content is not None:
            row["content_json"] = well_formed(js_stringify(content))
        calls = data.get("tool_calls")
        if calls is not None:
            row["tool_calls"] = well_formed(js_stringify(calls))

    def _usage(self, row: dict[str, Any], data: dict[str, Any], clean: Any) -> None:
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        row["usage_input_tokens"] = _int_or_none(usage.get("input_tokens"))
        row["usage_output_tokens"] = _int_or_none(usage.get("output_tokens"))
        row["usage_cache_read_tokens"] = _int_or_none(usage.get("cache_read_input_tokens"))
        row["usage_cache_creation_tokens"] = _int_or_none(usage.get("cache_creation_input_tokens"))
        window = data.get("contextWindow")
        row["context_window"] = _finite_number(window)
        row["recorded_window"] = _recorded_window(window)
        attribution = data.get("attribution")
        source = data.get("source")
        row["attribution"] = None if attribution is None else well_formed(js_stringify(attribution))
        row["source"] = clean(source) if isinstance(source, str) else None
        row["is_main_usage"] = not js_truthy(attribution) and source in MAIN_USAGE_SOURCES
        model, provider = data.get("model"), data.get("provider")
        row["model"] = clean(model) if isinstance(model, str) else None
        row["provider"] = clean(provider) if isinstance(provider, str) else None


# --- The lean decoder of the context report ------------------------------------------------
#
# ``ContextBuffer`` makes the same decisions as ``ColumnBuffer`` (same line loop, same strict
# parse, same problem rows) but keeps only what ``cc context`` reads: per file the header
# values (first ``session_start`` unless a JSON ``null`` line comes first, the last main
# ``token_usage`` record, the largest finite numeric timestamp), and the replayed messages
# themselves. Replay happens as the lines go by: a checkpoint drops the messages of its file
# collected so far and puts its snapshot in their place (§4.2 walks backwards to the last
# checkpoint; forwards, the last one to clear the list wins). Messages keep role, text and
# tool-calls text; estimating and bucketing them is left to the Polars expressions.

HEADER_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.UInt32(),
    "session_id": pl.String(),
    "recorded_model": pl.String(),
    "recorded_provider": pl.String(),
    "record_window": pl.Int64(),
    "record_model": pl.String(),
    "record_provider": pl.String(),
    "last_activity": pl.Float64(),
}

REPLAYED_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.UInt32(),
    "role": pl.String(),
    "text": pl.String(),
    "tool_calls_text": pl.String(),
}

# A JSON text without this has no number token at all, so ``js_stringify`` would return it as
# orjson wrote it (its own check, ``_NOT_JS_NUMBER``, is several times slower to run).
_MAY_HOLD_NUMBER = re.compile(rb"[:,\[]-?[0-9]")
_NO_RECORD: tuple[None, None, None] = (None, None, None)


def _finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite JSON number (not a boolean), else None."""
    kind = type(value)
    if kind is float:
        return value if value - value == 0.0 else None
    if kind is int:
        try:
            return float(value)
        except OverflowError:  # beyond the double range: Infinity in JavaScript
            return None
    return None


def _calls_text(calls: list[Any], strict: bool) -> str:
    """``JSON.stringify`` of a non-empty ``tool_calls`` array (``strict``: parsed by orjson)."""
    if strict:
        raw = orjson.dumps(calls)
        if _MAY_HOLD_NUMBER.search(raw) is None:
            return raw.decode()
    return well_formed(js_stringify(calls))


class ContextBuffer:
    """Header values and replayed messages of many transcripts, for the context report."""

    def __init__(self) -> None:
        self.headers: dict[str, list[Any]] = {name: [] for name in HEADER_SCHEMA}
        self.messages: dict[str, list[Any]] = {name: [] for name in REPLAYED_SCHEMA}
        self.problems: dict[str, list[Any]] = {name: [] for name in PROBLEM_SCHEMA}
        self._chunks: list[pl.DataFrame] = []

    def flush(self) -> None:
        """Move the messages collected so far into a Polars chunk (call between files), so the
        Python strings of a whole batch never live beside their Arrow copy."""
        if self.messages["file"]:
            self._chunks.append(pl.DataFrame(self.messages, schema=REPLAYED_SCHEMA))
            for column in self.messages.values():
                column.clear()

    def unreadable(self, path: Path, session_id: str, reason: str) -> None:
        """A transcript that could not be read: a problem row, and an empty session."""
        self.problems["file"].append(str(path))
        self.problems["line"].append(None)
        self.problems["reason"].append(reason)
        self._header(session_id, ("", ""), _NO_RECORD, None)

    def add_file(self, path: Path, session_id: str, data: bytes) -> None:
        """Decode every line of one transcript (the line rules of ``ColumnBuffer.add_file``)."""
        roles, texts, calls = self.messages["role"], self.messages["text"], self.messages["tool_calls_text"]
        add_role, add_text, add_calls = roles.append, texts.append, calls.append
        first = len(roles)
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        message_types = MESSAGE_EVENT_TYPES
        header: tuple[str, str] | None = None
        usages: list[dict[str, Any]] = []
        add_usage = usages.append
        activity: float | int = -math.inf
        for number, line in enumerate(data.split(b"\n"), start=1):
            if not line:
                continue
            if line[-1] == 0x0D:
                line = line[:-1]
                if not line:
                    continue
            try:
                value = loads(line)
                strict = True
            except decode_error:
                ok, value, reason = parse_line(line)
                if not ok:
                    self._problem(path, number, f"not strict JSON ({reason}); line skipped")
                    continue
                strict = False
            if type(value) is not dict:
                if value is None and header is None:
                    header = ("", "")
                continue
            # orjson numbers are finite; the fallback parser's may not be (1e400, 400 digits).
            stamp = value.get("timestamp")
            if (type(stamp) is int or type(stamp) is float) and stamp > activity:
                if strict or _finite_number(stamp) is not None:
                    activity = stamp
            kind = value.get("type")
            if type(kind) is not str:  # matches no type (and may not be hashable)
                continue
            if kind in message_types:
                message = value.get("data")
                if type(message) is dict:
                    role = message.get("role")
                    if type(role) is str:
                        content = message.get("content")
                        tool_calls = message.get("tool_calls")
                        if strict:
                            add_role(role)
                            add_text(content if type(content) is str else well_formed(content_text(content)))
                        else:
                            add_role(well_formed(role))
                            add_text(well_formed(content if type(content) is str else content_text(content)))
                        add_calls(_calls_text(tool_calls, strict) if type(tool_calls) is list and tool_calls else None)
            elif kind == "token_usage":
                usage = value.get("data")
                if type(usage) is dict:
                    add_usage(usage)
            elif kind in CHECKPOINT_EVENT_TYPES:
                checkpoint = value.get("data")
                if type(checkpoint) is dict and type(checkpoint.get("messages")) is list:
                    del roles[first:], texts[first:], calls[first:]
                    for message in checkpoint["messages"]:
                        if type(message) is dict and type(message.get("role")) is str:
                            self._replay(message, strict)
            elif kind == "session_start":
                if header is None:
                    start_data = value.get("data")
                    header = _header_of(start_data) if type(start_data) is dict else ("", "")
            elif kind == "ws_turn":
                for message in ws_turn_messages(value.get("data")):
                    self._replay(message, strict)
        file_index = len(self.headers["file"])
        self.messages["file"].extend([file_index] * (len(roles) - first))
        record = next((_usage_record(usage) for usage in reversed(usages) if _is_main_usage(usage)), _NO_RECORD)
        self._header(session_id, header or ("", ""), record, None if activity == -math.inf else activity)

    def frames(self) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """Headers (one row per file, in order), replayed messages and problems."""
        self.flush()
        chunks = self._chunks or [pl.DataFrame(schema=REPLAYED_SCHEMA)]
        return (
            pl.DataFrame(self.headers, schema=HEADER_SCHEMA),
            pl.concat(chunks, rechunk=False),
            pl.DataFrame(self.problems, schema=PROBLEM_SCHEMA),
        )

    def _header(
        self,
        session_id: str,
        header: tuple[str, str],
        record: tuple[int | None, str | None, str | None],
        activity: float | None,
    ) -> None:
        cols = self.headers
        cols["file"].append(len(cols["file"]))
        cols["session_id"].append(session_id)
        cols["recorded_model"].append(header[0])
        cols["recorded_provider"].append(header[1])
        cols["record_window"].append(record[0])
        cols["record_model"].append(record[1])
        cols["record_provider"].append(record[2])
        # A transcript without a finite numeric timestamp counts as 0 (§2.4).
        cols["last_activity"].append(0.0 if activity is None else float(activity))

    def _replay(self, message: dict[str, Any], strict: bool) -> None:
        cols = self.messages
        content = message.get("content")
        tool_calls = message.get("tool_calls")
        text = content if type(content) is str else content_text(content)
        cols["role"].append(message["role"] if strict else well_formed(message["role"]))
        cols["text"].append(text if strict and type(content) is str else well_formed(text))
        cols["tool_calls_text"].append(
            _calls_text(tool_calls, strict) if type(tool_calls) is list and tool_calls else None
        )

    def _problem(self, path: Path, line: int, reason: str) -> None:
        self.problems["file"].append(str(path))
        self.problems["line"].append(line)
        self.problems["reason"].append(reason)


def _header_of(data: dict[str, Any]) -> tuple[str, str]:
    model, provider = data.get("model"), data.get("provider")
    return (
        well_formed(js_string(model)) if js_truthy(model) else "",
        well_formed(js_string(provider)) if js_truthy(provider) else "",
    )


def _is_main_usage(data: dict[str, Any]) -> bool:
    return not js_truthy(data.get("attribution")) and data.get("source") in MAIN_USAGE_SOURCES


def _usage_record(data: dict[str, Any]) -> tuple[int | None, str | None, str | None]:
    model, provider = data.get("model"), data.get("provider")
    return (
        _recorded_window(data.get("contextWindow")),
        well_formed(model) if isinstance(model, str) else None,
        well_formed(provider) if isinstance(provider, str) else None,
    )
