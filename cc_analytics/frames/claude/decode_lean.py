"""The lean per-line decoder behind ``sessions``: only what the per-session summary reads.

Imports: orjson, polars, the standard library, ``claude_schema``/``claude_discovery``/
``claude_decode`` (whose line rules it shares) and ``estimate``. It makes the same validation
decisions and the same problem rows as :func:`~cc_analytics.frames.claude.decode.decode_files`,
but keeps only the summary's columns and measures each content block's tokens as it goes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson
import polars as pl

from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.buckets import TOKENS
from cc_analytics.frames.claude.decode import (
    DUPLICATE_CHECK_BYTES,
    ENVELOPE_TYPES,
    NULL_USAGE,
    SYNTHETIC_MODEL,
    Decoded,
    _columnar,
    _first_wins,
    _integer,
    _json_kind,
    _lenient_number_parse,
    _parse_reason,
    _string,
    _usage,
    parse_timestamps,
)
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.estimate import estimate_tokens, text_tokens

# --- The lean decoder: what the per-session summary reads, nothing more -------------------
#
# ``decode_summary_files`` makes the same validation decisions and the same problem rows as
# ``decode_files`` (same line loop, same checks, same order), but keeps only the columns the
# session summary reads, appends them straight to column lists, and measures each content
# block as it goes instead of keeping its text (:func:`~cc_analytics.frames.estimate.text_tokens`; the rare text it cannot
# measure goes to the shared estimator in one vectorised call per batch). ``cwd`` is kept on
# the first line that has one per file and ``version`` only where it changes, which is all
# the summary reads of them (first and last non-null).

LEAN_STRINGS = (S.TYPE, S.SUBTYPE, S.TIMESTAMP, S.CWD, S.VERSION, S.MODEL, S.MESSAGE_ID, S.REQUEST_ID)
LEAN_FLAGS = (
    S.HAS_ENVELOPE,
    S.IS_SIDECHAIN,
    S.IS_META,
    S.IS_COMPACT_SUMMARY,
    S.IS_API_ERROR,
    S.HAS_INTERRUPTED_ID,
)
LEAN_INTEGERS = (
    S.LINE,
    S.INPUT_TOKENS,
    S.CACHE_CREATION_TOKENS,
    S.CACHE_READ_TOKENS,
    S.OUTPUT_TOKENS,
    S.COMPACT_PRE_TOKENS,
)
LEAN_TEXT = (S.PROMPT_TEXT, S.COMPACT_TRIGGER)
LEAN_COLUMNS = (*LEAN_INTEGERS, *LEAN_STRINGS, *LEAN_FLAGS, *LEAN_TEXT)


class _Lean:
    """Column lists of the lean decoder for one batch."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in LEAN_COLUMNS}
        self.file_of_row: list[int] = []
        self.block_row: list[int] = []
        self.block_kind: list[str] = []
        self.block_tokens: list[int] = []
        # Block texts text_tokens leaves to the shared estimator, and their positions.
        self.wide_index: list[int] = []
        self.wide_text: list[str] = []

    def measured(self, row: int, kind: str, tokens: int) -> None:
        self.block_row.append(row)
        self.block_kind.append(kind)
        self.block_tokens.append(tokens)

    def block(self, row: int, kind: str, text: str | None) -> None:
        self.block_row.append(row)
        self.block_kind.append(kind)
        if text is None:
            self.block_tokens.append(0)
        elif text.isascii():
            self.block_tokens.append((len(text) + 3) >> 2)
        else:
            tokens = text_tokens(text)
            if tokens is None:
                self.wide_index.append(len(self.block_tokens))
                self.wide_text.append(text)
                tokens = 0
            self.block_tokens.append(tokens)


