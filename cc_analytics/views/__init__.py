"""Altair charts and ipywidgets gauges, imported only on demand.

Imports: nothing at import time; ``views.specs`` (the charts' Vega-Lite specs, Polars only),
``views.charts`` (the same charts as Altair objects) and ``views.widgets`` (ipywidgets) load on
first attribute access (PEP 562), so ``import cc_analytics.views`` is cheap and the CLI never
pulls them in.

Examples:
    >>> import cc_analytics.views as views
    >>> views.ContextGauge.__name__
    'ContextGauge'
"""

from __future__ import annotations

from cc_analytics.lazy import lazy_exports

_EXPORTS = {
    "charts": "cc_analytics.views.charts",
    "specs": "cc_analytics.views.specs",
    "widgets": "cc_analytics.views.widgets",
    "gauge": "cc_analytics.views.gauge",
    "ContextGauge": "cc_analytics.views.gauge",
    "SessionExplorer": "cc_analytics.views.widgets",
    "bucket_breakdown": "cc_analytics.views.charts",
    "occupancy_over_turns": "cc_analytics.views.charts",
    "peak_distribution": "cc_analytics.views.charts",
    "daily_trend": "cc_analytics.views.charts",
    "comparison": "cc_analytics.views.charts",
    "calibration": "cc_analytics.views.charts",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
