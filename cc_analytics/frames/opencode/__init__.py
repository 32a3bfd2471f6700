"""OpenCode sessions as Polars frames: the verbs every format has, behind one lazy map.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that
owns them, so importing this package stays cheap and never loads Polars by itself.

Each verb takes ``source`` (OpenCode's database ``opencode.db``, a JSON storage session file,
a folder — an OpenCode data folder: its database and its ``storage/`` —, a glob,
TranscriptFiles, a list of those, or None for ``$XDG_DATA_HOME/opencode``, else
``~/.local/share/opencode``) and the keywords ``workers`` and ``on_progress``:
``scan_events``/``read_events`` (one row per message and part), ``scan_turns``/``read_turns``
(a user message opens a turn), ``scan_sessions``/``read_sessions`` (a session with its
sub-task sessions), ``scan_problems``/``read_problems``, ``scan_requests``/``read_requests``
(one row per assistant message with usage, priced). ``iter_requests``, ``iter_tables`` and
``tables_batch`` are the batch functions. The rules are in ``docs/opencode.md`` and in each
module's docstring.

Examples:
    >>> import cc_analytics.frames.opencode as opencode
    >>> sorted(name for name in opencode.__all__ if name.startswith("read_"))
    ['read_events', 'read_problems', 'read_requests', 'read_sessions', 'read_turns']
"""

from __future__ import annotations

from cc_analytics.lazy import lazy_exports

_EXPORTS = {
    **{
        name: "tables"
        for name in (
            "scan_events",
            "read_events",
            "scan_problems",
            "read_problems",
            "scan_turns",
            "read_turns",
            "scan_requests",
            "read_requests",
            "iter_requests",
            "requests_batch",
            "scan_sessions",
            "read_sessions",
            "iter_tables",
            "tables_batch",
            "Tables",
        )
    },
    "context_report": "context",
    "resolve": "store",
    "default_stores": "store",
    "data_dir": "store",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