def decode_summary_files(files: Sequence[TranscriptFile]) -> Decoded:
    """Lean :func:`decode_files` for the session summary: events with the summary's columns,
    blocks as (row, kind, tokens), and the same problem rows."""
    lean = _Lean()
    problems: list[tuple[str, int, str]] = []
    for index, transcript in enumerate(files):
        try:
            raw = transcript.path.read_bytes()
        except OSError as exc:
            problems.append((str(transcript.path), 0, f"cannot read file: {exc.strerror or exc}"))
            continue
        start = len(lean.file_of_row)
        _decode_lean(raw, str(transcript.path), lean, problems)
        lean.file_of_row.extend([index] * (len(lean.columns[S.LINE]) - start))
    return Decoded(_lean_events(files, lean, problems), _lean_blocks(lean), _columnar(problems, S.PROBLEMS_SCHEMA))


def _lean_events(files: Sequence[TranscriptFile], lean: _Lean, problems: list[tuple[str, int, str]]) -> pl.DataFrame:
    cols = lean.columns
    data: dict[str, pl.Series] = {}
    for name in LEAN_INTEGERS:
        data[name] = pl.Series(name, cols[name], dtype=pl.Int64())
    for name in (*LEAN_STRINGS, *LEAN_TEXT):
        data[name] = pl.Series(name, cols[name], dtype=pl.String())
    for name in LEAN_FLAGS:
        data[name] = pl.Series(name, cols[name], dtype=pl.Boolean())
    which = pl.Series(lean.file_of_row, dtype=pl.UInt32)
    per_file = {
        S.SOURCE_FILE: pl.Series(S.SOURCE_FILE, [str(f.path) for f in files], dtype=pl.String()),
        S.FILE_SESSION_ID: pl.Series(S.FILE_SESSION_ID, [f.session_id for f in files], dtype=pl.String()),
        S.IS_SUBAGENT_FILE: pl.Series(S.IS_SUBAGENT_FILE, [f.is_subagent for f in files], dtype=pl.Boolean()),
    }
    for name, values in per_file.items():
        data[name] = values.gather(which)
    raw_time = data[S.TIMESTAMP]
    data[S.TIMESTAMP] = parse_timestamps(raw_time)
    frame = pl.DataFrame(data)
    bad_time = frame.select(S.SOURCE_FILE, S.LINE).filter(raw_time.is_not_null() & frame[S.TIMESTAMP].is_null())
    for source, line in bad_time.iter_rows():
        problems.append((source, line, "invalid or out-of-range timestamp (line kept, time unknown)"))
    return frame


def _lean_blocks(lean: _Lean) -> pl.DataFrame:
    tokens = pl.Series(TOKENS, lean.block_tokens, dtype=pl.Int64())
    if lean.wide_text:
        wide = pl.Series("text", lean.wide_text, dtype=pl.String())
        measured = wide.to_frame().select(estimate_tokens(pl.col("text")).fill_null(0)).to_series()
        tokens = tokens.scatter(lean.wide_index, measured)
    return pl.DataFrame(
        [
            pl.Series(S.ROW, lean.block_row, dtype=pl.Int64()),
            pl.Series(S.KIND, lean.block_kind, dtype=S.BLOCK_KIND),
            tokens,
        ]
    )


