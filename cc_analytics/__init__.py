"""cc_analytics: analytics for AI coding-agent session transcripts on Polars.

Imports: nothing at import time. The root stays cheap: the public names resolve lazily
(PEP 562) to the module that owns them, so ``import cc_analytics`` loads no Polars.

Examples:
    >>> import cc_analytics
    >>> cc_analytics.__version__
    '0.2.0'
"""

from __future__ import annotations

from cc_analytics.lazy import lazy_exports

__version__ = "0.2.0"

_EXPORTS = {
    "CCAnalyticsError": "cc_analytics.errors",
    "InputError": "cc_analytics.errors",
    "SchemaError": "cc_analytics.errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
