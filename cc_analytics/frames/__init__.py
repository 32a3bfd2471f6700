"""The Polars layer: loaders (``scan_*``/``read_*``), schemas and metric expressions.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that
owns them, so ``import cc_analytics.frames`` stays cheap and never loads Polars by itself.

Examples:
    >>> import cc_analytics.frames as frames
    >>> callable(frames.scan_sessions)
    True
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    # Claude Code transcripts
    "scan_events": "claude.events",
    "read_events": "claude.events",
    "problems": "claude.events",
    "scan_turns": "claude.turns",
    "read_turns": "claude.turns",
    "scan_sessions": "claude.sessions",
    "read_sessions": "claude.sessions",
    "iter_sessions": "claude.sessions",
    "claude_context": "claude.sessions",
    "discover": "claude.discovery",
    "default_roots": "claude.discovery",
    "find_session": "claude.discovery",
    "TranscriptFile": "claude.discovery",
    "context_window": "claude.windows",
    # the shared token estimate
    "estimate_tokens": "estimate",
    # ChainlessChain transcripts
    "scan_chainless": "chainless.events",
    "read_chainless": "chainless.events",
    "scan_chainless_messages": "chainless.events",
    "read_chainless_problems": "chainless.events",
    "read_context": "chainless.sessions",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        msg = f"module 'cc_analytics.frames' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"cc_analytics.frames.{module_name}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
