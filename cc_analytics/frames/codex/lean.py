"""The lean decode behind ``cc-analytics sessions``: session summaries and requests, exactly
as the tables profile makes them, or not at all.

Imports: polars, the standard library, ``frames.lines`` (the JSON line policy, as the walker
reads lines), ``frames.estimate``, ``frames.sources`` and the other ``frames.codex`` modules. The sessions command needs of a batch only its session
summaries and priced requests (``iter_tables(turns=False)``). The tables profile
(``decode.py``) keeps a row per line and per detail, for the turns; this scan keeps what the
summary reads: per rollout its header, its line count, last line and earliest and latest
timestamp, its usage and settings rows (the walker's rows, in the walker's schemas), and
what its lines and items add when it is a session's main rollout (:data:`SUMS`: tokens by
bucket, the context at its end, its turns; the lines of its own compactions), summed as it
is read (a fork's replayed lines are known when its file ends). The summary is then made
with the functions and expressions of ``sessions.py``, ``requests.py`` and ``turns.py``
(requests, occupancy, windows, compaction tokens, models), so that each rule has one
definition, and the sums follow ``turns.prepare``, ``turns.is_prompt``,
``turns.is_compaction`` and ``sessions.current_context`` (:func:`_sums`).

**Exact or not at all.** The scan applies the walker's rules to the lines on which nothing
unusual happens, and gives up on a rollout at the first line on which anything else would
(:class:`Unclean`): a line not in Codex's layout (``{"timestamp":"…","type":"…","payload":``)
or not ending with ``}``, one the tables profile parses that does not parse or whose payload
is not an object, a usage count that is not a whole number (or beyond 64 bits), a text only
the estimate's expression can measure, a first line that is not the header, a timestamp that
is not ASCII or holds a control character, an unreadable or empty file. Every rollout of a
session given up on is decoded by the walker (``Profile.TABLES``, then ``sessions.summarize``):
the problems of a batch come from there only. So what ``sessions`` shows equals what the
tables profile shows; ``tests/frames/test_codex_lean.py`` holds it to that on every fixture,
the shared examples, a generated corpus and generated rollouts.

How the scan stays cheap (each step leaves the result as it was):

* a file is mapped, not read (its pages are the page cache's); a line is found with
  ``find`` and typed by one match of its first bytes; only the lines the tables profile parses
  are parsed, from a ``memoryview`` slice (no copy); items' texts are measured as they are read
  (``frames.estimate.text_tokens``) and only their tokens kept;
* of a ``token_count`` in Codex's layout (``…,"info":INFO,"rate_limits":LIMITS}}``), only
  ``INFO`` is parsed: the line is JSON when the two values are, and rate limits that parsed
  once are remembered (they repeat). A count whose bytes after the timestamp are the previous
  one's is read once, and when it has a cumulative total its row is left out: it makes no
  request and no occupancy, and its totals and window are the row's it repeats
  (``requests.usage_rows``); its model is still named;
* the timestamps of a rollout are compared as bytes when they all have Codex's shape
  (``2025-12-18T10:00:00.000Z``: then byte order is time order), so only the earliest and the
  latest are parsed.
"""

from __future__ import annotations

import mmap
import re
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from typing import Any

import polars as pl

from cc_analytics.frames import extension
from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.decode import (
    BURST,
    LINE_HEAD,
    NO_USAGE,
    TRUNCATED,
    UNMEASURED_ITEMS,
    Decoded,
    append_file_row,
)
from cc_analytics.frames.codex.requests import priced_requests, usage_rows, utc_time
from cc_analytics.frames.codex.sessions import (
    PRIMARY,
    TOKEN_COLUMNS,
    Tables,
    compaction_tokens,
    named_models,
    primary_files,
    request_totals,
)
from cc_analytics.frames.codex.turns import INJECTED_PREFIXES, state_at, window_columns
from cc_analytics.frames.codex.values import NOT_JSON, content_text, parse_time, string, text_of_item, usage_model
from cc_analytics.frames.estimate import text_tokens
from cc_analytics.frames.lines import read_line, read_value
from cc_analytics.frames.sources import TranscriptFile, open_transcript
from cc_analytics.jsonline import LineError

# What a mark row says of its line.
PROMPT = 0  # an event_msg user_message (a prompt)
LEGACY = 1  # a response_item message of role user that is not injected context (a prompt before user_message)
COMPACTED = 2  # a compacted line
COMPACT_EVENT = 3  # an event_msg context_compacted
MIN_STAMP, MAX_STAMP, LAST_LINE, LINES = "min_stamp", "max_stamp", "last_line", "lines"
UNMEASURED = frozenset(kind.encode() for kind in UNMEASURED_ITEMS)
# Codex's own timestamps: every digit where this has a 0, the rest as written.
STAMP_SHAPE = b"0000-00-00T00:00:00.000Z"
DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
CONTROL = re.compile(rb"[\x00-\x1f]")
INT64_MAX = 2**63 - 1

