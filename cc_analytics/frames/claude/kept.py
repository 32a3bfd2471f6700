"""What Claude Code tells its status line and its transcripts do not record, kept in the cache folder.

Imports: the standard library and ``cache`` only (the status line imports it, never Polars).
Claude Code pipes a JSON document to the ``statusLine`` command after every assistant message;
two of its parts are written nowhere else (claude-code #42108, #90865):

* ``rate_limits``: the plan's usage of its ``five_hour`` and ``seven_day`` windows, each with
  ``used_percentage`` and ``resets_at`` (epoch seconds). :func:`keep` appends one line to the
  history (:data:`HISTORY`, JSON lines) whenever they differ from its last line: ``time``
  (epoch seconds of the call), ``session_id`` and the windows as given (a malformed window is
  left out, a document without a valid one adds nothing). A line is appended with one
  ``write`` in append mode, so a crash leaves at most a cut last line, which the next append
  ends with a newline first and readers skip. Past :data:`HISTORY_BYTES` the oldest half is
  dropped: the newer half is written beside the file and renamed over it (``atomic``).
* ``context_window.context_window_size``: the window Claude Code sizes the session with.
  :func:`keep` records it per session in :data:`WINDOWS` (a JSON object, rewritten beside
  and renamed into place, only when a session's window is new or changed; the
  :data:`WINDOWS_KEPT` sessions seen last), and :func:`kept_window` gives it back, which the
  ``context`` report prefers to the window inferred from the model.

Both files are in ``<cache>/statusline/`` (``cache.cache_dir``). Deleting them loses the
history; nothing else depends on them.

Examples:
    >>> import tempfile, pathlib, json
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> document = {"session_id": "s1", "context_window": {"context_window_size": 1000000},
    ...             "rate_limits": {"five_hour": {"used_percentage": 23.5, "resets_at": 1738425600}}}
    >>> keep(document, folder=folder, now=1738410000.0)
    >>> keep(document, folder=folder, now=1738410060.0)  # the same limits: nothing appended
    >>> [json.loads(line)["five_hour"] for line in (folder / HISTORY).read_text().splitlines()]
    [{'used_percentage': 23.5, 'resets_at': 1738425600}]
    >>> kept_window("s1", folder=folder), kept_window("s2", folder=folder)
    (1000000, None)
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cc_analytics.cache import cache_dir

FOLDER = "statusline"
HISTORY = "rate-limits.jsonl"
WINDOWS = "context-windows.json"
HISTORY_BYTES = 1 << 20  # about 7,000 lines: months of changes
WINDOWS_KEPT = 2000
TAIL_BYTES = 4096
LIMIT_WINDOWS: dict[str, int] = {"five_hour": 300, "seven_day": 10_080}
"""The windows Claude Code passes, with their length in minutes."""


def folder_of(folder: Path | None = None) -> Path:
    """Where the kept files are: ``folder``, else ``<cache>/statusline``."""
    return folder if folder is not None else cache_dir() / FOLDER


def rate_limits_of(document: Mapping[str, Any]) -> dict[str, dict[str, float | int]]:
    """The valid windows of ``document["rate_limits"]`` (``used_percentage`` a finite number,
    ``resets_at`` finite epoch seconds), by name; empty when there is none.

    Examples:
        >>> rate_limits_of({"rate_limits": {"five_hour": {"used_percentage": 5, "resets_at": 1.5e9},
        ...                                 "seven_day": {"used_percentage": "x", "resets_at": 1}}})
        {'five_hour': {'used_percentage': 5, 'resets_at': 1500000000.0}}
        >>> rate_limits_of({"rate_limits": []}), rate_limits_of({})
        ({}, {})
    """
    given = document.get("rate_limits")
    if not isinstance(given, dict):
        return {}
    found: dict[str, dict[str, float | int]] = {}
    for name in LIMIT_WINDOWS:
        window = given.get(name)
        if not isinstance(window, dict):
            continue
        used, resets = window.get("used_percentage"), window.get("resets_at")
        if isinstance(used, int | float) and isinstance(resets, int | float) and _finite(used) and _finite(resets):
            found[name] = {"used_percentage": used, "resets_at": resets}
    return found


def context_window_of(document: Mapping[str, Any]) -> int | None:
    """``document["context_window"]["context_window_size"]`` when it is a positive integer."""
    given = document.get("context_window")
    size = given.get("context_window_size") if isinstance(given, dict) else None
    return size if type(size) is int and size > 0 else None


def keep(document: Mapping[str, Any], *, folder: Path | None = None, now: float | None = None) -> None:
    """Append the rate limits of ``document`` to the history when they changed, and record its
    session's window when it is new (see the module docstring). Raises ``OSError`` when the
    folder cannot be written (the status line ignores it)."""
    session = document.get("session_id")
    session = session if isinstance(session, str) else None
    limits = rate_limits_of(document)
    window = context_window_of(document)
    if not limits and (window is None or session is None):
        return
    where = folder_of(folder)
    where.mkdir(parents=True, exist_ok=True)
    if limits:
        _append(where / HISTORY, session, limits, now)
    if window is not None and session is not None:
        _record_window(where / WINDOWS, session, window)


def kept_window(session_id: str, *, folder: Path | None = None) -> int | None:
    """The window Claude Code's status line last reported for ``session_id``, if any."""
    windows = _load_windows(folder_of(folder) / WINDOWS)
    size = windows.get(session_id)
    return size if type(size) is int and size > 0 else None


