"""GitHub Copilot CLI session event logs as Polars frames: the verbs every format has, behind one lazy map.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that owns
them, so importing this package stays cheap and never loads Polars by itself.

Each verb takes ``source`` (an ``events.jsonl``, a folder, a glob, TranscriptFiles, a list of
those, or None for the default store ``$COPILOT_HOME/session-state``, else
``~/.copilot/session-state``) and the keywords ``workers`` and ``on_progress``. The rules are
in ``docs/copilot.md`` and ``frames.copilot.events``.

Examples:
    >>> import cc_analytics.frames.copilot as copilot
    >>> sorted(name for name in copilot.__all__ if name.startswith("read_"))
    ['read_events', 'read_problems', 'read_requests', 'read_sessions', 'read_turns']
"""

from __future__ import annotations

from cc_analytics.lazy import lazy_exports

_EXPORTS = {
    **{
        name: "verbs"
        for name in (
            "scan_events",
            "read_events",
            "scan_turns",
            "read_turns",
            "scan_sessions",
            "read_sessions",
            "scan_problems",
            "read_problems",
            "scan_requests",
            "read_requests",
            "iter_requests",
            "requests_batch",
            "iter_tables",
            "tables_batch",
            "context_report",
            "events_schema",
        )
    },
    "resolve": "store",
    "default_stores": "store",
    "copilot_home": "store",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
