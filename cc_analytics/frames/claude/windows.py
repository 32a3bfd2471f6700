"""Claude context windows: model → window, effective window, auto-compact threshold, fractions.

Imports: polars and ``claude_schema``. Facts from spec ``claude-code-jsonl.md`` ("Context
occupancy and windows"): 200,000 tokens by default; 1,000,000 for the 1M-context models
(Sonnet 4.6; Opus 4.6 from Claude Code 2.1.75; Opus 4.7 from 2.1.117; Fable 5, Sonnet 5,
Opus 5), and always once a recorded occupancy passed 200,000. Transcripts record the model
without the ``[1m]`` suffix, so the window is inferred. The effective window and the auto-compact threshold are ``frames.metrics``'.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames import metrics
from cc_analytics.frames.claude import schema as S

DEFAULT_WINDOW = 200_000
MILLION_WINDOW = 1_000_000

# (model name pattern, first Claude Code version with the 1M window or None for always).
MILLION_MODELS: tuple[tuple[str, tuple[int, int, int] | None], ...] = (
    (r"^claude-sonnet-4-6", None),
    (r"^claude-opus-4-6", (2, 1, 75)),
    (r"^claude-opus-4-7", (2, 1, 117)),
    (r"^claude-fable-5", None),
    (r"^claude-sonnet-5", None),
    (r"^claude-opus-5", None),
)


def version_number(version: pl.Expr) -> pl.Expr:
    """``"2.1.75"`` → 2_001_075 (comparable as an integer); null when not ``x.y.z``.

    Examples:
        >>> import polars as pl
        >>> pl.select(version_number(pl.lit("2.1.117"))).item()
        2001117
    """
    parts = version.str.extract_groups(r"^(\d+)\.(\d+)\.(\d+)")
    major, minor, patch = (parts.struct.field(str(i)).cast(pl.Int64) for i in (1, 2, 3))
    return major * 1_000_000 + minor * 1_000 + patch


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
    million = pl.lit(False)
    for pattern, since in MILLION_MODELS:
        hit = model_expr.str.contains(pattern).fill_null(False)
        if since is not None:
            major, minor, patch = since
            hit = hit & (number >= major * 1_000_000 + minor * 1_000 + patch).fill_null(False)
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


def window_for(model: str | None, version: str | None = None, observed: int | None = None) -> int:
    """Scalar form of :func:`context_window` (evaluates the same expression).

    Examples:
        >>> window_for("claude-opus-4-7", "2.1.117"), window_for("claude-haiku-4-5", None, 250_000)
        (1000000, 1000000)
    """
    frame = pl.DataFrame(
        {"m": [model], "v": [version], "o": [observed]},
        schema={"m": pl.String, "v": pl.String, "o": pl.Int64},
    )
    return int(frame.select(context_window("m", "v", "o")).item())
