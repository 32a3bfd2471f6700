"""The lean decode behind ``cc-analytics sessions``: session summaries and requests, exactly
as the tables profile makes them, or not at all.

Imports: orjson, polars, the standard library, ``frames.estimate``, ``frames.sources`` and the
other ``frames.codex`` modules. The sessions command needs of a batch only its session
summaries and priced requests (``iter_tables(turns=False)``). The tables profile
(``decode.py``) keeps a row per line and per detail for the turns; this scanner keeps what the
summary reads: per rollout its header, how many lines it has and the earliest and latest
timestamp, its usage rows and settings (the same rows, in the same schemas, as the walker's),
the tokens of each context item (base instructions, messages, tool calls and outputs,
replacement histories) and the lines that mark prompts and compactions. The summary is then
made from those with the functions and expressions of ``sessions.py``, ``requests.py`` and
``turns.py``, so that every rule keeps one definition.

**Exact or not at all.** The scanner applies the walker's rules to the lines on which nothing
unusual happens, and gives up on a rollout at the first line on which anything else would
(:class:`Unclean`): a line not in Codex's layout (``{"timestamp":"…","type":"…","payload":``)
or not ending with ``}``, one that does not parse or whose payload is not an object, a usage
count that is not a whole number, a text only the estimate's expression can measure, a
first line that is not the header, a timestamp that is not ASCII, an unreadable or empty
file. Every rollout of a session given up on is decoded by the walker
(:func:`~cc_analytics.frames.codex.sessions.summarize` over ``Profile.TABLES``): the problems
of a batch come from there only. So what ``sessions`` shows equals what the tables profile
shows, line for line; ``tests/frames/test_codex_lean.py`` holds it to that on every fixture,
on generated rollouts and on a generated corpus.

How the scan stays cheap: a line is found with ``bytes.find`` and typed by a match of its
first bytes; only the lines the tables profile parses are parsed (a ``memoryview`` slice, no
copy), the items' texts are measured as they are read (``frames.estimate.text_tokens``) and
only their tokens kept, a ``token_count`` whose bytes after the timestamp are the previous
one's is read once, and the timestamps of a rollout are compared as bytes when they all have
Codex's shape (``2025-12-18T10:00:00.000Z``: then the order of the bytes is the order in time),
so only the earliest and latest are parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import polars as pl

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import BURST, LINE_HEAD, NO_USAGE, UNMEASURED_ITEMS, Decoded
from cc_analytics.frames.codex.requests import priced_requests, utc_time
from cc_analytics.frames.codex.sessions import (
    PRIMARY,
    TOKEN_COLUMNS,
    Tables,
    compaction_tokens,
    primary_files,
)
from cc_analytics.frames.codex.store import spawning_thread
from cc_analytics.frames.codex.turns import INJECTED_PREFIXES, bucket_sums, state_at, window_columns
from cc_analytics.frames.codex.values import content_text, dumped, parse_time, string, text_of_item, usage_model
from cc_analytics.frames.estimate import text_tokens
from cc_analytics.frames.requests import cache_creation_tokens, cost_totals
from cc_analytics.frames.sources import TranscriptFile, read_transcript

# What a mark row says of its line.
PROMPT = 0  # an event_msg user_message (a prompt)
LEGACY = 1  # a response_item message of role user that is not injected context (a prompt before user_message)
COMPACTED = 2  # a compacted line
COMPACT_EVENT = 3  # an event_msg context_compacted
CODE = "code"
IS_HEADER = "is_header"
MIN_STAMP, MAX_STAMP, LAST_LINE, LINES = "min_stamp", "max_stamp", "last_line", "lines"
UNMEASURED = frozenset(kind.encode() for kind in UNMEASURED_ITEMS)
# Codex's own timestamps: every digit where this has a 0, the rest as written.
STAMP_SHAPE = b"0000-00-00T00:00:00.000Z"
DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
INT64_MAX = 2**63 - 1

ITEMS_SCHEMA = pl.Schema(
    {S.FILE: pl.UInt32(), S.LINE: pl.Int64(), S.BUCKET: pl.String(), S.TOKENS: pl.Int64(), IS_HEADER: pl.Boolean()}
)
MARKS_SCHEMA = pl.Schema({S.FILE: pl.UInt32(), S.LINE: pl.Int64(), CODE: pl.Int8()})
STATS_SCHEMA = pl.Schema(
    {
        S.FILE: pl.UInt32(),
        LINES: pl.Int64(),
        LAST_LINE: pl.Int64(),
        MIN_STAMP: pl.String(),
        MAX_STAMP: pl.String(),
    }
)
USAGE_COLUMNS = tuple(name for name in S.USAGE_SCHEMA if name != S.FILE)


class Unclean(Exception):
    """A rule the lean scan does not apply fired on a line: the rollout goes to the walker."""


@dataclass(slots=True)
class Scan:
    """What the lean scan keeps of one rollout (rows without their file index)."""

    header: dict[str, Any]
    replay: tuple[int, int]
    lines: int
    last_line: int
    stamps: tuple[str, str] | list[bytes]  # the earliest and latest, or every line's (another shape)
    usage: list[tuple[Any, ...]] = field(default_factory=list)  # USAGE_COLUMNS
    settings: list[tuple[Any, ...]] = field(default_factory=list)  # line, model, tier, sets_tier
    items: list[tuple[Any, ...]] = field(default_factory=list)  # line, bucket, tokens, is_header
    marks: list[tuple[int, int]] = field(default_factory=list)  # line, code


def scan(data: bytes) -> Scan:
    """The lean scan of one rollout's bytes; :class:`Unclean` when the walker must read it.

    Examples:
        >>> rows = [b'{"timestamp":"2025-10-01T10:00:00.000Z","type":"session_meta","payload":{"id":"a"}}',
        ...         b'{"timestamp":"2025-10-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}']
        >>> found = scan(b"\\n".join(rows) + b"\\n")
        >>> found.lines, found.stamps, found.marks
        (2, ('2025-10-01T10:00:00.000Z', '2025-10-01T10:00:01.000Z'), [(2, 0)])
        >>> scan(b"[1]\\n")
        Traceback (most recent call last):
        ...
        cc_analytics.frames.codex.lean.Unclean: line 1
    """
    size = len(data)
    find = data.find
    match = LINE_HEAD.match
    view = memoryview(data)
    loads = orjson.loads
    stamps: list[bytes] = []
    add_stamp = stamps.append
    usage: list[tuple[Any, ...]] = []
    settings: list[tuple[Any, ...]] = []
    items: list[tuple[Any, ...]] = []
    marks: list[tuple[int, int]] = []
    add_usage, add_setting, add_item, add_mark = usage.append, settings.append, items.append, marks.append
    header: dict[str, Any] | None = None
    fork = False
    anchor: datetime | None = None
    replay_start = replay_end = 0
    last_body: bytes | None = None
    last_values: tuple[Any, ...] | None = None
    number = last_line = 0
    pos = 0
    try:
        while pos < size:
            end = find(b"\n", pos)
            if end < 0:
                end = size
            number += 1
            stop = end
            if stop > pos and data[stop - 1] == 0x0D:
                stop -= 1
            if stop == pos:
                pos = end + 1
                continue
            head = match(data, pos, stop)
            if head is None or data[stop - 1] != 0x7D:
                raise Unclean(f"line {number}")
            raw_stamp, kind, payload_type = head.groups()
            add_stamp(raw_stamp)
            last_line = number
            if kind == b"response_item":
                if payload_type is None:
                    raise Unclean(f"line {number}")
                if payload_type not in UNMEASURED:
                    payload = _payload(loads(view[pos:stop]))
                    bucket, text = text_of_item(payload)
                    if bucket is not None:
                        add_item((number, bucket, _tokens(text), False))
                    if (
                        payload_type == b"message"
                        and payload.get("type") == "message"
                        and payload.get("role") == "user"
                        and not text.startswith(INJECTED_PREFIXES)
                    ):
                        add_mark((number, LEGACY))
            elif kind == b"event_msg":
                if payload_type == b"token_count":
                    body = data[head.end() : stop]
                    if body != last_body:
                        payload = _payload(loads(view[pos:stop]))
                        last_values = _count(payload)
                        last_body = body
                    if last_values is not None:
                        stamp = raw_stamp.decode()
                        add_usage((number, stamp, *last_values))
                        model = last_values[-1]
                        if model is not None:
                            add_setting((number, model, None, False))
                        if anchor is not None and (last_values[0] or last_values[7]):
                            moment = parse_time(stamp)
                            if moment is not None and moment <= anchor + BURST:
                                replay_end = max(replay_end, number)
                                anchor = max(anchor, moment)
                            else:
                                anchor = None
                elif payload_type == b"user_message":
                    _payload(loads(view[pos:stop]))
                    add_mark((number, PROMPT))
                elif payload_type == b"context_compacted":
                    add_mark((number, COMPACT_EVENT))
                elif payload_type == b"thread_settings_applied":
                    thread = _payload(loads(view[pos:stop])).get("thread_settings")
                    if isinstance(thread, dict) and "service_tier" in thread:
                        add_setting((number, None, string(thread["service_tier"]), True))
                elif payload_type is None:
                    raise Unclean(f"line {number}")
            elif kind == b"turn_context":
                model = _payload(loads(view[pos:stop])).get("model")
                if isinstance(model, str) and model.strip():
                    add_setting((number, model.strip(), None, False))
            elif kind == b"compacted":
                payload = _payload(loads(view[pos:stop]))
                history = payload.get("replacement_history")
                message = string(payload.get("message"))
                if isinstance(history, list):
                    for entry in history:
                        if isinstance(entry, dict):
                            bucket, text = text_of_item(entry)
                            if bucket is not None:
                                add_item((number, bucket, _tokens(text), False))
                elif message:
                    add_item((number, "user", _tokens(message), False))
                add_mark((number, COMPACTED))
            elif kind == b"session_meta":
                if header is None:
                    if len(stamps) > 1:  # the first line is not the header: turn 0 may not be
                        raise Unclean(f"line {number}")
                    header = _payload(loads(view[pos:stop]))
                    forked = header.get("forked_from_id")
                    if isinstance(forked, str) and forked.strip():
                        fork = True
                        replay_start = number + 1
                        anchor = parse_time(raw_stamp.decode()) or parse_time(header.get("timestamp"))
                    instructions = header.get("base_instructions")
                    text = content_text(instructions) if isinstance(instructions, dict | str) else ""
                    if not text and isinstance(header.get("instructions"), str):
                        text = header["instructions"]
                    if text:
                        add_item((number, "system", _tokens(text), True))
                elif fork:  # an ancestor's header, copied with its history
                    replay_end = max(replay_end, number)
            pos = end + 1
    except orjson.JSONDecodeError as exc:
        raise Unclean(f"line {number}") from exc
    if header is None:
        raise Unclean("no lines")
    if fork and replay_end < replay_start:
        replay_start = replay_end = 0
    return Scan(header, (replay_start, replay_end), len(stamps), last_line, _stamps(stamps), usage, settings, items, marks)


def _payload(value: Any) -> dict[str, Any]:
    payload = value.get("payload") if type(value) is dict else None
    if type(payload) is not dict:
        raise Unclean("payload")
    return payload


def _tokens(text: str) -> int:
    tokens = text_tokens(text)
    if tokens is None:
        raise Unclean("a text only the estimate's expression measures")
    return tokens


def _count(payload: dict[str, Any]) -> tuple[Any, ...] | None:
    """A token_count's usage row after its line and timestamp (``USAGE_COLUMNS``), None
    without an ``info`` object: as ``decode.Walker._read_count`` reads it, problems excepted."""
    info = payload.get("info")
    if type(info) is not dict:
        return None
    total = _usage(info.get("total_token_usage"))
    last = _usage(info.get("last_token_usage"))
    window = info.get("model_context_window")
    if type(window) is not int or window <= 0:
        window = None
    elif window > INT64_MAX:
        raise Unclean("window")
    return (
        total is not None,
        *(total or NO_USAGE),
        last is not None,
        *(last or NO_USAGE),
        window,
        usage_model(payload, info),
    )


def _usage(usage: Any) -> tuple[int, ...] | None:
    if type(usage) is not dict:
        return None
    get = usage.get
    cached = get("cached_input_tokens")
    if cached is None:
        cached = get("cache_read_input_tokens")
    values = (
        get("input_tokens"),
        cached,
        get("cache_write_input_tokens"),
        get("output_tokens"),
        get("reasoning_output_tokens"),
        get("total_tokens"),
    )
    out = []
    for amount in values:
        if amount is None:
            amount = 0
        elif type(amount) is not int or not 0 <= amount <= INT64_MAX:
            raise Unclean("usage")
        out.append(amount)
    return tuple(out)


def _stamps(stamps: list[bytes]) -> tuple[str, str] | list[bytes]:
    """The earliest and latest of a rollout's timestamps when they all have Codex's shape and
    those two are real moments (then no other can be earlier or later), else all of them."""
    joined = b"".join(stamps)
    if not joined.isascii():
        raise Unclean("timestamp")
    if joined.translate(DIGITS_TO_ZERO) == STAMP_SHAPE * len(stamps):
        first, last = min(stamps).decode(), max(stamps).decode()
        if parse_time(first) is not None and parse_time(last) is not None:
            return first, last
    return stamps


# ------------------------------------------------------------------ a batch


@dataclass
class Batch:
    """Scans of the rollouts of a batch, as the columns and frames the summary reads."""

    files: list[TranscriptFile] = field(default_factory=list)
    scans: list[Scan] = field(default_factory=list)

    def frames(self) -> tuple[Decoded, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """The decoded batch (files, usage and settings as the walker makes them, replayed
        lines marked; no lines, items, limits or problems), its stats, items and marks."""
        files: dict[str, list[Any]] = {name: [] for name in S.FILES_SCHEMA}
        usage: list[tuple[Any, ...]] = []
        settings: list[tuple[Any, ...]] = []
        items: list[tuple[Any, ...]] = []
        marks: list[tuple[Any, ...]] = []
        stats: list[tuple[Any, ...]] = []
        every_stamp: list[tuple[int, bytes]] = []
        for index, (file, found) in enumerate(zip(self.files, self.scans, strict=True)):
            _file_row(files, index, file, found)
            usage.extend((index, *row) for row in found.usage)
            settings.extend((index, *row) for row in found.settings)
            items.extend((index, *row) for row in found.items)
            marks.extend((index, *row) for row in found.marks)
            if isinstance(found.stamps, tuple):
                stats.append((index, found.lines, found.last_line, *found.stamps))
            else:
                stats.append((index, found.lines, found.last_line, None, None))
                every_stamp.extend((index, stamp) for stamp in found.stamps)
        files_frame = pl.DataFrame(files, schema=S.FILES_SCHEMA)
        stats_frame = _times(pl.DataFrame(stats, schema=STATS_SCHEMA, orient="row"), every_stamp)
        spans = files_frame.lazy().select(S.FILE, S.REPLAY_START, S.REPLAY_END)

        def marked(frame: pl.DataFrame) -> pl.DataFrame:
            replayed = pl.col(S.LINE).is_between(S.REPLAY_START, S.REPLAY_END) & (pl.col(S.REPLAY_END) > 0)
            return (
                frame.lazy()
                .join(spans, on=S.FILE, how="left", maintain_order="left")
                .with_columns(replayed.fill_null(False).alias(S.REPLAYED))
                .drop(S.REPLAY_START, S.REPLAY_END)
                .collect()
            )

        usage_schema = S.USAGE_SCHEMA
        settings_schema = S.SETTINGS_SCHEMA
        decoded = Decoded(
            files_frame,
            pl.DataFrame(schema={**S.LINES_SCHEMA, S.REPLAYED: pl.Boolean()}),
            pl.DataFrame(schema={**S.ITEMS_SCHEMA, S.REPLAYED: pl.Boolean()}),
            marked(pl.DataFrame(usage, schema=usage_schema, orient="row")),
            marked(pl.DataFrame(settings, schema=settings_schema, orient="row")),
            pl.DataFrame(schema={**S.LIMITS_SCHEMA, S.REPLAYED: pl.Boolean()}),
            pl.DataFrame(schema=S.PROBLEMS_SCHEMA),
        )
        return (
            decoded,
            stats_frame,
            marked(pl.DataFrame(items, schema=ITEMS_SCHEMA, orient="row")),
            marked(pl.DataFrame(marks, schema=MARKS_SCHEMA, orient="row")),
        )


def _times(stats: pl.DataFrame, stamps: list[tuple[int, bytes]]) -> pl.DataFrame:
    """Stats with each rollout's earliest and latest moment (``first_time``, ``last_time``): of
    its two timestamps kept, or (rollouts whose timestamps are not all of Codex's shape) of every
    line's, parsed as the lines frame parses them."""
    frame = pl.DataFrame(
        {S.FILE: [index for index, _ in stamps], S.TIMESTAMP: [stamp.decode() for _, stamp in stamps]},
        schema={S.FILE: pl.UInt32(), S.TIMESTAMP: pl.String()},
    )
    every = frame.lazy().group_by(S.FILE).agg(
        utc_time(pl.col(S.TIMESTAMP)).min().alias("_first"), utc_time(pl.col(S.TIMESTAMP)).max().alias("_last")
    )
    return (
        stats.lazy()
        .join(every, on=S.FILE, how="left", maintain_order="left")
        .select(
            S.FILE,
            LINES,
            LAST_LINE,
            pl.coalesce(utc_time(pl.col(MIN_STAMP)), "_first").alias(S.FIRST_TIME),
            pl.coalesce(utc_time(pl.col(MAX_STAMP)), "_last").alias(S.LAST_TIME),
        )
        .collect()
    )


def _file_row(cols: dict[str, list[Any]], index: int, file: TranscriptFile, found: Scan) -> None:
    """A files row as ``decode.Walker._file`` makes it."""
    header = found.header
    cols[S.FILE].append(index)
    cols[S.SOURCE_FILE].append(file.source_file)
    cols[S.SESSION_ID].append(file.session_id)
    cols[S.AGENT_ID].append(file.agent_id)
    cols[S.IS_SUBAGENT_FILE].append(file.is_subagent)
    cols[S.PROJECT_DIR].append(file.project_dir)
    own = header.get("id")
    cols[S.THREAD_ID].append(own if isinstance(own, str) and own else file.agent_id or file.session_id)
    forked = header.get("forked_from_id")
    cols[S.FORKED_FROM_ID].append(forked if isinstance(forked, str) and forked.strip() else None)
    cols[S.PARENT_THREAD_ID].append(spawning_thread(header))
    source = header.get("source")
    cols[S.SOURCE].append(source if isinstance(source, str) or source is None else dumped(source))
    cols[S.PROVIDER].append(string(header.get("model_provider")) or None)
    cols[S.PROJECT].append(string(header.get("cwd")) or None)
    cols[S.CLI_VERSION].append(string(header.get("cli_version")))
    cols[S.REPLAY_START].append(found.replay[0])
    cols[S.REPLAY_END].append(found.replay[1])


# ------------------------------------------------------------------ the summary


def summarize(
    decoded: Decoded, stats: pl.DataFrame, items: pl.DataFrame, marks: pl.DataFrame, requests: pl.DataFrame
) -> pl.DataFrame:
    """One row per session of a lean batch (``SESSIONS_SCHEMA``): what
    :func:`cc_analytics.frames.codex.sessions.summarize` makes of the same rollouts."""
    files = primary_files(decoded)
    attributes = files.select(S.FILE, S.SESSION_ID, PRIMARY)
    primary = pl.col(PRIMARY)
    own = ~pl.col(S.REPLAYED)
    stats_lazy = stats.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    items_lazy = items.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    marks_lazy = marks.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    requests_lazy = requests.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    session = files.group_by(S.SESSION_ID).agg(
        pl.col(S.PROJECT).filter(primary).drop_nulls().first(),
        pl.col(S.PROJECT_DIR).filter(primary).first(),
        pl.coalesce(pl.col(S.PROVIDER).filter(primary).drop_nulls().first(), pl.col(S.PROVIDER).drop_nulls().first()),
        pl.len().cast(pl.Int64).alias(S.FILES),
        pl.col(S.IS_SUBAGENT_FILE).sum().cast(pl.Int64).alias(S.SUBAGENT_FILES),
    )
    # A primary rollout's turns: turn 0 (its first line is the header), then one per prompt of
    # its own (its user_message events; without any, its user messages that are not context).
    code = pl.col(CODE)
    prompts = (code == PROMPT) & own
    legacy = (code == LEGACY) & own
    per_line = stats_lazy.group_by(S.SESSION_ID).agg(
        pl.col(S.FIRST_TIME).min(),
        pl.col(S.LAST_TIME).max(),
        pl.col(LINES).sum().alias(S.EVENTS),
    )
    per_file_turns = (
        stats_lazy.filter(primary)
        .select(S.FILE, S.SESSION_ID)
        .join(
            marks_lazy.group_by(S.FILE).agg(prompts.sum().alias("_prompts"), legacy.sum().alias("_legacy")),
            on=S.FILE,
            how="left",
        )
        .group_by(S.SESSION_ID)
        .agg(
            (
                pl.when(pl.col("_prompts").fill_null(0) > 0)
                .then(pl.col("_prompts"))
                .otherwise(pl.col("_legacy").fill_null(0))
                + 1
            )
            .sum()
            .cast(pl.Int64)
            .alias(S.TURNS)
        )
    )
    # Compactions: a compacted line, or a context_compacted event whose previous marker is not one.
    markers = marks_lazy.filter(code.is_in([COMPACTED, COMPACT_EVENT])).sort(S.FILE, S.LINE)
    previous = code.shift(1).over(S.FILE)
    is_compaction = ((code == COMPACTED) | ((code == COMPACT_EVENT) & previous.ne_missing(COMPACTED))) & own
    compaction_lines = markers.filter(is_compaction & primary)
    compaction_count = compaction_lines.group_by(S.SESSION_ID).agg(pl.len().cast(pl.Int64).alias(S.COMPACTIONS))
    settings = (
        decoded.settings.lazy()
        .filter(pl.col(S.MODEL).is_not_null() & ~pl.col(S.REPLAYED))
        .join(attributes, on=S.FILE, how="left")
        .sort(S.FILE, S.LINE)
    )
    named = settings.group_by(S.SESSION_ID).agg(
        pl.col(S.MODEL).unique(maintain_order=True).alias(S.MODELS),
        pl.col(S.MODEL).filter(primary).last().alias("_named_model"),
    )
    prompt = pl.col(S.INPUT_TOKENS) + cache_creation_tokens() + pl.col(S.CACHE_READ_TOKENS)
    totals = requests_lazy.group_by(S.SESSION_ID).agg(
        pl.col(S.INPUT_TOKENS).sum(),
        cache_creation_tokens().sum().alias(S.CACHE_CREATION_TOKENS),
        pl.col(S.CACHE_READ_TOKENS).sum(),
        pl.col(S.OUTPUT_TOKENS).sum(),
        pl.len().cast(pl.Int64).alias(S.REQUESTS),
        (pl.col(S.CACHE_READ_TOKENS).sum().cast(pl.Float64) / prompt.sum()).alias(S.CACHE_HIT_RATIO),
        *cost_totals(),
        pl.col(S.MODEL).filter(primary).drop_nulls().last().alias("_request_model"),
        pl.col(S.OCCUPANCY).filter(primary).max().alias(S.PEAK_OCCUPANCY),
    )
    ends = stats_lazy.filter(primary).select(S.FILE, pl.col(LAST_LINE).alias(S.LINE))
    end_state = (
        state_at(decoded, ends)
        .join(attributes, on=S.FILE, how="left", maintain_order="left")
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.OCCUPANCY).drop_nulls().last().alias(S.LAST_OCCUPANCY),
            pl.col(S.WINDOW).drop_nulls().last().alias("_recorded_window"),
        )
    )
    compactions = compaction_tokens(decoded, compaction_lines.select(S.SESSION_ID, S.FILE, S.LINE))
    buckets = items_lazy.filter(primary & own).group_by(S.SESSION_ID).agg(*bucket_sums())
    # The context at the end: the header's items and those since the last compacted line.
    last_compacted = marks_lazy.filter(code == COMPACTED).group_by(S.FILE).agg(pl.col(S.LINE).max().alias("_since"))
    now = (
        items_lazy.filter(primary)
        .join(last_compacted, on=S.FILE, how="left")
        .filter(pl.col(IS_HEADER) | (pl.col(S.LINE) >= pl.col("_since").fill_null(0)))
        .group_by(S.SESSION_ID)
        .agg(pl.col(S.TOKENS).sum().alias(S.CONTEXT_ESTIMATE), pl.len().cast(pl.Int64).alias(S.MESSAGES))
    )
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, *TOKEN_COLUMNS, S.REQUESTS, S.TURNS, S.COMPACTIONS]
    zero += [S.CONTEXT_ESTIMATE, S.MESSAGES]
    lists = [S.MODELS, S.COMPACTION_TRIGGERS, S.COMPACTION_PRE_TOKENS, S.COMPACTION_POST_TOKENS]
    summary = (
        session.join(per_line, on=S.SESSION_ID, how="left")
        .join(compaction_count, on=S.SESSION_ID, how="left")
        .join(named, on=S.SESSION_ID, how="left")
        .join(totals, on=S.SESSION_ID, how="left")
        .join(end_state, on=S.SESSION_ID, how="left")
        .join(compactions, on=S.SESSION_ID, how="left")
        .join(buckets, on=S.SESSION_ID, how="left")
        .join(now, on=S.SESSION_ID, how="left")
        .join(per_file_turns, on=S.SESSION_ID, how="left")
        .with_columns(
            pl.col(zero).fill_null(0),
            pl.col(lists).fill_null([]),
            pl.col(S.UNPRICED_REQUESTS).fill_null(0),
            pl.coalesce("_request_model", "_named_model").alias(S.LAST_MODEL),
        )
        .with_columns(
            pl.col(S.LAST_MODEL).alias(S.MODEL),
            pl.col("_recorded_window").alias(S.WINDOW),
            pl.col(S.LAST_OCCUPANCY).alias(S.OCCUPANCY),
            pl.col(S.CONTEXT_ESTIMATE).alias(S.ESTIMATED_CONTEXT),
            pl.when(pl.col(S.LAST_OCCUPANCY).is_not_null()).then(pl.lit("recorded")).alias(S.OCCUPANCY_SOURCE),
            pl.lit(S.CODEX).alias(S.FORMAT),
            pl.lit(None, pl.Int64).alias(S.AUTOCOMPACT_THRESHOLD),
        )
        .with_columns(window_columns())
        .select(list(S.SESSIONS_SCHEMA))
        .sort(S.SESSION_ID)
    )
    return summary.collect().cast(S.SESSIONS_SCHEMA)


