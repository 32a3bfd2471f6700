"""OpenCode records in, Polars frames out: one pass over a batch's sessions, messages and parts.

Imports: polars, the standard library, orjson, ``frames.estimate``, ``frames.sources`` and
``frames.opencode.store``. Rules, applied here once:

* a batch's records are read per store: a database once for all its sessions of the batch
  (one read transaction), a JSON storage session from its files, an archived copy from its
  bytes (a database snapshot, or the bundle ``store.bundle`` writes);
* a message or part whose JSON does not parse, or is not an object, is a problem row
  (``source_file``: the database or the JSON file; ``line``: null; the reason names the
  record) and is left out; so is a token count that is not a whole number ≥ 0 (that usage only);
* a database of an older schema is one problem row naming its version (``store.check_schema``);
* a message's model and provider are its ``modelID``/``providerID``, else those of its
  ``model`` object (user messages of v2 storage); its time is ``time.created`` (ms), else the
  row's ``time_created``;
* a message's usage is its ``tokens``: ``input`` (uncached), ``output`` (reasoning not
  included), ``reasoning``, ``cache.read``, ``cache.write``; ``cost`` (a number) is what OpenCode
  itself recorded (``recorded_cost``);
* parts: ``text`` (``synthetic`` ones are context OpenCode adds, not what the person typed),
  ``reasoning``, ``tool`` (``state.status`` ``error`` is a failed call; its input and output
  are measured), ``compaction``, ``step-start``/``step-finish``, ``file``, ``patch`` …; each
  measured text goes to a heuristic bucket with its estimated tokens.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from cc_analytics.frames.estimate import estimate_text_tokens, text_tokens
from cc_analytics.frames.opencode import schema as S
from cc_analytics.frames.opencode.store import (
    BUNDLE_HEADER,
    MAGIC,
    WHOLE_STORE,
    Record,
    Refused,
    check_schema,
    connect,
    database_records,
    from_bytes,
    shown,
    storage_records,
    storage_root,
    unbundle,
    unit,
)
from cc_analytics.frames.sources import TranscriptFile

NOT_JSON = "{} {}: not JSON ({}); left out"
NOT_OBJECT = "{} {}: not a JSON object; left out"
BAD_TOKENS = "message {}: tokens.{} is {!r}, not a whole number of at least 0; its usage left out"
UNREADABLE = "unreadable: {}"
TOKEN_PATHS = (("input",), ("output",), ("reasoning",), ("cache", "read"), ("cache", "write"))


@dataclass(frozen=True, slots=True)
class Decoded:
    """Frames of one batch of sessions."""

    files: pl.DataFrame  # FILES_SCHEMA
    messages: pl.DataFrame  # MESSAGES_SCHEMA
    parts: pl.DataFrame  # PARTS_SCHEMA
    problems: pl.DataFrame  # PROBLEMS_SCHEMA


def _loads(text: str) -> tuple[Any, str | None]:
    try:
        return orjson.loads(text), None
    except orjson.JSONDecodeError as error:
        from cc_analytics.jsonline import safe_loads

        value = safe_loads(text.encode("utf-8", "surrogatepass"))
        if value is None:
            return None, str(error).split(":")[0] or "broken"
        return value, None


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _whole(value: Any) -> bool:
    return type(value) is int and value >= 0


class Walker:
    """Turns records into column lists (one session's at a time, in any order)."""

    def __init__(self, texts: bool) -> None:
        self.texts = texts
        self.files: dict[str, list[Any]] = {name: [] for name in S.FILES_SCHEMA}
        self.messages: dict[str, list[Any]] = {name: [] for name in S.MESSAGES_SCHEMA}
        self.parts: dict[str, list[Any]] = {name: [] for name in S.PARTS_SCHEMA}
        self.problems: dict[str, list[Any]] = {name: [] for name in S.PROBLEMS_SCHEMA}
        self.index: dict[tuple[str, str], int] = {}  # (store, own session id) -> file index

    def problem(self, source: str, reason: str) -> None:
        self.problems[S.SOURCE_FILE].append(shown(source))
        self.problems[S.LINE].append(None)
        self.problems[S.REASON].append(reason)

    def add_file(self, file: TranscriptFile, store: str, session: dict[str, Any]) -> None:
        own = file.agent_id or file.session_id
        self.index[(store, own)] = len(self.files[S.FILE])
        cols = self.files
        cols[S.FILE].append(len(cols[S.FILE]))
        cols[S.SOURCE_FILE].append(file.source_file)
        cols[S.SESSION_ID].append(file.session_id)
        cols[S.AGENT_ID].append(file.agent_id)
        cols[S.IS_SUBAGENT_FILE].append(file.is_subagent)
        cols[S.PROJECT_DIR].append(file.project_dir)
        cols[S.OWN_ID].append(own)
        cols[S.PARENT_ID].append(_string(session.get("parentID")))
        cols[S.PROJECT].append(_string(session.get("directory")))
        cols[S.TITLE].append(_string(session.get("title")))
        cols[S.VERSION].append(_string(session.get("version")))
        created = session.get("time", {}).get("created") if isinstance(session.get("time"), dict) else None
        cols[S.CREATED].append(created if _whole(created) else None)

    def walk(self, files: Sequence[TranscriptFile], store: str, records: Iterable[Record]) -> None:
        """The records of one store (a database, or one JSON storage session) for ``files``:
        the units of the batch in it (one of :data:`WHOLE_STORE`: every session it holds)."""
        wanted = {f.agent_id or f.session_id: f for f in files}
        whole = next((f for f in files if f.session_id == WHOLE_STORE), None)
        by_kind: dict[str, list[Record]] = {"session": [], "message": [], "part": []}
        for record in records:
            by_kind.setdefault(record.kind, []).append(record)
        sessions: dict[str, dict[str, Any]] = {}
        for record in by_kind["session"]:
            value, _error = _loads(record.text)
            sessions[record.session] = value if isinstance(value, dict) else {}
        if whole is not None:
            for own, session in sorted(sessions.items()):
                if own not in wanted:
                    wanted[own] = unit(
                        whole.path, own, _string(session.get("parentID")), _string(session.get("projectID")) or "", 0
                    )
        for own, file in wanted.items():
            if file.session_id == WHOLE_STORE:
                continue
            self.add_file(file, store, sessions.get(own, {}))
        for record in by_kind["message"]:
            index = self.index.get((store, record.session))
            if index is not None:
                self.message(index, record)
        for record in by_kind["part"]:
            index = self.index.get((store, record.session))
            if index is not None:
                self.part(index, record)

    def message(self, index: int, record: Record) -> None:
        value, error = _loads(record.text)
        if error is not None or not isinstance(value, dict):
            self.problem(
                record.source,
                NOT_JSON.format("message", record.id, error) if error else NOT_OBJECT.format("message", record.id),
            )
            return
        cols = self.messages
        model = _object(value.get("model"))
        times = _object(value.get("time"))
        created = times.get("created")
        completed = times.get("completed")
        tokens = value.get("tokens")
        usage: list[int | None] = [None] * len(TOKEN_PATHS)
        if isinstance(tokens, dict):
            usage = []
            for path in TOKEN_PATHS:
                amount: Any = tokens
                for key in path:
                    amount = amount.get(key) if isinstance(amount, dict) else None
                if amount is None:
                    amount = 0
                elif isinstance(amount, float) and amount.is_integer() and amount >= 0:
                    amount = int(amount)
                if not _whole(amount):
                    self.problem(record.source, BAD_TOKENS.format(record.id, ".".join(path), amount))
                    usage = [None] * len(TOKEN_PATHS)
                    break
                usage.append(amount)
        cost = value.get("cost")
        error_value = value.get("error")
        cols[S.FILE].append(index)
        cols[S.MESSAGE_ID].append(_string(value.get("id")) or record.id)
        cols[S.ROLE].append(_string(value.get("role")))
        cols[S.CREATED].append(created if _whole(created) else record.time)
        cols[S.COMPLETED].append(completed if _whole(completed) else None)
        cols[S.MODEL].append(_string(value.get("modelID")) or _string(model.get("modelID")))
        cols[S.PROVIDER].append(_string(value.get("providerID")) or _string(model.get("providerID")))
        for name, amount in zip(S.USAGE_COLUMNS, usage, strict=True):
            cols[name].append(amount)
        cols[S.RECORDED_COST].append(
            float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        )
        cols[S.AGENT].append(_string(value.get("agent")) or _string(value.get("mode")))
        cols[S.SUMMARY].append(value.get("summary") is True)
        cols[S.FINISH].append(_string(value.get("finish")))
        cols[S.ERROR].append(_string(error_value.get("name")) if isinstance(error_value, dict) else None)

    def part(self, index: int, record: Record) -> None:
        value, error = _loads(record.text)
        if error is not None or not isinstance(value, dict):
            self.problem(
                record.source,
                NOT_JSON.format("part", record.id, error) if error else NOT_OBJECT.format("part", record.id),
            )
            return
        kind = _string(value.get("type"))
        tool = status = None
        bucket = text = None
        tokens = 0
        synthetic = value.get("synthetic") is True
        if kind == "text":
            text = value.get("text") if isinstance(value.get("text"), str) else ""
            bucket = "text"
        elif kind == "reasoning":
            text = value.get("text") if isinstance(value.get("text"), str) else ""
            bucket = "assistant"
        elif kind == "tool":
            tool = _string(value.get("tool"))
            state = _object(value.get("state"))
            status = _string(state.get("status"))
            call = orjson.dumps(state.get("input")).decode() if state.get("input") is not None else ""
            output = state.get("output") if isinstance(state.get("output"), str) else state.get("error")
            output = output if isinstance(output, str) else ""
            tokens = _tokens(call)
            text = output
            bucket = "tool"
        if text is not None:
            tokens_text = _tokens(text)
        else:
            tokens_text = 0
        times = _object(value.get("time"))
        start = times.get("start")
        cols = self.parts
        cols[S.FILE].append(index)
        cols[S.MESSAGE_ID].append(_string(value.get("messageID")) or record.message)
        cols[S.PART_ID].append(_string(value.get("id")) or record.id)
        cols[S.PART_TYPE].append(kind)
        cols[S.TOOL].append(tool)
        cols[S.STATUS].append(status)
        cols[S.SYNTHETIC].append(synthetic)
        cols[S.BUCKET].append(bucket)
        cols[S.TEXT_TOKENS].append(tokens_text)
        cols[S.CALL_TOKENS].append(tokens)
        keep = self.texts or (kind == "text" and not synthetic)
        cols[S.TEXT].append(text if keep else None)
        cols[S.START].append(start if _whole(start) else None)

    def frames(self) -> Decoded:
        return Decoded(
            pl.DataFrame(self.files, schema=S.FILES_SCHEMA),
            pl.DataFrame(self.messages, schema=S.MESSAGES_SCHEMA),
            pl.DataFrame(self.parts, schema=S.PARTS_SCHEMA),
            pl.DataFrame(self.problems, schema=S.PROBLEMS_SCHEMA),
        )


def _tokens(text: str) -> int:
    found = text_tokens(text)
    return found if found is not None else estimate_text_tokens(text)


def decode(
    files: Sequence[TranscriptFile],
    *,
    texts: bool = False,
    contents: Sequence[bytes] | None = None,
    parts: bool = True,
) -> Decoded:
    """Decode a batch of units; ``contents``: each unit's bytes when read elsewhere (the
    archive's copy: a database snapshot, a bundle, or a session file's own bytes); without
    ``parts``, the parts are not read (the requests need the messages only)."""
    walker = Walker(texts)
    stores: dict[str, list[int]] = {}
    for position, file in enumerate(files):
        stores.setdefault(str(file.path), []).append(position)
    for store, positions in stores.items():
        group = [files[i] for i in positions]
        path = Path(store)
        data = None if contents is None else contents[positions[0]]
        try:
            records = _records(path, group, data, parts)
        except Refused as refused:
            walker.problem(store, str(refused))
            continue
        except (OSError, sqlite3.Error) as error:
            walker.problem(store, UNREADABLE.format(getattr(error, "strerror", None) or error))
            continue
        walker.walk(group, store, records)
    return walker.frames()


def _records(path: Path, group: list[TranscriptFile], data: bytes | None, parts: bool) -> list[Record]:
    head = data[:16] if data is not None else _head(path)
    if head.startswith(MAGIC):
        connection = from_bytes(data) if data is not None else connect(path)
        try:
            check_schema(connection, str(path))
            whole = any(f.session_id == WHOLE_STORE for f in group)
            own = None if whole else sorted({f.agent_id or f.session_id for f in group})
            return database_records(connection, str(path), own, parts=parts)
        finally:
            connection.close()
    if data is not None and data.startswith(BUNDLE_HEADER):
        records = unbundle(data, str(storage_root(path)))
        return records if parts else [record for record in records if record.kind != "part"]
    out: list[Record] = []
    for file in group:
        out.extend(storage_records(file.path, file.agent_id or file.session_id, data, parts=parts))
    return out


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(16)
    except OSError:
        return b""
