"""The Polars layer: one API in front of every format, a package per format behind it.

Imports: nothing at import time. Public names resolve lazily (PEP 562) to the module that
owns them, so ``import cc_analytics.frames`` stays cheap and never loads Polars by itself.
Each format package (listed by ``frames.registry``; the interface is ``frames.plugin``)
exposes the same verbs (``scan_/read_`` events, turns, sessions, problems, requests) for one
format; the names here read every format at once.

Examples:
    >>> import cc_analytics.frames as frames
    >>> callable(frames.scan_sessions)
    True
"""

from __future__ import annotations

from cc_analytics.frames.plugin import FRONT
from cc_analytics.lazy import lazy_exports

_EXPORTS = {
    # The one API in front of every format (format="auto" tells them apart by content).
    **dict.fromkeys(FRONT, "api"),
    "TranscriptFile": "sources",
    "formats": "registry",
    "FormatPlugin": "plugin",
    # What every format shares: the token estimate, the metrics, the capture of windows at scale.
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
