"""The per-line decoder: Claude Code JSONL bytes → event rows, content blocks and problems.

Imports: orjson, polars, the standard library and ``claude_schema``/``claude_discovery``.
This is the one place that loops over lines in Python (orjson decodes each line, a few
``dict.get`` calls pick the fields); everything after it is vectorised Polars. Two loops share
the rules below: :func:`decode_files` keeps every column of the events frame and the text of
every content block; :func:`~cc_analytics.frames.claude.decode_lean.decode_summary_files` (what ``sessions`` runs, in ``claude_decode_lean``) keeps only what the
per-session summary reads and measures each block's tokens as it goes.

Lines are cut on LF only; a line of ASCII whitespace is skipped; a line that is not strict
JSON (invalid UTF-8, a BOM, ``NaN``, lone surrogates, raw control characters, trailing
garbage), is not an object, has no string ``type``, or an envelope line (user, assistant,
system, attachment) without string ``uuid``/``sessionId``/``timestamp`` becomes a problem row
and is left out. A line with a year-0 timestamp is left out too (Claude Code never writes
one; the reference parser drops it). Fields of the wrong type are read as null and reported,
and the rest of the line is kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

import orjson
import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.discovery import TranscriptFile

ENVELOPE_TYPES = frozenset(("user", "assistant", "system", "attachment"))
SYNTHETIC_MODEL = "<synthetic>"
USAGE_FIELDS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%.f%:z"
FAST_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%.fZ"
SCALAR_NAMES = tuple(S.EVENT_SCALARS)
# Columns the decoder fills per row, in order (the timestamp goes in as text first).
ROW_COLUMNS = tuple(name for name in SCALAR_NAMES if name != S.SOURCE_FILE)
NULL_USAGE = (None, None, None, None)
# Lines up to this size are checked for duplicate keys (see _first_wins); a compact line
# re-encodes to its own length, so only lines that do not are parsed a second time.
DUPLICATE_CHECK_BYTES = 8192
# Values stored as JSON by the reference keep Python dict semantics (last duplicate wins).
LAST_WINS_KEYS = frozenset(("input", "toolUseResult"))


class Decoded(NamedTuple):
    """Frames decoded from a batch of files: events (scalars), blocks and problems."""

    events: pl.DataFrame
    blocks: pl.DataFrame
    problems: pl.DataFrame


def decode_files(files: Sequence[TranscriptFile]) -> Decoded:
    """Decode every line of ``files`` (in order) into the three frames of :class:`Decoded`."""
    rows: list[tuple[Any, ...]] = []
    file_of_row: list[int] = []
    blocks: list[tuple[Any, ...]] = []
    problems: list[tuple[str, int, str]] = []
    for index, transcript in enumerate(files):
        start = len(rows)
        _decode_file(transcript, rows, blocks, problems)
        file_of_row.extend([index] * (len(rows) - start))
    return Decoded(
        _events_frame(files, rows, file_of_row, problems),
        _columnar(blocks, S.BLOCKS_SCHEMA),
        _columnar(problems, S.PROBLEMS_SCHEMA),
    )


def decode_bytes(raw: bytes, *, name: str = "<bytes>", session_id: str | None = None) -> Decoded:
    """Decode in-memory JSONL (tests, notebooks): one pseudo-file called ``name``."""
    from pathlib import Path

    transcript = TranscriptFile(Path(name), session_id or "", None, "main", "", len(raw))
    rows: list[tuple[Any, ...]] = []
    blocks: list[tuple[Any, ...]] = []
    problems: list[tuple[str, int, str]] = []
    _decode_data(raw, transcript, rows, blocks, problems)
    return Decoded(
        _events_frame([transcript], rows, [0] * len(rows), problems),
        _columnar(blocks, S.BLOCKS_SCHEMA),
        _columnar(problems, S.PROBLEMS_SCHEMA),
    )


def _events_frame(
    files: Sequence[TranscriptFile],
    rows: list[tuple[Any, ...]],
    file_of_row: list[int],
    problems: list[tuple[str, int, str]],
) -> pl.DataFrame:
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(ROW_COLUMNS)
    data: dict[str, pl.Series] = {}
    for name, values in zip(ROW_COLUMNS, columns, strict=True):
        dtype = pl.String() if name == S.TIMESTAMP else S.EVENT_SCALARS[name]
        data[name] = pl.Series(name, values, dtype=dtype)
    paths = pl.Series(S.SOURCE_FILE, [str(f.path) for f in files], dtype=pl.String())
    data[S.SOURCE_FILE] = paths.gather(pl.Series(file_of_row, dtype=pl.UInt32))
    raw_time = data[S.TIMESTAMP]
    data[S.TIMESTAMP] = parse_timestamps(raw_time)
    frame = pl.DataFrame(data)
    bad_time = frame.select(S.SOURCE_FILE, S.LINE).filter(raw_time.is_not_null() & frame[S.TIMESTAMP].is_null())
    for source, line in bad_time.iter_rows():
        problems.append((source, line, "invalid or out-of-range timestamp (line kept, time unknown)"))
    return frame.select(SCALAR_NAMES)


def _columnar(rows: list[tuple[Any, ...]], schema: pl.Schema) -> pl.DataFrame:
    # Transposing in Python then building typed Series is much faster than orient="row".
    if not rows:
        return pl.DataFrame(schema=schema)
    columns = zip(*rows, strict=True)
    return pl.DataFrame(
        [pl.Series(name, values, dtype=dtype) for (name, dtype), values in zip(schema.items(), columns, strict=True)]
    )


def parse_timestamps(raw: pl.Series) -> pl.Series:
    """:func:`parse_timestamp` of a column, with a fast path for the form Claude Code writes.

    ``2026-03-01T10:00:00.123Z`` parses with one fixed format (no regex rewriting); only the
    texts it rejects go through :func:`parse_timestamp`, and the year check applies to all.
    """
    fast = raw.str.to_datetime(FAST_TIMESTAMP_FORMAT, time_unit="us", strict=False).dt.replace_time_zone("UTC")
    missed = (fast.is_null() & raw.is_not_null()).arg_true()
    if missed.len():
        slow = raw.gather(missed).to_frame("raw").select(parse_timestamp(pl.col("raw"))).to_series()
        fast = fast.scatter(missed, slow)
    return fast.to_frame("t").select(pl.when(pl.col("t").dt.year() >= 1).then(pl.col("t"))).to_series().alias(raw.name)


def parse_timestamp(text: pl.Expr) -> pl.Expr:
    """RFC 3339 text (``T``/``t``/space, any fraction, ``Z``/``z`` or ``±HH:MM``) → UTC time."""
    normal = text.str.replace(r"[Zz]$", "+00:00").str.replace(r"^(\d{4}-\d\d-\d\d)[Tt ]", "${1}T")
    parsed = normal.str.to_datetime(TIMESTAMP_FORMAT, time_zone="UTC", time_unit="us", strict=False)
    # Year 1 at a positive offset is year 0 in UTC: no Python datetime can hold it.
    return pl.when(parsed.dt.year() >= 1).then(parsed)


def _decode_file(
    transcript: TranscriptFile,
    rows: list[tuple[Any, ...]],
    blocks: list[tuple[Any, ...]],
    problems: list[tuple[str, int, str]],
) -> None:
    try:
        raw = transcript.path.read_bytes()
    except OSError as exc:
        problems.append((str(transcript.path), 0, f"cannot read file: {exc.strerror or exc}"))
        return
    _decode_data(raw, transcript, rows, blocks, problems)


def _decode_data(
    raw: bytes,
    transcript: TranscriptFile,
    rows: list[tuple[Any, ...]],
    blocks: list[tuple[Any, ...]],
    problems: list[tuple[str, int, str]],
) -> None:
    source = str(transcript.path)
    file_session = transcript.session_id
    subagent = transcript.is_subagent
    path_agent = transcript.agent_id
    loads = orjson.loads
    dumps = orjson.dumps
    decode_error = orjson.JSONDecodeError
    lines = raw.split(b"\n")
    last = len(lines)
    if lines and not lines[-1]:
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if not line or line.isspace():
            continue
        try:
            obj = loads(line)
        except decode_error as exc:
            obj = _lenient_number_parse(line, exc)
            if obj is None:
                truncated = number == last and not raw.endswith(b"\n")
                problems.append((source, number, _parse_reason(line, exc, truncated=truncated)))
                continue
        if len(line) <= DUPLICATE_CHECK_BYTES and len(dumps(obj)) != len(line):
            obj = _first_wins(line, obj)
        if type(obj) is not dict:
            problems.append((source, number, f"not a JSON object ({_json_kind(obj)})"))
            continue
        kind = obj.get("type")
        if type(kind) is not str:
            problems.append((source, number, "missing or non-string 'type'"))
            continue
        row_index = len(rows)
        if kind in ENVELOPE_TYPES:
            uuid = obj.get("uuid")
            session = obj.get("sessionId")
            stamp = obj.get("timestamp")
            if type(uuid) is not str or type(session) is not str or type(stamp) is not str:
                missing = [
                    key
                    for key, value in (("uuid", uuid), ("sessionId", session), ("timestamp", stamp))
                    if type(value) is not str
                ]
                problems.append((source, number, f"{kind} line without string {', '.join(missing)}"))
                continue
            if stamp.startswith("0000"):
                problems.append((source, number, f"year-0 timestamp {stamp[:40]!r}, line dropped"))
                continue
            fields = _envelope_fields(obj, kind, row_index, blocks, problems, source, number)
            if fields is None:
                continue
            has_envelope = True
        else:
            uuid = _string(obj.get("uuid"))
            session = _string(obj.get("sessionId"))
            stamp = _string(obj.get("timestamp"))
            fields = _OTHER_FIELDS
            has_envelope = False
        agent = obj.get("agentId")
        rows.append(
            (
                number,
                file_session,
                subagent,
                session,
                uuid,
                _string(obj.get("parentUuid")),
                kind,
                fields[0],
                stamp,
                has_envelope,
                bool(obj.get("isSidechain")),
                bool(obj.get("isMeta")),
                bool(obj.get("isCompactSummary")),
                fields[1] or bool(obj.get("isApiErrorMessage")),
                kind == "user" and type(obj.get("interruptedMessageId")) is str,
                agent if type(agent) is str else path_agent,
                _string(obj.get("cwd")),
                _string(obj.get("gitBranch")),
                _string(obj.get("version")),
                fields[2],
                fields[3],
                _string(obj.get("requestId")) if kind == "assistant" else None,
                fields[4],
                *fields[5],
            )
        )


# Lines without an envelope: see _envelope_fields for the layout.
_OTHER_FIELDS: tuple[Any, ...] = (None, False, None, None, None, (None,) * 11)


def _envelope_fields(
    obj: dict[str, Any],
    kind: str,
    row: int,
    blocks: list[tuple[Any, ...]],
    problems: list[tuple[str, int, str]],
    source: str,
    number: int,
) -> tuple[Any, ...] | None:
    """(subtype, api_error, model, message_id, stop_reason, tail) of an enveloped line.

    ``tail`` holds the columns after ``request_id``: the four usage counts, prompt text,
    assistant text, thinking characters, system text, attachment type, compact trigger and
    compact pre-tokens.
    """
    if kind == "user":
        message = obj.get("message")
        content = message.get("content") if type(message) is dict else None
        prompt = None
        if type(content) is str:
            prompt = content
            blocks.append((row, "prompt", None, None, content, None))
        elif type(content) is list:
            prompt = _user_blocks(content, row, blocks, problems, source, number)
        else:
            problems.append((source, number, "user message content is neither a string nor a list"))
        return (
            None,
            False,
            None,
            None,
            None,
            (*NULL_USAGE, prompt, None, None, None, None, None, None),
        )
    if kind == "assistant":
        message = obj.get("message")
        if type(message) is not dict:
            problems.append((source, number, "assistant line without a message object"))
            message = {}
        model = message.get("model")
        model = model if type(model) is str else None
        content = message.get("content")
        text = None
        thinking = 0
        if type(content) is list:
            text, thinking = _assistant_blocks(content, row, blocks, problems, source, number)
        elif content is not None:
            problems.append((source, number, "assistant message content is not a list"))
        usage = _usage(message.get("usage"), problems, source, number)
        return (
            None,
            model == SYNTHETIC_MODEL,
            model,
            _string(message.get("id")),
            _string(message.get("stop_reason")),
            (*usage, None, text, thinking, None, None, None, None),
        )
    if kind == "system":
        subtype = _string(obj.get("subtype"))
        content = obj.get("content")
        system_text = content if type(content) is str else None
        if system_text and subtype != "compact_boundary":
            blocks.append((row, "system", None, None, system_text, None))
        trigger = pre_tokens = None
        if subtype == "compact_boundary":
            meta = obj.get("compactMetadata")
            if type(meta) is dict:
                trigger = _string(meta.get("trigger"))
                pre_tokens = _integer(meta.get("preTokens"))
        return (
            subtype,
            subtype == "api_error",
            None,
            None,
            None,
            (*NULL_USAGE, None, None, None, system_text, None, trigger, pre_tokens),
        )
    attachment = obj.get("attachment")
    attachment_type = None
    if type(attachment) is dict:
        attachment_type = _string(attachment.get("type")) or ""
        prompt = attachment.get("prompt")
        if attachment_type == "queued_command" and type(prompt) is str and prompt:
            blocks.append((row, "prompt", None, None, prompt, None))
    return (
        None,
        False,
        None,
        None,
        None,
        (*NULL_USAGE, None, None, None, None, attachment_type, None, None),
    )


def _user_blocks(
    content: list[Any],
    row: int,
    blocks: list[tuple[Any, ...]],
    problems: list[tuple[str, int, str]],
    source: str,
    number: int,
) -> str | None:
    texts: list[str] = []
    for block in content:
        if type(block) is not dict:
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = block.get("text")
            if type(text) is str:
                texts.append(text)
        elif block_type == "tool_result":
            result = block.get("content")
            if type(result) is list:
                result = "".join(
                    item["text"]
                    for item in result
                    if type(item) is dict and item.get("type") == "text" and type(item.get("text")) is str
                )
            elif type(result) is not str:
                problems.append((source, number, "tool_result content is neither a string nor a list"))
                result = None
            blocks.append(
                (
                    row,
                    "tool_result",
                    None,
                    _string(block.get("tool_use_id")),
                    result,
                    bool(block.get("is_error")),
                )
            )
    if not texts:
        return None
    prompt = " ".join(texts)
    blocks.append((row, "prompt", None, None, prompt, None))
    return prompt


def _assistant_blocks(
    content: list[Any],
    row: int,
    blocks: list[tuple[Any, ...]],
    problems: list[tuple[str, int, str]],
    source: str,
    number: int,
) -> tuple[str | None, int]:
    texts: list[str] = []
    thinking_chars = 0
    dumps = orjson.dumps
    for block in content:
        if type(block) is not dict:
            problems.append((source, number, "assistant content block is not an object"))
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = block.get("text")
            if type(text) is str:
                texts.append(text)
                blocks.append((row, "text", None, None, text, None))
            else:
                problems.append((source, number, "text block without string 'text'"))
        elif block_type == "thinking":
            thinking = block.get("thinking")
            if type(thinking) is str:
                thinking_chars += len(thinking)
                blocks.append((row, "thinking", None, None, thinking, None))
            else:
                problems.append((source, number, "thinking block without string 'thinking'"))
        elif block_type == "tool_use":
            name = block.get("name")
            name = name if type(name) is str else None
            try:
                compact = dumps(block.get("input")).decode()
            except orjson.JSONEncodeError:
                compact = json.dumps(block.get("input"), separators=(",", ":"), ensure_ascii=False)
            blocks.append((row, "tool_use", name, _string(block.get("id")), compact, None))
    return ("\n".join(texts) if texts else None), thinking_chars


def _usage(usage: Any, problems: list[tuple[str, int, str]], source: str, number: int) -> tuple[int | None, ...]:
    if not usage:
        return NULL_USAGE
    if type(usage) is not dict:
        problems.append((source, number, f"usage is not an object ({_json_kind(usage)})"))
        return NULL_USAGE
    values = []
    for field in USAGE_FIELDS:
        value = usage.get(field)
        if type(value) is int:
            values.append(value)
        elif value is None:
            values.append(0)
        else:
            problems.append((source, number, f"usage.{field} is not an integer ({value!r:.40})"))
            values.append(None)
    return tuple(values)


class _Pairs(list):
    """An object's key/value pairs as written, duplicates included."""