def _decode_lean(raw: bytes, source: str, lean: _Lean, problems: list[tuple[str, int, str]]) -> None:
    """The line loop of :func:`_decode_data`, filling the lean columns (keep the two in step)."""
    loads = orjson.loads
    dumps = orjson.dumps
    decode_error = orjson.JSONDecodeError
    cols = lean.columns
    add_line = cols[S.LINE].append
    add_type = cols[S.TYPE].append
    add_subtype = cols[S.SUBTYPE].append
    add_time = cols[S.TIMESTAMP].append
    add_cwd = cols[S.CWD].append
    add_version = cols[S.VERSION].append
    add_model = cols[S.MODEL].append
    add_message = cols[S.MESSAGE_ID].append
    add_request = cols[S.REQUEST_ID].append
    add_envelope = cols[S.HAS_ENVELOPE].append
    add_sidechain = cols[S.IS_SIDECHAIN].append
    add_meta = cols[S.IS_META].append
    add_summary = cols[S.IS_COMPACT_SUMMARY].append
    add_error = cols[S.IS_API_ERROR].append
    add_interrupted = cols[S.HAS_INTERRUPTED_ID].append
    add_input = cols[S.INPUT_TOKENS].append
    add_creation = cols[S.CACHE_CREATION_TOKENS].append
    add_read = cols[S.CACHE_READ_TOKENS].append
    add_output = cols[S.OUTPUT_TOKENS].append
    add_prompt = cols[S.PROMPT_TEXT].append
    add_trigger = cols[S.COMPACT_TRIGGER].append
    add_pre = cols[S.COMPACT_PRE_TOKENS].append
    block = lean.block
    want_cwd = True
    last_version: str | None = None
    # Lines are zero-copy slices of ``raw`` (orjson reads a memoryview as it reads bytes).
    view = memoryview(raw)
    find = raw.find
    size = len(raw)
    end = -1
    number = 0
    while end < size:
        start = end + 1
        end = find(b"\n", start)
        if end < 0:
            end = size
        number += 1
        length = end - start
        if not length:
            continue
        if raw[start] == 0x7B:  # "{": the line is not blank
            line: Any = view[start:end]
        else:
            line = raw[start:end]
            if line.isspace():
                continue
        try:
            obj = loads(line)
        except decode_error as exc:
            line = bytes(line)
            obj = _lenient_number_parse(line, exc)
            if obj is None:
                # Only a last line without its newline ends at the end of the data.
                problems.append((source, number, _parse_reason(line, exc, truncated=end == size)))
                continue
        if length <= DUPLICATE_CHECK_BYTES and len(dumps(obj)) != length:
            obj = _first_wins(bytes(line), obj)
        if type(obj) is not dict:
            problems.append((source, number, f"not a JSON object ({_json_kind(obj)})"))
            continue
        kind = obj.get("type")
        if type(kind) is not str:
            problems.append((source, number, "missing or non-string 'type'"))
            continue
        row = len(cols[S.LINE])
        subtype = model = message_id = request_id = prompt = trigger = pre_tokens = None
        usage = NULL_USAGE
        api_error = False
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
            has_envelope = True
            if kind == "user":
                message = obj.get("message")
                content = message.get("content") if type(message) is dict else None
                if type(content) is str:
                    prompt = content
                    block(row, "prompt", content)
                elif type(content) is list:
                    prompt = _lean_user_blocks(content, row, block, problems, source, number)
                else:
                    problems.append((source, number, "user message content is neither a string nor a list"))
            elif kind == "assistant":
                message = obj.get("message")
                if type(message) is not dict:
                    problems.append((source, number, "assistant line without a message object"))
                    message = {}
                model = message.get("model")
                if type(model) is not str:
                    model = None
                content = message.get("content")
                if type(content) is list:
                    _lean_assistant_blocks(content, row, lean, problems, source, number)
                elif content is not None:
                    problems.append((source, number, "assistant message content is not a list"))
                recorded = message.get("usage")
                if type(recorded) is dict:  # the common case inline: four integers
                    usage = (
                        recorded.get("input_tokens"),
                        recorded.get("cache_creation_input_tokens"),
                        recorded.get("cache_read_input_tokens"),
                        recorded.get("output_tokens"),
                    )
                    if not (type(usage[0]) is type(usage[1]) is type(usage[2]) is type(usage[3]) is int):
                        usage = _usage(recorded, problems, source, number)
                else:
                    usage = _usage(recorded, problems, source, number)
                api_error = model == SYNTHETIC_MODEL
                message_id = message.get("id")
                if type(message_id) is not str:
                    message_id = None
                request_id = obj.get("requestId")
                if type(request_id) is not str:
                    request_id = None
            elif kind == "system":
                subtype = obj.get("subtype")
                if type(subtype) is not str:
                    subtype = None
                content = obj.get("content")
                if subtype == "compact_boundary":
                    meta = obj.get("compactMetadata")
                    if type(meta) is dict:
                        trigger = _string(meta.get("trigger"))
                        pre_tokens = _integer(meta.get("preTokens"))
                elif type(content) is str and content:
                    block(row, "system", content)
                api_error = subtype == "api_error"
            else:
                attachment = obj.get("attachment")
                if type(attachment) is dict and attachment.get("type") == "queued_command":
                    queued = attachment.get("prompt")
                    if type(queued) is str and queued:
                        block(row, "prompt", queued)
        else:
            stamp = obj.get("timestamp")
            if type(stamp) is not str:
                stamp = None
            has_envelope = False
        add_line(number)
        add_type(kind)
        add_subtype(subtype)
        add_time(stamp)
        if want_cwd:
            cwd = obj.get("cwd")
            if type(cwd) is str:
                want_cwd = False
                add_cwd(cwd)
            else:
                add_cwd(None)
        else:
            add_cwd(None)
        version = obj.get("version")
        if type(version) is str and version != last_version:
            last_version = version
            add_version(version)
        else:
            add_version(None)
        add_model(model)
        add_message(message_id)
        add_request(request_id)
        add_envelope(has_envelope)
        add_sidechain(bool(obj.get("isSidechain")))
        add_meta(bool(obj.get("isMeta")))
        add_summary(bool(obj.get("isCompactSummary")))
        add_error(api_error or bool(obj.get("isApiErrorMessage")))
        add_interrupted(kind == "user" and type(obj.get("interruptedMessageId")) is str)
        add_input(usage[0])
        add_creation(usage[1])
        add_read(usage[2])
        add_output(usage[3])
        add_prompt(prompt)
        add_trigger(trigger)
        add_pre(pre_tokens)


