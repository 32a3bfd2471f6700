"""The context window of a Codex session: the recorded window, the fallback table, and the
share of it in use as Codex's own TUI computes it.

Imports: polars (inside the expression functions; the scalar twins need none). Rules:

* the window is the ``model_context_window`` of the latest ``token_count`` that records one
  (Codex records the usable window: 95 % of the model's, e.g. 258,400 for 272,000);
* when none is recorded, the window is inferred from the model's name (:data:`MODEL_WINDOWS`,
  the first prefix that matches), else null (:data:`DEFAULT_WINDOW` for the ``context`` gauge);
* occupancy is what Codex's TUI calls the tokens in the context window: the ``total_tokens``
  of the last request's usage (its input plus its output), recorded;
* the used fraction follows the TUI's "% context left": a baseline of
  :data:`BASELINE_TOKENS` (instructions and tools, always present) is taken off both the
  window and the occupancy, ``used = max(occupancy − 12,000, 0) / (window − 12,000)``,
  clamped to [0, 1] (1 when the window is not above the baseline); Codex shows
  ``100 × (1 − used)`` % left, rounded half away from zero. The effective window is ``window − 12,000``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

BASELINE_TOKENS = 12_000
DEFAULT_WINDOW = 258_400
MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-5", 258_400),
    ("codex-", 258_400),
    ("o3", 190_000),
    ("o4-mini", 190_000),
)


def window_of_model(model: str | None) -> int | None:
    """The window Codex would record for ``model``, from :data:`MODEL_WINDOWS` (None: unknown).

    Examples:
        >>> window_of_model("gpt-5.1-codex-max"), window_of_model("llama3") is None
        (258400, True)
    """
    if not model:
        return None
    return next((window for prefix, window in MODEL_WINDOWS if model.startswith(prefix)), None)


def model_window(model: pl.Expr) -> pl.Expr:
    """:func:`window_of_model` as an expression over a model column.

    Examples:
        >>> import polars as pl
        >>> pl.DataFrame({"m": ["gpt-5.2", "o3-pro", None, "x"]}).select(model_window(pl.col("m"))).to_series().to_list()
        [258400, 190000, None, None]
    """
    import polars as pl

    expr = pl.lit(None, pl.Int64)
    for prefix, window in reversed(MODEL_WINDOWS):
        expr = pl.when(model.str.starts_with(prefix)).then(pl.lit(window, pl.Int64)).otherwise(expr)
    return expr


def context_used_fraction(used: pl.Expr | str, window: pl.Expr | str) -> pl.Expr:
    """The share of the window in use as Codex's TUI counts it (see the module docstring).

    Examples:
        >>> import polars as pl
        >>> frame = pl.DataFrame({"u": [12_000, 135_200, 300_000, 5], "w": [258_400, 258_400, 258_400, 10_000]})
        >>> frame.select(context_used_fraction("u", "w")).to_series().to_list()
        [0.0, 0.5, 1.0, 1.0]
    """
    import polars as pl

    used = pl.col(used) if isinstance(used, str) else used
    window = pl.col(window) if isinstance(window, str) else window
    effective = (window - BASELINE_TOKENS).cast(pl.Float64)
    share = ((used - BASELINE_TOKENS).clip(lower_bound=0).cast(pl.Float64) / effective).clip(0.0, 1.0)
    return pl.when(window <= BASELINE_TOKENS).then(pl.lit(1.0)).otherwise(share)


def context_used_fraction_of(used: int, window: int) -> float:
    """Scalar :func:`context_used_fraction`.

    Examples:
        >>> context_used_fraction_of(135_200, 258_400), context_used_fraction_of(1, 0)
        (0.5, 1.0)
    """
    if window <= BASELINE_TOKENS:
        return 1.0
    return min(max(max(used - BASELINE_TOKENS, 0) / (window - BASELINE_TOKENS), 0.0), 1.0)


def context_left_percent(used: int, window: int) -> int:
    """The "% context left" Codex's TUI shows.

    Examples:
        >>> context_left_percent(16_422, 258_400)
        98
    """
    from cc_analytics.format import round_half_up

    return int(round_half_up(100 * (1 - context_used_fraction_of(used, window))))
