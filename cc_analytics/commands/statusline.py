"""``cc-analytics statusline``: one line for Claude Code's ``statusLine`` setting.

Imports: json and the standard library, ``format``, ``jsonline`` (transcript lines are read by
the JSON line policy), ``windowmath`` (the window arithmetic), ``frames.claude.models`` (the window
table) and ``frames.claude.tally`` (the session's cost) — never Polars: Claude Code runs the command after every assistant message, so it must
answer in milliseconds whatever the transcript's size. It reads the JSON Claude Code pipes on
stdin (``session_id``, ``transcript_path``, ``model``, ``workspace``, ``version``, optionally
``context_window``), then only the end of the transcript: the occupancy is the last
main-chain request's input + cache creation + cache read tokens (spec ``claude-code-jsonl.md``),
found by reading backwards in growing chunks. The session's cost (main chain and subagent
files, as the sessions frame's ``cost_usd``) reads only the bytes appended since the last call
(:mod:`cc_analytics.frames.claude.tally`). When Claude Code passes ``rate_limits`` (the
plan's ``five_hour`` and ``seven_day`` usage), the line ends with them and the time left to
each reset; they and the ``context_window`` size are kept in the cache folder
(:mod:`cc_analytics.frames.claude.kept`: an append-only, bounded history of the limits, and
the window per session, which ``context`` prefers to the inferred one). Whatever goes wrong,
it prints a short fallback line and exits 0, and a failure in the cost part or in keeping
the history only leaves that part out: a status line must never break the terminal.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cc_analytics.format import SGR, colour_enabled, human_int, usd
from cc_analytics.jsonline import safe_loads
from cc_analytics.windowmath import until_autocompact_of, used_fraction_of, zone_of

if TYPE_CHECKING:
    import argparse

FIRST_CHUNK = 256 * 1024
MAX_CHUNK = 64 * 1024 * 1024
FALLBACK = "cc-analytics: no context data yet"
SEPARATOR = " \u00b7 "
SYNTHETIC = "<synthetic>"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "statusline",
        help="one status line for Claude Code (reads its statusLine JSON on stdin)",
        description=(
            "Print model, context occupancy / window (coloured by zone) and the tokens left before "
            "auto-compaction, for Claude Code's statusLine setting. Reads the JSON Claude Code pipes "
            "on stdin; on bad input prints a short fallback line and exits 0."
        ),
    )
    parser.set_defaults(run=run)


def run(_args: argparse.Namespace) -> int:
    return print_status_line()


def print_status_line() -> int:
    """Read Claude Code's document on stdin, print the status line; the exit code (always 0)."""
    try:
        raw = sys.stdin.buffer.read()
    except (OSError, ValueError):
        raw = b""
    sys.stdout.write(status_line(raw, colour=_colour()) + "\n")
    return 0


def status_line(raw: bytes, *, colour: bool = False) -> str:
    """The status line for Claude Code's stdin document ``raw`` (never raises on bad input).

    Examples:
        >>> status_line(b"")
        'cc-analytics: no context data yet'
        >>> status_line(b'{"model": {"display_name": "Opus"}}')
        'Opus \\xb7 no context data yet'
    """
    try:
        document = json.loads(raw) if raw.strip() else None
    except ValueError:
        document = None
    if not isinstance(document, dict):
        return FALLBACK
    model = _text(document, "model", "display_name") or _text(document, "model", "id")
    limits = _limits(document, colour=colour)
    path = document.get("transcript_path")
    usage = last_usage(Path(path)) if isinstance(path, str) and path else None
    if usage is None:
        if not model and not limits:
            return FALLBACK
        return SEPARATOR.join([*([model] if model else []), "no context data yet", *limits])
    used, recorded_model, version = usage
    window = _window(document, recorded_model or _text(document, "model", "id"), version, used)
    fraction = used_fraction_of(used, window)
    tone = zone_of(fraction)
    occupancy = f"{human_int(used)}/{human_int(window)} {round(fraction * 100)}%"
    if colour:
        start, end = SGR[tone]
        occupancy = f"{start}{occupancy}{end}"
    left = until_autocompact_of(used, window)
    parts = [model or recorded_model or "Claude", occupancy, f"{human_int(left)} to auto-compact"]
    cost = _cost(Path(path))
    if cost:
        parts.append(cost)
    return SEPARATOR.join(parts + limits)


LIMIT_LABELS = (("five_hour", "5h"), ("seven_day", "7d"))


