"""The Polars layer: one API in front of both formats, a package per format behind it.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that
owns them, so ``import cc_analytics.frames`` stays cheap and never loads Polars by itself.
``frames.claude`` and ``frames.chainless`` expose the same verbs (``scan_/read_`` events,
turns, sessions, problems) for one format; the names here read both at once.

Examples:
    >>> import cc_analytics.frames as frames
    >>> callable(frames.scan_sessions)
    True
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    # The one API in front of both formats (format="auto" tells them apart by content).
    **dict.fromkeys(
        (
            "scan_sessions",
            "read_sessions",
            "scan_turns",
            "read_turns",
            "scan_problems",
            "read_problems",
            "scan_events",
            "read_events",
            "read_tables",
            "iter_tables",
            "Tables",
        ),
        "api",
    ),
    "TranscriptFile": "sources",
    # What both formats share: the token estimate, the metrics, the capture of windows at scale.
    "estimate_tokens": "estimate",
    "used_fraction": "metrics",
    "headroom": "metrics",
    "overflows": "metrics",
    "zone": "metrics",
    "effective_window": "metrics",
    "autocompact_threshold": "metrics",
    "until_autocompact": "metrics",
    "capture_window_frame": "capture",
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
