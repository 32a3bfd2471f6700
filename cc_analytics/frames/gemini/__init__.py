"""Gemini CLI chats as Polars frames: the verbs every format has, behind one lazy map.

Imports: ``frames.plugin`` (the standard library only) at import time. Public names resolve
lazily (PEP 562) to the module that owns them, so importing this package stays cheap and never
loads Polars by itself.

Each verb takes ``source`` (a chat file, a folder, a glob, TranscriptFiles, a list of those,
or None for the default store ``$GEMINI_CLI_HOME/.gemini/tmp``, else ``~/.gemini/tmp``) and
the keywords ``workers`` and ``on_progress``. The rules are in ``docs/gemini.md``, in
``frames.chatlog`` (shared with Qwen Code and GitHub Copilot CLI) and in ``frames.gemini.chats``.

Examples:
    >>> import cc_analytics.frames.gemini as gemini
    >>> sorted(name for name in gemini.__all__ if name.startswith("read_"))
    ['read_events', 'read_problems', 'read_requests', 'read_sessions', 'read_turns']
"""

from __future__ import annotations

from cc_analytics.frames.plugin import BATCH_VERBS, VERBS
from cc_analytics.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys((*VERBS, *BATCH_VERBS, "context_report"), "verbs"),
    "resolve": "store",
    "default_stores": "store",
    "gemini_home": "store",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
