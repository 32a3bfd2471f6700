"""cc_analytics: analytics for AI coding-agent session transcripts on Polars.

Imports: nothing at import time. The root stays cheap: the public names resolve lazily
(PEP 562) to the module that owns them, so ``import cc_analytics`` loads no Polars.

The verbs read every registered format at once, as ``pl.read_*`` read files:
``read_sessions``, ``read_turns``, ``read_requests``, ``read_problems``, ``read_events``,
``read_usage``, ``read_tables`` (and their lazy ``scan_*`` twins); ``formats()`` lists the
formats (``FormatPlugin`` is the interface a new one implements).

Examples:
    >>> import cc_analytics
    >>> cc_analytics.__version__
    '0.2.0'
    >>> sessions = cc_analytics.read_sessions(cc_analytics.SAMPLES_DIR)
    >>> sorted(set(sessions["format"])) == sorted(plugin.name for plugin in cc_analytics.formats())
    True
"""

from __future__ import annotations

from cc_analytics.frames.plugin import FRONT
from cc_analytics.lazy import lazy_exports

__version__ = "0.2.0"

_EXPORTS = {
    "CCAnalyticsError": "cc_analytics.errors",
    "InputError": "cc_analytics.errors",
    "SchemaError": "cc_analytics.errors",
    **dict.fromkeys(FRONT, "cc_analytics.frames.api"),
    "formats": "cc_analytics.frames.registry",
    "FormatPlugin": "cc_analytics.frames.plugin",
    "SAMPLES_DIR": "cc_analytics.report",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
