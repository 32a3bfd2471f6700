"""cc_analytics: analytics for AI coding-agent session transcripts on Polars.

Imports: nothing at import time. The root stays cheap: the public names resolve lazily
(PEP 562) to the module that owns them, so ``import cc_analytics`` loads no Polars.

Examples:
    >>> import cc_analytics
    >>> cc_analytics.__version__
    '0.2.0'
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.2.0"

_EXPORTS = {
    "CCAnalyticsError": "cc_analytics.errors",
    "InputError": "cc_analytics.errors",
    "SchemaError": "cc_analytics.errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        msg = f"module 'cc_analytics' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