# ------------------------------------------------------------------ a batch's tables


ORDER = "_order"


def sessions_tables(files: Sequence[TranscriptFile], contents: Sequence[bytes] | None = None) -> Tables:
    """Sessions (and priced requests, problems; no turns) of one batch: the lean scan for the
    sessions it reads whole, the walker for the others (see the module docstring).

    Examples:
        >>> sessions_tables([]).sessions.height
        0
    """
    from cc_analytics.frames.codex.decode import Profile, decode
    from cc_analytics.frames.codex.sessions import summarize as summarize_decoded
    from cc_analytics.frames.codex.turns import lift_turns

    lean = Batch()
    lean_order: list[int] = []
    unclean: set[str] = set()
    for index, file in enumerate(files):
        if file.session_id in unclean:
            continue
        try:
            data = read_transcript(file.path) if contents is None else contents[index]
            found = scan(data)
        except (OSError, Unclean):
            unclean.add(file.session_id)
            continue
        del data
        lean.files.append(file)
        lean.scans.append(found)
        lean_order.append(index)
    if unclean:
        keep = [i for i, file in enumerate(lean.files) if file.session_id not in unclean]
        lean.files = [lean.files[i] for i in keep]
        lean.scans = [lean.scans[i] for i in keep]
        lean_order = [lean_order[i] for i in keep]
    sessions: list[pl.DataFrame] = []
    requests: list[pl.DataFrame] = []
    problems = pl.DataFrame(schema=S.PROBLEMS_SCHEMA)
    if lean.files:
        decoded, stats, items, marks = lean.frames()
        priced = priced_requests(decoded)
        sessions.append(summarize(decoded, stats, items, marks, priced))
        requests.append(_in_batch_order(priced, lean_order))
    if unclean:
        order = [i for i, file in enumerate(files) if file.session_id in unclean]
        walked = [files[i] for i in order]
        decoded = decode(walked, Profile.TABLES, contents=None if contents is None else [contents[i] for i in order])
        priced = priced_requests(decoded)
        turn_rows = lift_turns(decoded, priced.lazy()).collect()
        sessions.append(summarize_decoded(decoded, turn_rows, priced))
        requests.append(_in_batch_order(priced, order))
        problems = decoded.problems
    if not sessions:
        return Tables(
            pl.DataFrame(schema=S.SESSIONS_SCHEMA),
            pl.DataFrame(schema=S.TURNS_SCHEMA),
            problems,
            pl.DataFrame(schema=S.REQUESTS_SCHEMA),
        )
    joined = pl.concat(requests).sort(ORDER, maintain_order=True).select(list(S.REQUESTS_SCHEMA))
    return Tables(
        pl.concat(sessions).sort(S.SESSION_ID),
        pl.DataFrame(schema=S.TURNS_SCHEMA),
        problems,
        joined,
    )


def _in_batch_order(priced: pl.DataFrame, order: list[int]) -> pl.DataFrame:
    """Priced requests with their file's place in the batch (``_order``)."""
    places = pl.DataFrame(
        {S.FILE: range(len(order)), ORDER: order}, schema={S.FILE: pl.UInt32(), ORDER: pl.Int64()}
    )
    return priced.join(places, on=S.FILE, how="left", maintain_order="left")