# Per rollout, what its lines and items add when it is a session's main rollout: its own
# items' tokens by bucket and in all, the context at its end (tokens, items) and its turns.
SUMS = (*S.BUCKETS, S.ESTIMATED_TOKENS, S.CONTEXT_ESTIMATE, S.MESSAGES, S.TURNS)
STATS_SCHEMA = pl.Schema(
    {
        S.FILE: pl.UInt32(),
        LINES: pl.Int64(),
        LAST_LINE: pl.Int64(),
        MIN_STAMP: pl.String(),
        MAX_STAMP: pl.String(),
        **{name: pl.Int64() for name in SUMS},
    }
)
COMPACTIONS_SCHEMA = pl.Schema({S.FILE: pl.UInt32(), S.LINE: pl.Int64()})


# The optional C loop over clean lines (``_scan.c``, see ``frames.extension``): None when it was
# not built or the environment asks for pure Python; :func:`scan` then reads every line in Python,
# with the same result.
NATIVE = "cc_analytics.frames.codex._scan"
_EXTENSION = extension.load(NATIVE)
SCAN_LINES: Any = None if _EXTENSION is None else _EXTENSION.scan_lines
ITEM_SUMS: Any = None if _EXTENSION is None else _EXTENSION.item_sums
STAMP_SIZE = len(STAMP_SHAPE)
# A usage row's numbers, packed (as the C loop packs them): its line, then a count's values but
# its model (has_total, the six totals, has_last, the six last counts, the window), native int64
# each, NULL_COUNT for None (no count is negative); its timestamp and model are kept in lists.
USAGE_NUMBERS = (S.LINE, *(name for name in S.USAGE_SCHEMA if name not in (S.FILE, S.LINE, S.TIMESTAMP, S.USAGE_MODEL)))
USAGE_ROW = struct.Struct(f"={len(USAGE_NUMBERS)}q")
NULL_COUNT = -(2**63)
# The buckets of the items the C loop packs, in its codes' order (_scan.c: B_SYSTEM...).
PACKED_BUCKETS = ("system", "user", "assistant", "tool", "tool_calls")


class Unclean(Exception):
    """A rule the lean scan does not apply fired on a line: the rollout goes to the walker."""


@dataclass(slots=True)
class Scan:
    """What the lean scan keeps of one rollout: its header, the lines its fork replayed, its
    line count and last line, its earliest and latest timestamp (or every line's, when they
    are not all of Codex's shape), its usage rows (packed: :data:`USAGE_ROW`; their
    timestamps and models) and settings rows (``SETTINGS_SCHEMA`` without the file), its sums
    (:data:`SUMS`) and the lines of its own compactions."""

    header: dict[str, Any]
    replay: tuple[int, int]
    lines: int
    last_line: int
    stamps: tuple[str, str] | list[bytes]
    usage: bytearray  # its rows' numbers, packed (USAGE_ROW)
    usage_stamps: list[str]
    usage_models: list[str | None]
    settings: list[tuple[Any, ...]]
    sums: tuple[int, ...]
    compactions: list[int]
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, reason) of the lines skipped


