"""Altair charts and ipywidgets gauges, imported only on demand.

Imports: nothing at import time; ``views.charts`` (Altair) and ``views.widgets``
(ipywidgets) load on first attribute access (PEP 562), so ``import cc_analytics.views``
is cheap and the CLI never pulls them in.

Examples:
    >>> import cc_analytics.views as views
    >>> views.ContextGauge.__name__
    'ContextGauge'
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "charts": "cc_analytics.views.charts",
    "widgets": "cc_analytics.views.widgets",
    "ContextGauge": "cc_analytics.views.widgets",
    "SessionExplorer": "cc_analytics.views.widgets",
    "bucket_breakdown": "cc_analytics.views.charts",
    "occupancy_over_turns": "cc_analytics.views.charts",
    "peak_distribution": "cc_analytics.views.charts",
    "daily_trend": "cc_analytics.views.charts",
    "comparison": "cc_analytics.views.charts",
    "calibration": "cc_analytics.views.charts",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        msg = f"module 'cc_analytics.views' has no attribute {name!r}"
        raise AttributeError(msg)
    module = importlib.import_module(module_name)
    value = module if module_name.endswith(f".{name}") else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
