"""The one line walker of Codex rollouts: bytes in, column lists out, Polars frames at the end.

Imports: polars, the standard library, ``frames.estimate``, ``frames.sources`` and the other
``frames.codex`` modules (``values`` holds the rules of single values). Every line rule is
applied here, once:

* lines are split on LF, one trailing CR dropped, empty lines skipped;
* a line is typed from its first bytes: Codex writes ``{"timestamp":"…","type":"…",
  "payload":{"type":"…"`` in that order, so a match of that prefix gives the line's type,
  payload type and timestamp without parsing it. Only the lines the profile needs are
  parsed, by the JSON line policy (``cc_analytics.jsonline`` through ``frames.lines``: the
  first of a repeated key wins, nesting up to 25,000 levels, integers exact at any length;
  a count or window beyond 64 bits is not one); a line whose first bytes differ, or that
  does not end with ``}``, is always parsed. What does not parse is a problem row
  (the last line of a file without a final LF: a truncated line), and so is a line that is not
  a JSON object, a ``payload`` that is not an object and a usage count that is not a whole
  number ≥ 0; the rest of the file is read;
* the header is the first ``session_meta``; a later one (a fork copies its ancestors'
  headers) is never the file's own;
* a **fork** (the header has ``forked_from_id``) starts with a copy of its parent's history,
  written at the fork instant. The copy is the lines after the header up to the last
  ``token_count`` with usage of the leading burst: those whose timestamp is at most one second
  after the fork instant or after the previous one of the burst (a copy stamped earlier than
  the fork qualifies too), and any later ``session_meta``. Those lines are ``replayed``.

What a caller keeps is its choice of :class:`Profile`: ``USAGE`` reads only the header,
``turn_context``, ``token_count`` and ``thread_settings_applied`` (the requests and rate
limits); ``TABLES`` also keeps one row per line and parses what sessions and turns need
(prompts, messages, tool calls and outputs, compactions), measuring texts with the estimate's
scalar fast path so that they never reach Arrow; ``EVENTS`` keeps the texts too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

import polars as pl

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.codex.store import spawning_thread
from cc_analytics.frames.codex.values import (
    LIMIT_VALUES,
    LINE_HEAD,
    MISSING,
    NO_USAGE,
    TRUNCATED,
    UNMEASURED_ITEMS,
    burst_step,
    content_text,
    dumped,
    limit_rows,
    output_failed,
    parse_line,
    parse_time,
    string,
    text_of_item,
    usage_model,
    whole,
)
from cc_analytics.frames.estimate import text_tokens
from cc_analytics.frames.lines import kind_name
from cc_analytics.frames.sources import TranscriptFile, read_transcript
from cc_analytics.jsonline import INT64_MAX

REPEAT: Any = object()  # a token_count line whose bytes after the timestamp are the previous one's
USAGE_KEYS = (
    ("input_tokens",),
    ("cached_input_tokens", "cache_read_input_tokens"),
    ("cache_write_input_tokens",),
    ("output_tokens",),
    ("reasoning_output_tokens",),
    ("total_tokens",),
)
USAGE_EVENTS = frozenset({"token_count", "thread_settings_applied"})
TABLE_EVENTS = USAGE_EVENTS | {"user_message"}
TEXT_EVENTS = TABLE_EVENTS | {"agent_message"}
# Response items before the envelope (mid 2025): a bare item per line.
LEGACY_ITEMS = frozenset(
    {"message", "function_call", "function_call_output", "local_shell_call", "reasoning", "custom_tool_call"}
)
# A token_count as read: (usage row: total, last, window, model; or None), its limits, a problem found.
Count = tuple[tuple[Any, ...] | None, tuple[tuple[Any, ...], ...], bool]
# The lines of a rollout the usage profile skips: a response item, or an event of another kind,
# in Codex's own layout (any other line is read, and a line that does not parse is a problem).
SKIPPED_BY_USAGE = re.compile(
    rb'\n(?!\{"timestamp":"[^"\\\n]*","type":"(?:response_item|event_msg","payload":\{"type":"(?!token_count"|thread_settings_applied")))'
)

# Problem reasons: each written here and nowhere else (those of a line that is not JSON, and a
# truncated last line, are in ``values.py``).
NOT_OBJECT = "not a JSON object ({}); line skipped"
NOT_PAYLOAD = "{} payload is {}, not an object; line ignored"
BAD_USAGE = "token_count {}.{} is {!r}, not a whole number of at least 0; that usage ignored"
BIG_USAGE = "token_count {}.{} is beyond 64 bits; that usage ignored"
UNREADABLE = "unreadable: {}"


class Profile(Enum):
    """What the walker keeps (see the module docstring)."""

    USAGE = "usage"
    TABLES = "tables"
    EVENTS = "events"


@dataclass(frozen=True, slots=True)
class Decoded:
    """Frames of one batch of rollouts; ``lines`` and ``items`` are empty under ``Profile.USAGE``."""

    files: pl.DataFrame  # FILES_SCHEMA
    lines: pl.DataFrame  # LINES_SCHEMA, plus REPLAYED
    items: pl.DataFrame  # ITEMS_SCHEMA, plus REPLAYED
    usage: pl.DataFrame  # USAGE_SCHEMA, plus REPLAYED
    settings: pl.DataFrame  # SETTINGS_SCHEMA, plus REPLAYED
    limits: pl.DataFrame  # LIMITS_SCHEMA, plus REPLAYED
    problems: pl.DataFrame  # PROBLEMS_SCHEMA


# ------------------------------------------------------------------ the walker


class Walker:
    """Decodes rollouts one after the other into column lists, keeping what ``profile`` asks.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.frames.codex.store import transcript_file
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "rollout-x.jsonl"
        >>> _ = path.write_text('{"timestamp":"2025-12-18T10:00:00.000Z","type":"event_msg",'
        ...     '"payload":{"type":"user_message","message":"hi"}}\\n{"timestamp":"2025-12-18T10:00:01')
        >>> decoded = decode([transcript_file(path)], Profile.TABLES)
        >>> decoded.lines.select("type", "payload_type", "text").rows(), decoded.problems["reason"].to_list()
        ([('event_msg', 'user_message', 'hi')], ['truncated last line (the file may still be being written)'])
    """

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.per_line = profile is not Profile.USAGE
        self.texts = profile is Profile.EVENTS
        self.events = {Profile.USAGE: USAGE_EVENTS, Profile.TABLES: TABLE_EVENTS, Profile.EVENTS: TEXT_EVENTS}[profile]
        self.files: dict[str, list[Any]] = {name: [] for name in S.FILES_SCHEMA}
        self.core: dict[str, list[Any]] = {name: [] for name in S.CORE_COLUMNS}
        self.detail: dict[str, list[Any]] = {name: [] for name in S.DETAIL_COLUMNS}
        self.items: dict[str, list[Any]] = {name: [] for name in S.ITEMS_SCHEMA}
        self.usage: dict[str, list[Any]] = {name: [] for name in S.USAGE_SCHEMA}
        self.settings: dict[str, list[Any]] = {name: [] for name in S.SETTINGS_SCHEMA}
        self.limits: dict[str, list[Any]] = {name: [] for name in S.LIMITS_SCHEMA}
        self.problems: dict[str, list[Any]] = {name: [] for name in S.PROBLEMS_SCHEMA}

    # -- files

    def add(self, file: TranscriptFile, data: bytes | None = None) -> None:
        """Decode one rollout (read from its path unless ``data`` is given); an unreadable one is
        a problem and a file without lines."""
        if data is None:
            try:
                data = read_transcript(file.path)
            except OSError as exc:
                self._problem(file, None, UNREADABLE.format(exc.strerror or exc))
                self._file(file, {}, 0, 0)
                return
        self.walk(file, data)

    def needs(self, kind: str, payload_type: str | None) -> bool:
        """Whether the profile parses a line of this type (the header is parsed apart)."""
        if kind == "turn_context":
            return True
        if kind == "event_msg":
            # No payload type in the first bytes: the payload is parsed to tell it (or its fault).
            return payload_type is None or payload_type in self.events
        if not self.per_line:
            return False
        if kind == "response_item":
            return payload_type not in UNMEASURED_ITEMS
        return kind == "compacted"

    def walk(self, file: TranscriptFile, data: bytes) -> None:
        """Apply every line rule to the bytes of one rollout."""
        index = len(self.files[S.FILE])
        per_line = self.per_line
        core = self.core
        add_file, add_line, add_stamp = core[S.FILE].append, core[S.LINE].append, core[S.TIMESTAMP].append
        add_type, add_payload_type = core[S.TYPE].append, core[S.PAYLOAD_TYPE].append
        match_head = LINE_HEAD.match
        needs = self.needs
        header: dict[str, Any] | None = None
        fork = False
        anchor: datetime | None = None  # while a fork's leading burst is open: its latest moment
        replay_start = replay_end = 0
        last_count: Count = (None, (), False)
        last_body: bytes | None = None  # what follows the timestamp on the last token_count read
        torn = 0 if data.endswith(b"\n") else data.count(b"\n") + 1
        numbered = enumerate(data.split(b"\n"), start=1) if per_line else usage_lines(data)
        for number, line in numbered:
            if not line:
                continue
            if line[-1] == 0x0D:
                line = line[:-1]
                if not line:
                    continue
            head = match_head(line)
            body: bytes | None = None
            value: Any = None
            stamp: str | None = None
            payload_type: str | None = None
            if head is not None and line[-1] == 0x7D:
                raw_stamp, raw_kind, raw_payload_type = head.groups()
                try:
                    stamp = raw_stamp.decode()
                except UnicodeDecodeError:
                    head = None
            else:
                head = None
            if head is not None:
                kind: Any = raw_kind.decode()
                payload_type = raw_payload_type.decode() if raw_payload_type else None
                if payload_type == "token_count":
                    body = line[head.end() :]
                if body is not None and body == last_body:
                    value = REPEAT  # Codex writes the same event again: read it once
                elif (kind == "session_meta" and header is None) or needs(kind, payload_type):
                    value, reason = parse_line(line)
                    if value is MISSING:
                        self._problem(file, number, TRUNCATED if number == torn else reason or "")
                        continue
            else:
                value, reason = parse_line(line)
                if value is MISSING:
                    self._problem(file, number, TRUNCATED if number == torn else reason or "")
                    continue
                if not isinstance(value, dict):
                    self._problem(file, number, NOT_OBJECT.format(kind_name(value)))
                    continue
                kind, payload_type, value = _envelope(value, header is None)
                stamp = string(value.get("timestamp"))
            if payload_type is None and isinstance(value, dict) and isinstance(value.get("payload"), dict):
                payload_type = string(value["payload"].get("type"))
            if per_line:
                add_file(index)
                add_line(number)
                add_stamp(stamp)
                add_type(kind)
                add_payload_type(payload_type)
            if kind == "session_meta":
                if header is not None:
                    if fork:  # an ancestor's header, copied with its history
                        replay_end = max(replay_end, number)
                    continue
                payload = value.get("payload")
                if not isinstance(payload, dict):
                    self._problem(file, number, NOT_PAYLOAD.format(kind, kind_name(payload)))
                    header = {}
                    continue
                header = payload
                if isinstance(payload.get("forked_from_id"), str) and payload["forked_from_id"].strip():
                    fork = True
                    replay_start = number + 1
                    anchor = parse_time(stamp) or parse_time(payload.get("timestamp"))
                if per_line:
                    self._meta(index, number, payload)
                continue
            if value is None or not isinstance(kind, str) or not needs(kind, payload_type):
                continue
            payload = {} if value is REPEAT else value.get("payload")
            if not isinstance(payload, dict):
                self._problem(file, number, NOT_PAYLOAD.format(kind, kind_name(payload)))
                continue
            if kind == "event_msg":
                if payload_type == "token_count":
                    if value is not REPEAT:
                        last_count = self._read_count(file, number, payload)
                        last_body = None if last_count[2] else body
                    used = self._add_count(index, number, stamp, last_count)
                    if anchor is not None and used:
                        anchor, replay_end = burst_step(anchor, stamp, number, replay_end)
                elif payload_type == "thread_settings_applied":
                    settings = payload.get("thread_settings")
                    if isinstance(settings, dict) and "service_tier" in settings:
                        self._setting(index, number, None, string(settings["service_tier"]), sets_tier=True)
                elif payload_type == "user_message":
                    self._detail(index, number, role="user", text=string(payload.get("message")))
                elif payload_type == "agent_message":
                    self._detail(index, number, role="assistant", text=string(payload.get("message")))
            elif kind == "response_item":
                self._response_item(index, number, payload, False)
            elif kind == "turn_context":
                model = payload.get("model")
                model = model.strip() if isinstance(model, str) and model.strip() else None
                if model is not None:
                    self._setting(index, number, model, None, sets_tier=False)
                if per_line:
                    self._detail(
                        index,
                        number,
                        model=model,
                        cwd=string(payload.get("cwd")),
                        turn_id=string(payload.get("turn_id")),
                    )
            elif kind == "compacted":
                history = payload.get("replacement_history")
                message = string(payload.get("message"))
                if isinstance(history, list):
                    for entry in history:
                        if isinstance(entry, dict):
                            self._response_item(index, number, entry, True)
                elif message:  # before replacement histories: the summary stands for the history
                    self._item(index, number, "user", message, True)
                if self.texts:
                    self._detail(index, number, text=message)
        if fork and replay_end < replay_start:
            replay_start = replay_end = 0
        self._file(file, header or {}, replay_start, replay_end)

    # -- what each kind of line adds

    def _meta(self, index: int, number: int, payload: dict[str, Any]) -> None:
        instructions = payload.get("base_instructions")
        text = content_text(instructions) if isinstance(instructions, dict | str) else ""
        if not text and isinstance(payload.get("instructions"), str):
            text = payload["instructions"]
        if text:
            self._item(index, number, "system", text, False)
        self._detail(index, number, cwd=string(payload.get("cwd")))

    def _read_count(self, file: TranscriptFile, number: int, payload: dict[str, Any]) -> Count:
        """What a ``token_count`` records: (its usage row's values or None, its rate-limit rows,
        whether a problem was found)."""
        problems = len(self.problems[S.LINE])
        limits = payload.get("rate_limits")
        windows = limit_rows(limits) if type(limits) is dict else ()
        info = payload.get("info")
        if type(info) is not dict:
            return None, windows, False
        total = self._usage_of(file, number, info, "total_token_usage")
        last = self._usage_of(file, number, info, "last_token_usage")
        window = info.get("model_context_window")
        window = window if type(window) is int and 0 < window <= INT64_MAX else None
        row = (total, last, window, usage_model(payload, info))
        return row, windows, len(self.problems[S.LINE]) > problems

    def _add_count(self, index: int, number: int, stamp: str | None, count: Count) -> bool:
        """Record a ``token_count``'s usage row and limits; True when it carries usage."""
        row, windows, _ = count
        if windows:
            cols = self.limits
            for window in windows:
                cols[S.FILE].append(index)
                cols[S.LINE].append(number)
                cols[S.TIMESTAMP].append(stamp)
                for name, value in zip(LIMIT_VALUES, window, strict=True):
                    cols[name].append(value)
        if row is None:
            return False
        total, last, window, model = row
        if model is not None:
            self._setting(index, number, model, None, sets_tier=False)
        cols = self.usage
        cols[S.FILE].append(index)
        cols[S.LINE].append(number)
        cols[S.TIMESTAMP].append(stamp)
        cols[S.HAS_TOTAL].append(total is not None)
        cols[S.HAS_LAST].append(last is not None)
        for names, values in ((S.TOTAL_FIELDS, total), (S.LAST_FIELDS, last)):
            for name, amount in zip(names, values or NO_USAGE, strict=True):
                cols[name].append(amount)
        cols[S.WINDOW].append(window)
        cols[S.USAGE_MODEL].append(model)
        if self.texts:
            self._detail(index, number, model=model)
        return total is not None or last is not None

    def _usage_of(self, file: TranscriptFile, number: int, info: dict, key: str) -> tuple[int, ...] | None:
        usage = info.get(key)
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
        if all(type(amount) is int and 0 <= amount <= INT64_MAX for amount in values):
            return values  # type: ignore[return-value]
        out = []
        for names, amount in zip(USAGE_KEYS, values, strict=True):
            if amount is None:
                amount = 0
            elif not whole(amount):
                big = type(amount) is int and amount > 0
                self._problem(
                    file, number, BIG_USAGE.format(key, names[0]) if big else BAD_USAGE.format(key, names[0], amount)
                )
                return None
            out.append(amount)
        return tuple(out)

    def _response_item(self, index: int, number: int, item: dict[str, Any], from_checkpoint: bool) -> None:
        bucket, text = text_of_item(item)
        if bucket is not None:
            self._item(index, number, bucket, text, from_checkpoint)
        if from_checkpoint:
            return
        kind = item.get("type")
        role = string(item.get("role"))
        if kind == "message":
            keep = self.texts or role == "user"
            self._detail(index, number, role=role, text=text if keep else None)
        elif kind in ("function_call", "custom_tool_call"):
            self._detail(index, number, tool=string(item.get("name")), call_id=string(item.get("call_id")))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            failed = output_failed(item.get("output"))
            self._detail(index, number, call_id=string(item.get("call_id")), is_error=failed)
        elif self.texts and kind == "agent_message":
            self._detail(index, number, text=text)

    def _item(self, index: int, number: int, bucket: str, text: str, from_checkpoint: bool) -> None:
        cols = self.items
        cols[S.FILE].append(index)
        cols[S.LINE].append(number)
        cols[S.BUCKET].append(bucket)
        tokens = text_tokens(text)
        cols[S.TOKENS].append(tokens)
        cols[S.TEXT].append(text if tokens is None else None)
        cols[S.FROM_CHECKPOINT].append(from_checkpoint)

    def _setting(self, index: int, number: int, model: str | None, tier: str | None, *, sets_tier: bool) -> None:
        cols = self.settings
        cols[S.FILE].append(index)
        cols[S.LINE].append(number)
        cols[S.MODEL].append(model)
        cols[S.SERVICE_TIER].append(tier)
        cols[S.SETS_TIER].append(sets_tier)

    def _detail(self, index: int, number: int, **values: Any) -> None:
        if not self.per_line:
            return
        for name, column in self.detail.items():
            column.append(values.get(name))
        self.detail[S.FILE][-1] = index
        self.detail[S.LINE][-1] = number

    def _problem(self, file: TranscriptFile, line: int | None, reason: str) -> None:
        self.problems[S.SOURCE_FILE].append(file.source_file)
        self.problems[S.LINE].append(line)
        self.problems[S.REASON].append(reason)

    def _file(self, file: TranscriptFile, header: dict[str, Any], replay_start: int, replay_end: int) -> None:
        append_file_row(self.files, len(self.files[S.FILE]), file, header, (replay_start, replay_end))

    # -- frames

    def frames(self) -> Decoded:
        """Everything decoded so far, as frames with explicit schemas, replayed lines marked."""
        files = pl.DataFrame(self.files, schema=S.FILES_SCHEMA)
        spans = files.lazy().select(S.FILE, S.REPLAY_START, S.REPLAY_END)
        replayed = pl.col(S.LINE).is_between(S.REPLAY_START, S.REPLAY_END) & (pl.col(S.REPLAY_END) > 0)

        def marked(frame: pl.DataFrame) -> pl.DataFrame:
            return (
                frame.lazy()
                .join(spans, on=S.FILE, how="left", maintain_order="left")
                .with_columns(replayed.fill_null(False).alias(S.REPLAYED))
                .drop(S.REPLAY_START, S.REPLAY_END)
                .collect()
            )

        core = pl.DataFrame(self.core, schema={name: S.LINES_SCHEMA[name] for name in S.CORE_COLUMNS})
        detail = pl.DataFrame(self.detail, schema={name: S.LINES_SCHEMA[name] for name in S.DETAIL_COLUMNS})
        # A line has one detail row at most, except a header's: keep the first of each.
        detail = detail.unique(subset=[S.FILE, S.LINE], keep="first", maintain_order=True)
        lines = core.join(detail, on=[S.FILE, S.LINE], how="left", maintain_order="left").select(list(S.LINES_SCHEMA))
        return Decoded(
            files,
            marked(lines),
            marked(pl.DataFrame(self.items, schema=S.ITEMS_SCHEMA)),
            marked(pl.DataFrame(self.usage, schema=S.USAGE_SCHEMA)),
            marked(pl.DataFrame(self.settings, schema=S.SETTINGS_SCHEMA)),
            marked(pl.DataFrame(self.limits, schema=S.LIMITS_SCHEMA)),
            pl.DataFrame(self.problems, schema=S.PROBLEMS_SCHEMA),
        )


