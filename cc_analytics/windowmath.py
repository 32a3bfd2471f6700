"""Context-window arithmetic on plain numbers: the scalar twins of ``frames.metrics``.

Imports: nothing. A leaf: the human formatter (``format``), the status line and the widgets
use it without the Polars layer. Each
function here is the scalar of one expression of ``frames.metrics``, which re-exports them
and owns the definitions (written down there); ``tests/frames/test_metrics.py`` proves each
pair equal.

Examples:
    >>> zone_of(used_fraction_of(150_000, 200_000)), until_autocompact_of(150_000, 200_000)
    ('yellow', 17000)
"""

from __future__ import annotations

OUTPUT_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
YELLOW_ABOVE = 0.7
RED_ABOVE = 0.9
ZONES = ("green", "yellow", "red")


def used_fraction_of(used: int, window: int) -> float:
    """``used / window`` (0.0 for an empty window).

    Examples:
        >>> used_fraction_of(150_000, 200_000)
        0.75
    """
    return used / window if window else 0.0


def headroom_of(used: int, window: int) -> int:
    """Tokens left in the window, never below 0.

    Examples:
        >>> headroom_of(150_000, 200_000), headroom_of(250_000, 200_000)
        (50000, 0)
    """
    return max(window - used, 0)


def overflows_of(used: int, window: int) -> bool:
    """Whether the context holds more tokens than the window.

    Examples:
        >>> overflows_of(200_000, 200_000), overflows_of(200_001, 200_000)
        (False, True)
    """
    return used > window


def zone_of(fraction: float) -> str:
    """Colour zone of a used fraction: ``red`` above 0.9, ``yellow`` above 0.7, else ``green``.

    Examples:
        >>> zone_of(0.7), zone_of(0.9), zone_of(0.91)
        ('green', 'yellow', 'red')
    """
    if fraction > RED_ABOVE:
        return "red"
    if fraction > YELLOW_ABOVE:
        return "yellow"
    return "green"


def effective_window_of(window: int) -> int:
    """The window minus the output reserve Claude Code keeps free.

    Examples:
        >>> effective_window_of(200_000)
        180000
    """
    return window - OUTPUT_RESERVE


def autocompact_threshold_of(window: int) -> int:
    """Occupancy at which Claude Code compacts on its own: effective window − 13,000.

    Examples:
        >>> autocompact_threshold_of(200_000)
        167000
    """
    return effective_window_of(window) - AUTOCOMPACT_BUFFER


def until_autocompact_of(used: int, window: int) -> int:
    """Tokens left before the auto-compact threshold, never below 0.

    Examples:
        >>> until_autocompact_of(150_000, 200_000), until_autocompact_of(190_000, 200_000)
        (17000, 0)
    """
    return max(autocompact_threshold_of(window) - used, 0)


def scale_parts(parts: list[int], total: int) -> list[int]:
    """``parts`` scaled to sum to ``total`` exactly: each in proportion, rounded down, and the
    tokens left over given one by one to the largest remainders (the first on ties). All
    zeros (nothing to scale) stay zeros.

    Examples:
        >>> scale_parts([1, 1, 1], 10), scale_parts([3, 0, 1], 8), scale_parts([0, 0], 5)
        ([4, 3, 3], [6, 0, 2], [0, 0])
    """
    whole = sum(parts)
    if whole <= 0:
        return [0] * len(parts)
    scaled = [part * total // whole for part in parts]
    remainders = sorted(range(len(parts)), key=lambda i: (-(parts[i] * total % whole), i))
    for index in remainders[: total - sum(scaled)]:
        scaled[index] += 1
    return scaled
