"""ChainlessChain transcripts as Polars frames: the same verbs as ``frames.claude``, behind one lazy map.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that
owns them, so importing this package stays cheap and never loads Polars by itself.

Each verb takes ``source`` (a transcript, a sessions folder, a glob, TranscriptFiles, a list
of those, or None for the default store ``$CHAINLESSCHAIN_HOME/sessions`` or
``~/.chainlesschain/sessions``) and the keywords ``workers`` and ``on_progress``:
``scan_events``/``read_events`` (one row per line), ``scan_turns``/``read_turns`` (a user
prompt opens a turn), ``scan_sessions``/``read_sessions`` (the shared sessions schema),
``scan_problems``/``read_problems``, ``scan_requests``/``read_requests`` (one row per
``token_usage`` record, priced). ``context_frame`` is what ``cc context`` reports.

Examples:
    >>> import cc_analytics.frames.chainless as chainless
    >>> sorted(name for name in chainless.__all__ if name.startswith(("scan_", "read_")))
    ['read_events', 'read_problems', 'read_requests', 'read_sessions', 'read_turns', 'scan_events', 'scan_problems', 'scan_requests', 'scan_sessions', 'scan_turns']
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
    "iter_tables": "sessions",
    "tables_batch": "sessions",
    "context_frame": "sessions",
    "report_dict": "sessions",
    "default_sessions_dir": "store",
    "is_safe_id": "store",
    "is_deleted": "store",
    "session_path": "store",
    "live_transcripts": "store",
    "resolve": "store",
    "table_window": "windows",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