def history_rows(path: Path | None = None) -> Iterator[dict[str, Any]]:
    """One dict per window per line of the history at ``path`` (default the cache folder's):
    ``session_id``, ``time`` and ``resets_at`` (epoch seconds), ``limit_window``,
    ``window_minutes``, ``used_percent`` and ``line`` (1-based). Lines that do not parse (a
    cut last line) or hold no valid window give nothing.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> keep({"session_id": "s", "rate_limits": {"seven_day": {"used_percentage": 41.2, "resets_at": 1738857600}}},
        ...      folder=folder, now=1738400000)
        >>> [sorted(row.items()) for row in history_rows(folder / HISTORY)][0][:4]
        [('limit_window', 'seven_day'), ('line', 1), ('resets_at', 1738857600), ('session_id', 's')]
    """
    path = path if path is not None else folder_of() / HISTORY
    try:
        data = path.read_bytes()
    except OSError:
        return
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or not _finite(record.get("time")):
            continue
        session = record.get("session_id")
        for name, window in rate_limits_of({"rate_limits": record}).items():
            yield {
                "session_id": session if isinstance(session, str) else None,
                "time": record["time"],
                "limit_window": name,
                "window_minutes": LIMIT_WINDOWS[name],
                "used_percent": float(window["used_percentage"]),
                "resets_at": window["resets_at"],
                "line": number,
            }


def _finite(value: object) -> bool:
    return type(value) in (int, float) and math.isfinite(value)  # type: ignore[arg-type]


def _append(path: Path, session: str | None, limits: dict[str, dict[str, float | int]], now: float | None) -> None:
    size, last, ends_cleanly = _tail(path)
    if last is not None and {name: last.get(name) for name in LIMIT_WINDOWS} == {
        name: limits.get(name) for name in LIMIT_WINDOWS
    }:
        return
    record = {"time": round(now if now is not None else _now(), 3), "session_id": session, **limits}
    line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
    if not ends_cleanly:
        line = b"\n" + line  # end a cut last line first: it stays one unreadable line
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)
    if size + len(line) > HISTORY_BYTES:
        _trim(path)


def _tail(path: Path) -> tuple[int, dict[str, Any] | None, bool]:
    """(size, last complete record or None, whether the file ends with a newline or is empty)."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return 0, None, True
    if not tail:
        return size, None, True
    ends_cleanly = tail.endswith(b"\n")
    lines = tail.split(b"\n")
    candidate = lines[-2] if ends_cleanly and len(lines) > 1 else None
    try:
        record = json.loads(candidate) if candidate else None
    except ValueError:
        record = None
    return size, record if isinstance(record, dict) else None, ends_cleanly


def _trim(path: Path) -> None:
    from cc_analytics.atomic import beside

    data = path.read_bytes()
    cut = data.find(b"\n", len(data) // 2)
    kept = data[cut + 1 :] if cut >= 0 else b""
    with beside(path) as temporary:
        temporary.write_bytes(kept)
        os.replace(temporary, path)


def _load_windows(path: Path) -> dict[str, Any]:
    try:
        windows = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return windows if isinstance(windows, dict) else {}


def _record_window(path: Path, session: str, window: int) -> None:
    windows = _load_windows(path)
    if windows.get(session) == window:
        return
    windows.pop(session, None)
    windows[session] = window  # the latest last: the oldest are dropped first
    for stale in list(windows)[: max(len(windows) - WINDOWS_KEPT, 0)]:
        del windows[stale]
    from cc_analytics.atomic import beside

    with beside(path) as temporary:
        temporary.write_text(json.dumps(windows, separators=(",", ":")), encoding="utf-8")
        os.replace(temporary, path)


def _now() -> float:
    import time

    return time.time()
