"""The rules of single values of a Codex rollout: a line's JSON, a timestamp, the text of an
item, a tool output's failure, a usage count, a rate-limit window.

Imports: orjson, the standard library, ``frames.lines`` (the JSON line policy), ``frames.estimate``
and ``frames.codex.schema``'s column names; never Polars. The line walker (``decode.py``) and the
lean scan (``scan.py``, which needs no Polars either) apply these; nothing here keeps state.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from cc_analytics.frames.codex import schema as S
from cc_analytics.frames.estimate import js_stringify
from cc_analytics.frames.lines import read_line
from cc_analytics.jsonline import INT64_MAX, LineError

ROLE_BUCKETS = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_EXIT_CODE = re.compile(r'"exit_code"\s*:\s*(-?[0-9]+)')
_EXIT_LINE = re.compile(r"\A(?:Exit code|Process exited with code):? (-?[0-9]+)")
LIMIT_VALUES = (
    S.LIMIT_WINDOW,
    S.USED_PERCENT,
    S.WINDOW_MINUTES,
    S.RESETS_AT_EPOCH,
    S.RESETS_IN_SECONDS,
    S.PLAN_TYPE,
    S.LIMIT_ID,
)

# A line that is not JSON, and the problem reason that says so; a last line cut short.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<MISSING>"})()
NOT_JSON = "not JSON ({}); line skipped"
TRUNCATED = "truncated last line (the file may still be being written)"

# A line in Codex's layout: its timestamp, type and payload type (when the payload's first key is ``type``).
LINE_HEAD = re.compile(
    rb'\{"timestamp":"([^"\\]*)",(?:"ordinal":-?[0-9]+,)?"type":"([A-Za-z0-9_]+)","payload":(?:\{"type":"([A-Za-z0-9_]+)")?'
)
# A fork's replayed history: token counts written within this of the fork's first moment.
BURST = timedelta(seconds=1)
# Response items each profile leaves unparsed beyond their type (nothing in them is measured).
UNMEASURED_ITEMS = frozenset({"reasoning", "ghost_snapshot", "image_generation_call", "compaction"})
# A usage object's six counts when there is none.
NO_USAGE = (None,) * len(S.USAGE_FIELDS)
# User messages that are injected context, not prompts (``turns.is_prompt``).
INJECTED_PREFIXES = ("<", "# AGENTS.md")


def parse_line(line: bytes | memoryview) -> tuple[Any, str | None]:
    """A line's value by the JSON line policy (``cc_analytics.jsonline``: the first of a
    repeated key wins, nesting up to 25,000 levels, integers exact at any length), or
    ``MISSING`` and the reason it is not JSON: a line the policy refuses is a problem, never
    an exception.

    Examples:
        >>> parse_line(b'{"a":1,"a":2}')
        ({'a': 1}, None)
        >>> len(parse_line(b"[" * 2000 + b"]" * 2000)[0]), parse_line(b"[" * 30_000 + b"]" * 30_000)
        (1, (<MISSING>, 'not JSON (nested deeper than 25,000 levels); line skipped'))
    """
    try:
        return read_line(line), None
    except LineError as exc:
        return MISSING, NOT_JSON.format(exc.reason)


def parse_time(text: Any) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime (UTC when it names no offset), else None.

    Examples:
        >>> parse_time("2025-12-18T10:00:00.250Z").isoformat()
        '2025-12-18T10:00:00.250000+00:00'
        >>> parse_time("[trimmed]") is None
        True
    """
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def burst_step(anchor: datetime, stamp: Any, number: int, replay_end: int) -> tuple[datetime | None, int]:
    """One token count (line ``number``, timestamp ``stamp``) of a fork's leading burst, the
    counts it copied from its parent, all written within :data:`BURST` of one another: the
    latest moment so far and the last replayed line, or None once a count falls outside the
    burst (then it is over). The walker and the lean scan both step it so.

    Examples:
        >>> start = parse_time("2025-10-01T10:00:00.000Z")
        >>> burst_step(start, "2025-10-01T10:00:00.400Z", 7, 3)[1]
        7
        >>> burst_step(start, "2025-10-01T10:00:05.000Z", 9, 7)
        (None, 7)
    """
    moment = parse_time(stamp)
    if moment is not None and moment <= anchor + BURST:
        return max(anchor, moment), max(replay_end, number)
    return None, replay_end


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the ``text`` of each part, one per line.

    Examples:
        >>> content_text([{"type": "input_text", "text": "a"}, {"type": "input_image"}, {"text": "b"}])
        'a\\nb'
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    if isinstance(content, dict):
        text = content.get("text")
        if isinstance(text, str):
            return text
        inner = content.get("content")
        if isinstance(inner, str | list):
            return content_text(inner)
    return ""