def scan(data: bytes | mmap.mmap, *, native: bool = True, release: bool = False) -> Scan:
    """The lean scan of one rollout's bytes (or a map of its file); :class:`Unclean` when the
    walker must read it.

    With the C extension (and ``native``), its loop (``_scan.c``: :data:`SCAN_LINES`) reads the
    clean lines and hands each other line to this one; the result is the same. When the
    timestamps of a rollout are not all of Codex's shape, every one is needed, so such a
    rollout is scanned again in Python alone. ``release``: ``data`` is a shared mapping of a
    file, whose pages the C loop hands back as it reads on (a big rollout's pages do not all
    stay in the process's memory).

    Examples:
        >>> rows = [b'{"timestamp":"2025-10-01T10:00:00.000Z","type":"session_meta","payload":{"id":"a"}}',
        ...         b'{"timestamp":"2025-10-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}']
        >>> found = scan(b"\\n".join(rows) + b"\\n")
        >>> found.lines, found.stamps, found.sums[-1]  # two lines, two turns (turn 0 and a prompt's)
        (2, ('2025-10-01T10:00:00.000Z', '2025-10-01T10:00:01.000Z'), 2)
        >>> scan(b"[1]\\n")
        Traceback (most recent call last):
        ...
        cc_analytics.frames.codex.lean.Unclean: line 1
    """
    size = len(data)
    find = data.find
    match = LINE_HEAD.match
    view = memoryview(data)
    loads = read_line
    stamps: list[bytes] = []
    add_stamp = stamps.append
    usage = bytearray()  # the usage rows' numbers, packed (USAGE_ROW), and beside them:
    usage_stamps: list[str] = []
    usage_models: list[str | None] = []
    pack_row = USAGE_ROW.pack
    settings: list[tuple[Any, ...]] = []
    items: list[tuple[Any, ...]] = []
    packed = bytearray()  # the C loop's items, packed (ITEM_SUMS adds them up)
    marks: list[tuple[int, int]] = []
    add_setting, add_item, add_mark = settings.append, items.append, marks.append
    limits: set[bytes] = set()  # rate-limit values seen to parse
    problems: list[tuple[int, str]] = []  # the lines that are not JSON, skipped as the walker skips them
    header: dict[str, Any] | None = None
    fork = False
    anchor: datetime | None = None
    replay_start = replay_end = 0
    last_body: bytes | None = None
    last_values: tuple[Any, ...] | None = None
    number = last_line = 0
    pos = 0
    scan_lines = SCAN_LINES if native else None
    sink = (usage, usage_stamps, usage_models, settings, packed, marks)
    # The C loop's state (see _scan.c): lines it took, the last line with a head, the offsets
    # of its earliest and latest timestamp, the span of the last count's body and its values,
    # whether a fork's leading burst is open (then the token counts are read here).
    state: list[Any] = [0, 0, -1, -1, -1, -1, None, False]
    last_span = (-1, -1)
    released = 0  # with release: the pages before this offset were handed back
    try:
        while pos < size:
            if scan_lines is not None:
                state[1], state[4], state[5], state[6], state[7] = (
                    last_line,
                    *last_span,
                    last_values,
                    anchor is not None,
                )
                found = scan_lines(data, pos, number, sink, state, release)
                last_line, last_values = state[1], state[6]
                if (state[4], state[5]) != last_span:
                    last_span = (state[4], state[5])
                    last_body = data[last_span[0] : last_span[1]]
                if found is None:
                    break
                pos, end, number = found
                if release and pos - released >= RELEASE_BYTES:  # what the calls before read
                    released = _release(data, released, pos)
            else:
                end = find(b"\n", pos)
                if end < 0:
                    end = size
                number += 1
            stop = end
            if end == pos or data[end - 1] != 0x7D:  # not a line of an object: empty, CRLF, or other
                if end > pos and data[end - 1] == 0x0D:
                    stop = end - 1
                if stop == pos:
                    pos = end + 1
                    continue
                if data[stop - 1] != 0x7D:
                    problems.append(_not_json(view[pos:stop], number, end == size))
                    pos = end + 1
                    continue
            head = match(data, pos, stop)
            if head is None:
                problems.append(_not_json(view[pos:stop], number, end == size))
                pos = end + 1
                continue
            raw_stamp, kind, payload_type = head.groups()
            add_stamp(raw_stamp)
            line_before, values_before = last_line, last_values
            last_line = number
            try:
                if kind == b"response_item":
                    if payload_type in UNMEASURED:
                        pass
                    elif payload_type is None:
                        raise Unclean(f"line {number}")
                    else:
                        value = loads(view[pos:stop])
                        payload = value.get("payload") if type(value) is dict else None
                        if type(payload) is not dict:
                            raise Unclean(f"line {number}")
                        item_type = payload.get("type")
                        if item_type == "function_call_output":
                            output = payload.get("output")
                            if type(output) is str:
                                add_item((number, "tool", (len(output) + 3) >> 2 if output.isascii() else _tokens(output), False))  # fmt: skip
                                pos = end + 1
                                continue
                        elif item_type == "function_call":
                            name, arguments = payload.get("name"), payload.get("arguments")
                            if type(name) is str and type(arguments) is str:
                                if name.isascii() and arguments.isascii():
                                    tokens = (len(name) + len(arguments) + 4) >> 2  # "name arguments"
                                else:
                                    tokens = _tokens(f"{name} {arguments}")
                                add_item((number, "tool_calls", tokens, False))
                                pos = end + 1
                                continue
                        bucket, text = text_of_item(payload)
                        if bucket is not None:
                            add_item((number, bucket, (len(text) + 3) >> 2 if text.isascii() else _tokens(text), False))
                        if (
                            payload_type == b"message"
                            and payload.get("type") == "message"
                            and payload.get("role") == "user"
                            and not text.startswith(INJECTED_PREFIXES)
                        ):
                            add_mark((number, LEGACY))
                elif kind == b"event_msg":
                    if payload_type == b"token_count":
                        cut = head.end()
                        body = data[cut:stop]
                        repeat = body == last_body
                        if not repeat:
                            last_values = MISSING
                            if cut - pos == len(raw_stamp) + COUNT_HEAD:  # no ordinal: Codex's layout
                                last_values = _count_of_body(body, view[cut:stop], limits)
                            if last_values is MISSING:
                                last_values = _count(_payload(loads(view[pos:stop])))
                            last_body = body
                            last_span = (cut, stop)
                        if last_values is not None:
                            stamp = raw_stamp.decode()
                            # The row of a repeat with a total changes nothing (``requests.usage_rows``:
                            # not advanced, so no request and no occupancy; its totals and window are
                            # the previous row's): left out. Its model is still named (below).
                            if not (repeat and last_values[0]):
                                usage += pack_row(number, *[NULL_COUNT if v is None else v for v in last_values[:-1]])
                                usage_stamps.append(stamp)
                                usage_models.append(last_values[-1])
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
                        if len(stamps) + state[0] > 1:  # the first line is not the header: turn 0 may not be
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
            except LineError as exc:  # a line the walker parses that is not JSON: skipped, a problem
                stamps.pop()
                last_line, last_values = line_before, values_before
                problems.append((number, TRUNCATED if end == size else NOT_JSON.format(exc.reason)))
            pos = end + 1
    except LineError as exc:
        raise Unclean(f"line {number}") from exc
    finally:
        view.release()
    if header is None:
        raise Unclean("no lines")
    if fork and replay_end < replay_start:
        replay_start = replay_end = 0
    replay = (replay_start, replay_end)
    taken = state[0]
    if taken:  # the earliest and latest timestamps of the lines the C loop took
        stamps += (data[state[2] : state[2] + STAMP_SIZE], data[state[3] : state[3] + STAMP_SIZE])
    ends = _stamps(stamps)
    if taken and not isinstance(ends, tuple):
        return scan(data, native=False)
    sums, compactions = _sums(items, marks, replay, packed)
    lines = len(stamps) - 2 * (taken > 0) + taken
    found = Scan(header, replay, lines, last_line, ends, usage, usage_stamps, usage_models, settings, sums, compactions)
    found.problems = problems
    return found


