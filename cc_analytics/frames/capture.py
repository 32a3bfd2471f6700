"""Context windows at scale: a frame of anchors in, a frame of window JSON out.

Anchors are ordinary rows picked with Polars filters (the turn of peak occupancy, each
compaction, each tool error…). Each transcript is read and parsed once, however many
anchors point into it, and windows that share a turn share its rendered JSON fragment.

Imports: polars, ``cc_analytics.core`` and ``frames.lines`` (the core's line decoder, faster).
Capture is a per-document job done by the standard-library core, so this module loops over
files in Python on purpose; the row data moves in and out as columns.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from cc_analytics.core import EventRef, Session, find_transcript
from cc_analytics.errors import InputError
from cc_analytics.frames.lines import decode_line

SESSION_ID = "session_id"
EVENT_UUID = "event_uuid"
TOOL_USE_ID = "tool_use_id"
SOURCE_FILE = "source_file"
WINDOW_JSON = "window_json"
ERROR = "error"
OUTPUT_SCHEMA = {
    SESSION_ID: pl.String,
    EVENT_UUID: pl.String,
    TOOL_USE_ID: pl.String,
    SOURCE_FILE: pl.String,
    WINDOW_JSON: pl.String,
    ERROR: pl.String,
}


def capture_window_frame(
    anchors: pl.DataFrame | pl.LazyFrame,
    *,
    projects_root: str | os.PathLike | None = None,
    before: int = 6,
    after: int = 2,
    preview_chars: int = 200,
    path_column: str = SOURCE_FILE,
) -> pl.DataFrame:
    """Capture one ``cc-transcript.context/2`` window per anchor row.

    Args:
        anchors: rows with ``session_id`` and ``event_uuid`` (strings), optionally
            ``tool_use_id`` and a column holding the transcript path (``path_column``).
        projects_root: where to find ``<session_id>.jsonl`` for rows without a path
            (default ``~/.claude/projects``).
        before: turns kept before the anchor's turn.
        after: turns kept after it.
        preview_chars: clip width of the turn previews.
        path_column: name of the column holding transcript paths.

    Returns:
        One row per anchor, in input order: ``session_id``, ``event_uuid``,
        ``tool_use_id``, ``source_file``, ``window_json`` (null when the capture failed) and
        ``error`` (why: no transcript, unreadable file, anchor not found). Malformed lines
        warn (:class:`~cc_analytics.core.TranscriptWarning`) and are skipped.

    Examples:
        >>> import polars as pl
        >>> anchors = pl.DataFrame({"session_id": ["nope"], "event_uuid": ["u1"]})
        >>> capture_window_frame(anchors, projects_root="/nonexistent")["error"].to_list()
        ['no transcript for session nope']
    """
    if before < 0 or after < 0:
        msg = f"before and after must be 0 or more, got before={before!r}, after={after!r}"
        raise InputError(msg)
    frame = anchors.collect() if isinstance(anchors, pl.LazyFrame) else anchors
    for name in (SESSION_ID, EVENT_UUID):
        if name not in frame.columns:
            msg = f"anchors need a {name!r} column, got {frame.columns!r}"
            raise InputError(msg)
    sessions = frame[SESSION_ID].cast(pl.String).to_list()
    uuids = frame[EVENT_UUID].cast(pl.String).to_list()
    tools = frame[TOOL_USE_ID].cast(pl.String).to_list() if TOOL_USE_ID in frame.columns else [None] * frame.height
    paths = frame[path_column].cast(pl.String).to_list() if path_column in frame.columns else [None] * frame.height
    resolved: dict[str, str | None] = {}
    for i, (session_id, path) in enumerate(zip(sessions, paths, strict=True)):
        if path is None and session_id is not None:
            if session_id not in resolved:
                resolved[session_id] = find_transcript(session_id, root=projects_root)
            paths[i] = resolved[session_id]
    by_file: dict[str, list[int]] = {}
    windows: list[str | None] = [None] * frame.height
    errors: list[str | None] = [None] * frame.height
    for i, path in enumerate(paths):
        if path is None:
            errors[i] = f"no transcript for session {sessions[i]}"
        elif uuids[i] is None or sessions[i] is None:
            errors[i] = "anchor without session_id or event_uuid"
        else:
            by_file.setdefault(path, []).append(i)
    for path, rows in by_file.items():
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            for i in rows:
                errors[i] = f"cannot read {path}: {exc.strerror or exc}"
            continue
        session = Session(raw, source=path, decode=decode_line)
        for i in rows:
            try:
                window = session.window(EventRef(sessions[i], uuids[i], tools[i]), before, after, preview_chars)
            except ValueError as exc:
                errors[i] = str(exc)
                continue
            windows[i] = window.to_json()
    return pl.DataFrame(
        {
            SESSION_ID: sessions,
            EVENT_UUID: uuids,
            TOOL_USE_ID: tools,
            SOURCE_FILE: paths,
            WINDOW_JSON: windows,
            ERROR: errors,
        },
        schema=OUTPUT_SCHEMA,
    )
