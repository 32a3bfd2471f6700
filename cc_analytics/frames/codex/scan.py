"""The lean scan of one Codex rollout: what ``cc-analytics sessions`` and ``usage`` need of its
lines (:class:`Scan`), read without building a row per line; ``lean.py`` makes a batch's frames
and summary of the scans.

Imports: the standard library, the C loop ``_scan`` when built (``frames.extension``),
``frames.lines`` and ``jsonline`` (the JSON line policy), ``frames.estimate``, ``frames.sources``
and ``frames.codex``'s ``schema`` names and ``values``; never Polars (the scan is the per-file
half of the lean decode: what a batch's rollouts hold, in plain Python values).

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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cc_analytics.frames import extension
from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.values import (
    INJECTED_PREFIXES,
    LINE_HEAD,
    NO_USAGE,
    NOT_JSON,
    TRUNCATED,
    UNMEASURED_ITEMS,
    burst_step,
    content_text,
    parse_time,
    string,
    text_of_item,
    usage_model,
)
from cc_analytics.frames.estimate import text_tokens
from cc_analytics.frames.lines import read_line, read_value
from cc_analytics.frames.sources import TranscriptFile, open_transcript
from cc_analytics.jsonline import LineError

# What a mark row says of its line.
PROMPT = 0  # an event_msg user_message (a prompt)
LEGACY = 1  # a response_item message of role user that is not injected context (a prompt before user_message)
COMPACTED = 2  # a compacted line
COMPACT_EVENT = 3  # an event_msg context_compacted
UNMEASURED = frozenset(kind.encode() for kind in UNMEASURED_ITEMS)
# Codex's own timestamps: every digit where this has a 0, the rest as written.
STAMP_SHAPE = b"0000-00-00T00:00:00.000Z"
DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
CONTROL = re.compile(rb"[\x00-\x1f]")
INT64_MAX = 2**63 - 1

# Per rollout, what its lines and items add when it is a session's main rollout: its own
# items' tokens by bucket and in all, the context at its end (tokens, items) and its turns.
SUMS = (*S.BUCKETS, S.ESTIMATED_TOKENS, S.CONTEXT_ESTIMATE, S.MESSAGES, S.TURNS)

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
USAGE_NUMBERS = (S.LINE, S.HAS_TOTAL, *S.TOTAL_FIELDS, S.HAS_LAST, *S.LAST_FIELDS, S.WINDOW)  # USAGE_SCHEMA's order
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
        cc_analytics.frames.codex.scan.Unclean: line 1
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
                                anchor, replay_end = burst_step(anchor, stamp, number, replay_end)
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


def scan_file(file: TranscriptFile) -> Scan:
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