def _not_json(line: memoryview, number: int, last: bool) -> tuple[int, str]:
    """The problem of a line not in Codex's layout that is not JSON either (the walker skips it
    with this reason: ``TRUNCATED`` for the last line of a file that does not end with a line
    feed); :class:`Unclean` when it is JSON."""
    try:
        read_line(line)
    except LineError as exc:
        return number, TRUNCATED if last else NOT_JSON.format(exc.reason)
    raise Unclean(f"line {number}")


RELEASE_BYTES = 32 * 2**20  # as _scan.c's


def _release(data: bytes | mmap.mmap, start: int, end: int) -> int:
    """Hand back the pages of the mapping ``data`` between ``start`` and ``end`` (MADV_DONTNEED:
    a shared file mapping's pages stay in the page cache and map again if read); ``end``."""
    advise = getattr(data, "madvise", None)
    if advise is not None and hasattr(mmap, "MADV_DONTNEED"):
        first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
        last = end - end % mmap.PAGESIZE
        if last > first:
            advise(mmap.MADV_DONTNEED, first, last - first)
    return end


def _sums(
    items: list[tuple[Any, ...]], marks: list[tuple[int, int]], replay: tuple[int, int], packed: bytearray
) -> tuple[tuple[int, ...], list[int]]:
    """A rollout's :data:`SUMS` from its items (line, bucket, tokens, is_header; and those the C
    loop packed) and marks (line, code), and the lines of its own compactions; what
    ``sessions.summarize`` reads of its lines and items when it is a session's main rollout
    (``turns.prepare``, ``turns.is_prompt``, ``turns.is_compaction``, ``sessions.current_context``)."""
    start, end = replay
    since = 0  # the last compacted line: its items and those after it are the context
    prompts = legacy = 0
    compactions: list[int] = []
    previous = None
    for line, code in marks:
        mine = not (end and start <= line <= end)
        if code == PROMPT:
            prompts += mine
        elif code == LEGACY:
            legacy += mine
        else:
            if (code == COMPACTED or previous != COMPACTED) and mine:
                compactions.append(line)
            if code == COMPACTED:
                since = line
            previous = code
    buckets = dict.fromkeys(S.BUCKET_NAMES, 0)
    context = messages = 0
    for line, bucket, tokens, is_header in items:
        if is_header or line >= since:
            context += tokens
            messages += 1
        if not (end and start <= line <= end):
            buckets[bucket] += tokens
    if packed:
        *by_bucket, packed_context, packed_messages = ITEM_SUMS(packed, start, end, since)
        for bucket, tokens in zip(PACKED_BUCKETS, by_bucket, strict=True):
            buckets[bucket] += tokens
        context += packed_context
        messages += packed_messages
    own = tuple(buckets.values())
    return (*own, sum(own), context, messages, (prompts or legacy) + 1), compactions


# ------------------------------------------------------------------ token counts

# A token_count's first bytes up to its payload type, in Codex's layout, less its timestamp.
COUNT_HEAD = len(b'{"timestamp":"","type":"event_msg","payload":{"type":"token_count"')
MISSING: Any = object()
INFO = b',"info":'
RATE_LIMITS = b',"rate_limits":'
NULL_INFO = INFO + b"null" + RATE_LIMITS
LIMITS_KEPT = 4096


def _count_of_body(body: bytes, view: memoryview, limits: set[bytes]) -> tuple[Any, ...] | None:
    """What :func:`_count` reads of a token_count from the bytes after its payload type
    (``body``; ``view``: the same bytes) when they are Codex's ``,"info":INFO,"rate_limits":RATE
    LIMITS}}`` and each of the two values parses, else ``MISSING`` (the line is parsed whole).

    Then the line is JSON (two values between fixed bytes) and its payload has those two keys
    besides ``type``, so only ``info`` is parsed (rate limits that parsed once are remembered:
    they repeat).

    Examples:
        >>> usage = b'{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5,"total_tokens":15}'
        >>> body = b',"info":{"total_token_usage":' + usage + b',"model_context_window":258400},"rate_limits":null}}'
        >>> _count_of_body(body, memoryview(body), set())
        (True, 10, 0, 0, 5, 0, 15, False, None, None, None, None, None, None, 258400, None)
        >>> _count_of_body(body.replace(b":10,", b":010,"), memoryview(body.replace(b":10,", b":010,")), set()) is MISSING
        True
    """
    if not body.endswith(b"}}"):
        return MISSING
    if body.startswith(NULL_INFO):
        return None if _limits_parse(body[len(NULL_INFO) : -2], limits) else MISSING
    split = body.find(RATE_LIMITS, len(INFO))
    if split < 0 or not body.startswith(INFO):
        return MISSING
    rate_limits = body[split + len(RATE_LIMITS) : -2]
    if rate_limits not in limits and not _limits_parse(rate_limits, limits):
        return MISSING
    try:
        info = _read_inside(view[len(INFO) : split])
    except LineError:
        return MISSING
    return _count({}, info)


