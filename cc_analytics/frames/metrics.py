"""Context-window metrics, owned once: used fraction, headroom, overflow, zone, and the
effective window, auto-compact threshold and tokens until auto-compaction of a token window.

Imports: the standard library and ``cc_analytics.windowmath`` (the scalar twins, re-exported
here); polars on first use of an expression, so the twins (what widgets and the status line
call) stay importable without it. Each metric is written once as a Polars expression here and
once as a scalar function of plain numbers in the leaf ``windowmath`` (which ``format`` uses
without this layer); ``tests/frames/test_metrics.py`` proves each pair equal.

Definitions (``used`` = tokens in the context, ``window`` = the model's token window):

* used fraction = used / window (a float; the ``context`` JSON rounds it half-up to 4 places);
* headroom = window − used, never below 0 (the tokens ``cc context`` reports as remaining);
* overflows = used > window;
* zone: ``red`` above 0.9, ``yellow`` above 0.7, else ``green`` (of the used fraction);
* effective window = window − the 20,000-token output reserve Claude Code keeps free;
* auto-compact threshold = effective window − 13,000;
* until auto-compact = auto-compact threshold − used, never below 0 (tokens left before
  Claude Code compacts on its own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cc_analytics.windowmath import (
    AUTOCOMPACT_BUFFER,
    OUTPUT_RESERVE,
    RED_ABOVE,
    YELLOW_ABOVE,
    ZONES,
    autocompact_threshold_of,
    effective_window_of,
    headroom_of,
    overflows_of,
    until_autocompact_of,
    used_fraction_of,
    zone_of,
)

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "AUTOCOMPACT_BUFFER",
    "OUTPUT_RESERVE",
    "RED_ABOVE",
    "YELLOW_ABOVE",
    "ZONES",
    "autocompact_threshold",
    "autocompact_threshold_of",
    "effective_window",
    "effective_window_of",
    "headroom",
    "headroom_of",
    "overflows",
    "overflows_of",
    "until_autocompact",
    "until_autocompact_of",
    "used_fraction",
    "used_fraction_of",
    "zone",
    "zone_of",
]


def _col(value: pl.Expr | str) -> pl.Expr:
    import polars as pl

    return pl.col(value) if isinstance(value, str) else value


# ------------------------------------------------------------------ expressions


def used_fraction(used: pl.Expr | str, window: pl.Expr | str) -> pl.Expr:
    """``used / window`` as a float.

    Examples:
        >>> import polars as pl
        >>> pl.DataFrame({"u": [50_000], "w": [200_000]}).select(used_fraction("u", "w")).item()
        0.25
    """
    import polars as pl

    # Polars divides by a broadcast scalar as a product with its reciprocal (one ulp off at
    # times), and a window column is a scalar when a batch's rows share one: adding a zero
    # column keeps the division elementwise and exact, whatever the batch holds.
    return _col(used).cast(_float()) / (_col(window) + 0 * pl.int_range(pl.len())).cast(_float())


def headroom(used: pl.Expr | str, window: pl.Expr | str) -> pl.Expr:
    """Tokens left in the window, never below 0."""
    return (_col(window) - _col(used)).clip(lower_bound=0)


def overflows(used: pl.Expr | str, window: pl.Expr | str) -> pl.Expr:
    """Whether the context holds more tokens than the window."""
    return _col(used) > _col(window)


def zone(fraction: pl.Expr | str) -> pl.Expr:
    """Colour zone of a used fraction (``green``/``yellow``/``red``); null stays null.

    Examples:
        >>> import polars as pl
        >>> pl.DataFrame({"f": [0.7, 0.71, 0.95]}).select(zone("f")).to_series().to_list()
        ['green', 'yellow', 'red']
    """
    import polars as pl

    f = _col(fraction)
    return (
        pl.when(f > RED_ABOVE)
        .then(pl.lit("red"))
        .when(f > YELLOW_ABOVE)
        .then(pl.lit("yellow"))
        .when(f.is_not_null())
        .then(pl.lit("green"))
    )


def effective_window(window: pl.Expr | str) -> pl.Expr:
    """The window minus the output reserve."""
    return _col(window) - OUTPUT_RESERVE


def autocompact_threshold(window: pl.Expr | str) -> pl.Expr:
    """Occupancy at which Claude Code compacts on its own: effective window − 13,000."""
    return effective_window(window) - AUTOCOMPACT_BUFFER


def until_autocompact(used: pl.Expr | str, window: pl.Expr | str) -> pl.Expr:
    """Tokens left before the auto-compact threshold, never below 0."""
    return (autocompact_threshold(window) - _col(used)).clip(lower_bound=0)


def _float() -> pl.DataType:
    import polars as pl

    return pl.Float64()
