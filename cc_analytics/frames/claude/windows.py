"""Claude context windows as Polars expressions: model → window, and the window columns.

Imports: polars, ``frames.metrics`` and the modules of ``frames.claude``. The rule (the model
table, the versions, the 200,000 lift) is ``frames.claude.models``', where its scalar twin
lives; the effective window and the auto-compact threshold are ``frames.metrics``'.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames import metrics
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.models import (
    DEFAULT_WINDOW,
    MILLION_MARKER,
    MILLION_MODELS,
    MILLION_WINDOW,
    VERSION_PATTERN,
    version_key,
    window_for,
)

__all__ = ["DEFAULT_WINDOW", "MILLION_WINDOW", "context_window", "version_number", "window_columns", "window_for"]


def version_number(version: pl.Expr) -> pl.Expr:
    """``"2.1.75"`` → 2_001_075 (comparable as an integer); null when not ``x.y.z``.

    Examples:
        >>> import polars as pl
        >>> pl.select(version_number(pl.lit("2.1.117"))).item()
        2001117
    """
    parts = version.str.extract_groups(VERSION_PATTERN)
    major, minor, patch = (parts.struct.field(str(i)).cast(pl.Int64) for i in (1, 2, 3))
    return major * version_key(1, 0, 0) + minor * version_key(0, 1, 0) + patch


def context_window(
    model: pl.Expr | str = S.MODEL,
    version: pl.Expr | str = S.VERSION,
    observed: pl.Expr | str | None = None,
) -> pl.Expr:
    """The inferred window of ``model`` as written by Claude Code ``version``.

    ``observed`` (a recorded occupancy, e.g. the peak so far) lifts the window to 1M once
    it passes 200,000.

    Examples:
        >>> import polars as pl
        >>> df = pl.DataFrame({"model": ["claude-opus-4-5", "claude-sonnet-4-6", "claude-opus-4-6"],
        ...                    "version": ["2.0.1", "2.0.1", "2.1.80"]})
        >>> df.select(context_window()).to_series().to_list()
        [200000, 1000000, 1000000]
    """
    model_expr = pl.col(model) if isinstance(model, str) else model
    version_expr = pl.col(version) if isinstance(version, str) else version
    number = version_number(version_expr)
    million = model_expr.str.contains(MILLION_MARKER).fill_null(False)
    for pattern, since in MILLION_MODELS:
        hit = model_expr.str.contains(pattern).fill_null(False)
        if since is not None:
            hit = hit & (number >= version_key(*since)).fill_null(False)
        million = million | hit
    if observed is not None:
        observed_expr = pl.col(observed) if isinstance(observed, str) else observed
        million = million | (observed_expr > DEFAULT_WINDOW).fill_null(False)
    return pl.when(million).then(MILLION_WINDOW).otherwise(DEFAULT_WINDOW).cast(pl.Int64)


def window_columns(occupancy: str = S.OCCUPANCY) -> list[pl.Expr]:
    """Effective window, threshold, used fraction and headroom from ``window`` and ``occupancy``."""
    return [
        metrics.effective_window(S.WINDOW).alias(S.EFFECTIVE_WINDOW),
        metrics.autocompact_threshold(S.WINDOW).alias(S.AUTOCOMPACT_THRESHOLD),
        metrics.used_fraction(occupancy, S.WINDOW).alias(S.USED_FRACTION),
        metrics.headroom(occupancy, S.WINDOW).alias(S.HEADROOM),
    ]
