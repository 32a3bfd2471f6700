"""The wire contract: context windows of ``cc-transcript.context/2``, standard library only.

Parse a Claude Code transcript, cut it into turns, capture the turns around an anchor
event as a :class:`ContextWindow`, serialise it byte-identically to the reference
library, and hydrate it again for a full-fidelity render.

Imports: standard library only (never Polars); a test keeps it so.

Examples:
    >>> from cc_analytics.core import EventRef, capture_window
    >>> raw = b'{"type":"user","uuid":"u1","sessionId":"S","timestamp":"2026-03-01T10:00:00Z",' \\
    ...     b'"message":{"content":"hi"}}'
    >>> capture_window(raw, EventRef("S", "u1")).render_preview()
    'user: hi'
"""

from typing import TYPE_CHECKING

from cc_analytics.lazy import lazy_exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each module is imported on first use
    from cc_analytics.core.capture import Session, capture_window, capture_windows
    from cc_analytics.core.digest import DigestError, canonical_json, tool_digest
    from cc_analytics.core.events import TranscriptWarning
    from cc_analytics.core.hydrate import HydratedWindow, find_transcript, hydrate_windows
    from cc_analytics.core.ids import (
        PREVIEW_SCHEMA,
        SCHEMA,
        SUMMARY_LABEL,
        Budget,
        EventRef,
        EventUuid,
        SessionId,
        ToolUseId,
        clip,
    )
    from cc_analytics.core.jsontext import compact_json
    from cc_analytics.core.previews import AskUserQuestionPreview, Question, TextPreview, ToolCallPreview
    from cc_analytics.core.render import render_tool_call
    from cc_analytics.core.turns import TurnSummary, lift_turns
    from cc_analytics.core.window import ContextWindow, TurnRef
    from cc_analytics.errors import SchemaError

_EXPORTS = {
    "Session": "capture",
    "capture_window": "capture",
    "capture_windows": "capture",
    "DigestError": "digest",
    "canonical_json": "digest",
    "tool_digest": "digest",
    "TranscriptWarning": "events",
    "HydratedWindow": "hydrate",
    "find_transcript": "hydrate",
    "hydrate_windows": "hydrate",
    "PREVIEW_SCHEMA": "ids",
    "SCHEMA": "ids",
    "SUMMARY_LABEL": "ids",
    "Budget": "ids",
    "EventRef": "ids",
    "EventUuid": "ids",
    "SessionId": "ids",
    "ToolUseId": "ids",
    "clip": "ids",
    "compact_json": "jsontext",
    "AskUserQuestionPreview": "previews",
    "Question": "previews",
    "TextPreview": "previews",
    "ToolCallPreview": "previews",
    "render_tool_call": "render",
    "TurnSummary": "turns",
    "lift_turns": "turns",
    "ContextWindow": "window",
    "TurnRef": "window",
    "SchemaError": "cc_analytics.errors",
}

__all__ = [
    "PREVIEW_SCHEMA",
    "SCHEMA",
    "SUMMARY_LABEL",
    "AskUserQuestionPreview",
    "Budget",
    "ContextWindow",
    "DigestError",
    "EventRef",
    "EventUuid",
    "HydratedWindow",
    "Question",
    "SchemaError",
    "Session",
    "SessionId",
    "TextPreview",
    "ToolCallPreview",
    "ToolUseId",
    "TranscriptWarning",
    "TurnRef",
    "TurnSummary",
    "canonical_json",
    "capture_window",
    "capture_windows",
    "clip",
    "compact_json",
    "find_transcript",
    "hydrate_windows",
    "lift_turns",
    "render_tool_call",
    "tool_digest",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