def _limits_parse(value: bytes, seen: set[bytes]) -> bool:
    """Whether the bytes of a ``rate_limits`` value are JSON (some that are, remembered in ``seen``)."""
    if value in seen:
        return True
    try:
        _read_inside(value)
    except LineError:
        return False
    if len(seen) < LIMITS_KEPT:
        seen.add(value)
    return True


def _read_inside(value: bytes | memoryview) -> Any:
    """``read_line`` of a value read apart from its line, two levels inside it (a payload's), its
    nesting counted as in the line: a value orjson did not read is read again inside two arrays."""
    found, fast = read_value(value)
    if fast:  # orjson's reading: at most 1,024 levels
        return found
    return read_line(b"[[" + bytes(value) + b"]]")[0][0]


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


def _count(payload: dict[str, Any], info: Any = MISSING) -> tuple[Any, ...] | None:
    """A token_count's usage row after its line and timestamp (``USAGE_SCHEMA`` less ``file``,
    ``line``, ``timestamp``), None without an ``info`` object: as ``decode.Walker._read_count``
    reads it (problems excepted: :class:`Unclean`). ``info``: the payload's, when parsed apart
    (then the payload has no other key that names a model)."""
    if info is MISSING:
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
    if payload or not MODEL_KEYS.isdisjoint(info):
        model = usage_model(payload, info)
    else:
        model = None
    return (
        total is not None,
        *(total or NO_USAGE),
        last is not None,
        *(last or NO_USAGE),
        window,
        model,
    )


MODEL_KEYS = frozenset(("model", "model_name", "metadata"))
WHOLE = {int}