def _first_wins(line: bytes, parsed: Any) -> Any:
    """Re-read a line whose keys may repeat: the first occurrence wins (as the reference reads
    its fields), except inside tool inputs and ``toolUseResult`` where the last one does."""
    try:
        pairs = json.loads(line, object_pairs_hook=_Pairs)
    except ValueError:
        return parsed
    return _resolve(pairs, first=True)


def _resolve(value: Any, *, first: bool) -> Any:
    if isinstance(value, _Pairs):
        out: dict[str, Any] = {}
        for key, item in value:
            if first and key in out:
                continue
            out[key] = _resolve(item, first=first and key not in LAST_WINS_KEYS)
        return out
    if isinstance(value, list):
        return [_resolve(item, first=first) for item in value]
    return value


def _string(value: Any) -> str | None:
    return value if type(value) is str else None


def _integer(value: Any) -> int | None:
    return value if type(value) is int else None


def _json_kind(value: Any) -> str:
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _lenient_number_parse(line: bytes, exc: Exception) -> Any:
    """Accept what strict JSON allows but orjson refuses: numbers beyond double range."""
    if "infinity" not in str(exc):
        return None
    try:
        text = line.decode("utf-8")
        value = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if _well_formed_json(value) else None


def _reject_constant(name: str) -> float:
    msg = f"{name} is not JSON"
    raise ValueError(msg)


def _well_formed_json(value: Any) -> bool:
    # Python's parser accepts lone-surrogate escapes; strict JSON text never holds one.
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    return True


def _parse_reason(line: bytes, exc: Exception, *, truncated: bool) -> str:
    if truncated:
        return "truncated last line (the file may still be being written)"
    if line.startswith(b"\xef\xbb\xbf"):
        return "line starts with a UTF-8 byte-order mark"
    message = str(exc).split(":", 1)[0]
    return f"invalid JSON: {message}"