def _lean_user_blocks(
    content: list[Any],
    row: int,
    block: Any,
    problems: list[tuple[str, int, str]],
    source: str,
    number: int,
) -> str | None:
    """:func:`_user_blocks` measuring blocks instead of keeping them; returns the prompt."""
    texts: list[str] = []
    for item in content:
        if type(item) is not dict:
            continue
        block_type = item.get("type")
        if block_type == "text":
            text = item.get("text")
            if type(text) is str:
                texts.append(text)
        elif block_type == "tool_result":
            result = item.get("content")
            if type(result) is list:
                result = "".join(
                    part["text"]
                    for part in result
                    if type(part) is dict and part.get("type") == "text" and type(part.get("text")) is str
                )
            elif type(result) is not str:
                problems.append((source, number, "tool_result content is neither a string nor a list"))
                result = None
            block(row, "tool_result", result)
    if not texts:
        return None
    prompt = " ".join(texts)
    block(row, "prompt", prompt)
    return prompt


def _lean_assistant_blocks(
    content: list[Any],
    row: int,
    lean: _Lean,
    problems: list[tuple[str, int, str]],
    source: str,
    number: int,
) -> None:
    """:func:`_assistant_blocks` measuring blocks instead of keeping them."""
    dumps = orjson.dumps
    block = lean.block
    measured = lean.measured
    for item in content:
        if type(item) is not dict:
            problems.append((source, number, "assistant content block is not an object"))
            continue
        block_type = item.get("type")
        if block_type == "text":
            text = item.get("text")
            if type(text) is str:
                block(row, "text", text)
            else:
                problems.append((source, number, "text block without string 'text'"))
        elif block_type == "thinking":
            thinking = item.get("thinking")
            if type(thinking) is str:
                block(row, "thinking", thinking)
            else:
                problems.append((source, number, "thinking block without string 'thinking'"))
        elif block_type == "tool_use":
            name = item.get("name")
            name = name if type(name) is str else ""
            try:
                compact = dumps(item.get("input"))
            except orjson.JSONEncodeError:
                text = json.dumps(item.get("input"), separators=(",", ":"), ensure_ascii=False)
                block(row, "tool_use", name + text)
                continue
            if compact.isascii() and name.isascii():
                measured(row, "tool_use", (len(name) + len(compact) + 3) >> 2)
            else:
                block(row, "tool_use", name + compact.decode())