def _usage(usage: Any) -> tuple[int, ...] | None:
    """A usage object's six counts (``decode.Walker._usage_of``: a missing or null count is 0;
    a count that is not a whole number is a problem, here :class:`Unclean`)."""
    if type(usage) is not dict:
        return None
    get = usage.get
    cached = get("cached_input_tokens")
    if cached is None:
        cached = get("cache_read_input_tokens", 0)
    values = (
        get("input_tokens", 0),
        cached,
        get("cache_write_input_tokens", 0),
        get("output_tokens", 0),
        get("reasoning_output_tokens", 0),
        get("total_tokens", 0),
    )
    if set(map(type, values)) == WHOLE and min(values) >= 0 and max(values) <= INT64_MAX:
        return values
    out = []
    for amount in values:  # a null count, or a problem
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
    if not joined.isascii() or CONTROL.search(joined):  # lines orjson refuses, or not text
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

    def frames(self) -> tuple[Decoded, pl.DataFrame, pl.DataFrame]:
        """The decoded batch (files, usage and settings as the walker makes them, replayed
        lines marked; no lines, items, limits or problems), its stats (one row per rollout:
        ``STATS_SCHEMA`` with ``first_time`` and ``last_time`` for the stamps) and the lines of
        its own compactions."""
        files: dict[str, list[Any]] = {name: [] for name in S.FILES_SCHEMA}
        stats: list[tuple[Any, ...]] = []
        compactions: list[tuple[int, int]] = []
        every_stamp: list[tuple[int, bytes]] = []
        for index, (file, found) in enumerate(zip(self.files, self.scans, strict=True)):
            _file_row(files, index, file, found)
            ends = found.stamps if isinstance(found.stamps, tuple) else (None, None)
            stats.append((index, found.lines, found.last_line, *ends, *found.sums))
            if not isinstance(found.stamps, tuple):
                every_stamp.extend((index, stamp) for stamp in found.stamps)
            compactions.extend((index, line) for line in found.compactions)
        files_frame = pl.DataFrame(files, schema=S.FILES_SCHEMA)
        replays = {index: found.replay for index, found in enumerate(self.scans) if found.replay[1]}

        def table(per_file: list[list[list[Any]]], schema: pl.Schema) -> pl.DataFrame:
            """One frame of every file's columns (the line first; ``schema`` less the file)."""
            names = [name for name in schema if name != S.FILE]
            columns: list[list[Any]] = [[] for _ in names]
            index: list[int] = []
            replayed: list[bool] = []
            for file_index, file_columns in enumerate(per_file):
                lines = file_columns[0]
                for column, values in zip(columns, file_columns, strict=True):
                    column += values
                index += repeat(file_index, len(lines))
                start, end = replays.get(file_index, (0, 0))
                replayed += [start <= line <= end for line in lines] if end else repeat(False, len(lines))
            return pl.DataFrame(
                {S.FILE: index, **dict(zip(names, columns, strict=True)), S.REPLAYED: replayed},
                schema={**schema, S.REPLAYED: pl.Boolean()},
            )

        def rows_of(rows: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
            return [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in range(width)]

        scans = self.scans
        decoded = Decoded(
            files_frame,
            pl.DataFrame(schema={**S.LINES_SCHEMA, S.REPLAYED: pl.Boolean()}),
            pl.DataFrame(schema={**S.ITEMS_SCHEMA, S.REPLAYED: pl.Boolean()}),
            _usage_frame(scans, replays),
            table([rows_of(found.settings, len(S.SETTINGS_SCHEMA) - 1) for found in scans], S.SETTINGS_SCHEMA),
            pl.DataFrame(schema={**S.LIMITS_SCHEMA, S.REPLAYED: pl.Boolean()}),
            pl.DataFrame(
                [
                    (file.source_file, line, reason)
                    for file, found in zip(self.files, scans, strict=True)
                    for line, reason in found.problems
                ],
                schema=S.PROBLEMS_SCHEMA,
                orient="row",
            ),
        )
        return (
            decoded,
            _times(pl.DataFrame(stats, schema=STATS_SCHEMA, orient="row"), every_stamp),
            pl.DataFrame(compactions, schema=COMPACTIONS_SCHEMA, orient="row"),
        )


def _usage_frame(scans: Sequence[Scan], replays: dict[int, tuple[int, int]]) -> pl.DataFrame:
    """The usage rows of a batch's scans (``USAGE_SCHEMA`` and ``replayed``): their packed
    numbers made columns by Polars (every :data:`USAGE_ROW` is one stride of a flat column; no
    Python object a number), their timestamps and models from the lists beside them.

    Examples:
        >>> row = USAGE_ROW.pack(7, 1, 10, 0, 0, 5, 0, 15, 0, *[NULL_COUNT] * 6, NULL_COUNT)
        >>> found = Scan({}, (0, 0), 7, 7, ("", ""), bytearray(row), ["2025-10-01T10:00:00.000Z"], [None], [], (), [])
        >>> _usage_frame([found], {}).select("line", "total_input", "window", "replayed").rows()
        [(7, 10, None, False)]
    """
    width = len(USAGE_NUMBERS)
    numbers = array("q")
    files = array("I")
    for index, found in enumerate(scans):
        numbers.frombytes(found.usage)
        files.extend(array("I", [index]) * (len(found.usage) // USAGE_ROW.size))
    flat = pl.Series(numbers, dtype=pl.Int64())
    flags = (S.HAS_TOTAL, S.HAS_LAST)
    columns = {
        name: flat.gather_every(width, offset) if offset < len(flat) else pl.Series([], dtype=pl.Int64())
        for offset, name in enumerate(USAGE_NUMBERS)
    }
    starts = [replays.get(index, (0, 0)) for index in range(len(scans))]
    file = pl.col(S.FILE)
    frame = pl.DataFrame(
        {
            S.FILE: pl.Series(files, dtype=pl.UInt32()),
            **columns,
            S.TIMESTAMP: pl.Series([stamp for found in scans for stamp in found.usage_stamps], dtype=pl.String()),
            S.USAGE_MODEL: pl.Series([model for found in scans for model in found.usage_models], dtype=pl.String()),
        }
    )
    start = pl.lit(pl.Series([start for start, _ in starts], dtype=pl.Int64())).gather(file)
    end = pl.lit(pl.Series([end for _, end in starts], dtype=pl.Int64())).gather(file)
    line = pl.col(S.LINE)
    return frame.select(
        *(
            pl.col(name).cast(pl.Boolean())
            if name in flags
            else pl.when(pl.col(name) != NULL_COUNT).then(pl.col(name)).alias(name)
            if name not in (S.FILE, S.LINE, S.TIMESTAMP, S.USAGE_MODEL)
            else pl.col(name)
            for name in S.USAGE_SCHEMA
        ),
        ((end > 0) & (start <= line) & (line <= end)).alias(S.REPLAYED),
    )


def _times(stats: pl.DataFrame, stamps: list[tuple[int, bytes]]) -> pl.DataFrame:
    """Stats with each rollout's earliest and latest moment (``first_time``, ``last_time``): of
    its two timestamps kept, or (rollouts whose timestamps are not all of Codex's shape) of every
    line's, parsed as the lines frame parses them."""
    frame = pl.DataFrame(
        {S.FILE: [index for index, _ in stamps], S.TIMESTAMP: [stamp.decode() for _, stamp in stamps]},
        schema={S.FILE: pl.UInt32(), S.TIMESTAMP: pl.String()},
    )
    every = (
        frame.lazy()
        .group_by(S.FILE)
        .agg(utc_time(pl.col(S.TIMESTAMP)).min().alias("_first"), utc_time(pl.col(S.TIMESTAMP)).max().alias("_last"))
    )
    return (
        stats.lazy()
        .join(every, on=S.FILE, how="left", maintain_order="left")
        .with_columns(
            pl.coalesce(utc_time(pl.col(MIN_STAMP)), "_first").alias(S.FIRST_TIME),
            pl.coalesce(utc_time(pl.col(MAX_STAMP)), "_last").alias(S.LAST_TIME),
        )
        .drop(MIN_STAMP, MAX_STAMP, "_first", "_last")
        .collect()
    )


def _file_row(cols: dict[str, list[Any]], index: int, file: TranscriptFile, found: Scan) -> None:
    """A files row as ``decode.Walker._file`` makes it."""
    append_file_row(cols, index, file, found.header, found.replay)


# ------------------------------------------------------------------ the summary


def summarize(
    decoded: Decoded, stats: pl.DataFrame, compactions: pl.DataFrame, requests: pl.DataFrame, usage: pl.DataFrame
) -> pl.DataFrame:
    """One row per session of a lean batch (``SESSIONS_SCHEMA``): what
    :func:`cc_analytics.frames.codex.sessions.summarize` makes of the same rollouts, from the
    frames of :meth:`Batch.frames`, the priced requests and ``usage_rows`` of the batch."""
    files = primary_files(decoded)
    attributes = files.select(S.FILE, S.SESSION_ID, PRIMARY)
    primary = pl.col(PRIMARY)
    usage_lazy = usage.lazy()
    stats_lazy = stats.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    requests_lazy = requests.lazy().join(attributes, on=S.FILE, how="left", maintain_order="left")
    session = files.group_by(S.SESSION_ID).agg(
        pl.col(S.PROJECT).filter(primary).drop_nulls().first(),
        pl.col(S.PROJECT_DIR).filter(primary).first(),
        pl.coalesce(pl.col(S.PROVIDER).filter(primary).drop_nulls().first(), pl.col(S.PROVIDER).drop_nulls().first()),
        pl.len().cast(pl.Int64).alias(S.FILES),
        pl.col(S.IS_SUBAGENT_FILE).sum().cast(pl.Int64).alias(S.SUBAGENT_FILES),
    )
    per_file = stats_lazy.group_by(S.SESSION_ID).agg(
        pl.col(S.FIRST_TIME).min(),
        pl.col(S.LAST_TIME).max(),
        pl.col(LINES).sum().alias(S.EVENTS),
        *(pl.col(name).filter(primary).sum() for name in SUMS),
    )
    marked = compactions.lazy().join(attributes, on=S.FILE, how="left").filter(primary)
    compaction_count = marked.group_by(S.SESSION_ID).agg(pl.len().cast(pl.Int64).alias(S.COMPACTIONS))
    named = named_models(decoded, attributes, primary)
    totals = request_totals(requests_lazy, primary)
    ends = stats_lazy.filter(primary).select(S.FILE, pl.col(LAST_LINE).alias(S.LINE))
    end_state = (
        state_at(decoded, ends, usage=usage_lazy, model=False)
        .join(attributes, on=S.FILE, how="left", maintain_order="left")
        .group_by(S.SESSION_ID)
        .agg(
            pl.col(S.OCCUPANCY).drop_nulls().last().alias(S.LAST_OCCUPANCY),
            pl.col(S.WINDOW).drop_nulls().last().alias("_recorded_window"),
        )
    )
    around = compaction_tokens(decoded, marked.select(S.SESSION_ID, S.FILE, S.LINE), usage=usage_lazy)
    zero = [*S.BUCKETS, S.ESTIMATED_TOKENS, *TOKEN_COLUMNS, S.REQUESTS, S.TURNS, S.COMPACTIONS]
    zero += [S.CONTEXT_ESTIMATE, S.MESSAGES]
    lists = [S.MODELS, S.COMPACTION_TRIGGERS, S.COMPACTION_PRE_TOKENS, S.COMPACTION_POST_TOKENS]
    summary = (
        session.join(per_file, on=S.SESSION_ID, how="left")
        .join(compaction_count, on=S.SESSION_ID, how="left")
        .join(named, on=S.SESSION_ID, how="left")
        .join(totals, on=S.SESSION_ID, how="left")
        .join(end_state, on=S.SESSION_ID, how="left")
        .join(around, on=S.SESSION_ID, how="left")
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
        .cast(S.SESSIONS_SCHEMA)
    )
    return summary.collect()


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
            found = scan(contents[index]) if contents is not None else _scan_file(file)
        except (OSError, ValueError, Unclean):
            unclean.add(file.session_id)
            continue
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
    problems: list[pl.DataFrame] = []
    if lean.files:
        decoded, stats, compactions = lean.frames()
        usage = usage_rows(decoded).collect()
        priced = priced_requests(decoded, usage.lazy())
        sessions.append(summarize(decoded, stats, compactions, priced, usage))
        requests.append(_in_batch_order(priced, lean_order))
        problems.append(_problems_in_batch_order(decoded.problems, lean.files, lean_order))
    if unclean:
        order = [i for i, file in enumerate(files) if file.session_id in unclean]
        walked = [files[i] for i in order]
        decoded = decode(walked, Profile.TABLES, contents=None if contents is None else [contents[i] for i in order])
        priced = priced_requests(decoded)
        turn_rows = lift_turns(decoded, priced.lazy()).collect()
        sessions.append(summarize_decoded(decoded, turn_rows, priced))
        requests.append(_in_batch_order(priced, order))
        problems.append(_problems_in_batch_order(decoded.problems, walked, order))
    problem_rows = (
        pl.concat(problems).sort(ORDER, maintain_order=True).drop(ORDER)
        if problems
        else pl.DataFrame(schema=S.PROBLEMS_SCHEMA)
    )
    if not sessions:
        return Tables(
            pl.DataFrame(schema=S.SESSIONS_SCHEMA),
            pl.DataFrame(schema=S.TURNS_SCHEMA),
            problem_rows,
            pl.DataFrame(schema=S.REQUESTS_SCHEMA),
        )
    joined = pl.concat(requests).sort(ORDER, maintain_order=True).select(list(S.REQUESTS_SCHEMA))
    return Tables(
        pl.concat(sessions).sort(S.SESSION_ID),
        pl.DataFrame(schema=S.TURNS_SCHEMA),
        problem_rows,
        joined,
    )


def requests_tables(
    files: Sequence[TranscriptFile], contents: Sequence[bytes] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The priced requests (``REQUESTS_SCHEMA``, in batch and line order) and the problems of one
    batch, what the ``usage`` command reads: the lean scan for the rollouts it reads whole, the
    walker's usage profile for the others. A rollout's requests depend on its own lines only, so
    each is read by one or the other (the problems come from the walker only: a rollout the lean
    scan reads has none). ``contents``: each file's bytes, when read elsewhere.

    Examples:
        >>> [frame.height for frame in requests_tables([])]
        [0, 0]
    """
    from cc_analytics.frames.codex.decode import Profile, decode
    from cc_analytics.frames.codex.requests import request_rows
    from cc_analytics.frames.prices import price_requests

    lean = Batch()
    lean_order: list[int] = []
    walked: list[int] = []
    for index, file in enumerate(files):
        try:
            found = scan(contents[index]) if contents is not None else _scan_file(file)
        except (OSError, ValueError, Unclean):
            walked.append(index)
            continue
        if found.problems:  # the usage profile parses fewer lines, so has fewer problems: the walker's
            walked.append(index)
            continue
        lean.files.append(file)
        lean.scans.append(found)
        lean_order.append(index)
    parts: list[pl.DataFrame] = []
    problems = pl.DataFrame(schema=S.PROBLEMS_SCHEMA)
    for decoded, order in (
        (lean.frames()[0] if lean.files else None, lean_order),
        (
            decode([files[i] for i in walked], Profile.USAGE, contents=_some(contents, walked)) if walked else None,
            walked,
        ),
    ):
        if decoded is None:
            continue
        priced = price_requests(request_rows(decoded, keep=(S.FILE,)).collect())
        parts.append(_in_batch_order(priced, order))
        if order is walked:
            problems = decoded.problems
    if not parts:
        return pl.DataFrame(schema=S.REQUESTS_SCHEMA), problems
    requests = pl.concat(parts).sort(ORDER, maintain_order=True).select(list(S.REQUESTS_SCHEMA))
    return requests, problems


def _some(contents: Sequence[bytes] | None, order: list[int]) -> list[bytes] | None:
    return None if contents is None else [contents[i] for i in order]


def _scan_file(file: TranscriptFile) -> Scan:
    """:func:`scan` of a rollout's file, mapped rather than read: its pages are the page
    cache's, not copies (an empty file cannot be mapped: ValueError, as for any other failure
    the walker reads it)."""
    with open_transcript(file.path) as handle:
        data = mmap.mmap(handle.fileno(), 0, flags=MAP_FLAGS, prot=mmap.PROT_READ)
    try:
        return scan(data, release=True)
    finally:
        try:
            data.close()
        except BufferError:  # a view still held by an exception being raised: closed when it goes
            pass


# Shared and read-only. Not populated at once (MAP_POPULATE): CPython's mmap() holds the GIL
# while the kernel maps every page, which kept the other batch thread waiting (a Python loop beside
# a thread mapping files ran at a quarter of its speed, against a half without it); the pages are
# mapped as the C loop reads them, without the GIL, for about the same CPU.
MAP_FLAGS = mmap.MAP_SHARED


def _problems_in_batch_order(problems: pl.DataFrame, files: Sequence[TranscriptFile], order: list[int]) -> pl.DataFrame:
    """Problem rows with their file's place in the batch (``_order``): ``files`` are those the
    rows were read from, ``order`` their places."""
    places = pl.DataFrame(
        {S.SOURCE_FILE: [file.source_file for file in files], ORDER: order},
        schema={S.SOURCE_FILE: pl.String(), ORDER: pl.Int64()},
    ).unique(S.SOURCE_FILE, keep="first", maintain_order=True)
    return problems.join(places, on=S.SOURCE_FILE, how="left", maintain_order="left")


def _in_batch_order(priced: pl.DataFrame, order: list[int]) -> pl.DataFrame:
    """Priced requests with their file's place in the batch (``_order``)."""
    places = pl.DataFrame({S.FILE: range(len(order)), ORDER: order}, schema={S.FILE: pl.UInt32(), ORDER: pl.Int64()})
    return priced.join(places, on=S.FILE, how="left", maintain_order="left")
