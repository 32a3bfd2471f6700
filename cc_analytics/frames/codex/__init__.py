"""OpenAI Codex CLI rollouts as Polars frames: the verbs every format has, behind one lazy map.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that
owns them, so importing this package stays cheap and never loads Polars by itself.

Each verb takes ``source`` (a rollout, a folder — a Codex home: its ``sessions`` and
``archived_sessions`` —, a glob, TranscriptFiles, a list of those, or None for the default
stores under ``$CODEX_HOME``, else ``~/.codex``) and the keywords ``workers`` and
``on_progress``: ``scan_events``/``read_events`` (one row per line), ``scan_turns``/
``read_turns`` (a user prompt opens a turn), ``scan_sessions``/``read_sessions`` (the shared
sessions schema; a subagent's rollout joins the session that spawned it),
``scan_problems``/``read_problems``, ``scan_requests``/``read_requests`` (one row per
``token_count`` with new usage, priced), and, Codex's own, ``scan_rate_limits``/
``read_rate_limits``. ``iter_requests``, ``iter_tables`` and ``tables_batch`` are the batch
functions; ``context_report`` is what ``cc-analytics context`` prints. The rules are in
``docs/codex.md`` and in each module's docstring.

Examples:
    >>> import cc_analytics.frames.codex as codex
    >>> sorted(name for name in codex.__all__ if name.startswith(("scan_", "read_")))
    ['read_events', 'read_limits', 'read_problems', 'read_rate_limits', 'read_requests', 'read_sessions', 'read_turns', 'scan_events', 'scan_limits', 'scan_problems', 'scan_rate_limits', 'scan_requests', 'scan_sessions', 'scan_turns']
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
    "Tables": "sessions",
    "context_report": "context",
    "scan_rate_limits": "ratelimits",
    "read_rate_limits": "ratelimits",
    "scan_limits": "ratelimits",
    "read_limits": "ratelimits",
    "resolve": "store",
    "default_stores": "store",
    "codex_home": "store",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
