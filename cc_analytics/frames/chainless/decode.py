"""The one line walker of ChainlessChain transcripts: bytes in, Polars frames out.

Imports: orjson, polars, the standard library, ``jsonline``, ``frames.lines``,
``frames.estimate``, ``frames.sources`` and ``frames.chainless``'s ``schema`` and ``jsvalues``.
This is the only place that looks at individual lines, and every line rule of ``cc-context.md``
§3–6 is applied here once:

* lines are split on LF, one trailing CR dropped, empty lines skipped; each line is read by
  the JSON line policy under its ``ECMASCRIPT`` rules (``frames.lines.read_value``), strictly
  as ``JSON.parse`` reads it: invalid UTF-8 as U+FFFD, lone surrogates kept, the last of a
  repeated key, ``1e400`` as Infinity. A line that breaks the policy is a problem row; that
  includes nesting deeper than ``jsonline.MAX_DEPTH`` (25,000 levels), which JavaScript would
  read (spec §12.5): the one limit of every format, far beyond any transcript;
* lines that parse to non-objects are events of no type; a JSON ``null`` before the first
  ``session_start`` hides the header (§5);
* the header is the first ``session_start``; the recorded window is the last main-model
  ``token_usage`` record's (§6.2); activity times are the finite numeric timestamps (§2.4);
* replay (§4): message events and completed ``ws_turn`` settlements add messages; a
  checkpoint (``compact`` / ``checkpoint_timeline_commit`` with a ``messages`` array)
  replaces the history so far with its snapshot.

What a caller keeps is its choice of :class:`Profile`, never a second copy of these rules:
``CONTEXT`` keeps per file the header values and the replayed messages only (a checkpoint
drops what came before it), which is all ``cc context`` needs, and measures their text with
the estimate's scalar fast path where it can (``text_tokens``), so that text never reaches
Arrow; ``EVENTS`` also keeps one row per line with the details of its type, and every
message replay admitted, with its text, marked with its segment (checkpoints seen so far)
and whether it is still in context at the end.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import orjson
import polars as pl

from cc_analytics.frames.chainless import schema as S
from cc_analytics.frames.chainless.jsvalues import (
    finite_number,
    int_or_none,
    is_js_number,
    js_string,
    js_truthy,
)
from cc_analytics.frames.estimate import content_text, js_stringify, text_tokens, well_formed
from cc_analytics.frames.lines import read_value
from cc_analytics.frames.sources import TranscriptFile, read_transcript
from cc_analytics.jsonline import ECMASCRIPT, LineError

MESSAGE_EVENT_TYPES = frozenset({"user_message", "assistant_message", "system"})
CHECKPOINT_EVENT_TYPES = frozenset({"compact", "checkpoint_timeline_commit"})
DETAIL_TYPES = MESSAGE_EVENT_TYPES | CHECKPOINT_EVENT_TYPES | {"session_start", "token_usage", "tool_call"}
MAIN_USAGE_SOURCES = (None, "", "model")
MIN_RECORDED_WINDOW = 1024
MAX_RECORDED_WINDOW = 16_777_216
MAX_SAFE_INTEGER = 2**53 - 1
WS_TURN_MAX_TEXT = 4 * 1024 * 1024
# The decoder hands its message strings to Polars after about this much input.
FLUSH_BYTES = 8 * 1024 * 1024

# Problem reasons: each written here and nowhere else.
NOT_STRICT_JSON = "not strict JSON ({}); line skipped"
TRUNCATED = "truncated last line (the file may still be being written)"
UNREADABLE = "unreadable: {}"

_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]*")
_CLAIM_ID = re.compile(r"claim-[0-9a-f-]{36}")
_WS_KEYS = frozenset({"schemaVersion", "requestId", "outcome", "user", "assistant"})
_WS_CLAIM_KEYS = _WS_KEYS | {"inputDigest", "opaqueClaimId"}
# JavaScript's String.prototype.trim() whitespace (WhiteSpace + LineTerminator).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# A JSON text without this has no number token at all, so ``js_stringify`` would return it as
# orjson wrote it (its own check is several times slower to run).
_MAY_HOLD_NUMBER = re.compile(rb"[:,\[]-?[0-9]")
_NO_HEADER = ("", "")
_NO_RECORD: tuple[None, None, None] = (None, None, None)


class Profile(Enum):
    """What the walker keeps (see the module docstring)."""

    CONTEXT = "context"
    EVENTS = "events"


@dataclass(frozen=True, slots=True)
class Decoded:
    """Frames of one batch of transcripts; ``events`` is empty under ``Profile.CONTEXT``."""

    files: pl.DataFrame  # FILES_SCHEMA
    messages: pl.DataFrame  # MESSAGES_SCHEMA (CONTEXT: the CONTEXT_MESSAGE_COLUMNS only)
    events: pl.DataFrame  # FILE, then EVENTS_SCHEMA
    problems: pl.DataFrame  # PROBLEMS_SCHEMA


def _recorded_window(value: Any) -> int | None:
    # The size test comes first: math.isfinite cannot take an int beyond the double range.
    if not is_js_number(value) or abs(value) > MAX_SAFE_INTEGER:
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    number = int(value)
    return number if MIN_RECORDED_WINDOW <= number <= MAX_RECORDED_WINDOW else None


def _calls_text(calls: list[Any], strict: bool) -> str:
    """``JSON.stringify`` of a non-empty ``tool_calls`` array (``strict``: parsed by orjson)."""
    if strict:
        try:
            raw = orjson.dumps(calls)
        except orjson.JSONEncodeError:  # nested deeper than orjson writes (255 levels)
            raw = None
        if raw is not None and _MAY_HOLD_NUMBER.search(raw) is None:
            return raw.decode()
    return well_formed(js_stringify(calls))


# ------------------------------------------------------------------ the rules of single values


def is_replayable(message: Any) -> bool:
    """A JSON object whose ``role`` is a string (content optional), §4.1."""
    return type(message) is dict and type(message.get("role")) is str


def is_main_usage(data: dict[str, Any]) -> bool:
    """A ``token_usage`` record of the main model: no attribution, source absent/empty/``model``."""
    return not js_truthy(data.get("attribution")) and data.get("source") in MAIN_USAGE_SOURCES


def header_of(data: Any) -> tuple[str, str]:
    """Recorded (model, provider) of a ``session_start`` payload: ``String(v)`` when truthy, else ``""``."""
    if type(data) is not dict:
        return _NO_HEADER
    model, provider = data.get("model"), data.get("provider")
    return (
        well_formed(js_string(model)) if js_truthy(model) else "",
        well_formed(js_string(provider)) if js_truthy(provider) else "",
    )


def ws_turn_messages(data: Any) -> list[dict[str, Any]]:
    """The two messages of a valid, completed ``ws_turn`` settlement, else none (§4.3)."""
    if not isinstance(data, dict) or data.get("outcome") != "completed":
        return []
    version = data.get("schemaVersion")
    if not is_js_number(version) or version != 1:
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


def _same(text: str) -> str:
    return text


# ------------------------------------------------------------------ the walker


class Walker:
    """Decodes transcripts one after the other into column lists, keeping what ``profile`` asks.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.frames.chainless.store import transcript_file
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
        >>> _ = path.write_text('{"type":"user_message","data":{"role":"user","content":"hi"}}\\nNaN\\n')
        >>> decoded = decode([transcript_file(path)], Profile.CONTEXT)
        >>> decoded.messages.select("role", "text_tokens").rows(), decoded.problems["reason"].to_list()
        ([('user', 1)], ['not strict JSON (unexpected character, expected a JSON value); line skipped'])
    """

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.history = profile is Profile.EVENTS
        self.message_columns = tuple(S.MESSAGES_SCHEMA) if self.history else S.CONTEXT_MESSAGE_COLUMNS
        measured = (S.TEXT_TOKENS, S.CALL_TOKENS)
        self.messages: dict[str, list[Any]] = {name: [] for name in self.message_columns if name not in measured}
        self.files: dict[str, list[Any]] = {name: [] for name in S.FILES_SCHEMA}
        self.core: dict[str, list[Any]] = {name: [] for name in S.CORE_COLUMNS}
        self.detail: dict[str, list[Any]] = {name: [] for name in S.DETAIL_COLUMNS}
        self.problems: dict[str, list[Any]] = {name: [] for name in S.PROBLEMS_SCHEMA}
        self._chunks: list[pl.DataFrame] = []
        self._pending = 0

    def add(self, file: TranscriptFile, data: bytes | None = None) -> None:
        """Decode one transcript (read from its path unless ``data`` is given); an unreadable
        one is a problem and an empty session."""
        if data is None:
            try:
                data = read_transcript(file.path)
            except OSError as exc:
                self._problem(file, None, UNREADABLE.format(exc.strerror or exc))
                self._file(file, _NO_HEADER, _NO_RECORD, None, None)
                return
        self.walk(file, data)
        self._pending += len(data)
        if self._pending >= FLUSH_BYTES:
            self.flush()

    def walk(self, file: TranscriptFile, data: bytes) -> None:
        """Apply every line rule to the bytes of one transcript."""
        index = len(self.files[S.FILE])
        history = self.history
        cols = self.messages
        roles, texts, calls = cols[S.ROLE], cols[S.TEXT], cols[S.TOOL_CALLS_TEXT]
        first = start = len(roles)  # this file's first message; the first of its last segment
        segment = 0
        core = self.core
        add_line, add_type, add_stamp = core[S.LINE].append, core[S.TYPE].append, core[S.TIMESTAMP].append
        add_is_object, add_is_null = core[S.IS_OBJECT].append, core[S.IS_NULL].append
        first_row = len(core[S.LINE])
        read = read_value
        message_types = MESSAGE_EVENT_TYPES
        header: tuple[str, str] | None = None
        last_main: dict[str, Any] | None = None
        earliest: float | int = math.inf
        latest: float | int = -math.inf
        # The line a writer may still be appending to: the last one, when no LF ends it.
        torn = 0 if data.endswith(b"\n") else data.count(b"\n") + 1
        for number, line in enumerate(data.split(b"\n"), start=1):
            if not line:
                continue
            if line[-1] == 0x0D:
                line = line[:-1]
                if not line:
                    continue
            try:
                # strict: orjson's reading, so every string is well-formed and every number finite
                value, strict = read(line, ECMASCRIPT)
            except LineError as exc:
                self._problem(file, number, TRUNCATED if number == torn else NOT_STRICT_JSON.format(exc.reason))
                continue
            is_object = type(value) is dict
            if history:
                add_line(number)
                add_is_object(is_object)
                add_is_null(value is None)
            if not is_object:
                if value is None and header is None:
                    header = _NO_HEADER
                if history:
                    add_type(None)
                    add_stamp(None)
                continue
            # orjson numbers are finite; the policy's may not be (1e400, 400 digits).
            stamp = value.get("timestamp")
            if type(stamp) is int or type(stamp) is float:
                if not strict:
                    stamp = finite_number(stamp)
                if stamp is not None:
                    if stamp > latest:
                        latest = stamp
                    if stamp < earliest:
                        earliest = stamp
            else:
                stamp = None
            kind = value.get("type")
            if history:
                add_type((kind if strict else well_formed(kind)) if type(kind) is str else None)
                add_stamp(None if stamp is None else float(stamp))
            if type(kind) is not str:  # matches no type (and may not be hashable)
                continue
            data_value = value.get("data")
            if kind in message_types:
                if type(data_value) is dict:
                    if is_replayable(data_value):
                        self._replay(data_value, strict)
                        if history:
                            self._placed(number, 0, False, segment)
                    if history:
                        self._detail(index, number, kind, data_value, strict)
            elif kind == "token_usage":
                if type(data_value) is dict:
                    if is_main_usage(data_value):
                        last_main = data_value
                    if history:
                        self._detail(index, number, kind, data_value, strict)
            elif kind in CHECKPOINT_EVENT_TYPES:
                if type(data_value) is dict:
                    snapshot = data_value.get("messages")
                    if type(snapshot) is list:
                        if history:
                            segment += 1
                            start = len(roles)
                        else:
                            del roles[first:], texts[first:], calls[first:]
                        position = 0
                        for message in snapshot:
                            if is_replayable(message):
                                self._replay(message, strict)
                                if history:
                                    self._placed(number, position, True, segment)
                                position += 1
                    if history:
                        self._detail(index, number, kind, data_value, strict)
            elif kind == "session_start":
                if header is None:
                    header = header_of(data_value)
                if history and type(data_value) is dict:
                    self._detail(index, number, kind, data_value, strict)
            elif kind == "ws_turn":
                for position, message in enumerate(ws_turn_messages(data_value)):
                    self._replay(message, strict)
                    if history:
                        self._placed(number, position, False, segment)
            elif kind == "tool_call":
                if history and type(data_value) is dict:
                    self._detail(index, number, kind, data_value, strict)
        count = len(roles) - first
        cols[S.FILE].extend([index] * count)
        if history:
            core[S.FILE].extend([index] * (len(core[S.LINE]) - first_row))
            cols[S.IN_CONTEXT].extend([False] * (start - first) + [True] * (len(roles) - start))
        record = _NO_RECORD if last_main is None else _usage_record(last_main)
        self._file(
            file,
            header or _NO_HEADER,
            record,
            None if earliest == math.inf else float(earliest),
            None if latest == -math.inf else float(latest),
        )

    def flush(self) -> None:
        """Move the messages collected so far into a Polars chunk (call between files), so the
        Python strings of a whole batch never live beside their Arrow copy."""
        self._pending = 0
        cols = self.messages
        if not cols[S.FILE]:
            return
        data = dict(cols)
        if self.history:
            data[S.TEXT_TOKENS] = data[S.CALL_TOKENS] = [None] * len(cols[S.FILE])
        else:
            # Measuring here, not in the loop, skips the messages a later checkpoint dropped;
            # the strings the fast path measured never reach Arrow.
            data[S.TEXT_TOKENS], data[S.TEXT] = _measured(cols[S.TEXT])
            data[S.CALL_TOKENS], data[S.TOOL_CALLS_TEXT] = _measured(cols[S.TOOL_CALLS_TEXT])
        schema = {name: S.MESSAGES_SCHEMA[name] for name in self.message_columns}
        self._chunks.append(pl.DataFrame({name: data[name] for name in schema}, schema=schema))
        for column in cols.values():
            column.clear()

    def frames(self) -> Decoded:
        """Everything decoded so far, as frames with explicit schemas."""
        self.flush()
        message_schema = {name: S.MESSAGES_SCHEMA[name] for name in self.message_columns}
        messages = pl.concat(self._chunks, rechunk=False) if self._chunks else pl.DataFrame(schema=message_schema)
        files = pl.DataFrame(self.files, schema=S.FILES_SCHEMA)
        return Decoded(files, messages, self._events(files), pl.DataFrame(self.problems, schema=S.PROBLEMS_SCHEMA))

    def _events(self, files: pl.DataFrame) -> pl.DataFrame:
        types = dict(S.EVENTS_SCHEMA) | {S.FILE: pl.UInt32()}
        core = pl.DataFrame(self.core, schema={name: types[name] for name in S.CORE_COLUMNS})
        detail = pl.DataFrame(self.detail, schema={name: types[name] for name in S.DETAIL_COLUMNS})
        return (
            core.join(detail, on=[S.FILE, S.LINE], how="left", maintain_order="left")
            .join(files.select(S.FILE, S.SOURCE_FILE, S.SESSION_ID), on=S.FILE, how="left", maintain_order="left")
            .with_columns(pl.col(S.IS_CHECKPOINT).fill_null(False))
            .select(S.FILE, *S.EVENTS_SCHEMA)
        )

    def _problem(self, file: TranscriptFile, line: int | None, reason: str) -> None:
        self.problems[S.SOURCE_FILE].append(file.source_file)
        self.problems[S.LINE].append(line)
        self.problems[S.REASON].append(reason)

    def _file(
        self,
        file: TranscriptFile,
        header: tuple[str, str],
        record: tuple[int | None, str | None, str | None],
        earliest: float | None,
        latest: float | None,
    ) -> None:
        cols = self.files
        cols[S.FILE].append(len(cols[S.FILE]))
        cols[S.SOURCE_FILE].append(file.source_file)
        cols[S.SESSION_ID].append(file.session_id)
        cols[S.PROJECT_DIR].append(file.project_dir)
        cols[S.RECORDED_MODEL].append(header[0])
        cols[S.RECORDED_PROVIDER].append(header[1])
        cols[S.RECORD_WINDOW].append(record[0])
        cols[S.RECORD_MODEL].append(record[1])
        cols[S.RECORD_PROVIDER].append(record[2])
        cols[S.FIRST_ACTIVITY].append(earliest)
        cols[S.LAST_ACTIVITY].append(latest)

    def _replay(self, message: dict[str, Any], strict: bool) -> None:
        cols = self.messages
        content = message.get("content")
        tool_calls = message.get("tool_calls")
        text = content if type(content) is str else content_text(content)
        cols[S.ROLE].append(message["role"] if strict else well_formed(message["role"]))
        cols[S.TEXT].append(text if strict and type(content) is str else well_formed(text))
        cols[S.TOOL_CALLS_TEXT].append(
            _calls_text(tool_calls, strict) if type(tool_calls) is list and tool_calls else None
        )

    def _placed(self, line: int, position: int, from_checkpoint: bool, segment: int) -> None:
        cols = self.messages
        cols[S.LINE].append(line)
        cols[S.POSITION].append(position)
        cols[S.FROM_CHECKPOINT].append(from_checkpoint)
        cols[S.SEGMENT].append(segment)

    def _detail(self, index: int, line: int, kind: str, data: dict[str, Any], strict: bool) -> None:
        clean = _same if strict else well_formed
        row: dict[str, Any] = dict.fromkeys(S.DETAIL_COLUMNS)
        row[S.FILE] = index
        row[S.LINE] = line
        if kind in MESSAGE_EVENT_TYPES or kind in CHECKPOINT_EVENT_TYPES:
            role = data.get("role")
            row[S.ROLE] = clean(role) if isinstance(role, str) else None
            content = data.get("content")
            if isinstance(content, str):
                row[S.CONTENT] = clean(content)
            elif content is not None:
                row[S.CONTENT_JSON] = well_formed(js_stringify(content))
            calls = data.get("tool_calls")
            if calls is not None:
                row[S.TOOL_CALLS_JSON] = well_formed(js_stringify(calls))
            row[S.IS_CHECKPOINT] = type(data.get("messages")) is list and kind in CHECKPOINT_EVENT_TYPES
            if kind == "compact":
                trigger = data.get("trigger")
                row[S.TRIGGER] = clean(trigger) if isinstance(trigger, str) else None
                row[S.PRE_TOKENS] = int_or_none(data.get("originalTokens"))
                row[S.POST_TOKENS] = int_or_none(data.get("compressedTokens"))
        elif kind == "session_start":
            row[S.MODEL], row[S.PROVIDER] = header_of(data)
        elif kind == "token_usage":
            usage = data.get("usage")
            if not isinstance(usage, dict):
                usage = {}
            row[S.INPUT_TOKENS] = int_or_none(usage.get("input_tokens"))
            row[S.OUTPUT_TOKENS] = int_or_none(usage.get("output_tokens"))
            row[S.CACHE_READ_TOKENS] = int_or_none(usage.get("cache_read_input_tokens"))
            row[S.CACHE_CREATION_TOKENS] = int_or_none(usage.get("cache_creation_input_tokens"))
            window = data.get("contextWindow")
            row[S.RAW_WINDOW] = finite_number(window)
            row[S.RECORDED_WINDOW] = _recorded_window(window)
            attribution, source = data.get("attribution"), data.get("source")
            row[S.ATTRIBUTION] = None if attribution is None else well_formed(js_stringify(attribution))
            row[S.USAGE_SOURCE] = clean(source) if isinstance(source, str) else None
            row[S.IS_MAIN_USAGE] = is_main_usage(data)
            model, provider = data.get("model"), data.get("provider")
            row[S.MODEL] = clean(model) if isinstance(model, str) else None
            row[S.PROVIDER] = clean(provider) if isinstance(provider, str) else None
        else:  # tool_call
            tool = data.get("tool")
            row[S.TOOL] = clean(tool) if isinstance(tool, str) else None
            row[S.IS_ERROR] = data.get("is_error") is True
        for name, column in self.detail.items():
            column.append(row[name])


def _measured(texts: list[str | None]) -> tuple[list[int | None], list[str | None]]:
    """Tokens of each text by the estimate's scalar fast path, and the texts it could not measure."""
    tokens = [None if text is None else text_tokens(text) for text in texts]
    return tokens, [text if count is None else None for text, count in zip(texts, tokens, strict=True)]


def _usage_record(data: dict[str, Any]) -> tuple[int | None, str | None, str | None]:
    model, provider = data.get("model"), data.get("provider")
    return (
        _recorded_window(data.get("contextWindow")),
        well_formed(model) if isinstance(model, str) else None,
        well_formed(provider) if isinstance(provider, str) else None,
    )


def decode(files: Iterable[TranscriptFile], profile: Profile, *, contents: Sequence[bytes] | None = None) -> Decoded:
    """Decode transcripts in order, keeping what ``profile`` asks for; ``contents`` holds each
    file's bytes when they were read elsewhere (an archive's raw copy, object storage)."""
    walker = Walker(profile)
    for index, file in enumerate(files):
        walker.add(file, None if contents is None else contents[index])
    return walker.frames()