def usage_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(number, bytes) of the lines of a rollout the usage profile reads: the first, the last,
    and every line :data:`SKIPPED_BY_USAGE` does not skip.

    Examples:
        >>> rows = (b'{"a":1}\\n{"timestamp":"t","type":"response_item","payload":{"type":"message"}}\\n'
        ...         b'{"timestamp":"t","type":"turn_context","payload":{}}\\n{"b":2}')
        >>> [number for number, _ in usage_lines(rows)]
        [1, 3, 4]
    """
    size = len(data)
    find, count = data.find, data.count
    last = data.rfind(b"\n", 0, size - 1) + 1 if size else 0
    starts = {0, last, *(match.end() for match in SKIPPED_BY_USAGE.finditer(data))}
    number, previous = 1, 0
    for start in sorted(starts):
        if start >= size:
            continue
        number += count(b"\n", previous, start)
        previous = start
        end = find(b"\n", start)
        yield number, data[start : size if end < 0 else end]


def _envelope(value: dict[str, Any], first: bool) -> tuple[Any, str | None, dict[str, Any]]:
    """(type, payload type, enveloped value) of a parsed line; a line from before the envelope
    (a bare response item, or the first line's bare header) is wrapped as Codex now writes it."""
    kind = value.get("type")
    payload = value.get("payload")
    if "payload" not in value:
        if kind in LEGACY_ITEMS:
            return "response_item", kind, {"timestamp": value.get("timestamp"), "payload": value}
        if first and kind is None and isinstance(value.get("id"), str) and isinstance(value.get("timestamp"), str):
            return "session_meta", None, {"timestamp": value["timestamp"], "payload": value}
    payload_type = payload.get("type") if isinstance(payload, dict) else None
    return (
        kind if isinstance(kind, str) else None,
        payload_type if isinstance(payload_type, str) else None,
        value,
    )


def decode(files: Iterable[TranscriptFile], profile: Profile, *, contents: Sequence[bytes] | None = None) -> Decoded:
    """Decode rollouts in order, keeping what ``profile`` asks for; ``contents`` holds each
    file's bytes when they were read elsewhere (an archive's raw copy)."""
    walker = Walker(profile)
    for index, file in enumerate(files):
        walker.add(file, None if contents is None else contents[index])
    return walker.frames()


def append_file_row(
    cols: dict[str, list[Any]], index: int, file: TranscriptFile, header: dict[str, Any], replay: tuple[int, int]
) -> None:
    """Append one rollout's row of the files table (its header's ids, source, provider, project,
    version, and the lines its replayed history spans) to the column lists ``cols``."""
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
    cols[S.REPLAY_START].append(replay[0])
    cols[S.REPLAY_END].append(replay[1])