def dumped(value: Any) -> str:
    """A JSON value as compact text (``""`` for null); a string as itself."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # deeper than orjson writes (255 levels), an integer beyond 64 bits
        pass
    try:
        return js_stringify(value)  # without recursion
    except TypeError:  # an integer past int()'s digits (jsonline.LongInt): its repr stands for it
        try:
            return str(value)
        except RecursionError:
            return ""


def output_text(output: Any) -> str:
    """The text of a tool output: a string, content parts, ``{"text"}``/``{"content"}``, else its JSON."""
    text = content_text(output)
    return text if text or output is None or isinstance(output, str | list) else dumped(output)


def output_failed(output: Any) -> bool:
    """Whether a tool output says the call failed: ``success: false``, or a non-zero exit code in
    the metadata Codex appends to a shell output, or on its first line.

    Examples:
        >>> output_failed('{"output":"x","metadata":{"exit_code":2,"duration_seconds":0.1}}')
        True
        >>> output_failed("Exit code: 0\\nWall time: 1s"), output_failed({"content": "x", "success": False})
        (False, True)
    """
    if isinstance(output, dict):
        return output.get("success") is False
    if not isinstance(output, str):
        return False
    match = _EXIT_CODE.search(output[-300:]) or _EXIT_LINE.match(output[:80])
    return match is not None and int(match.group(1)) != 0


def text_of_item(item: dict[str, Any]) -> tuple[str | None, str]:
    """(bucket, text) of a response item as the context holds it; bucket None: nothing measured.

    Examples:
        >>> text_of_item({"type": "message", "role": "developer", "content": [{"text": "be brief"}]})
        ('system', 'be brief')
        >>> text_of_item({"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}'})
        ('tool_calls', 'shell {"command":["ls"]}')
        >>> text_of_item({"type": "reasoning", "summary": []})
        (None, '')
    """
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        return ROLE_BUCKETS.get(role, "assistant") if isinstance(role, str) else "assistant", content_text(
            item.get("content")
        )
    if kind == "function_call":
        return "tool_calls", f"{dumped(item.get('name'))} {dumped(item.get('arguments'))}"
    if kind == "custom_tool_call":
        return "tool_calls", f"{dumped(item.get('name'))} {dumped(item.get('input'))}"
    if kind in ("local_shell_call", "web_search_call"):
        return "tool_calls", dumped(item.get("action"))
    if kind == "tool_search_call":
        return "tool_calls", dumped(item.get("arguments"))
    if kind in ("function_call_output", "custom_tool_call_output"):
        return "tool", output_text(item.get("output"))
    if kind == "tool_search_output":
        return "tool", dumped(item.get("tools"))
    if kind == "agent_message":  # another agent's message, received into this context
        return "user", content_text(item.get("content"))
    return None, ""


def usage_model(payload: dict[str, Any], info: dict[str, Any]) -> str | None:
    """A model a ``token_count`` event names itself (rare): payload, then info, ``model``,
    ``model_name`` or ``metadata.model``."""
    for holder in (payload, info):
        for value in (holder.get("model"), holder.get("model_name")):
            if isinstance(value, str) and value.strip():
                return value.strip()
        metadata = holder.get("metadata")
        if isinstance(metadata, dict):
            value = metadata.get("model")
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def limit_rows(limits: dict[str, Any]) -> tuple[tuple[Any, ...], ...]:
    """The rate-limit windows of a ``rate_limits`` object, as :data:`LIMIT_VALUES` tuples."""
    plan, limit_id = string(limits.get("plan_type")), string(limits.get("limit_id"))
    rows = []
    for name in ("primary", "secondary"):
        window = limits.get(name)
        if type(window) is dict:
            used, minutes = window.get("used_percent"), window.get("window_minutes")
            resets_at, resets_in = window.get("resets_at"), window.get("resets_in_seconds")
        elif f"{name}_used_percent" in limits:  # the flat layout of early versions
            used, minutes = limits.get(f"{name}_used_percent"), limits.get(f"{name}_window_minutes")
            resets_at, resets_in = None, limits.get(f"{name}_resets_in_seconds")
        else:
            continue
        percent = number(used)
        if percent is not None:
            rows.append((name, percent, integer(minutes), integer(resets_at), integer(resets_in), plan, limit_id))
    return tuple(rows)


def whole(value: Any) -> bool:
    """A usage count: an integer from 0 to the largest of 64 bits (a column's)."""
    return type(value) is int and 0 <= value <= INT64_MAX


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the doubles
        return None
    return number if number == number and abs(number) != float("inf") else None


def integer(value: Any) -> int | None:
    amount = number(value)
    if amount is None or amount != int(amount) or abs(amount) > 2**62:
        return None
    return int(amount)


def string(value: Any) -> str | None:
    return value if isinstance(value, str) else None