def _limits(document: dict[str, Any], *, colour: bool, now: float | None = None) -> list[str]:
    """``5h 23% ↻2h13m``-style parts for the rate limits Claude Code passed (none when it
    passed none), after keeping them (and the session's window) in the cache folder."""
    try:
        from cc_analytics.frames.claude.kept import keep, rate_limits_of

        limits = rate_limits_of(document)
    # Like the cost: whatever fails here (a bug included) only leaves the limits out.
    except Exception:
        return []
    if now is None:
        import time

        now = time.time()
    try:
        keep(document, now=now)
    except Exception:  # a cache folder that cannot be written: the line is printed all the same
        pass
    parts = []
    for name, label in LIMIT_LABELS:
        window = limits.get(name)
        if window is None:
            continue
        used = float(window["used_percentage"])
        text = f"{label} {round(used)}%"
        if colour:
            start, end = SGR[zone_of(used / 100)]
            text = f"{start}{text}{end}"
        left = float(window["resets_at"]) - now
        if left > 0:
            text += f" \u21bb{_duration(left)}"
        parts.append(text)
    return parts


def _duration(seconds: float) -> str:
    """``2h13m``, ``3d4h``, ``42m`` (at least ``1m``)."""
    minutes = max(int(seconds // 60), 1)
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days}d{hours}h"
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m"


def _cost(main: Path) -> str | None:
    """The session's cost (``$1.23``; ``$1.23*`` when some requests have no price, ``$?`` when
    none has), or None when it cannot be had."""
    try:
        from cc_analytics.frames.claude.tally import session_cost

        cost = session_cost(main)
    # The one place that catches everything: whatever fails in reading, pricing or the kept
    # state (a bug included), the status line is still printed, without its cost.
    except Exception:
        return None
    if cost.usd is None:
        return "$?" if cost.requests else None
    return usd(cost.usd, partial=cost.unpriced > 0)


def last_usage(path: Path) -> tuple[int, str | None, str | None] | None:
    """(occupancy, model, version) of the last main-chain request in the transcript at ``path``.

    Reads the file backwards in chunks that double from 256 KB; None when the file cannot be
    read or holds no request with usage.
    """
    try:
        handle = path.open("rb")
    except OSError:
        return None
    with handle:
        try:
            size = os.fstat(handle.fileno()).st_size
        except OSError:
            return None
        chunk = FIRST_CHUNK
        end = size
        tail = b""
        while end > 0:
            start = max(0, end - chunk)
            handle.seek(start)
            data = handle.read(end - start) + tail
            lines = data.split(b"\n")
            # The first piece may be the end of a line that starts before ``start``.
            tail = lines.pop(0) if start > 0 else b""
            for line in reversed(lines):
                found = _usage_of(line)
                if found is not None:
                    return found
            end = start
            chunk = min(chunk * 2, MAX_CHUNK)
    return None


def _usage_of(line: bytes) -> tuple[int, str | None, str | None] | None:
    if b'"usage"' not in line or b'"assistant"' not in line:
        return None
    event = safe_loads(line)  # the JSON line policy: None for a broken line, the first of a repeated key
    if not isinstance(event, dict) or event.get("type") != "assistant":
        return None
    if event.get("isSidechain") or event.get("isApiErrorMessage"):
        return None
    message = event.get("message")
    if not isinstance(message, dict) or message.get("model") == SYNTHETIC:
        return None
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    counts = [usage.get(k) or 0 for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    if not all(type(c) is int for c in counts):
        return None
    model = message.get("model")
    version = event.get("version")
    return sum(counts), model if isinstance(model, str) else None, version if isinstance(version, str) else None


def _window(document: dict[str, Any], model: str | None, version: str | None, used: int) -> int:
    given = document.get("context_window")
    if isinstance(given, dict):
        size = given.get("context_window_size")
        if type(size) is int and size > 0:
            return size
    from cc_analytics.frames.claude.models import DEFAULT_WINDOW, window_for

    exceeds = document.get("exceeds_200k_tokens") is True
    return window_for(model, version, max(used, DEFAULT_WINDOW + 1) if exceeds else used)


def _text(document: dict[str, Any], *keys: str) -> str | None:
    value: Any = document
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) and value else None


def _colour() -> bool:
    # Claude Code shows ANSI colours but pipes stdout: colour unless the user turns it off.
    if "FORCE_COLOR" not in os.environ and not os.environ.get("NO_COLOR"):
        return True
    return colour_enabled(sys.stdout)
