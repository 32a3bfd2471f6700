"""Identifiers, budgets, wire constants and the clip rule shared by every core module.

Imports: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NewType

SCHEMA = "cc-transcript.context/2"
PREVIEW_SCHEMA = "cc-transcript.preview/1"
SUMMARY_LABEL = "[summary fidelity \u2014 transcript unavailable]"
ELLIPSIS = "\u2026"

SessionId = NewType("SessionId", str)
EventUuid = NewType("EventUuid", str)
ToolUseId = NewType("ToolUseId", str)


@dataclass(frozen=True, slots=True)
class EventRef:
    """A pointer to one transcript line: its session, its ``uuid`` and optionally a tool call.

    Examples:
        >>> EventRef("S1", "u1")
        EventRef(session_id='S1', event_uuid='u1', tool_use_id=None)
        >>> EventRef("S1", "u1") == EventRef("S1", "u1", None)
        True
    """

    session_id: str
    event_uuid: str
    tool_use_id: str | None = None


@dataclass(frozen=True, slots=True)
class Budget:
    """Character budgets for rendering: prose (``turn_chars``) and tool input (``tool_chars``).

    Examples:
        >>> Budget()
        Budget(turn_chars=700, tool_chars=1500)
    """

    turn_chars: int = 700
    tool_chars: int = 1500


def clip(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` code points and append ``…(+Nch)`` when anything was cut.

    A negative ``limit`` follows Python slicing, as the wire format's renderer does.

    Examples:
        >>> clip("abcdef", 3)
        'abc…(+3ch)'
        >>> clip("abc", 3)
        'abc'
        >>> clip("abc", 0)
        '…(+3ch)'
    """
    n = len(text)
    if n <= limit:
        return text
    return f"{text[:limit]}{ELLIPSIS}(+{n - limit}ch)"
