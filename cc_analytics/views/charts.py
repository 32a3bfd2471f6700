"""The charts of ``views.specs`` as Altair objects, for notebooks, widgets and the explorer.

Imports: altair, ``views.specs`` (where each chart is defined, once, as a Vega-Lite spec),
``views.common`` and ``frames.metrics`` (names kept here for notebooks that took them from here). Each function here takes what its spec takes and hands the spec to
Altair unchanged; the report embeds the specs themselves and never imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import altair as alt

from cc_analytics.frames.metrics import zone
from cc_analytics.views import specs
from cc_analytics.views.common import BUCKET_LABELS, Frame, collect
from cc_analytics.views.specs import composition_parts, model_of, session_label

COMPOSITE = (
    ("layer", alt.LayerChart),
    ("hconcat", alt.HConcatChart),
    ("vconcat", alt.VConcatChart),
    ("concat", alt.ConcatChart),
)

ADDED_ON_WRITING = {"$schema": specs.VEGA_LITE, "config": specs.CONFIG}


def chart_of(spec: Mapping[str, Any]) -> alt.TopLevelMixin:
    """The Altair chart of a Vega-Lite ``spec``: a layer or concat is built of the charts of its
    parts, as ``alt.layer`` and ``alt.concat`` would build it (so that each part's data goes to
    the top-level ``datasets`` as Altair writes them); a single view is read whole but for its
    data, kept as it is. Not validated: the specs are this package's, and tests validate them
    against the Vega-Lite schema.

    Examples:
        >>> spec = {"data": {"values": [{"x": 1}]}, "layer": [{"mark": "tick", "encoding": {"x": {"field": "x"}}}]}
        >>> chart = chart_of(spec)
        >>> type(chart).__name__, list(chart.to_dict()["datasets"].values())
        ('LayerChart', [[{'x': 1}]])
    """
    # What Altair adds as it writes a chart: left out, so that the chart can be part of another.
    spec = {name: value for name, value in spec.items() if ADDED_ON_WRITING.get(name) != value}
    for key, kind in COMPOSITE:
        if key in spec:
            rest = {name: value for name, value in spec.items() if name != key}
            return kind(**{key: [chart_of(part) for part in spec[key]]}, **rest)
    data = spec.pop("data", None)
    view = alt.Chart.from_dict(spec, validate=False)
    if data is not None:  # as it is: read whole, each row would become a schema object (10x slower)
        view.data = data
    return view


def bucket_breakdown(
    sessions: Frame, *, top: int = 25, normalize: bool = True, unattributed: bool = False
) -> alt.Chart:
    """Stacked bars of the five heuristic buckets for the ``top`` sessions by peak occupancy.

    ``normalize`` shows each session's shares (tooltips keep the tokens). With
    ``unattributed``, a sixth grey segment shows what the recorded last occupancy holds
    beyond the transcript's text (system prompt, tool schemas, outputs saved to disk).
    """
    return chart_of(specs.bucket_breakdown(sessions, top=top, normalize=normalize, unattributed=unattributed))


def occupancy_over_turns(
    turns: Frame,
    *,
    session_id: str | None = None,
    session_ids: Sequence[str] | None = None,
    limit: int = 4,
    columns: int = 2,
) -> alt.LayerChart | alt.ConcatChart:
    """Recorded occupancy per turn with the window, effective-window and auto-compact rules.

    A red triangle marks each turn in which the context was compacted. One session gives one
    layered chart; several (``session_ids``, or the ``limit`` sessions of highest peak) give
    small multiples, each with its own window.
    """
    spec = specs.occupancy_over_turns(
        turns, session_id=session_id, session_ids=session_ids, limit=limit, columns=columns
    )
    return chart_of(spec)


def peak_distribution(sessions: Frame, *, bin_width: float = 0.05) -> alt.LayerChart:
    """How full do windows get: sessions per bin of peak occupancy / window, coloured by zone."""
    return chart_of(specs.peak_distribution(sessions, bin_width=bin_width))


def daily_trend(sessions: Frame) -> alt.VConcatChart:
    """Per day (of a session's start, UTC): tokens by kind, sessions started, and compactions."""
    return chart_of(specs.daily_trend(sessions))


def comparison(sessions: Frame, *, by: Literal["model", "project"] = "model") -> alt.HConcatChart:
    """Sessions, total tokens and mean/max peak occupancy per model or per project."""
    return chart_of(specs.comparison(sessions, by=by))


def cost_per_day(requests: Frame, *, top_models: int = 8) -> alt.Chart:
    """Cost per day (UTC), stacked by model: the ``top_models`` costliest, the rest as ``other``.

    ``requests`` is a priced requests frame (``frames.read_requests``); requests without a
    price are left out and counted in the tooltip.

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = requests_frame([{"time": "2026-03-01T10:00:00Z", "model": "m", "cost_usd": 1.5}])
        >>> cost_per_day(frame).to_dict()["mark"]["type"]
        'bar'
    """
    return chart_of(specs.cost_per_day(requests, top_models=top_models))


def cost_by(requests: Frame, *, by: Literal["model", "project"] = "project", top: int = 15) -> alt.LayerChart:
    """Total cost per project (its basename; ChainlessChain sessions record none) or per model:
    the ``top`` costliest, bars labelled with their cost, requests without a price in the tooltip.

    Examples:
        >>> from cc_analytics.frames.requests import requests_frame
        >>> frame = requests_frame([{"project": "/w/shop", "model": "m", "cost_usd": 2.0}])
        >>> cost_by(frame, by="project").to_dict()["layer"][0]["mark"]["type"]
        'bar'
    """
    return chart_of(specs.cost_by(requests, by=by, top=top))


def calibration(turns: Frame, *, max_points: int = 2000, bins: int = 40) -> alt.LayerChart:
    """Heuristic estimate against recorded occupancy, per turn (log-log, with the y = x line).

    Up to ``max_points`` turns are drawn as points; beyond that, turns are counted in a
    ``bins`` × ``bins`` grid of log-spaced cells and each cell is one sized circle.
    """
    return chart_of(specs.calibration(turns, max_points=max_points, bins=bins))


def composition_over_turns(composition: Frame, *, session_id: str | None = None, top_parts: int = 8) -> alt.LayerChart:
    """What filled one session's window at each turn: the composition frame's parts stacked
    (calibrated to the recorded occupancy, so a bar's height is it), a dashed red rule at each
    turn that followed a compaction."""
    return chart_of(specs.composition_over_turns(composition, session_id=session_id, top_parts=top_parts))


def limits_beside_blocks(limits: Frame, blocks: Frame | None = None) -> alt.VConcatChart | alt.Chart:
    """The plans' rate limits over time (the limits frame: used percent per window and agent,
    each reading a point on its line), above the cost of each 5-hour block (``read_usage(...,
    by="block")``) on the same time axis, so a jump in the 5-hour limit can be set against the
    block that spent it."""
    return chart_of(specs.limits_beside_blocks(limits, blocks))


__all__ = [
    "BUCKET_LABELS",
    "bucket_breakdown",
    "calibration",
    "chart_of",
    "collect",
    "comparison",
    "composition_over_turns",
    "composition_parts",
    "cost_by",
    "cost_per_day",
    "daily_trend",
    "limits_beside_blocks",
    "model_of",
    "occupancy_over_turns",
    "peak_distribution",
    "session_label",
    "zone",
]
