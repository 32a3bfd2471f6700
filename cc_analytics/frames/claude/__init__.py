"""Claude Code transcripts as Polars frames: the public verbs of the format.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that
owns them. Every ``scan_*``/``read_*`` verb takes ``(source=None, *, workers=1,
on_progress=None)``: ``source`` is a transcript file, a folder, a glob, a list of these or
of ``TranscriptFile``, or None for the Claude Code projects folders.

Examples:
    >>> import cc_analytics.frames.claude as claude
    >>> sorted(name for name in claude.__all__ if name.startswith("read_"))
    ['read_composition', 'read_events', 'read_findings', 'read_limits', 'read_problems', 'read_requests', 'read_sessions', 'read_turns']
"""

from __future__ import annotations

from cc_analytics.lazy import lazy_exports

_EXPORTS = {
    "scan_events": "events",
    "read_events": "events",
    "scan_problems": "events",
    "read_problems": "events",
    "scan_turns": "turns",
    "read_turns": "turns",
    "scan_requests": "requests",
    "read_requests": "requests",
    "iter_requests": "requests",
    "requests_batch": "requests",
    "scan_sessions": "sessions",
    "read_sessions": "sessions",
    "Tables": "tables",
    "tables_batch": "tables",
    "iter_tables": "tables",
    "claude_context": "context",
    "resolve": "discovery",
    "discover": "discovery",
    "default_roots": "discovery",
    "find_session": "discovery",
    "TranscriptFile": "discovery",
    "context_window": "windows",
    "scan_limits": "limits",
    "read_limits": "limits",
    "scan_composition": "composition",
    "read_composition": "composition",
    "scan_findings": "findings",
    "read_findings": "findings",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
